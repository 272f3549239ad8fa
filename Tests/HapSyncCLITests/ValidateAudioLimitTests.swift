import Foundation
import HapSyncLiveTesting
import HapSyncTestSupport
import Testing

/// `hapsync validate` calls a pattern invalid when its audio would decode to more than `play`
/// decodes (256 MiB a pattern, stereo float at 48 kHz), as `play` refuses it; `info` still
/// describes it. (Before: "valid", and play refused a pattern validate had passed.) The file is a
/// WAV header over a hole: 20,000 s of 8 kHz mono 8-bit (160 MB that take no disk), which is
/// 20000 × 48000 × 8 = 7,680,000,000 bytes (7324.2 MiB) decoded at 48 kHz.
@Suite("hapsync validate: the decoding limit")
struct ValidateAudioLimitTests {
    static func hugePattern() throws -> (ahap: URL, wav: URL) {
        let dir = try TemporaryDirectory.create("validate-audio")
        let bytes = 8_000 * 20_000
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(v >> (8 * $0) & 0xFF) } }
        var header = Array("RIFF".utf8) + le(36 + bytes, 4) + Array("WAVEfmt ".utf8) + le(16, 4)
        header += le(1, 2) + le(1, 2) + le(8_000, 4) + le(8_000, 4) + le(1, 2) + le(8, 2) + Array("data".utf8) + le(bytes, 4)
        let wav = dir.appendingPathComponent("huge.wav")
        try Data(header).write(to: wav)
        let handle = try FileHandle(forWritingTo: wav)
        try handle.truncate(atOffset: UInt64(header.count + bytes))
        try handle.close()
        let ahap = dir.appendingPathComponent("huge.ahap")
        try Data(#"{ "Version": 1, "Pattern": [ { "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "huge.wav" } } ] }"#.utf8).write(to: ahap)
        return (ahap, wav)
    }

    static func overrun(_ wav: URL, rate: Int = 48_000, mebibytes: String = "7324.2") -> String {
        "audio file \(wav.path) would decode to \(mebibytes) MiB (20000.0 s of stereo float at \(rate) Hz); HapSync decodes at most 256 MiB of audio a pattern"
    }

    @Test func validateReportsItAsAnErrorInProcessAndFromTheBinary() throws {
        let (ahap, wav) = try Self.hugePattern()
        defer { try? FileManager.default.removeItem(at: ahap.deletingLastPathComponent()) }
        // Located at the value of EventWaveformPath, as the resolver's findings are.
        let text = try String(contentsOf: ahap, encoding: .utf8)
        let column = text.distance(from: text.startIndex, to: try #require(text.range(of: #""huge.wav""#)).lowerBound) + 1
        let finding = "\(ahap.path):1:\(column): error: Pattern[0].Event.EventWaveformPath: \(Self.overrun(wav)), so 'hapsync play' would refuse it "
            + "(48000 Hz is the output rate assumed here, playback's own unless its sound server runs at another); "
            + "cut the voice with EventDuration or use a shorter file [limit-exceeded]\n"
        for r in [hapsync("validate", ahap.path), try BinaryTests.run(["validate", ahap.path])] {
            #expect(r.status == 1, "\(r.out)\(r.err)")
            #expect(r.out == finding + "\(ahap.path): invalid (1 error, 0 warnings)\n", "\(r.out)")
        }
        let json = hapsync("validate", "--json", ahap.path)
        #expect(json.status == 1 && json.out.contains(#""code": "limit-exceeded""#) && json.out.contains(#""valid": false"#), "\(json.out)")
        let info = hapsync("info", ahap.path)
        #expect(info.status == 0 && info.out.contains("(WAV, 8-bit PCM, 8000 Hz, mono, 20000.000 s)"), "\(info.out)\(info.err)")
    }

    /// `play` refuses the same pattern with the same numbers at its stream's rate (48 kHz on the
    /// private server `.ci/with-pulse` starts; another server's rate scales them: 20000 × rate × 8).
    @Test(.needsSoundServer) func playRefusesItWithTheSameNumbers() throws {
        let (ahap, wav) = try Self.hugePattern()
        defer { try? FileManager.default.removeItem(at: ahap.deletingLastPathComponent()) }
        let r = try BinaryTests.run(["play", "--haptics", "none", ahap.path])
        #expect(r.status == 1, "\(r.out)\(r.err)")
        guard !r.err.contains("PulseAudio") || r.err.contains("would decode") else {
            Issue.record("no sound server (run under bash .ci/with-pulse): \(r.err)")
            return
        }
        let rate = try #require(r.err.range(of: #"stereo float at (\d+) Hz"#, options: .regularExpression).flatMap { Int(r.err[$0].split(separator: " ")[3]) })
        let mebibytes = String(format: "%.1f", Double(20_000 * rate * 8) / Double(1 << 20))
        #expect(r.err.contains("error: \(Self.overrun(wav, rate: rate, mebibytes: mebibytes))"), "\(r.err)")
    }
}
