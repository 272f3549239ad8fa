import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// `validate` and playback apply one decoding limit (`AudioDecodingBudget`): for a pattern whose
/// audio headers put it over, `PlayablePattern.Check.audioOverLimit` (validate, at 48 kHz) and
/// `PatternAudioLoader` (playback, at its stream's rate: here 48 kHz, then 44.1 kHz) refuse it with
/// the same file, bytes, seconds and limit. The files are sparse WAVs (`sparseWAV`): their
/// headers claim what they hold, nothing is decoded.
@Suite("Decoding limit: validate and playback agree")
struct DecodingLimitAgreementTests {
    /// Validate's message up to its own addition (", so 'hapsync play' would refuse it ...").
    static func validateSays(_ url: URL) throws -> String {
        let d = try #require(PlayablePattern.Check(contentsOf: url).audioOverLimit)
        let own = try #require(d.message.range(of: ", so 'hapsync play' would refuse it"))
        return String(d.message[..<own.lowerBound])
    }

    static func playbackSays(_ url: URL, rate: Double) throws -> String? {
        let playable = try PlayablePattern(contentsOf: url)
        do {
            _ = try PatternAudioLoader.samples(for: playable.timeline, files: playable.audioFiles, sampleRate: rate, cache: AudioSampleCache())
            return nil
        } catch {
            return error.description
        }
    }

    static func pattern(_ events: [(path: String, time: Double, duration: Double?)], wavs: [String: Double]) throws -> URL {
        let dir = try TemporaryDirectory.create("dec")
        for (name, seconds) in wavs { try sparseWAV(dir.appendingPathComponent(name), rate: 8_000, channels: 1, bits: 8, seconds: seconds) }
        let entries = events.map { e in
            #"{ "Event": { "Time": \#(e.time), "EventType": "AudioCustom", "EventWaveformPath": "\#(e.path)"\#(e.duration.map { #", "EventDuration": \#($0)"# } ?? "") } }"#
        }
        let url = dir.appendingPathComponent("p.ahap")
        try Data(#"{ "Version": 1, "Pattern": [ \#(entries.joined(separator: ", ")) ] }"#.utf8).write(to: url)
        return url
    }

    /// A 20,000 s file played whole: 7,680,000,000 bytes at 48 kHz (7324.2 MiB); 20000 × 44100 × 8
    /// = 7,056,000,000 bytes (6729.1 MiB) at 44.1 kHz.
    @Test func aFileOverTheLimitIsRefusedByBothWithTheSameNumbers() throws {
        let url = try Self.pattern([("huge.wav", 0, nil)], wavs: ["huge.wav": 20_000])
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let huge = url.deletingLastPathComponent().appendingPathComponent("huge.wav").path
        let expected = "audio file \(huge) would decode to 7324.2 MiB (20000.0 s of stereo float at 48000 Hz); HapSync decodes at most 256 MiB of audio a pattern"
        #expect(try Self.validateSays(url) == expected)
        #expect(try Self.playbackSays(url, rate: 48_000) == expected)
        #expect(try Self.playbackSays(url, rate: 44_100)
                == "audio file \(huge) would decode to 6729.1 MiB (20000.0 s of stereo float at 44100 Hz); HapSync decodes at most 256 MiB of audio a pattern")
    }

    /// Reach and sharing agree too: a voice cut to 10 s reads 2000 s (732.4 MiB); a 30 s file
    /// (30 × 48000 × 8 = 11,520,000 bytes, 11.0 MiB, decoded by playback) then the 20,000 s one pass
    /// the limit at the second, the first counted as taken.
    @Test(arguments: [0, 1])
    func whatVoicesReachAndFilesShareIsCountedAlike(_ example: Int) throws {
        let url = example == 0
            ? try Self.pattern([("huge.wav", 0.5, 10)], wavs: ["huge.wav": 20_000])
            : try Self.pattern([("a.wav", 0, nil), ("a.wav", 1, 0.5), ("b.wav", 2, nil)], wavs: ["a.wav": 30, "b.wav": 20_000])
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let validate = try Self.validateSays(url)
        #expect(try Self.playbackSays(url, rate: 48_000) == validate)
        #expect(validate.contains(example == 0 ? "would decode to 732.4 MiB (2000.0 s" : "7324.2 MiB (20000.0 s of stereo float at 48000 Hz); HapSync decodes at most 256 MiB of audio a pattern, and the pattern's other audio files already take 11.0 MiB"), "\(validate)")
    }
}
