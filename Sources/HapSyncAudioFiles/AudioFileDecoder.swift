import Foundation
import HapSyncAHAP
import HapSyncCore

/// Decodes audio files for the mixer, at load time (never on the real-time path), in bounded
/// memory and only as far as asked.
///
/// What plays is what `AudioFileInfo` reads (the one rule, so `validate`, `info` and playback
/// agree): WAV, AIFF/AIFC, CAF, FLAC, MP3 and M4A. libsndfile decodes WAV, AIFF, CAF (PCM, A-law,
/// µ-law), FLAC and MP3; FFmpeg decodes AAC and ALAC (M4A, CAF) and MP3 in M4A
/// (`AudioFrameSource`, `openSource`). The file is opened once, as a regular file without blocking
/// (`RegularFile`), and both its header and its audio are read from that descriptor.
///
/// Samples come out as float. Mono is duplicated to both channels; stereo is kept; from three
/// channels on, the first two are left and right and the others are added to both at −3 dB,
/// divided among them. Files at another rate are converted to the output rate
/// (`StereoRateConverter`).
///
/// Memory: the file is read, mixed down and converted in blocks of 4,096 frames; what is kept is
/// the stereo output alone (8 bytes a frame), whose size is known from the header before decoding
/// starts and must fit the caller's limit (`maxDecodedBytes` a pattern: `PatternAudioLoader`).
/// Decoding stops at the header's length (an MP3's or M4A's padding is not played), or after the
/// first `seconds` of the file when the caller asks for no more (a voice that plays part of it).
public enum AudioFileDecoder {
    /// The most decoded audio one pattern may hold, in bytes: 256 MiB, which is 11 min 39 s of
    /// stereo float at 48 kHz (each file decoded at the output rate, 8 bytes a frame). The limit of
    /// `AudioDecodingBudget`, the rule `validate` applies too.
    public static let maxDecodedBytes = AudioDecodingBudget.limitBytes
    /// Frames read and converted at a time.
    static let blockFrames = 4_096

    /// Why a file could not be loaded.
    public enum LoadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// It could not be opened or read (not a regular file, or a library failed on it).
        case unreadable(path: String, reason: String)
        /// Its header is not audio HapSync plays (`AudioFileInfo`'s reason).
        case unplayable(path: String, reason: String)
        /// It holds no audio frames.
        case empty(path: String)
        /// What would be decoded does not fit the limit: `bytes` of stereo float (`seconds` at the
        /// output rate), against `limit` bytes a pattern, of which `others` are already taken.
        case tooLarge(path: String, bytes: Int, seconds: Double, sampleRate: Double, limit: Int, others: Int)
        /// Rate conversion failed.
        case resampling(path: String, reason: String)

        /// A sentence naming the file.
        public var description: String {
            switch self {
            case .unreadable(let p, let r): return "cannot read audio file \(p): \(r)"
            case .unplayable(let p, let r): return "cannot play audio file \(p): \(r)"
            case .empty(let p): return "audio file \(p) holds no audio frames"
            case .tooLarge(let p, let bytes, let seconds, let rate, let limit, let others):
                return AudioDecodingBudget.Overrun(path: p, bytes: bytes, seconds: seconds, sampleRate: rate, limit: limit, others: others).description
            case .resampling(let p, let r): return "cannot convert the rate of \(p): \(r)"
            }
        }

        /// The error for a file the budget refuses.
        init(_ overrun: AudioDecodingBudget.Overrun) {
            self = .tooLarge(path: overrun.path, bytes: overrun.bytes, seconds: overrun.seconds, sampleRate: overrun.sampleRate,
                             limit: overrun.limit, others: overrun.others)
        }
    }

    /// Decodes `url` to stereo float at `sampleRate`: the whole file, or its first `seconds`
    /// (the rest is never read); throws `tooLarge` before decoding when that is over `limitBytes`.
    public static func decode(_ url: URL, sampleRate: Double, seconds: Double? = nil, limitBytes: Int = maxDecodedBytes) throws(LoadError) -> AudioSamples {
        try decode(url, sampleRate: sampleRate, seconds: seconds, budget: limitBytes, limit: limitBytes).samples
    }

    /// Decodes the whole of `url` to stereo float at the rate its decoder gives (no conversion),
    /// and that rate; throws `tooLarge` before decoding when it is over `limitBytes`.
    public static func decodeAtItsOwnRate(_ url: URL, limitBytes: Int = maxDecodedBytes) throws(LoadError) -> (samples: AudioSamples, sampleRate: Double) {
        let decoded = try decode(url, sampleRate: nil, seconds: nil, budget: limitBytes, limit: limitBytes)
        return (decoded.samples, decoded.sampleRate)
    }

    /// As `decode`, within `budget` bytes of a pattern's `limit` (for the message), saying whether
    /// the samples hold the whole file (`complete`) or only its first part, and at what rate they
    /// are (`sampleRate`, or the source's own when it is nil).
    static func decode(_ url: URL, sampleRate requested: Double?, seconds: Double?, budget: Int, limit: Int) throws(LoadError) -> (samples: AudioSamples, complete: Bool, sampleRate: Double) {
        let path = url.path
        let file: FileHandle
        do {
            file = try RegularFile.open(path)
        } catch {
            switch error {
            case .notRegular(_, let kind): throw .unreadable(path: path, reason: "it is \(kind), not a regular file")
            case .cannotOpen(_, let reason): throw .unreadable(path: path, reason: reason)
            }
        }
        let info: AudioFileInfo
        do { info = try AudioFileInfo(reading: file) } catch { throw .unplayable(path: path, reason: error.description) }
        guard (try? file.seek(toOffset: 0)) != nil else { throw .unreadable(path: path, reason: "cannot seek back to its start") }
        let source = try openSource(file, info: info, path: path)
        let channels = source.channels, rate = source.sampleRate
        guard channels > 0, rate > 0 else { throw .empty(path: path) }
        let sampleRate = requested ?? Double(rate)

        // Frames to read at the source's rate (the header's length, or the first `seconds` and one
        // frame more) and to keep at the output rate: the budget's rule, the one `validate` applies.
        let frames = AudioDecodingBudget.frames(of: info, sourceRate: rate, seconds: seconds, outputRate: sampleRate)
        let wanted = frames.read, outFrames = frames.output
        guard wanted > 0 else { throw .empty(path: path) }
        let converting = Double(rate) != sampleRate
        if let overrun = AudioDecodingBudget.overrun(frames, path: path, outputRate: sampleRate, budget: budget, limit: limit) {
            throw LoadError(overrun)
        }

        var left: [Float] = [], right: [Float] = []
        left.reserveCapacity(outFrames)
        right.reserveCapacity(outFrames)
        func keep(_ stereo: UnsafeBufferPointer<Float>) {
            for f in 0..<min(stereo.count / 2, outFrames - left.count) {
                left.append(stereo[2 * f])
                right.append(stereo[2 * f + 1])
            }
        }
        let converter = converting ? try StereoRateConverter(from: Double(rate), to: sampleRate, blockFrames: blockFrames, path: path) : nil
        let raw = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * channels)
        let stereo = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * 2)
        defer {
            raw.deallocate()
            stereo.deallocate()
        }
        var read = 0
        while read < wanted {
            let n = try source.read(into: raw, frames: min(blockFrames, wanted - read))
            if n == 0 { break }
            mixDown(raw, channels: channels, frames: n, into: stereo)
            if let converter {
                try converter.process(stereo, frames: n, last: false, emit: keep)
            } else {
                keep(UnsafeBufferPointer(start: stereo, count: n * 2))
            }
            read += n
        }
        guard read > 0 else { throw .unreadable(path: path, reason: "no frames could be read") }
        try converter?.process(stereo, frames: 0, last: true, emit: keep)
        return (AudioSamples(left: left, right: right), frames.whole || read < wanted, sampleRate)
    }

    /// Interleaved frames of any channel count to interleaved stereo (the rule in the type's comment).
    static func mixDown(_ raw: UnsafePointer<Float>, channels: Int, frames: Int, into stereo: UnsafeMutablePointer<Float>) {
        let extra = channels > 2 ? Float(0.5.squareRoot()) / Float(channels - 2) : 0
        for f in 0..<frames {
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
    }
}
