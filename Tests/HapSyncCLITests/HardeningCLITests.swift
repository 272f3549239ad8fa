import Foundation
import HapSyncCLI
import HapSyncTestSupport
import Testing

/// Runs the `hapsync` binary, killing it (by its own process id) when it has not ended within
/// `seconds`: `timedOut` then says so. A test of a crash or a hang must fail, not take the test
/// process down or hang it.
private func runBinary(_ args: [String], within seconds: Double) throws -> (run: Run, timedOut: Bool, signalled: Bool) {
    let p = Process()
    p.executableURL = try BinaryTests.binary()
    p.arguments = args
    let folder = try TemporaryDirectory("run")
    defer { folder.remove() }
    let outFile = folder.file("out"), errFile = folder.file("err")
    try #require(FileManager.default.createFile(atPath: outFile.path, contents: nil), "cannot create \(outFile.path)")
    try #require(FileManager.default.createFile(atPath: errFile.path, contents: nil), "cannot create \(errFile.path)")
    let out = try FileHandle(forWritingTo: outFile), err = try FileHandle(forWritingTo: errFile)
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let deadline = Date().addingTimeInterval(seconds)
    while p.isRunning, Date() < deadline { usleep(10_000) }
    let timedOut = p.isRunning
    if timedOut {
        kill(p.processIdentifier, SIGKILL)
    }
    p.waitUntilExit()
    try out.close()
    try err.close()
    let run = Run(status: p.terminationStatus, out: (try? String(contentsOf: outFile, encoding: .utf8)) ?? "",
                  err: (try? String(contentsOf: errFile, encoding: .utf8)) ?? "")
    return (run, timedOut, p.terminationReason == .uncaughtSignal)
}

@Suite("hapsync on extreme files: no crash, no hang")
struct HardeningCLITests {
    /// Times `validate` used to call valid and the other commands crashed on (SIGILL converting
    /// seconds to integer nanoseconds or control steps).
    @Test(arguments: ["1e16", "9.3e15", "1e308"])
    func aTimeBeyondTheLimitIsAnErrorEverywhere(_ time: String) throws {
        let url = try temporaryFile("late.ahap", #"{ "Version": 1, "Pattern": [ { "Event": { "Time": \#(time), "EventType": "HapticContinuous", "EventDuration": 0.5 } } ] }"#)
        let svg = url.deletingLastPathComponent().appendingPathComponent("late.svg").path
        for args in [["validate", url.path], ["info", url.path], ["info", "--json", url.path], ["render", url.path], ["plot", "--out", svg, url.path]] {
            let (r, timedOut, signalled) = try runBinary(args, within: 60)
            #expect(!timedOut && !signalled, "\(args[0]) \(signalled ? "crashed" : "hung")")
            #expect(r.status == 1, "\(args): status \(r.status)")
            let text = r.out + r.err
            #expect(text.contains("Pattern[0].Event.Time: Time \(time) s is over the limit of 86400.0 s on times and durations [limit-exceeded]"), "\(args): \(text)")
        }
    }

    /// At the limit everything works, and what `render` writes is JSON (a time of 1e308 used to be
    /// written `Infinity`).
    @Test func atTheLimitRenderWritesJSON() throws {
        let url = try temporaryFile("day.ahap", #"{ "Version": 1, "Pattern": [ { "Event": { "Time": 86400, "EventType": "HapticContinuous", "EventDuration": 0.01 } }, { "Event": { "Time": 86400, "EventType": "AudioCustom", "EventWaveformPath": "none.wav" } } ] }"#)
        let (r, timedOut, signalled) = try runBinary(["render", url.path], within: 60)
        #expect(!timedOut && !signalled && r.status == 0, "\(r.err)")
        for line in r.out.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
        }
        #expect(r.out.contains(#""t":86400,"#))
        let info = try runBinary(["info", url.path], within: 60)
        #expect(info.run.status == 0 && info.run.out.contains("duration    86400.010 s"), "\(info.run.out)")
    }

    /// `render` walked an audio voice's control grid over its whole span: 1e9 grid points here.
    @Test(arguments: [
        #"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "missing.wav", "EventDuration": 80000 } }"#,
        #"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "missing.wav" } }, { "Event": { "Time": 80000, "EventType": "HapticTransient" } }"#,
    ])
    func renderOfALongVoiceFinishes(_ entries: String) throws {
        let url = try temporaryFile("long.ahap", #"{ "Version": 1, "Pattern": [ \#(entries) ] }"#)
        let (r, timedOut, signalled) = try runBinary(["render", url.path], within: 30)
        #expect(!timedOut, "render did not finish in 30 s")
        #expect(!signalled && r.status == 0, "\(r.err)")
        #expect(r.out.split(separator: "\n").count < 40)
        let csv = try runBinary(["render", "--format", "csv", url.path], within: 30)
        #expect(!csv.timedOut && csv.run.status == 0)
    }

    /// `spring` sampled 0.1 ms steps over 20 responses: 2e11 steps for a response of 1e6 s.
    @Test func springOfAnyResponseFinishes() throws {
        let (r, timedOut, _) = try runBinary(["spring", "--response", "1e6", "--damping", "0.001"], within: 30)
        #expect(!timedOut, "spring did not finish in 30 s")
        #expect(r.status == 0 && r.out.contains("settled (±2 %)"), "\(r.out)\(r.err)")
        let undamped = try runBinary(["spring", "--response", "0.4", "--damping", "0", "--json"], within: 30)
        #expect(!undamped.timedOut && undamped.run.status == 0)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(undamped.run.out.utf8)) as? [String: Any], "not JSON: \(undamped.run.out)")
        #expect(doc["settlingTime2Percent"] is NSNull, "an undamped spring never settles")
        let text = try runBinary(["spring", "--response", "0.4", "--damping", "0"], within: 30)
        #expect(text.run.out.contains("settled (±2 %)     never (no damping)"), "\(text.run.out)")
    }
}
