import CLo
import Foundation
import Glibc
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncRuntime
import HapSyncTestSupport
import Testing
@testable import HapSyncOSC

/// The address space on a manual-clock engine, and the service's limits through real sockets.
@Suite("OSC commands and limits", .serialized)
struct OSCCommandsTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory
    var dir: URL { scratch.url }

    init() throws {
        scratch = try TemporaryDirectory("osc")
        try #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#
            .write(to: dir.appendingPathComponent("tap.ahap"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("escape.ahap").path, withDestinationPath: "/etc/hostname")
    }

    private func commands(_ rig: ManualRig, patterns: Int = 256, players: Int = 32) -> OSCCommands {
        var c = OSCService.Configuration(endpoints: [], resourceRoots: [dir])
        c.maxPatterns = patterns
        c.maxPlayers = players
        return OSCCommands(engine: rig.engine, configuration: c)
    }

    /// Runs one message; an answer that comes later (a load) is waited for (at most 10 s).
    private func run(_ c: OSCCommands, _ address: String, _ args: [OSCValue]) -> OSCCommands.Outcome {
        let client = OSCCommands.Client(id: Int.random(in: 1...Int.max))
        let outcome = c.handle(address: address, args: args, at: nil, statistics: OSCService.Statistics(), from: client)
        guard outcome == .later else { return outcome }
        for _ in 0..<1000 {
            if let late = c.completed().first(where: { $0.client == client }) { return late.outcome }
            usleep(10_000)
        }
        return .error("no answer within 10 s")
    }

    @Test func limitsOnPatternsAndPlayersAreErrorReplies() throws {
        let rig = try ManualRig(maxPlayers: 8)
        let c = commands(rig, patterns: 1, players: 2)
        #expect(run(c, "/hapsync/load", [.string("a"), .string("tap.ahap")]) == .ok([.string("a")]))
        #expect(run(c, "/hapsync/load", [.string("b"), .string("tap.ahap")]) == .error("1 patterns are loaded, the limit; /hapsync/unload one first"))
        #expect(run(c, "/hapsync/load", [.string("a"), .string("tap.ahap")]) == .ok([.string("a")]), "reloading a name is not a new pattern")
        #expect(run(c, "/hapsync/play", [.string("a"), .int(5)]) == .ok([.int(5)]))
        #expect(run(c, "/hapsync/play", [.string("a")]) == .ok([.int(1)]))
        #expect(run(c, "/hapsync/play", [.string("a")]) == .error("2 players are playing, the limit"))
        #expect(run(c, "/hapsync/play", [.string("a"), .int(5)]) == .ok([.int(5)]), "a given id replaces its player")
        // Players that ended leave, and their slots with them.
        rig.run(until: 3)
        #expect(run(c, "/hapsync/play", [.string("a")]) == .ok([.int(2)]))
    }

    /// A player paused and then stopped ends no run, so no completion frees it: the stop does.
    @Test func aPausedPlayerStoppedLeaves() throws {
        let rig = try ManualRig()
        let c = commands(rig)
        #expect(run(c, "/hapsync/load", [.string("a"), .string("tap.ahap")]) == .ok([.string("a")]))
        #expect(run(c, "/hapsync/play", [.string("a"), .int(5)]) == .ok([.int(5)]))
        #expect(run(c, "/hapsync/pause", [.int(5)]) == .ok([.int(5)]))
        rig.run(until: 1.5)
        #expect(run(c, "/hapsync/stop", [.int(5)]) == .ok([.int(5)]))
        rig.run(until: 2)
        #expect(run(c, "/hapsync/stop", [.int(5)]) == .error("no player 5 (it ended, or was never started)"))
        guard case .reply(_, let status) = run(c, "/hapsync/status", []), let i = status.firstIndex(of: .string("players")) else {
            Issue.record("no status")
            return
        }
        #expect(status[i + 1] == .int(0))
    }

    @Test func pathsStayInsideTheRootsAndNamesAreChecked() throws {
        let rig = try ManualRig()
        let c = commands(rig)
        for (path, text) in [("../x.ahap", "'..'"), ("/etc/hostname.ahap", "is absolute"), ("escape.ahap", "outside the resource roots"),
                             ("missing.ahap", "not found"), ("notes.txt", "must name an .ahap file")] {
            guard case .error(let message) = run(c, "/hapsync/load", [.string("p"), .string(path)]) else {
                Issue.record("\(path) was loaded")
                continue
            }
            #expect(message.contains(text), "\(path): \(message)")
        }
        #expect(run(c, "/hapsync/load", [.string("a b"), .string("tap.ahap")]) == .error("name \"a b\" must be 1 to 64 letters, digits, '.', '_' or '-'"))
        #expect(run(c, "/hapsync/curve", [.int(1), .string("HapticIntensityControl"), .float(0)])
                == .error("takes i:player s:control f:time f:value ... (1 to 16 pairs), got 3 arguments"))
        #expect(run(c, "/hapsync/mute", [.string("lights"), .int(1)]) == .error("argument 1 (what) must be haptics or audio, got \"lights\""))
        #expect(run(c, "/hapsync/mute", [.string("haptics"), .bool(true)]) == .ok([.string("haptics"), .int(1)]))
        #expect(rig.engine.isMutedForHaptics)
    }

    /// `/hapsync/live` and its controls reach the service's `LiveControl` (here one that records
    /// its calls; `LiveTests` drives the real one in `hapsync serve`): a profile file only as a
    /// .json inside a resource folder, resolved before the control sees it; without a control
    /// (no audio) each answers why.
    @Test func liveAddressesReachTheLiveControlAndProfileFilesStayInTheRoots() throws {
        let rig = try ManualRig()
        let plain = commands(rig)
        for (address, args) in [("/hapsync/live", [OSCValue.int(1)]), ("/hapsync/live/gain", [.float(1)]), ("/hapsync/live/profile", [.string("rumble")]),
                                ("/hapsync/live/style", [.string("ambient")])] {
            #expect(run(plain, address, args) == .error("this service has no live haptics: they play the sound on, and it was started with --audio none"))
        }
        try "{}".write(to: dir.appendingPathComponent("soft.json"), atomically: true, encoding: .utf8)
        let control = RecordingLiveControl()
        var configuration = OSCService.Configuration(endpoints: [], resourceRoots: [dir])
        configuration.live = control
        let c = OSCCommands(engine: rig.engine, configuration: configuration)
        #expect(run(c, "/hapsync/live", [.bool(true)]) == .ok([.int(1), .string("on")]))
        #expect(run(c, "/hapsync/live", [.int(0)]) == .ok([.int(0), .string("summary")]))
        #expect(run(c, "/hapsync/live", [.int(0)]) == .ok([.int(0), .string("live haptics were off")]))
        #expect(run(c, "/hapsync/live/gain", [.int(2)]) == .ok([.float(2)]))
        #expect(run(c, "/hapsync/live/profile", [.string("shaker")]) == .ok([.string("shaker")]))
        #expect(run(c, "/hapsync/live/profile", [.string("soft.json")]) == .ok([.string("soft.json")]))
        #expect(run(c, "/hapsync/live/style", [.string("ambient")]) == .ok([.string("ambient")]))
        for (value, text) in [("../soft.json", "'..'"), ("/etc/soft.json", "is absolute"), ("missing.json", "not found"),
                              ("etc/passwd", "a built-in name or a .json file")] {
            guard case .error(let message) = run(c, "/hapsync/live/profile", [.string(value)]) else {
                Issue.record("\(value) reached the control")
                continue
            }
            #expect(message.hasPrefix("profile "), "\(value): \(message)")
            #expect(message.contains(text), "\(value): \(message)")
        }
        let calls = control.calls.withLock { $0 }
        #expect(calls == ["on", "off", "off", "gain 2.0", "profile shaker", "profile soft.json at " + dir.appendingPathComponent("soft.json").resolvingSymlinksInPath().path,
                          "style ambient"],
                "\(calls)")
        guard case .reply(_, let status) = run(c, "/hapsync/status", []) else {
            Issue.record("no status")
            return
        }
        #expect(status.suffix(2) == [.string("live"), .string("recorded")])
        guard case .reply(_, let noLive) = run(plain, "/hapsync/status", []) else { return }
        #expect(noLive.suffix(2) == [.string("live"), .string("none")])
    }

    /// Turning live haptics on waits for the sound server (seconds when it is slow): it runs off
    /// the service's thread, so every other message is answered meanwhile, and on and off are
    /// done in the order they came, each answered when done; more than `LiveChanges.capacity`
    /// waiting are refused, and so are changes once the service is ending.
    @Test func liveChangesDoNotHoldTheServiceThread() throws {
        let rig = try ManualRig()
        let control = RecordingLiveControl()
        let gate = DispatchSemaphore(value: 0)
        control.gate = gate
        var configuration = OSCService.Configuration(endpoints: [], resourceRoots: [dir])
        configuration.live = control
        let c = OSCCommands(engine: rig.engine, configuration: configuration)
        let stats = OSCService.Statistics()
        let (a, b) = (OSCCommands.Client(id: 1), OSCCommands.Client(id: 2))
        #expect(c.handle(address: "/hapsync/live", args: [.int(1)], at: nil, statistics: stats, from: a) == .later)
        #expect(c.handle(address: "/hapsync/live", args: [.int(0)], at: nil, statistics: stats, from: b) == .later)
        // The turn-on is stuck in the sound server; the service thread is not.
        #expect(c.handle(address: "/hapsync/live/gain", args: [.float(2)], at: nil, statistics: stats) == .ok([.float(2)]))
        #expect(c.handle(address: "/hapsync/stop-all", args: [], at: nil, statistics: stats) == .ok([.int(0)]))
        #expect(c.liveChangesUnderWay == 2)
        #expect(c.completed().isEmpty)
        for id in 3..<(1 + LiveChanges.capacity) {
            #expect(c.handle(address: "/hapsync/live", args: [.int(0)], at: nil, statistics: stats, from: .init(id: id)) == .later)
        }
        guard case .error(let full) = c.handle(address: "/hapsync/live", args: [.int(1)], at: nil, statistics: stats) else {
            Issue.record("a ninth live change was queued")
            return
        }
        #expect(full.contains("live changes are waiting"), "\(full)")
        gate.signal()
        c.waitForLiveChanges()
        let answers = c.completed()
        #expect(answers.map(\.client) == (1...LiveChanges.capacity).map { OSCCommands.Client(id: $0) })
        #expect(answers.first?.outcome == .ok([.int(1), .string("on")]))
        #expect(answers.dropFirst().first?.outcome == .ok([.int(0), .string("summary")]))
        #expect(control.calls.withLock { $0 }.prefix(3) == ["gain 2.0", "on", "off"])
        // At the end, a change not begun is answered, not done; none is taken after.
        control.gate = DispatchSemaphore(value: 0)
        #expect(c.handle(address: "/hapsync/live", args: [.int(1)], at: nil, statistics: stats, from: a) == .later)
        #expect(c.handle(address: "/hapsync/live", args: [.int(1)], at: nil, statistics: stats, from: b) == .later)
        let ending = Thread { c.finishLiveChanges() }
        ending.start()
        usleep(100_000)
        control.gate?.signal()
        c.waitForLiveChanges()
        let last = c.completed()
        #expect(last.map(\.client) == [a, b])
        #expect(last.last?.outcome == .error("the service is ending: not done"), "\(last)")
        #expect(c.handle(address: "/hapsync/live", args: [.int(1)], at: nil, statistics: stats) == .error("the service is ending"))
    }

    /// The address table is the one place an address's arguments live: each address refuses a
    /// wrong count and a wrong type by it, and `/hapsync/help` answers from it.
    @Test func everyAddressIsCheckedByItsTableEntry() throws {
        let rig = try ManualRig()
        let c = commands(rig)
        for a in OSCCommands.addresses {
            let tooMany = [OSCValue](repeating: .int(1), count: a.arguments.count + a.repeating.count * a.repeats.upperBound + 1)
            guard case .error(let message) = run(c, a.path, tooMany) else {
                Issue.record("\(a.path) took \(tooMany.count) arguments")
                continue
            }
            #expect(message.hasPrefix("takes \(a.arguments.isEmpty && a.repeating.isEmpty ? "no arguments" : a.syntax)"), "\(a.path): \(message)")
            if let first = a.arguments.first {
                // Argument 1 of a type no address takes (a blob, say).
                let values = [OSCValue.other("b")] + [OSCValue](repeating: .int(1), count: a.arguments.filter { !$0.optional }.count - 1)
                    + [OSCValue](repeating: .float(0), count: a.repeating.count * a.repeats.lowerBound)
                guard case .error(let wrong) = run(c, a.path, values) else {
                    Issue.record("\(a.path) took a blob")
                    continue
                }
                #expect(wrong.hasPrefix("argument 1 (\(first.role)) must be"), "\(a.path): \(wrong)")
            }
        }
        guard case .reply(_, let help) = run(c, "/hapsync/help", []) else {
            Issue.record("no help")
            return
        }
        #expect(help.count == OSCCommands.addresses.count)
        #expect(help.first == .string("/hapsync/load s:name s:path — load an AHAP file (a path relative to a resource root) as NAME"))
        #expect(run(c, "/hapsync/nothing", []) == .error("unknown address; /hapsync/help lists them"))
    }

    /// Through a real socket: the rate limit drops and counts what is over it, and a Unix-socket
    /// client bound to a path of its own gets its replies.
    @Test func theRateLimitCountsAndUnixClientsGetReplies() throws {
        let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend()))
        try engine.start()
        defer { engine.stop() }
        let running = try RunningService(engine: engine, dir: dir) { $0.maxMessagesPerSecond = 10 }
        defer { running.stop() }
        let service = running.service
        let client = try running.client()
        let fd = client.fd
        let m = lo_message_new()!
        defer { lo_message_free(m) }
        var size = 0
        let bytes = lo_message_serialise(m, "/hapsync/help", nil, &size)!
        defer { free(bytes) }
        for _ in 0..<50 { client.send(bytes: bytes, count: size) }
        // And one bundle of 40 messages: each spends a token (no amplification by bundling).
        let bundle = lo_bundle_new(lo_timetag(sec: 0, frac: 1))!
        for _ in 0..<40 { lo_bundle_add_message(bundle, "/hapsync/help", lo_message_new()!) }
        defer { lo_bundle_free_recursive(bundle) }
        var bundleSize = 0
        let bundleBytes = lo_bundle_serialise(bundle, nil, &bundleSize)!
        defer { free(bundleBytes) }
        client.send(bytes: bundleBytes, count: bundleSize)
        var replies = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&p, 1, 500) > 0, recv(fd, &buffer, buffer.count, 0) > 0 { replies += 1 }
        let s = service.statistics
        #expect(s.packets == 51)
        #expect(replies == s.messages && replies >= 10 && replies < 20, "answered what was not dropped: \(replies), \(s)")
        #expect(s.rateLimited + s.messages >= 51, "each packet (or message of a bundle) over the rate is counted: \(s)")
    }
}

/// A `LiveControl` that records what it was asked (the OSC layer's side of `/hapsync/live`).
final class RecordingLiveControl: LiveControl, @unchecked Sendable {
    let calls = Locked<[String]>([])
    private let on = Locked(false)
    /// When set, `turnOn` waits for it (a sound server slow to make the sink).
    var gate: DispatchSemaphore?

    func turnOn() throws(OSCCommands.CommandError) -> String {
        gate?.wait()
        calls.withLock { $0.append("on") }
        on.withLock { $0 = true }
        return "on"
    }

    func turnOff() -> String? {
        calls.withLock { $0.append("off") }
        return on.withLock { was in
            defer { was = false }
            return was ? "summary" : nil
        }
    }

    func setGain(_ gain: Double) throws(OSCCommands.CommandError) -> Double {
        calls.withLock { $0.append("gain \(gain)") }
        return gain
    }

    func setProfile(named name: String, file: URL?) throws(OSCCommands.CommandError) -> String {
        calls.withLock { $0.append("profile \(name)" + (file.map { " at \($0.path)" } ?? "")) }
        return name
    }

    func setStyle(_ name: String) throws(OSCCommands.CommandError) -> String {
        calls.withLock { $0.append("style \(name)") }
        return name
    }

    var status: [(key: String, value: OSCValue)] { [("live", .string("recorded"))] }
}
