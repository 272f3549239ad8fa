import Foundation
import HapSyncCLI
import HapSyncHapticOutput
import HapSyncTestSupport
import Testing

/// `hapsync feedback`, `hapsync spring` and the accessibility / advanced options of `play`.
@Suite("hapsync feedback, spring, play options", .serialized)
struct FeedbackCLITests {
    /// The trace's commands less the final stop.
    func traceRecords(_ url: URL) throws -> [TraceRecord.Command] {
        try TraceRecord.read(contentsOf: url.path).commands.filter { $0.kind != .stopAll }
    }

    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory

    init() throws {
        scratch = try TemporaryDirectory("fb")
    }

    /// A fresh file name in the test's folder.
    func tempPath(_ ext: String) -> URL { scratch.file("\(UUID().uuidString).\(ext)") }

    @Test func listsAndExportsWithoutOverwriting() throws {
        let list = hapsync("feedback", "--list")
        #expect(list.status == 0)
        #expect(list.out.split(separator: "\n").count == 17)
        #expect(list.out.contains("impact-heavy    72 ms"))
        let dir = scratch.file("export")
        #expect(hapsync("feedback", "--export", dir.path).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).count == 17)
        let mine = dir.appendingPathComponent("success.ahap")
        try Data("mine".utf8).write(to: mine)
        let again = hapsync("feedback", "--export", dir.path)
        #expect(again.status == 1)
        #expect(again.err.contains("success.ahap already exists; not overwriting it"))
        #expect(try String(contentsOf: mine, encoding: .utf8) == "mine")
        #expect(hapsync("feedback", "--export", dir.path, "--force").status == 0)
        #expect(hapsync("validate", mine.path).status == 0)
    }

    @Test func badNamesAndValuesAreUsageErrors() {
        let bogus = hapsync("feedback", "bogus")
        #expect(bogus.status == 64 && bogus.err.contains("unknown feedback 'bogus'; known: success, warning"))
        let intensity = hapsync("feedback", "impact-heavy", "--intensity", "3")
        #expect(intensity.status == 64 && intensity.err.contains("--intensity must be a number from 0 to 1, not '3'"))
        let scale = hapsync("play", "--intensity-scale", "1.5", packageRoot.appendingPathComponent("Assets/taps.ahap").path)
        #expect(scale.status == 64 && scale.err.contains("--intensity-scale must be a number from 0 to 1, not '1.5'"))
        let rate = hapsync("play", "--playback-rate", "0", packageRoot.appendingPathComponent("Assets/taps.ahap").path)
        #expect(rate.status == 64 && rate.err.contains("--playback-rate must be a number from 0.01 to 100"))
    }

    @Test func springPrintsThePhysics() throws {
        let text = hapsync("spring", "--response", "0.4", "--damping", "0.7")
        #expect(text.status == 0)
        #expect(text.out.contains("peak (overshoot)   280.1 ms, 4.6 % past the target"))
        #expect(text.out.contains("target reached     209.2 ms"))
        let json = hapsync("spring", "--response", "0.4", "--damping", "0.7", "--json")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(abs(try #require(doc["peakTime"] as? Double) - 0.280056) < 1e-5)
        let critical = hapsync("spring", "--response", "0.4", "--damping", "1")
        #expect(critical.out.contains("no overshoot"))
        #expect(hapsync("spring", "--response", "0.4").status == 64)
        let zero = hapsync("spring", "--response", "0", "--damping", "0.5")
        #expect(zero.status == 64 && zero.err.contains("--response must be a number of seconds above 0, not '0'"))
    }

    @Test func feedbackPlaysWithTheIntensityScale() throws {
        let trace = tempPath("jsonl")
        defer { try? FileManager.default.removeItem(at: trace) }
        let r = try BinaryTests.run(["feedback", "success", "--at", "+10", "--intensity-scale", "0.5", "--haptics", "trace:\(trace.path)"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("played      success on trace") && r.out.contains("settings    intensity × 0.5"))
        let taps = try traceRecords(trace)
        #expect(taps.map(\.intensity) == [0.3, 0.5], "0.6 and 1.0, halved")
        #expect(taps.map(\.t) == [0, 0.105])
    }

    @Test func environmentPolicyAppliesAndBadValuesAreNamed() throws {
        let trace = tempPath("jsonl")
        defer { try? FileManager.default.removeItem(at: trace) }
        let off = try BinaryTests.run(["feedback", "warning", "--at", "+10", "--haptics", "trace:\(trace.path)"], environment: ["HAPSYNC_HAPTICS": "off"])
        #expect(off.status == 0)
        #expect(off.out.contains("settings    haptics off"))
        #expect(try traceRecords(trace).isEmpty, "taps are dropped when haptics are off")
        let bad = try BinaryTests.run(["feedback", "warning"], environment: ["HAPSYNC_RATE_LIMIT_MS": "soon"])
        #expect(bad.status == 64)
        #expect(bad.err.contains("HAPSYNC_RATE_LIMIT_MS: 'soon' is not milliseconds from 0 to 60000"))
    }

    @Test func playbackRateAndFromShiftTheRender() throws {
        let taps = packageRoot.appendingPathComponent("Assets/taps.ahap").path
        let rendered = try PlayTests.rendered(taps).filter { $0.1 == "transient" }
        let trace = tempPath("jsonl")
        defer { try? FileManager.default.removeItem(at: trace) }
        let r = try BinaryTests.run(["play", "--audio", "none", "--playback-rate", "2", "--haptics", "trace:\(trace.path)", taps])
        #expect(r.status == 0, "\(r.err)")
        let played = try traceRecords(trace).filter { $0.kind == .transient }
        #expect(played.count == rendered.count)
        // Scheduled times keep the render's spacing, halved (to the nanosecond rounding).
        let s = played.map { Int($0.scheduledNs) }
        for i in 1..<min(s.count, rendered.count) {
            let want = (rendered[i].0 - rendered[i - 1].0) / 2 * 1e9
            #expect(abs(Double(s[i] - s[i - 1]) - want) < 2, "gap \(i)")
        }
        let trace2 = tempPath("jsonl")
        defer { try? FileManager.default.removeItem(at: trace2) }
        let from = try BinaryTests.run(["play", "--audio", "none", "--from", "0.2", "--haptics", "trace:\(trace2.path)", taps])
        #expect(from.status == 0, "\(from.err)")
        let skipped = try traceRecords(trace2).filter { $0.kind == .transient }.map(\.t)
        #expect(skipped == rendered.map(\.0).filter { $0 >= 0.2 })
    }
}
