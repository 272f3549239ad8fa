import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// The decoding limit as `validate` sees it (`PlayablePattern.Check.audioOverLimit`): from the
/// files' headers, at 48 kHz, counting what the voices can reach. The long files are WAV headers
/// over a hole (sparse files: no disk, nothing decoded). Expected numbers are worked out from the
/// headers: frames ÷ file rate × 48000 output frames, 8 bytes each (stereo float).
@Suite("Audio decoding budget")
struct AudioDecodingBudgetTests {
    /// A folder with the pattern `ahap` as p.ahap and sparse 8 kHz mono 8-bit WAVs of the given lengths (s).
    static func folder(_ ahap: String, wavs: [String: Int]) throws -> URL {
        let dir = try TemporaryDirectory.create("budget")
        for (name, seconds) in wavs {
            let bytes = 8_000 * seconds
            func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(v >> (8 * $0) & 0xFF) } }
            var header = Array("RIFF".utf8) + le(36 + bytes, 4) + Array("WAVEfmt ".utf8) + le(16, 4)
            header += le(1, 2) + le(1, 2) + le(8_000, 4) + le(8_000, 4) + le(1, 2) + le(8, 2) + Array("data".utf8) + le(bytes, 4)
            let url = dir.appendingPathComponent(name)
            try Data(header).write(to: url)
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: UInt64(header.count + bytes))
            try handle.close()
        }
        let url = dir.appendingPathComponent("p.ahap")
        try Data(ahap.utf8).write(to: url)
        return url
    }

    static func audio(_ path: String, at time: Double = 0, duration: Double? = nil) -> String {
        #"{ "Event": { "Time": \#(time), "EventType": "AudioCustom", "EventWaveformPath": "\#(path)"\#(duration.map { #", "EventDuration": \#($0)"# } ?? "") } }"#
    }

    static func pattern(_ events: String...) -> String { #"{ "Version": 1, "Pattern": [ \#(events.joined(separator: ", ")) ] }"# }

    /// 20,000 s at 8 kHz played whole: 20000 × 48000 × 8 = 7,680,000,000 bytes = 7324.2 MiB, over
    /// 256 MiB. An error at the event, with line and column; the pattern still loads (info,
    /// render and plot describe it; play checks again at its real rate).
    @Test func audioOverTheLimitIsAnErrorNamingTheFileTheBytesAndTheLimit() throws {
        let url = try Self.folder(Self.pattern(Self.audio("huge.wav")), wavs: ["huge.wav": 20_000])
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let check = PlayablePattern.Check(contentsOf: url)
        let d = try #require(check.audioOverLimit)
        let huge = url.deletingLastPathComponent().appendingPathComponent("huge.wav").path
        #expect(d.severity == .error && d.code == .limitExceeded)
        #expect(d.path.description == "Pattern[0].Event.EventWaveformPath" && d.line == 1 && d.column != nil)
        #expect(d.message == "audio file \(huge) would decode to 7324.2 MiB (20000.0 s of stereo float at 48000 Hz); HapSync decodes at most 256 MiB of audio a pattern, "
                + "so 'hapsync play' would refuse it (48000 Hz is the output rate assumed here, playback's own unless its sound server runs at another); "
                + "cut the voice with EventDuration or use a shorter file")
        #expect(check.pattern != nil && check.errors.isEmpty)
        #expect(throws: Never.self) { try PlayablePattern(check) }
    }

    /// A voice cut by EventDuration reads at most duration ÷ 0.01 (slowest player rate) × 2
    /// (fastest pitch) of its file: 1 s reads 200 s, 9.6 M frames at 48 kHz, 73 MiB: fits. 10 s
    /// reads 2000 s: 96 M frames, 732.4 MiB: over.
    @Test func onlyWhatTheVoicesCanReachCounts() throws {
        let fits = try Self.folder(Self.pattern(Self.audio("huge.wav", duration: 1)), wavs: ["huge.wav": 20_000])
        defer { try? FileManager.default.removeItem(at: fits.deletingLastPathComponent()) }
        #expect(PlayablePattern.Check(contentsOf: fits).audioOverLimit == nil)

        let over = try Self.folder(Self.pattern(Self.audio("huge.wav", duration: 10)), wavs: ["huge.wav": 20_000])
        defer { try? FileManager.default.removeItem(at: over.deletingLastPathComponent()) }
        let d = try #require(PlayablePattern.Check(contentsOf: over).audioOverLimit)
        #expect(d.message.contains("would decode to 732.4 MiB (2000.0 s of stereo float at 48000 Hz)"), "\(d.message)")

        // The same file under a second voice that reads it whole: the whole file, counted once.
        let both = try Self.folder(Self.pattern(Self.audio("a.wav", duration: 0.001), Self.audio("a.wav", at: 1)), wavs: ["a.wav": 400])
        defer { try? FileManager.default.removeItem(at: both.deletingLastPathComponent()) }
        #expect(PlayablePattern.Check(contentsOf: both).audioOverLimit == nil, "400 s is 146.5 MiB, once")
    }

    /// The limit is a pattern's: two 400 s files are 146.5 MiB each; the second passes 256 MiB,
    /// and the error is at its event, saying what the first takes.
    @Test func thePatternsFilesShareTheLimit() throws {
        let url = try Self.folder(Self.pattern(Self.audio("a.wav"), Self.audio("a.wav", at: 2), Self.audio("b.wav", at: 3)),
                                  wavs: ["a.wav": 400, "b.wav": 400])
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let d = try #require(PlayablePattern.Check(contentsOf: url).audioOverLimit)
        let b = url.deletingLastPathComponent().appendingPathComponent("b.wav").path
        #expect(d.path.description == "Pattern[2].Event.EventWaveformPath")
        #expect(d.message.hasPrefix("audio file \(b) would decode to 146.5 MiB (400.0 s of stereo float at 48000 Hz); HapSync decodes at most 256 MiB of audio a pattern, "
                                    + "and the pattern's other audio files already take 146.5 MiB, so 'hapsync play' would refuse it"), "\(d.message)")
    }

    /// The rule's arithmetic on headers that may be absurd: no trap, saturated counts.
    @Test func absurdHeadersSaturate() {
        let info = AudioFileInfo(format: .wav, encoding: .pcm, sampleRate: 8_000, channels: 1, bitsPerSample: 8, frames: .max)
        let f = AudioDecodingBudget.frames(of: info, seconds: nil, outputRate: 768_000)
        #expect(f.output == .max && f.bytes == .max && f.whole)
        #expect(AudioDecodingBudget.overrun(f, path: "x", outputRate: 768_000, budget: AudioDecodingBudget.limitBytes, limit: AudioDecodingBudget.limitBytes)?.bytes == .max)
        #expect(AudioDecodingBudget.secondsRead(start: 1, end: 0.5) == 0)
        #expect(AudioDecodingBudget.secondsRead(start: 0, end: nil) == nil)
        #expect(AudioDecodingBudget.frames(of: info, seconds: .infinity, outputRate: 8_000).whole)
    }
}
