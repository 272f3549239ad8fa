import Foundation
import HapSyncAHAP

/// The one rule for how much audio a pattern decodes to play: which part of each file its voices
/// can reach, how many frames that is at an output rate, and whether the pattern's files together
/// stay within `limitBytes`. `hapsync validate` applies it to the files' headers at
/// `assumedOutputRate` (`PlayablePattern.Check.audioOverLimit`); playback applies it at its
/// stream's real rate before decoding each file (`PatternAudioLoader`, `AudioFileDecoder`). Both
/// call the functions here, so they agree on every number.
///
/// - **Reach.** A voice from `start` to a known `end` reads at most (end − start) ÷ the slowest
///   player rate × the fastest pitch rate seconds of its file, from its start (slower playback
///   lengthens a voice in real time while its file keeps its own speed); a voice with no known end
///   reads the whole file. A file several voices use is decoded once, as far as the furthest reads.
/// - **Frames.** Reading `seconds` of a file takes that many frames at the file's rate and one more
///   (which linear interpolation reads), never more than the file holds; converted to the output
///   rate, each frame kept is stereo float, `bytesPerFrame` bytes.
/// - **Limit.** The files' frames together, each counted once, are at most `limitBytes`; the file
///   that passes it is refused before it is decoded (`Overrun`).
///
/// Pure arithmetic on numbers from headers, which may be absurd: no trap, counts saturate.
public enum AudioDecodingBudget {
    /// The most decoded audio one pattern may hold, in bytes: 256 MiB, which is 11 min 39 s of
    /// stereo float at 48 kHz.
    public static let limitBytes = 256 << 20
    /// Bytes a decoded frame takes: stereo 32-bit float.
    public static let bytesPerFrame = 8
    /// The slowest player rate, where `HapticPatternPlayer.playbackRates` starts: a voice played
    /// this slowly lasts longest in real time and so reads furthest into its file.
    public static let slowestPlaybackRate = 0.01
    /// The fastest a file is read: its rate at the highest AudioPitch (2).
    public static var fastestPitchRate: Double { AudioVoice.playbackRate(pitch: AHAPEventParameterID.audioPitch.range.upperBound) }
    /// The output rate `validate` assumes, knowing no sound server: 48 kHz, the rate playback's
    /// stream has until its server says otherwise (and the default of PulseAudio and PipeWire). A
    /// sink at another rate decodes proportionally more or less; playback checks at its real rate.
    public static let assumedOutputRate = 48_000.0

    /// The most seconds of its file, from the file's start, that a voice from `start` to `end` can
    /// read; nil (all of it) when its end is unknown.
    public static func secondsRead(start: Double, end: Double?) -> Double? {
        guard let end else { return nil }
        return max(0, end - start) * (fastestPitchRate / slowestPlaybackRate)
    }

    /// What each file must provide, in the order the files first appear: the furthest any of the
    /// reads naming it reaches (`secondsRead`), nil when one of them reads it whole.
    public static func reach<File: Hashable>(_ reads: [(file: File, seconds: Double?)]) -> [(file: File, seconds: Double?)] {
        var order: [File] = []
        var furthest: [File: Double?] = [:]
        for (file, seconds) in reads {
            if let known = furthest[file] {
                furthest[file] = known.flatMap { a in seconds.map { max(a, $0) } }
            } else {
                order.append(file)
                furthest[file] = .some(seconds)
            }
        }
        return order.map { ($0, furthest[$0] ?? nil) }
    }

    /// The frames decoding a file reads and keeps.
    public struct Frames: Sendable, Equatable {
        /// Frames the file holds, at its decoder's rate.
        public var available: Int
        /// Frames read from the file's start, at its decoder's rate (all of them, or the reach and
        /// the one more interpolation reads).
        public var read: Int
        /// Stereo frames kept, at the output rate.
        public var output: Int
        /// Whether what is read is the whole file.
        public var whole: Bool { read == available }
        /// Bytes the kept frames take (`Int.max` when that does not fit).
        public var bytes: Int { AudioDecodingBudget.bytes(frames: output) }
    }

    /// The frames of a file whose header is `info`, read by a decoder at `sourceRate` (the header's
    /// rate when nil; a decoder may report another, for the same length in seconds), as far as
    /// `seconds` (nil: the whole file), kept at `outputRate`.
    public static func frames(of info: AudioFileInfo, sourceRate: Int? = nil, seconds: Double?, outputRate: Double) -> Frames {
        let rate = sourceRate ?? info.sampleRate
        let available = rate == info.sampleRate ? info.frames
            : AudioFileInfo.frameCount(info.duration, rate: Double(rate), rounding: .toNearestOrAwayFromZero)
        var read = available
        if let seconds {
            let reach = AudioFileInfo.frameCount(seconds, rate: Double(rate))
            if reach < available { read = reach + 1 }
        }
        let output = Double(rate) == outputRate ? read : AudioFileInfo.frameCount(Double(read) / Double(rate), rate: outputRate)
        return Frames(available: available, read: read, output: output)
    }

    /// Bytes `frames` decoded frames take; `Int.max` when that does not fit.
    public static func bytes(frames: Int) -> Int {
        let (bytes, overflow) = max(0, frames).multipliedReportingOverflow(by: bytesPerFrame)
        return overflow ? Int.max : bytes
    }

    /// Whether `frames` decoded frames fit in `budget` bytes.
    public static func fits(frames: Int, budget: Int) -> Bool { frames <= budget / bytesPerFrame }

    /// A file whose decoded audio would pass the limit: what it needs, and what the limit and the
    /// pattern's other files leave.
    public struct Overrun: Sendable, Equatable, CustomStringConvertible {
        /// The file's path.
        public var path: String
        /// Bytes of stereo float it would decode to.
        public var bytes: Int
        /// Seconds that is at `sampleRate`.
        public var seconds: Double
        /// The output rate it would be decoded at.
        public var sampleRate: Double
        /// The limit a pattern, in bytes (`limitBytes` unless a caller set its own).
        public var limit: Int
        /// Bytes the pattern's other files already take.
        public var others: Int

        /// Makes one.
        public init(path: String, bytes: Int, seconds: Double, sampleRate: Double, limit: Int, others: Int) {
            self.path = path
            self.bytes = bytes
            self.seconds = seconds
            self.sampleRate = sampleRate
            self.limit = limit
            self.others = others
        }

        /// "audio file P would decode to 293.0 MiB (800.0 s of stereo float at 48000 Hz); HapSync
        /// decodes at most 256 MiB of audio a pattern[, and the pattern's other audio files already take ...]".
        public var description: String {
            "audio file \(path) would decode to \(AudioDecodingBudget.mebibytes(bytes)) (\(String(format: "%.1f", seconds)) s of stereo float at \(Int(sampleRate)) Hz); "
                + "HapSync decodes at most \(AudioDecodingBudget.mebibytes(limit)) of audio a pattern"
                + (others > 0 ? ", and the pattern's other audio files already take \(AudioDecodingBudget.mebibytes(others))" : "")
        }
    }

    /// A byte count as HapSync's messages show sizes: "256 MiB" when whole, else "12.5 MiB".
    public static func mebibytes(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : String(format: "%.1f MiB", Double(bytes) / Double(1 << 20))
    }

    /// The overrun of decoding `frames` of the file at `path` at `outputRate` within `budget` of a
    /// pattern's `limit` bytes (the rest taken by its other files); nil when it fits.
    public static func overrun(_ frames: Frames, path: String, outputRate: Double, budget: Int, limit: Int) -> Overrun? {
        guard !fits(frames: frames.output, budget: budget) else { return nil }
        return Overrun(path: path, bytes: frames.bytes, seconds: Double(frames.output) / outputRate, sampleRate: outputRate,
                       limit: limit, others: limit - budget)
    }

    /// The first file of a pattern whose audio would pass `limit` at `outputRate`, its files taken
    /// in turn as playback loads them (`reach` order, each counted once): nil when all fit. `files`
    /// gives each file's path and header, as far as its voices read it.
    public static func firstOverrun(_ files: [(path: String, info: AudioFileInfo, seconds: Double?)], outputRate: Double,
                                    limit: Int = limitBytes) -> Overrun? {
        var used = 0
        for file in files {
            let frames = frames(of: file.info, seconds: file.seconds, outputRate: outputRate)
            if let overrun = overrun(frames, path: file.path, outputRate: outputRate, budget: limit - used, limit: limit) { return overrun }
            used += frames.bytes
        }
        return nil
    }
}
