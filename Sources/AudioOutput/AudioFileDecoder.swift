import AHAP
import CSampleRate
import CSndFile
import Foundation
import HapSyncCore

/// Decodes audio files for the mixer, at load time (never on the real-time path).
///
/// libsndfile reads WAV, FLAC and whatever else it knows (AIFF, Ogg Vorbis, ...), in 16/24/32-bit
/// integer or float, any channel count; samples come out as float. Mono is duplicated to both
/// channels; stereo is kept; from three channels on, the first two are left and right and the
/// others are added to both at −3 dB, divided among them. Files at another rate are converted to
/// the output rate with libsamplerate's sinc converter (SRC_SINC_MEDIUM_QUALITY: flat to 20 kHz at
/// 48 kHz with about 97 dB of stop-band attenuation, fast enough for load time). libsamplerate was
/// chosen over soxr because the whole-buffer `src_simple` call is exactly what load-time
/// conversion needs, it is BSD-2-Clause, and it has been in Debian and maintained for two decades.
public enum AudioFileDecoder {
    /// Why a file could not be loaded.
    public enum LoadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// It is not a regular file, or libsndfile could not open or read it.
        case unreadable(path: String, reason: String)
        /// It holds no audio frames.
        case empty(path: String)
        /// Longer than the limit (10 minutes).
        case tooLong(path: String, seconds: Double)
        /// Rate conversion failed.
        case resampling(path: String, reason: String)

        /// A sentence naming the file.
        public var description: String {
            switch self {
            case .unreadable(let p, let r): return "cannot read audio file \(p): \(r)"
            case .empty(let p): return "audio file \(p) holds no audio frames"
            case .tooLong(let p, let s): return "audio file \(p) is \(Int(s)) s long; HapSync loads files up to 600 s"
            case .resampling(let p, let r): return "cannot convert the rate of \(p): \(r)"
            }
        }
    }

    /// Decodes `url` to stereo float at `sampleRate`.
    public static func decode(_ url: URL, sampleRate: Double) throws(LoadError) -> AudioSamples {
        let path = url.path
        // Opened as a regular file without blocking (a FIFO or device is refused), then read by
        // libsndfile through that descriptor.
        let handle: FileHandle
        do {
            handle = try RegularFile.open(path)
        } catch {
            switch error {
            case .notRegular(_, let kind): throw .unreadable(path: path, reason: "it is \(kind), not a regular file")
            case .cannotOpen(_, let reason): throw .unreadable(path: path, reason: reason)
            }
        }
        var info = SF_INFO()
        guard let file = sf_open_fd(handle.fileDescriptor, Int32(SFM_READ), &info, 0) else {
            throw .unreadable(path: path, reason: String(cString: sf_strerror(nil)))
        }
        defer {
            sf_close(file)
            withExtendedLifetime(handle) {}  // the descriptor stays open while libsndfile reads it
        }
        let channels = Int(info.channels)
        let frames = Int(info.frames)
        guard frames > 0, channels > 0 else { throw .empty(path: path) }
        let seconds = Double(frames) / Double(info.samplerate)
        guard seconds <= 600 else { throw .tooLong(path: path, seconds: seconds) }
        var raw = [Float](repeating: 0, count: frames * channels)
        let read = raw.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(frames)) }
        guard read > 0 else { throw .unreadable(path: path, reason: "no frames could be read (\(String(cString: sf_strerror(file))))") }
        let n = Int(read)
        var stereo = [Float](repeating: 0, count: n * 2)
        let extra = channels > 2 ? Float(0.5.squareRoot()) / Float(channels - 2) : 0
        for f in 0..<n {
            let base = f * channels
            var l = raw[base], r = channels > 1 ? raw[base + 1] : raw[base]
            if channels > 2 {
                var others: Float = 0
                for c in 2..<channels { others += raw[base + c] }
                l += others * extra
                r += others * extra
            }
            stereo[2 * f] = l
            stereo[2 * f + 1] = r
        }
        if Double(info.samplerate) != sampleRate {
            stereo = try resample(stereo, frames: n, from: Double(info.samplerate), to: sampleRate, path: path)
        }
        let outFrames = stereo.count / 2
        var left = [Float](repeating: 0, count: outFrames), right = [Float](repeating: 0, count: outFrames)
        for f in 0..<outFrames {
            left[f] = stereo[2 * f]
            right[f] = stereo[2 * f + 1]
        }
        return AudioSamples(left: left, right: right)
    }

    /// Converts interleaved stereo from one rate to another with libsamplerate.
    static func resample(_ input: [Float], frames: Int, from: Double, to: Double, path: String) throws(LoadError) -> [Float] {
        let ratio = to / from
        let outCapacity = Int((Double(frames) * ratio).rounded(.up)) + 16
        var output = [Float](repeating: 0, count: outCapacity * 2)
        var produced = 0
        let rc: Int32 = input.withUnsafeBufferPointer { inp in
            output.withUnsafeMutableBufferPointer { out in
                var data = SRC_DATA()
                data.data_in = inp.baseAddress
                data.data_out = out.baseAddress
                data.input_frames = frames
                data.output_frames = outCapacity
                data.src_ratio = ratio
                data.end_of_input = 1
                let rc = src_simple(&data, Int32(SRC_SINC_MEDIUM_QUALITY), 2)
                produced = data.output_frames_gen
                return rc
            }
        }
        guard rc == 0 else { throw .resampling(path: path, reason: String(cString: src_strerror(rc))) }
        return Array(output.prefix(produced * 2))
    }
}
