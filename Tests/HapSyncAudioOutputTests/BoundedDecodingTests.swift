import Foundation
import Glibc
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncCore
import HapSyncTestSupport
import Testing

/// Decoding is bounded: by one documented limit a pattern (checked from the header, before
/// anything is decoded), by what a voice can play (not the whole file), and in working memory
/// (the output alone, not the file's channels and rate). The long files are sparse WAVs: silence
/// that takes no disk.
@Suite("Bounded decoding")
struct BoundedDecodingTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory

    init() throws {
        scratch = try TemporaryDirectory("dec")
    }

    /// 800 s at 48 kHz is 800 × 48000 × 8 bytes = 293.0 MiB of stereo float, over 256 MiB. The
    /// error comes from the header, before decoding.
    @Test func aFileOverTheLimitFailsBeforeDecodingNamingTheLimit() throws {
        let dir = scratch.url
        let long = dir.appendingPathComponent("long.wav")
        try sparseWAV(long, rate: 8_000, channels: 1, bits: 8, seconds: 800)
        #expect {
            _ = try AudioFileDecoder.decode(long, sampleRate: 48_000)
        } throws: { error in
            "\(error)" == "audio file \(long.path) would decode to 293.0 MiB (800.0 s of stereo float at 48000 Hz); HapSync decodes at most 256 MiB of audio a pattern"
        }
    }

    /// A 20-minute file (460 MB decoded: over the limit) played by a voice cut to 1 ms by its
    /// EventDuration decodes only what that voice can read: 1 ms ÷ the slowest player rate (0.01)
    /// × the fastest pitch rate (2) = 0.2 s. Without EventDuration the voice plays the whole file,
    /// which is over the limit.
    @Test func onlyWhatAVoiceCanPlayIsDecoded() throws {
        let dir = scratch.url
        let long = dir.appendingPathComponent("long.wav")
        try sparseWAV(long, rate: 8_000, channels: 1, bits: 8, seconds: 1_200)
        let output = PulseAudioOutput()   // not opened: decoding needs no server (48 kHz until one says otherwise)

        let cut = try PatternTimeline(pattern: AHAPPatternBuilder().audioCustom(at: 0.5, path: "long.wav", duration: 0.001).build()) { _ in 1_200 }
        let audio = try output.load(cut, files: ["long.wav": long])
        let frames = try #require(audio.samples[0]).frames
        #expect(frames >= 9_600 && frames <= 9_620, "0.2 s at 48 kHz and the few frames rounding adds: \(frames)")

        let whole = try PatternTimeline(pattern: AHAPPatternBuilder().audioCustom(at: 0, path: "long.wav").build()) { _ in 1_200 }
        #expect {
            _ = try output.load(whole, files: ["long.wav": long])
        } throws: { error in
            "\(error)".hasPrefix("audio file \(long.path) would decode to 439.5 MiB (1200.0 s of stereo float at 48000 Hz)")
        }
    }

    /// A voice can reach absurdly far (a duration of 1e300 s, an infinite one): that asks for the
    /// whole file, never an arithmetic trap.
    @Test func anAbsurdReachIsTheWholeFile() throws {
        let file = assets.appendingPathComponent("tap-48k-mono-16.wav")
        for seconds in [1e300, .infinity, .greatestFiniteMagnitude] {
            #expect(try AudioFileDecoder.decode(file, sampleRate: 48_000, seconds: seconds).frames == 2_880)
        }
        #expect(try AudioFileDecoder.decode(file, sampleRate: 48_000, seconds: .nan).frames == 1, "nothing, and the frame interpolation reads")
    }

    @Test func secondsAVoiceCanRead() throws {
        let timeline = try PatternTimeline(pattern: AHAPPatternBuilder()
            .audioCustom(at: 1, path: "a.wav", duration: 0.25)
            .audioCustom(at: 2, path: "a.wav", duration: 0.5, loop: true)
            .audioCustom(at: 3, path: "b.wav")
            .build()) { $0 == "a.wav" ? 600 : nil }
        #expect(timeline.voices.map(PatternAudioLoader.secondsRead(by:)) == [50, 100, nil])
    }

    /// The limit holds for a pattern's files together, cached ones included: each file is
    /// decoded once, to the furthest any voice reads, and shared with the next player.
    @Test func aPatternsFilesShareTheLimitAndTheCache() throws {
        let dir = scratch.url
        for name in ["a.wav", "b.wav", "c.wav"] { try sparseWAV(dir.appendingPathComponent(name), rate: 48_000, channels: 1, bits: 16, seconds: 1) }
        let files = Dictionary(uniqueKeysWithValues: ["a.wav", "b.wav", "c.wav"].map { ($0, dir.appendingPathComponent($0)) })
        let cache = AudioSampleCache()
        let limit = 1 << 20   // 2.7 s at 48 kHz
        let two = try PatternTimeline(pattern: AHAPPatternBuilder()
            .audioCustom(at: 0, path: "a.wav").audioCustom(at: 0, path: "b.wav").audioCustom(at: 2, path: "a.wav", duration: 0.001).build()) { _ in 1 }
        let first = try PatternAudioLoader.samples(for: two, files: files, sampleRate: 48_000, cache: cache, limitBytes: limit)
        #expect(first.map { $0?.frames } == [48_000, 48_000, 48_000], "a.wav once, whole (its first voice reads all of it)")
        #expect(first[0] === first[2])
        let again = try PatternAudioLoader.samples(for: two, files: files, sampleRate: 48_000, cache: cache, limitBytes: limit)
        #expect(again[0] === first[0] && again[1] === first[1], "the next player shares the cached samples")

        let three = try PatternTimeline(pattern: AHAPPatternBuilder()
            .audioCustom(at: 0, path: "a.wav").audioCustom(at: 0, path: "b.wav").audioCustom(at: 0, path: "c.wav").build()) { _ in 1 }
        #expect {
            _ = try PatternAudioLoader.samples(for: three, files: files, sampleRate: 48_000, cache: cache, limitBytes: limit)
        } throws: { error in
            "\(error)" == "audio file \(files["c.wav"]!.path) would decode to 0.4 MiB (1.0 s of stereo float at 48000 Hz); "
                + "HapSync decodes at most 1 MiB of audio a pattern, and the pattern's other audio files already take 0.7 MiB"
        }
    }

    /// A part decoded for one voice is reused when it reaches far enough, and decoded again
    /// further (then whole) when another pattern needs more.
    @Test func aPartIsReusedOrExtended() throws {
        let dir = scratch.url
        let url = dir.appendingPathComponent("a.wav")
        try sparseWAV(url, rate: 48_000, channels: 1, bits: 16, seconds: 10)
        let cache = AudioSampleCache()
        func load(duration: Double?) throws -> AudioSamples? {
            let t = try PatternTimeline(pattern: AHAPPatternBuilder().audioCustom(at: 0, path: "a.wav", duration: duration).build()) { _ in 10 }
            return try PatternAudioLoader.samples(for: t, files: ["a.wav": url], sampleRate: 48_000, cache: cache)[0]
        }
        let short = try #require(try load(duration: 0.01))
        #expect(short.frames == 96_001, "0.01 s ÷ 0.01 × 2 = 2 s, and one frame")
        #expect(try load(duration: 0.005) === short)
        #expect(try load(duration: nil)?.frames == 480_000)
    }

    /// The cache holds samples only while some player's audio does: a long-running engine that
    /// plays many files does not keep every one it ever decoded.
    @Test func theCacheLetsGoOfSamplesNoPlayerHolds() throws {
        let dir = scratch.url
        let url = dir.appendingPathComponent("a.wav")
        try sparseWAV(url, rate: 48_000, channels: 1, bits: 16, seconds: 1)
        let cache = AudioSampleCache()
        let t = try PatternTimeline(pattern: AHAPPatternBuilder().audioCustom(at: 0, path: "a.wav").build()) { _ in 1 }
        var held = try PatternAudioLoader.samples(for: t, files: ["a.wav": url], sampleRate: 48_000, cache: cache)
        #expect(cache.keys.count == 1)
        #expect(try PatternAudioLoader.samples(for: t, files: ["a.wav": url], sampleRate: 48_000, cache: cache)[0] === held[0])
        held = []
        #expect(cache.keys.isEmpty, "no player holds them: gone")
    }

    /// Decoding keeps the output, not the input: a sparse 8 s, 8-channel, 448 kHz, 16-bit WAV
    /// (57 MB; 115 MB as float) decodes to 3 MB of 48 kHz stereo, read and converted 4,096 frames
    /// at a time. Measured as the peak resident memory of a child process that decodes only this
    /// (the test binary again, running `decodePeakInAChildProcess`).
    @Test func decodingKeepsOnlyTheOutputInMemory() throws {
        let dir = scratch.url
        let wide = dir.appendingPathComponent("wide.wav"), result = dir.appendingPathComponent("peak.txt")
        try sparseWAV(wide, rate: 448_000, channels: 8, bits: 16, seconds: 8)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["--testing-library", "swift-testing", "--filter", "decodePeakInAChildProcess"]
        var env = ProcessInfo.processInfo.environment
        env["HAPSYNC_DECODE_PEAK_INPUT"] = wide.path
        env["HAPSYNC_DECODE_PEAK_OUTPUT"] = result.path
        env["LD_PRELOAD"] = nil
        child.environment = env
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        let text = try String(contentsOf: result, encoding: .utf8).split(separator: " ")
        let growthKiB = try #require(Int(text[0])), frames = try #require(Int(text[1]))
        #expect(frames == 384_000)
        #expect(growthKiB < 48 << 10, "peak resident memory grew by \(growthKiB >> 10) MiB while decoding")
    }

    /// The child half of `decodingKeepsOnlyTheOutputInMemory` (skipped unless it is that child):
    /// resets the peak resident size, decodes, writes the peak's growth in KiB and the frames.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HAPSYNC_DECODE_PEAK_INPUT"] != nil))
    func decodePeakInAChildProcess() throws {
        let env = ProcessInfo.processInfo.environment
        let input = URL(fileURLWithPath: env["HAPSYNC_DECODE_PEAK_INPUT"]!), output = URL(fileURLWithPath: env["HAPSYNC_DECODE_PEAK_OUTPUT"]!)
        func status(_ field: String) throws -> Int {
            let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(field + ":") })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        }
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)  // resets VmHWM to VmRSS
        let before = try status("VmRSS")
        let samples = try AudioFileDecoder.decode(input, sampleRate: 48_000)
        let peak = try status("VmHWM")
        try "\(peak - before) \(samples.frames)".write(to: output, atomically: true, encoding: .utf8)
    }
}
