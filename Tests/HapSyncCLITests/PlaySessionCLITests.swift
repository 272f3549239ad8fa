import Foundation
import Glibc
import HapSyncTestSupport
import Testing

/// How a `play` run ends: at its end however far in it starts, with a summary that adds up, with
/// 128 + the signal's number for each signal that ends it, and carrying on through an audio server
/// restart (which used to print "interrupted" and exit 130).
@Suite("hapsync play: how a run ends", .serialized)
struct PlaySessionCLITests {
    /// A 30 s continuous event and a transient near its end.
    static let longPattern = """
        {"Version":1,"Pattern":[
        {"Event":{"Time":0.0,"EventType":"HapticContinuous","EventDuration":30,"EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":0.5}]}},
        {"Event":{"Time":29.8,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1.0}]}}
        ]}
        """

    private func scratch() throws -> TemporaryDirectory {
        try TemporaryDirectory("session")
    }

    /// `--from 29.5` of a 30 s pattern aborted with "playback did not finish ... after its end":
    /// the deadline subtracted the offset twice.
    @Test func aLateStartInALongPatternFinishes() throws {
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let file = dir.appendingPathComponent("long.ahap")
        try Self.longPattern.write(to: file, atomically: true, encoding: .utf8)
        let r = try BinaryTests.run(["play", "--audio", "none", "--haptics", "trace:\(dir.path)/t.jsonl", "--from", "29.5", file.path])
        #expect(r.status == 0, "\(r.err)")
        // The level in force at 29.5 s, the transient at 29.8 s and the end at 30 s.
        #expect(r.out.contains("commands    3 applied of 3 scheduled, 0 ring overflows (+ 1 final stop)"), "\(r.out)")
    }

    /// A transient of intensity 0 was counted as scheduled and never applied ("149 applied of 149
    /// scheduled" for 150 events): the summary names what was skipped, and its figures add up.
    @Test func silentTransientsAreCountedAsSkipped() throws {
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let file = dir.appendingPathComponent("silent.ahap")
        try """
            {"Version":1,"Pattern":[
            {"Event":{"Time":0.0,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1.0}]}},
            {"Event":{"Time":0.05,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":0.0}]}},
            {"Event":{"Time":0.1,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":0.5}]}}
            ]}
            """.write(to: file, atomically: true, encoding: .utf8)
        let r = try BinaryTests.run(["play", "--audio", "none", "--haptics", "trace:\(dir.path)/t.jsonl", "--loop", "2", file.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("commands    4 applied of 6 scheduled, 2 silent transients skipped, 0 ring overflows (+ 1 final stop)"), "\(r.out)")
    }

    private static func records(_ trace: URL) -> [Substring] {
        ((try? String(contentsOf: trace, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    /// SIGHUP left a 0-byte trace; SIGQUIT printed a crash backtrace and carried on. Every signal
    /// that asks a run to end now ends it cleanly: summary naming the signal, the trace written,
    /// exit status 128 + the signal's number.
    @Test(arguments: [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"), (SIGQUIT, "SIGQUIT")])
    func eachSignalEndsTheRunWithItsStatus(_ signal: Int32, _ name: String) throws {
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let file = dir.appendingPathComponent("long.ahap")
        try Self.longPattern.write(to: file, atomically: true, encoding: .utf8)
        let trace = dir.appendingPathComponent("t.jsonl")
        let run = try BackgroundRun(["play", "--audio", "none", "--haptics", "trace:\(trace.path)", file.path], in: dir)
        // Playing: the continuous level at 0 s is in the trace (the writer drains every 20 ms).
        let playing = run.wait(atMost: 60) { !Self.records(trace).isEmpty }
        #expect(playing, "the run reached its first command")
        guard run.process.isRunning else { return }
        kill(run.process.processIdentifier, signal)
        let r = run.finish()
        #expect(r.reason == .exit && r.status == 128 + signal, "\(r.reason) \(r.status): \(r.err)")
        #expect(r.out.contains("(interrupted by \(name): stopped at once, backend silenced)"), "\(r.out)")
        #expect(!r.err.contains("Backtrace") && !r.err.contains("Crash"), "\(r.err)")
        let lines = Self.records(trace)
        #expect(lines.count >= 2 && lines.last?.contains("\"kind\":\"stop-all\"") == true, "level, then the stop: \(lines)")
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "valid JSON: \(line)")
        }
    }

    /// A trace that failed used to be forgotten when a signal ended the run (exit 130, no error):
    /// a trace that could not be written fails the run whatever else happened.
    @Test func aFailedTraceIsReportedWhenASignalEndsTheRun() throws {
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        // A 30 s ramp: a level command every millisecond, so the trace outgrows its size limit at once.
        let file = dir.appendingPathComponent("ramp.ahap")
        try """
            {"Version":1,"Pattern":[
            {"Event":{"Time":0.0,"EventType":"HapticContinuous","EventDuration":30,"EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1.0}]}},
            {"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0.0,"ParameterCurveControlPoints":[{"Time":0,"ParameterValue":0.0},{"Time":30,"ParameterValue":1.0}]}}
            ]}
            """.write(to: file, atomically: true, encoding: .utf8)
        let trace = dir.appendingPathComponent("t.jsonl")
        // A file size limit of 4 blocks (dash's are 512 bytes) stands in for a full disk.
        let run = try BackgroundRun(["-c", "ulimit -f 4; exec \"$0\" play --audio none --haptics trace:\(trace.path) \(file.path)",
                                  try BinaryTests.binary().path], in: dir, executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(run.wait(atMost: 60) { !Self.records(trace).isEmpty }, "the trace is being written")
        // Then until it stops growing for 100 ms: at a record a millisecond it grows at every 20 ms
        // drain until a write fails. (If the writer was only held up, what it holds back is more
        // than the limit allows, and the final drain fails instead.)
        var size = -1, stableSince = Date()
        _ = run.wait(atMost: 60) {
            let now = (try? FileManager.default.attributesOfItem(atPath: trace.path)[.size] as? Int) ?? 0
            if now != size { size = now; stableSince = Date() }
            return Date().timeIntervalSince(stableSince) > 0.1
        }
        guard run.process.isRunning else { return }
        kill(run.process.processIdentifier, SIGINT)
        let r = run.finish()
        #expect(r.reason == .exit && r.status == 1, "\(r.status): \(r.err)")
        #expect(r.err.contains("File too large"), "\(r.err)")
        #expect(r.out.contains("(interrupted by SIGINT: stopped at once, backend silenced)"), "\(r.out)")
    }

    /// The sound server restarting mid-play (desktops restart PulseAudio and pipewire-pulse on
    /// their own): `play` printed "interrupted", exited 130 and could leave an empty trace. Now
    /// haptics go on while it is away, playback carries on when it is back, and the run ends at its
    /// end with status 0, the trace whole.
    @Test func playCarriesOnThroughAnAudioServerRestart() throws {
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let server = try PrivatePulseServer()
        try server.start()
        let trace = dir.appendingPathComponent("t.jsonl")
        // 15 loops of a 2 s pattern with a click sound and a transient every 0.25 s: time enough
        // for the server to go, come back and be found (the engine looks once a second).
        let clicks = packageRoot.appendingPathComponent("Assets/clicks.ahap").path
        let run = try BackgroundRun(["play", "--loop", "15", "--haptics", "trace:\(trace.path)", clicks], in: dir,
                                 environment: ["PULSE_SERVER": "unix:\(server.socket)"])
        #expect(run.wait(atMost: 60) { Self.records(trace).count >= 3 }, "playing on the private server")
        server.kill()
        #expect(run.wait(atMost: 60) { ((try? String(contentsOf: run.err, encoding: .utf8)) ?? "").contains("the audio server went away") },
                "the run noticed")
        let before = Self.records(trace).count
        #expect(run.wait(atMost: 60) { Self.records(trace).count > before }, "haptics go on without the server")
        try server.start()
        let r = run.finish()
        #expect(r.reason == .exit && r.status == 0, "\(r.status): \(r.err)")
        #expect(r.err.contains("the engine restarted and playback carries on from loop"), "\(r.err)")
        #expect(r.err.contains("came back; playback carried on (1 engine reset)"), "\(r.err)")
        #expect(!r.out.contains("interrupted"), "\(r.out)")
        let lines = Self.records(trace)
        #expect(lines.count >= 30, "the trace holds the whole run: \(lines.count) records")
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "valid JSON: \(line)")
        }
        // The players after the restart follow the new stream's audio clock.
        #expect(r.out.contains("sync        haptic applied − audio heard"), "\(r.out)")
    }
    /// The same on PipeWire natively: a private pipewire and wireplumber killed mid-play and
    /// started again, their sink made a moment after the server answers (as a session manager
    /// finds devices). The run carries on and ends at its end with status 0.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pipewire")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/wireplumber"), "pipewire is not installed"))
    func playCarriesOnThroughAPipeWireRestart() throws {
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let server = try PrivatePipeWireServer()
        try server.start()
        let trace = dir.appendingPathComponent("t.jsonl")
        let clicks = packageRoot.appendingPathComponent("Assets/clicks.ahap").path
        let run = try BackgroundRun(["play", "--audio", "pipewire", "--sink", server.sink, "--loop", "15", "--haptics", "trace:\(trace.path)", clicks],
                                    in: dir, environment: ["PIPEWIRE_REMOTE": server.socket])
        #expect(run.wait(atMost: 60) { Self.records(trace).count >= 3 }, "playing on the private server")
        server.kill()
        #expect(run.wait(atMost: 60) { ((try? String(contentsOf: run.err, encoding: .utf8)) ?? "").contains("the audio server went away") },
                "the run noticed")
        let before = Self.records(trace).count
        #expect(run.wait(atMost: 60) { Self.records(trace).count > before }, "haptics go on without the server")
        try server.start()
        let r = run.finish()
        #expect(r.reason == .exit && r.status == 0, "\(r.status): \(r.err)")
        #expect(r.err.contains("the engine restarted and playback carries on from loop"), "\(r.err)")
        #expect(r.out.contains("audio       pipewire"), "\(r.out)")
        #expect(Self.records(trace).count >= 30, "the trace holds the whole run")
    }
}
