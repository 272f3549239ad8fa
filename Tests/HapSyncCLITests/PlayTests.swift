import Foundation
import HapSyncCLI
import HapSyncHapticOutput
import HapSyncLiveTesting
import HapSyncTestSupport
import Testing

/// `hapsync play` through the built binary, on real threads. These tests compare what was played
/// with the offline render and check ordering invariants; they never judge how long anything took.
@Suite("hapsync play", .serialized)
struct PlayTests {
    static let conformanceFiles: [String] = ((try? FileManager.default.subpathsOfDirectory(atPath: conformance.appendingPathComponent("SampleAHAPs").path)) ?? [])
        .filter { $0.hasSuffix(".ahap") }.sorted().map { conformance.appendingPathComponent("SampleAHAPs/\($0)").path }

    /// (pattern time, kind, intensity, sharpness) of the render's level and transient records.
    static func rendered(_ file: String) throws -> [(Double, String, Double, Double)] {
        try hapsync("render", "--resources", streamingAssets, file).out.split(separator: "\n").compactMap { line in
            let r = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard let kind = r["type"] as? String, kind == "level" || kind == "transient" else { return nil }
            return (try #require(r["t"] as? Double), kind, try #require(r["intensity"] as? Double), try #require(r["sharpness"] as? Double))
        }
    }

    @Test(.needsSoundServer, arguments: conformanceFiles)
    func traceMatchesTheRenderOneToOne(_ file: String) async throws {
        try await retryingWhenStalled("play \((file as NSString).lastPathComponent)") {
            #expect(Self.conformanceFiles.count == 21)
            let traceFolder = try TemporaryDirectory("play")
            defer { traceFolder.remove() }
            let trace = traceFolder.file("play.jsonl")
            let r = try BinaryTests.run(["play", "--at", "+20", "--haptics", "trace:\(trace.path)", "--resources", streamingAssets, file])
            #expect(r.status == 0, "\(r.err)")
            #expect(r.out.contains("dispatch    p50 ") && r.out.contains("real-time   "))
            let records = try TraceRecord.read(contentsOf: trace.path).commands
            let played = records.filter { $0.kind != .stopAll }
            let expected = try Self.rendered(file)
            #expect(played.count == expected.count)
            for (p, e) in zip(played, expected) {
                #expect(abs(p.t - e.0) < 1e-6 && p.kind.rawValue == e.1)
                #expect(abs(p.intensity - e.2) < 1e-5 && abs(p.sharpness - e.3) < 1e-5)
                #expect(p.releasedNs >= p.scheduledNs && p.appliedNs >= p.releasedNs, "released never early, applied after release")
                #expect(p.dispatchNs == Int64(p.releasedNs - p.scheduledNs), "a measured figure")
            }
            // Deadlines come in order, unless the audio clock stepped: a reported underrun restarts its
            // fit, and a pattern with audio then puts its later commands where the audio is now heard,
            // which may be a few ms earlier than the deadlines already released (they go out at once).
            let scheduled = played.map(\.scheduledNs), released = played.map(\.releasedNs)
            #expect(released == released.sorted(), "released in order")
            if Self.underruns(r.out) == 0 {
                #expect(scheduled == scheduled.sorted(), "\(r.out)")
            }
            #expect(records.last?.kind == .stopAll)
        }
    }

    /// The underruns `play`'s summary reports (0 when it played no audio).
    static func underruns(_ summary: String) -> Int {
        guard let line = summary.split(separator: "\n").first(where: { $0.hasPrefix("audio ") }),
              let range = line.range(of: #"(\d+) underruns"#, options: .regularExpression) else { return 0 }
        return Int(line[range].split(separator: " ")[0]) ?? 0
    }

    @Test(.needsPulseAudio) func chromeTraceAndLoops() throws {
        let traceFolder = try TemporaryDirectory("play")
        defer { traceFolder.remove() }
        let trace = traceFolder.file("play.json")
        let taps = packageRoot.appendingPathComponent("Assets/taps.ahap").path
        let r = try BinaryTests.run(["play", "--loop", "3", "--at=+10", "--haptics", "trace:\(trace.path)", taps])
        #expect(r.status == 0)
        #expect(r.out.contains("commands    9 applied of 9 scheduled, 0 ring overflows (+ 1 final stop)"), "\(r.out)")
        #expect(r.out.contains("audio       pulse at "), "taps.ahap has audio: it plays through PulseAudio")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: trace)) as? [String: Any])
        let events = try #require(doc["traceEvents"] as? [[String: Any]])
        let taps3 = events.filter { $0["ph"] as? String == "i" && $0["name"] as? String == "transient" }
        #expect(taps3.count == 9)
        let times = try taps3.map { try #require($0["ts"] as? Double) }
        #expect(times == times.sorted())
    }

    @Test func refusesToOverwriteATrace() throws {
        let traceFolder = try TemporaryDirectory("keep")
        defer { traceFolder.remove() }
        let trace = traceFolder.file("keep.jsonl")
        try Data("mine\n".utf8).write(to: trace)
        let r = try BinaryTests.run(["play", "--haptics", "trace:\(trace.path)", packageRoot.appendingPathComponent("Assets/taps.ahap").path])
        #expect(r.status == 1)
        #expect(r.err.hasPrefix("error: \(trace.path) already exists; not overwriting it"))
        #expect(try String(contentsOf: trace, encoding: .utf8) == "mine\n")
    }

    @Test(.needsSoundServer) func interruptStopsAndStillWritesTheTrace() throws {
        let traceFolder = try TemporaryDirectory("int")
        defer { traceFolder.remove() }
        let trace = traceFolder.file("int.jsonl")
        let p = Process()
        p.executableURL = try BinaryTests.binary()
        p.arguments = ["play", "--loop", "1000", "--haptics", "trace:\(trace.path)", packageRoot.appendingPathComponent("Assets/engine.ahap").path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = Pipe()
        try p.run()
        // Interrupt once playback is probably under way (a signal during start-up is handled too:
        // it ends the run before playing).
        Thread.sleep(forTimeInterval: 3)
        kill(p.processIdentifier, SIGINT)
        let summary = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 130)
        #expect(summary.contains("(interrupted by SIGINT: stopped at once, backend silenced)"))
        let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
        #expect(lines.last?.contains("\"kind\":\"stop-all\"") == true)
    }

    /// Without the right to real-time scheduling (an unprivileged user, all capabilities dropped)
    /// the engine still plays and the summary says what the system refused.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv to drop to an unprivileged user"))
    func runsAnywayWhenRealtimeIsRefused() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                       try BinaryTests.binary().path, "play", "--audio", "none", packageRoot.appendingPathComponent("Assets/taps.ahap").path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = Pipe()
        try p.run()
        let summary = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(summary.contains("commands    3 applied of 3 scheduled, 0 ring overflows (+ 1 final stop)"), "\(summary)")
        // RealtimeKit is asked after the refusal; here (no rtkit-daemon, or no system bus) it
        // does not grant either, and the line gives both answers.
        #expect(summary.contains("real-time   SCHED_FIFO refused (Operation not permitted (errno 1); RealtimeKit: "), "\(summary)")
        #expect(summary.contains(") for hapsync-sched 80, hapsync-output 79: normal priority"), "\(summary)")
    }

    @Test func usageErrors() {
        let taps = packageRoot.appendingPathComponent("Assets/taps.ahap").path
        #expect(hapsync("play", "--haptics", "rumble", taps).err.hasPrefix("error: --haptics must be evdev:PATH, evdev:auto, trace:PATH, waveform:SINK[:rear|mono|left|right|all], waveform:auto or none, not 'rumble'"))
        #expect(hapsync("play", "--rumble-interval", "0", taps).err.hasPrefix("error: --rumble-interval must be a number of milliseconds from 1 to 10000, not '0'"))
        let missing = hapsync("play", "--haptics", "evdev:/dev/input/event99", taps)
        #expect(missing.status == 1 && missing.err.contains("error: cannot open /dev/input/event99: no such device (unplugged?); 'hapsync devices' lists what is there"))
        #expect(hapsync("play", "--loop", "0", taps).status == 64)
        #expect(hapsync("play", "--at", "soon", taps).status == 64)
        #expect(hapsync("play").status == 64)
    }
}
