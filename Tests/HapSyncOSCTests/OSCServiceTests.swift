import Foundation
import Glibc
import HapSyncAHAP
import HapSyncCore
import HapSyncHapticOutput
import HapSyncRuntime
import HapSyncTestSupport
import Testing
@testable import HapSyncOSC

/// The service through liblo-encoded packets on a real socket, with a real-time engine: what a
/// client sends is what liblo decodes (issue 26: T and F, which liblo hands over without data,
/// were refused; far-future tags held every slot; a trace that failed mid-run showed nowhere).
@Suite("OSC service through liblo", .serialized)
struct OSCServiceTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory
    var dir: URL { scratch.url }

    init() throws {
        scratch = try TemporaryDirectory("osvc")
        try #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}},{"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.5}}]}"#
            .write(to: dir.appendingPathComponent("tap.ahap"), atomically: true, encoding: .utf8)
    }

    private func engine(_ backend: HapticBackend = NullHapticBackend()) throws -> HapticEngine {
        let engine = try HapticEngine(configuration: .init(backend: backend))
        try engine.start()
        return engine
    }

    /// The value after `key` in a `/hapsync/status` reply.
    private func status(_ client: OSCTestClient, _ key: String) -> OSCValue? {
        guard let r = client.ask("/hapsync/status"), r.address == "/hapsync/status",
              let i = r.args.firstIndex(of: .string(key)), i + 1 < r.args.count else { return nil }
        return r.args[i + 1]
    }

    /// Two services in one process (the test runner runs suites side by side; a program may run
    /// two): a malformed packet is counted and answered by the service that got it only. liblo's
    /// error handler has no context pointer, and a process-wide count once made one service answer
    /// "not valid OSC" to a valid packet while another was decoding a bad one.
    @Test func aMalformedPacketIsOnlyItsOwnServicesError() throws {
        let engine = try engine()
        defer { engine.stop() }
        func service(_ name: String) throws -> OSCService {
            try OSCService(engine: engine, configuration: .init(endpoints: [.unix(path: dir.appendingPathComponent(name).path)], resourceRoots: [dir]))
        }
        let a = try service("a.sock"), b = try service("b.sock")
        let garbage: [UInt8] = Array("/hapsync/mute\0\0\0,s".utf8) + [0xFF, 0xFF]
        // On a thread of its own, as a running service decodes.
        let done = DispatchSemaphore(value: 0)
        Thread {
            garbage.withUnsafeBytes { a.process($0) }
            done.signal()
        }.start()
        done.wait()
        #expect(a.statistics.malformed == 1)
        #expect(b.statistics.malformed == 0, "the other service's bad packet is not this one's")
    }

    @Test func trueAndFalseArgumentsWork() throws {
        let engine = try engine()
        defer { engine.stop() }
        let running = try RunningService(engine: engine, dir: dir)
        defer { running.stop() }
        let c = try running.client()
        #expect(c.ask("/hapsync/mute", [.string("haptics"), .bool(true)])?.args == [.string("/hapsync/mute"), .string("haptics"), .int(1)])
        #expect(engine.isMutedForHaptics)
        #expect(c.ask("/hapsync/mute", [.string("haptics"), .bool(false)])?.args == [.string("/hapsync/mute"), .string("haptics"), .int(0)])
        #expect(!engine.isMutedForHaptics)
        #expect(c.ask("/hapsync/load", [.string("tap"), .string("tap.ahap")])?.address == "/hapsync/ok")
        let played = c.ask("/hapsync/play", [.string("tap"), .int(4)])
        #expect(played?.args == [.string("/hapsync/play"), .int(4)])
        #expect(c.ask("/hapsync/loop", [.int(4), .bool(true), .float(0.25)])?.args == [.string("/hapsync/loop"), .int(4)])
        #expect(c.ask("/hapsync/loop", [.int(4), .bool(false)])?.args == [.string("/hapsync/loop"), .int(4)])
        let refused = c.ask("/hapsync/loop", [.int(4), .bool(true), .float(0.001)])
        #expect(refused?.address == "/hapsync/error" && refused.map { "\($0.args)".contains("at least 10 ms") } == true, "\(String(describing: refused))")
    }

    /// 32 bundles tagged five years ahead: each refused (none holds a slot), and a play after them
    /// plays; time-tagged players are listed as scheduled and stop-all stops them.
    @Test func farFutureTagsAreRefusedAndScheduledPlayersAreListedAndStopped() throws {
        let engine = try engine()
        defer { engine.stop() }
        let running = try RunningService(engine: engine, dir: dir)
        defer { running.stop() }
        let c = try running.client()
        #expect(c.ask("/hapsync/load", [.string("tap"), .string("tap.ahap")])?.address == "/hapsync/ok")
        let fiveYears = Date().timeIntervalSince1970 + 5 * 365 * 86_400
        for _ in 0..<32 {
            let r = c.ask("/hapsync/play", [.string("tap")], at: fiveYears)
            #expect(r?.address == "/hapsync/error" && r.map { "\($0.args)".contains("at most 300 s ahead") } == true, "\(String(describing: r))")
        }
        #expect(c.ask("/hapsync/play", [.string("tap"), .int(1)])?.args == [.string("/hapsync/play"), .int(1)], "no slot is held")
        let soon = Date().timeIntervalSince1970 + 60
        for id in 2...4 { #expect(c.ask("/hapsync/play", [.string("tap"), .int(Int64(id))], at: soon)?.address == "/hapsync/ok") }
        let listed = try #require(c.ask("/hapsync/players"))
        #expect(listed.address == "/hapsync/players")
        // The count, then (id, pattern, state, start) for each player, by id.
        let records = stride(from: 1, to: listed.args.count, by: 4).map { Array(listed.args[$0..<min($0 + 4, listed.args.count)]) }
        #expect(listed.args.first == .int(Int64(records.count)) && records.allSatisfy { $0.count == 4 }, "\(listed.args)")
        for id in 2...4 {
            let r = try #require(records.first { $0[0] == .int(Int64(id)) }, "player \(id) listed: \(listed.args)")
            #expect(r[1] == .string("tap") && r[2] == .string("scheduled"), "\(r)")
        }
        let stopped = try #require(c.ask("/hapsync/stop-all"))
        #expect(stopped.address == "/hapsync/ok" && stopped.args.count == 2, "\(stopped)")
        var left: OSCValue? = .int(-1)
        for _ in 0..<100 where left != .int(0) {
            left = c.ask("/hapsync/players")?.args.first
            if left != .int(0) { usleep(20_000) }
        }
        #expect(left == .int(0), "every player left after stop-all")
    }

    /// A pattern of `events` continuous events of 30 s, one after another, with a curve under
    /// them: a command every millisecond for 30 s × `events` (`variant` makes the bytes differ).
    private func heavyPattern(_ name: String, events: Int, variant: Int = 0) throws {
        var entries: [String] = []
        // Each event's own curve rises and falls every 0.3 s: its level moves every millisecond.
        let points = (0..<100).map { #"{"Time":\#(Double($0) * 0.3),"ParameterValue":\#($0 % 2 == 0 ? 0.2 : 1)}"# }.joined(separator: ",")
        for k in 0..<events {
            entries.append(#"{"Event":{"Time":\#(30 * k),"EventType":"HapticContinuous","EventDuration":30,"EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":0.\#(5 + variant % 4)}]}}"#)
            entries.append(#"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":\#(30 * k),"ParameterCurveControlPoints":[\#(points)]}}"#)
        }
        try #"{"Version":1,"Pattern":[\#(entries.joined(separator: ","))]}"#.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// Loads compile on a thread of their own: another client's status is answered while they are
    /// under way (it says so), and 30 loads of one file under 30 names compile it once.
    @Test func loadsDoNotHoldUpOtherClientsAndIdenticalFilesAreShared() throws {
        for v in 0..<4 { try heavyPattern("heavy\(v).ahap", events: 20, variant: v) }
        let engine = try engine()
        defer { engine.stop() }
        let running = try RunningService(engine: engine, dir: dir)
        defer { running.stop() }
        let loader = try running.client(), other = try running.client()
        for v in 0..<4 { loader.send("/hapsync/load", [.string("h\(v)"), .string("heavy\(v).ahap")]) }
        for k in 0..<30 { loader.send("/hapsync/load", [.string("same\(k)"), .string("heavy0.ahap")]) }
        let loading = status(other, "loading")
        #expect(loading.map { $0 != .int(0) } == true, "another client was answered while the loads were under way: loading \(String(describing: loading))")
        var answers: [(address: String, args: [OSCValue])] = []
        while answers.count < 34, let r = loader.receive(timeout: 60_000) { answers.append(r) }
        #expect(answers.count == 34 && answers.allSatisfy { $0.address == "/hapsync/ok" }, "\(answers.filter { $0.address != "/hapsync/ok" })")
        #expect(status(other, "patterns") == .int(34))
        #expect(status(other, "patterns-distinct") == .int(4), "30 loads of one file are one pattern")
        guard case .int(let held)? = status(other, "pattern-memory") else { Issue.record("no pattern-memory"); return }
        // 20 × 30 s at 1 kHz: up to 600,000 level commands each (a few fewer where a ramp turns).
        let one = Double(600_000 * MemoryLayout<HapticCommand>.stride)
        #expect(Double(held) > 3.5 * one && Double(held) < 4.5 * one, "four patterns held, not 34: \(held) bytes")
    }

    /// A pattern that would pass the memory budget is refused before it is built, naming what
    /// it needs and the budget; a message naming a pattern still loading waits for it.
    @Test func theMemoryBudgetHoldsAndMessagesWaitForTheirLoad() throws {
        try heavyPattern("heavy.ahap", events: 20)
        let engine = try engine()
        defer { engine.stop() }
        let running = try RunningService(engine: engine, dir: dir) { $0.maxPatternMemory = 8 << 20 }
        defer { running.stop() }
        let c = try running.client()
        let refused = c.ask("/hapsync/load", [.string("h"), .string("heavy.ahap")])
        #expect(refused?.address == "/hapsync/error" && refused.map { "\($0.args)".contains("--pattern-memory") && "\($0.args)".contains("may hold 8 MiB (--pattern-memory)") } == true,
                "\(String(describing: refused))")
        // A load, then at once a play and an unload of it (as oscsend sends them, unanswered).
        c.send("/hapsync/load", [.string("tap"), .string("tap.ahap")])
        c.send("/hapsync/play", [.string("tap")])
        c.send("/hapsync/unload", [.string("tap")])
        let replies = (0..<3).compactMap { _ in c.receive() }
        #expect(replies.map { $0.args.first } == [.string("/hapsync/load"), .string("/hapsync/play"), .string("/hapsync/unload")], "\(replies)")
        #expect(replies.allSatisfy { $0.address == "/hapsync/ok" }, "\(replies)")
    }

    /// A trace on /dev/full: its first write fails mid-serve, and status says so at once.
    @Test func anOutputFailureShowsInStatusAsItHappens() throws {
        let trace = TraceBackend(path: "/dev/full")
        let engine = try engine(trace)
        defer { engine.stop() }
        let running = try RunningService(engine: engine, dir: dir)
        defer { running.stop() }
        let c = try running.client()
        #expect(status(c, "output-failure") == .string(""), "healthy at first")
        #expect(c.ask("/hapsync/load", [.string("tap"), .string("tap.ahap")])?.address == "/hapsync/ok")
        #expect(c.ask("/hapsync/play", [.string("tap")])?.address == "/hapsync/ok")
        var failure: OSCValue?
        for _ in 0..<100 {
            failure = status(c, "output-failure")
            if let f = failure, f != .string("") { break }
            usleep(20_000)
        }
        guard case .string(let text) = failure else { Issue.record("no output-failure in status"); return }
        #expect(text.contains("/dev/full") && text.contains("No space left"), "\(text)")
        #expect(status(c, "output-lost") != nil)
    }
}
