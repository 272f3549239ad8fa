import CSampleRate

/// Streaming conversion of interleaved stereo float from one rate to another with libsamplerate's
/// sinc converter (SRC_SINC_MEDIUM_QUALITY: flat to 20 kHz at 48 kHz with about 97 dB of
/// stop-band attenuation, fast enough for load time), fed block by block so that a long file never
/// needs its whole input in memory. Control side only (load time).
///
/// libsamplerate was chosen over soxr because its `src_process` streaming call is exactly what
/// block-wise conversion needs, it is BSD-2-Clause, and it has been in Debian and maintained for
/// two decades.
final class StereoRateConverter {
    private let state: OpaquePointer
    private let ratio: Double
    private var output: [Float]
    private let path: String

    /// Makes a converter from `from` Hz to `to` Hz for blocks of up to `blockFrames` frames.
    init(from: Double, to: Double, blockFrames: Int, path: String) throws(AudioFileDecoder.LoadError) {
        var error: Int32 = 0
        guard let state = src_new(Int32(SRC_SINC_MEDIUM_QUALITY), 2, &error) else {
            throw .resampling(path: path, reason: String(cString: src_strerror(error)))
        }
        self.state = state
        self.path = path
        ratio = to / from
        output = [Float](repeating: 0, count: (Int((Double(blockFrames) * ratio).rounded(.up)) + 64) * 2)
    }

    deinit { src_delete(state) }

    /// Converts `frames` interleaved stereo frames at `input` (all of them; with `last`, then
    /// flushes what the filter still holds) and hands each block of output frames to `emit`.
    func process(_ input: UnsafePointer<Float>, frames: Int, last: Bool, emit: (UnsafeBufferPointer<Float>) -> Void) throws(AudioFileDecoder.LoadError) {
        var used = 0
        let capacity = output.count / 2
        while true {
            var data = SRC_DATA()
            var produced = 0
            let rc: Int32 = output.withUnsafeMutableBufferPointer { out in
                data.data_in = input + used * 2
                data.input_frames = frames - used
                data.data_out = out.baseAddress
                data.output_frames = capacity
                data.src_ratio = ratio
                data.end_of_input = last ? 1 : 0
                let rc = src_process(state, &data)
                produced = data.output_frames_gen
                return rc
            }
            guard rc == 0 else { throw .resampling(path: path, reason: String(cString: src_strerror(rc))) }
            used += data.input_frames_used
            if produced > 0 { output.withUnsafeBufferPointer { emit(UnsafeBufferPointer(rebasing: $0.prefix(produced * 2))) } }
            // Done when the input is used up and, when flushing, nothing more comes out.
            if used >= frames && (!last || produced == 0) { return }
        }
    }
}
