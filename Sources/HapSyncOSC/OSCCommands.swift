import AHAP
import Foundation
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime

/// The address space of `hapsync serve`: what each OSC address does to the engine. Pure of
/// sockets (`OSCService` feeds it), so tests drive it directly too.
///
/// Loads run on a thread of their own (`PatternLoader`), never on the thread calling `handle`:
/// `/hapsync/load` answers `.later`, and its reply comes from `completed()` once the pattern is
/// compiled. A message naming a pattern still loading (a play, an unload, another load of that
/// name), from any client, waits for it and then runs in the order it came; every other message
/// runs at once. Patterns live in a `PatternLibrary` (identical files shared, all within
/// `Configuration.maxPatternMemory`).
///
/// Threads: `handle`, `completed` and `preload` on one thread at a time (the service's); player
/// completions on the engine's notifier thread (under a lock).
public final class OSCCommands: @unchecked Sendable {
    /// What a command answers.
    public enum Outcome: Sendable, Equatable {
        /// `/hapsync/ok ADDRESS` followed by these values.
        case ok([OSCValue])
        /// A reply of its own (`/hapsync/status`, `/hapsync/help`).
        case reply(String, [OSCValue])
        /// `/hapsync/error ADDRESS MESSAGE`.
        case error(String)
        /// The answer comes later, from `completed()`: a load, or a message waiting for one.
        case later
    }

    /// Who sent a message: the service's token for where to answer it, passed through.
    public struct Client: Hashable, Sendable {
        /// The service's number for it.
        public let id: Int
        /// Makes a token.
        public init(id: Int) { self.id = id }
    }

    /// An answer that came later: to whom, for which address, what.
    public struct LateAnswer: Sendable, Equatable {
        /// The client that sent the message.
        public let client: Client
        /// The message's address.
        public let address: String
        /// Its answer.
        public let outcome: Outcome
    }

    /// Messages (loads, and those waiting for them) that may wait at once: beyond, a message is
    /// answered as busy.
    public static let maxWaiting = 256

    /// One address: its argument types (OSC tags; `[...]` optional) and what it does.
    public struct Address: Sendable {
        /// `/hapsync/play`.
        public let path: String
        /// `s:name [i:player]`.
        public let arguments: String
        /// What it does.
        public let summary: String
    }

    /// Every address, as `/hapsync/help` answers and README lists them.
    public static let addresses: [Address] = [
        Address(path: "/hapsync/load", arguments: "s:name s:path", summary: "load an AHAP file (a path relative to a resource root) as NAME"),
        Address(path: "/hapsync/unload", arguments: "s:name", summary: "forget a loaded pattern (players keep theirs)"),
        Address(path: "/hapsync/play", arguments: "s:name [i:player]", summary: "play a loaded pattern (at the bundle's time tag); answers the player id"),
        Address(path: "/hapsync/feedback", arguments: "s:style [f:intensity]", summary: "play a built-in feedback style (success, impact-heavy, ...); answers the player id"),
        Address(path: "/hapsync/stop", arguments: "i:player", summary: "stop a player (at the time tag)"),
        Address(path: "/hapsync/pause", arguments: "i:player", summary: "pause a player (at the time tag)"),
        Address(path: "/hapsync/resume", arguments: "i:player", summary: "resume a paused player (at the time tag)"),
        Address(path: "/hapsync/seek", arguments: "i:player f:offset", summary: "move a player to OFFSET seconds of its pattern"),
        Address(path: "/hapsync/loop", arguments: "i:player i:on [f:end]", summary: "loop a player (1) or not (0), wrapping at END seconds (0: the pattern's end)"),
        Address(path: "/hapsync/rate", arguments: "i:player f:rate", summary: "playback rate (0.01 to 100: pattern seconds per second)"),
        Address(path: "/hapsync/param", arguments: "i:player s:control f:value", summary: "send a dynamic parameter (HapticIntensityControl, AudioVolumeControl, ...)"),
        Address(path: "/hapsync/curve", arguments: "i:player s:control f:time f:value ...", summary: "schedule a parameter curve: 1 to 16 (time, value) points"),
        Address(path: "/hapsync/mute", arguments: "s:haptics|audio i:on", summary: "mute the engine's haptics or audio (1) or not (0)"),
        Address(path: "/hapsync/policy", arguments: "f:intensity-scale [f:rate-limit-ms]", summary: "the accessibility policy for everything played"),
        Address(path: "/hapsync/players", arguments: "", summary: "answers /hapsync/players with the count, then id, pattern, state (scheduled, playing, paused) and start time of each player"),
        Address(path: "/hapsync/stop-all", arguments: "", summary: "stop every player (at the time tag), scheduled ones too; answers how many"),
        Address(path: "/hapsync/status", arguments: "", summary: "answers /hapsync/status with key, value pairs (counts, clock offset uncertainty, output failures and losses as they happen)"),
        Address(path: "/hapsync/help", arguments: "", summary: "answers /hapsync/help with one string per address"),
    ]

    let engine: HapticEngine
    let configuration: OSCService.Configuration
    private let resolver: AHAPResourceResolver
    private let library: PatternLibrary
    private let loader: PatternLoader
    /// Loaded patterns by name.
    private var patterns: [String: PatternLibrary.Entry] = [:]
    /// A load under way and the messages waiting for it.
    private struct Loading {
        let client: Client
        let what: String
        var waiting: [(client: Client, address: String, args: [OSCValue], at: Double?)] = []
    }
    /// Loads under way by name.
    private var loading: [String: Loading] = [:]
    /// Messages waiting for loads, all names together.
    private var waitingCount = 0
    /// A player the service holds: what it plays and when its latest start or resume was for.
    private struct Entry {
        let player: HapticPatternPlayer
        /// The loaded pattern's name, or the feedback style's.
        let name: String
        /// Engine time of its latest start or resume (seconds).
        var startAt: Double
    }

    /// Players by id; a player that ends leaves (its completion, on the engine's notifier thread).
    private let players = Locked<[Int64: Entry]>([:])
    private var nextPlayer: Int64 = 1
    private let clock = Locked<(offset: Double, uncertainty: Double)?>(nil)

    /// Commands over a started engine; `wake` is called (on the loader thread) when a load has
    /// finished, for the caller to collect `completed()`.
    public init(engine: HapticEngine, configuration: OSCService.Configuration, wake: @escaping @Sendable () -> Void = {}) {
        self.engine = engine
        self.configuration = configuration
        resolver = AHAPResourceResolver(roots: configuration.resourceRoots)
        library = PatternLibrary(engine: engine, resources: configuration.resourceRoots, options: configuration.renderOptions,
                                 budget: configuration.maxPatternMemory)
        loader = PatternLoader(capacity: Self.maxWaiting, wake: wake)
    }

    deinit { loader.stop() }

    /// Stops the loader thread (after the load under way); loads still waiting are dropped.
    public func stopLoading() { loader.stop() }

    /// Records the latest wall-clock offset measured for a time tag (for `/hapsync/status`).
    func noteClockOffset(_ measured: (offset: Double, uncertainty: Double)) { clock.withLock { $0 = measured } }

    /// Loads a pattern the operator named (`--preload`): any readable file, on the calling thread.
    public func preload(name: String, file: URL) throws(CommandError) {
        try checkName(name)
        try checkRoom(for: name)
        patterns[name] = try library.load(file, what: file.path)
    }

    /// A command refused, with the message the client gets.
    public struct CommandError: Error, Sendable, CustomStringConvertible {
        /// The message.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs one message from `client`; `at` is the engine time of its bundle's time tag, nil for
    /// now. `.later` means the answer comes from `completed()`.
    public func handle(address: String, args: [OSCValue], at: Double?, statistics: OSCService.Statistics,
                       from client: Client = Client(id: 0)) -> Outcome {
        // A message naming a pattern still loading waits for it, in order.
        if Self.namesAPattern.contains(address), case .string(let name)? = args.first, loading[name] != nil {
            guard waitingCount < Self.maxWaiting else {
                return .error("\(Self.maxWaiting) messages wait for patterns loading; try again once one is answered")
            }
            loading[name]!.waiting.append((client, address, args, at))
            waitingCount += 1
            return .later
        }
        do {
            return try run(address, Arguments(address: address, values: args), at: at ?? HapticEngine.timeImmediate,
                           statistics: statistics, client: client)
        } catch {
            return .error(error.description)
        }
    }

    /// The addresses whose first argument names a loaded pattern.
    private static let namesAPattern: Set<String> = ["/hapsync/load", "/hapsync/unload", "/hapsync/play"]

    /// The answers of loads that finished since the last call, each followed by those of the
    /// messages that waited for it (which may start loads of their own).
    public func completed() -> [LateAnswer] {
        var answers: [LateAnswer] = []
        for (name, result) in loader.finished() {
            guard let done = loading.removeValue(forKey: name) else { continue }
            waitingCount -= done.waiting.count
            switch result {
            case .success(let entry):
                if patterns[name] != nil || patterns.count < configuration.maxPatterns {
                    patterns[name] = entry
                    answers.append(LateAnswer(client: done.client, address: "/hapsync/load", outcome: .ok([.string(name)])))
                } else {
                    answers.append(LateAnswer(client: done.client, address: "/hapsync/load", outcome: .error(tooManyPatterns)))
                }
            case .failure(let error):
                answers.append(LateAnswer(client: done.client, address: "/hapsync/load", outcome: .error(error.description)))
            }
            for m in done.waiting {
                let outcome = handle(address: m.address, args: m.args, at: m.at.flatMap { $0 > engine.currentTime ? $0 : nil },
                                     statistics: OSCService.Statistics(), from: m.client)
                if outcome != .later { answers.append(LateAnswer(client: m.client, address: m.address, outcome: outcome)) }
            }
        }
        return answers
    }

    /// Players the service holds now (playing, scheduled or paused).
    public var playerCount: Int { players.withLock { $0.count } }

    /// Loads under way or waiting (for tests and status).
    public var loadsUnderWay: Int { loading.count }

    /// Blocks until a load has finished (at once if one has and `completed()` has not taken it);
    /// false, at once, when no load is under way. For callers that must know, the fuzzer and
    /// tests, not the service thread.
    public func waitForLoad() -> Bool { loader.waitForResult() }

    private func run(_ address: String, _ a: Arguments, at time: Double, statistics: OSCService.Statistics,
                     client: Client) throws(CommandError) -> Outcome {
        switch address {
        case "/hapsync/load":
            try a.count(2...2, "s:name s:path")
            let name = try a.string(0, "name"), path = try a.string(1, "path")
            // Only AHAP files, so that nothing else in a resource folder is read on a peer's say-so.
            guard path.hasSuffix(".ahap") else { throw CommandError("path \"\(path)\" must name an .ahap file") }
            let file: URL
            switch resolver.resolve(path) {
            case .success(let url): file = url
            case .failure(let failure): throw CommandError("path \(failure.description)")
            }
            try checkName(name)
            try checkRoom(for: name)
            let library = library
            guard waitingCount < Self.maxWaiting, loader.submit(.init(name: name, work: {
                Result { () throws(CommandError) in try library.load(file, what: path) }
            })) else {
                throw CommandError("\(loader.capacity) loads are waiting; try again once one is answered")
            }
            loading[name] = Loading(client: client, what: path)
            return .later
        case "/hapsync/unload":
            try a.count(1...1, "s:name")
            let name = try a.string(0, "name")
            guard patterns.removeValue(forKey: name) != nil else { throw CommandError("no pattern named '\(name)' is loaded") }
            return .ok([.string(name)])
        case "/hapsync/play":
            try a.count(1...2, "s:name [i:player]")
            let name = try a.string(0, "name")
            guard let playable = patterns[name]?.playable else {
                throw CommandError("no pattern named '\(name)' is loaded\(patterns.isEmpty ? " (none is: /hapsync/load NAME PATH first)" : "; loaded: \(patterns.keys.sorted().joined(separator: ", "))")")
            }
            let id = try a.count > 1 ? a.int(1, "player", in: 1...Int64(Int32.max)) : nil
            let player: HapticPatternPlayer
            do {
                player = try engine.makePlayer(timeline: playable.timeline, audioFiles: playable.audioFiles)
            } catch {
                throw CommandError("cannot make a player for '\(name)': \(error)")
            }
            return .ok([.int(try start(player, named: name, id: id, at: time))])
        case "/hapsync/feedback":
            try a.count(1...2, "s:style [f:intensity]")
            let style = try a.string(0, "style")
            let intensity = try a.count > 1 ? a.number(1, "intensity", in: 0...1) : 1
            guard let feedback = SensoryFeedback.named(style, intensity: intensity) else {
                throw CommandError("unknown style '\(style)'; known: \(SensoryFeedback.all.map(\.name).joined(separator: ", "))")
            }
            let player: HapticPatternPlayer
            do {
                player = try engine.makeAdvancedPlayer(with: feedback.pattern)
            } catch {
                throw CommandError("cannot make a player for '\(style)': \(error)")
            }
            return .ok([.int(try start(player, named: style, id: nil, at: time))])
        case "/hapsync/stop", "/hapsync/pause", "/hapsync/resume":
            try a.count(1...1, "i:player")
            let (id, player) = try self.player(a)
            try engineCall {
                switch address {
                case "/hapsync/stop": try player.stop(atTime: time)
                case "/hapsync/pause": try player.pause(atTime: time)
                default: try player.resume(atTime: time)
                }
            }
            // A stop of a player that is not playing (paused, or between runs) ends no run, so
            // no completion will come to free its id and slot: it leaves now.
            if address == "/hapsync/stop", !player.isPlaying { remove(id, player) }
            if address == "/hapsync/resume" { players.withLock { $0[id]?.startAt = max(time, engine.currentTime) } }
            return .ok([.int(id)])
        case "/hapsync/stop-all":
            try a.count(0...0, "no arguments")
            let all = players.withLock { $0 }
            for (id, entry) in all {
                try engineCall { try entry.player.stop(atTime: time) }
                if !entry.player.isPlaying { remove(id, entry.player) }
            }
            return .ok([.int(Int64(all.count))])
        case "/hapsync/players":
            try a.count(0...0, "no arguments")
            let now = engine.currentTime
            let list = players.withLock { $0 }.sorted { $0.key < $1.key }
            var values: [OSCValue] = [.int(Int64(list.count))]
            for (id, entry) in list {
                let state = !entry.player.isPlaying ? "paused" : entry.startAt > now ? "scheduled" : "playing"
                values += [.int(id), .string(entry.name), .string(state), .float(entry.startAt)]
            }
            return .reply("/hapsync/players", values)
        case "/hapsync/seek":
            try a.count(2...2, "i:player f:offset")
            let (id, player) = try self.player(a)
            let offset = try a.number(1, "offset", in: 0...AHAPLimits.default.maxTime)
            try engineCall { try player.seek(toOffset: offset) }
            return .ok([.int(id)])
        case "/hapsync/loop":
            try a.count(2...3, "i:player i:on [f:end]")
            let (id, player) = try self.player(a)
            let on = try a.flag(1, "on")
            let end = try a.count > 2 ? a.number(2, "end", in: HapticPatternPlayer.loopEnds) : 0
            try engineCall { try player.setLoop(on, end: end) }
            return .ok([.int(id)])
        case "/hapsync/rate":
            try a.count(2...2, "i:player f:rate")
            let (id, player) = try self.player(a)
            let rate = try a.number(1, "rate", in: HapticPatternPlayer.playbackRates)
            try engineCall { try player.setPlaybackRate(rate) }
            return .ok([.int(id)])
        case "/hapsync/param":
            try a.count(3...3, "i:player s:control f:value")
            let (id, player) = try self.player(a)
            let control = try a.control(1)
            let value = try a.number(2, "value", in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude)
            try engineCall { try player.sendParameters([AHAPDynamicParameter(control, value)], atTime: time) }
            return .ok([.int(id)])
        case "/hapsync/curve":
            guard a.count >= 4, a.count % 2 == 0 else {
                throw CommandError("takes i:player s:control f:time f:value ... (1 to 16 pairs), got \(a.count) arguments")
            }
            let (id, player) = try self.player(a)
            let control = try a.control(1)
            var points: [AHAPControlPoint] = []
            for k in stride(from: 2, to: a.count, by: 2) {
                points.append(AHAPControlPoint(time: try a.number(k, "time", in: 0...AHAPLimits.default.maxTime),
                                               value: try a.number(k + 1, "value", in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude)))
            }
            try engineCall { try player.scheduleParameterCurve(AHAPParameterCurve(control, controlPoints: points), atTime: time) }
            return .ok([.int(id)])
        case "/hapsync/mute":
            try a.count(2...2, "s:haptics|audio i:on")
            let what = try a.string(0, "what"), on = try a.flag(1, "on")
            switch what {
            case "haptics": engine.isMutedForHaptics = on
            case "audio": engine.isMutedForAudio = on
            default: throw CommandError("argument 1 (what) must be haptics or audio, got \"\(what)\"")
            }
            return .ok([.string(what), .int(on ? 1 : 0)])
        case "/hapsync/policy":
            try a.count(1...2, "f:intensity-scale [f:rate-limit-ms]")
            var policy = engine.policy
            policy.intensityScale = try a.number(0, "intensity-scale", in: 0...1)
            if a.count > 1 { policy.rateLimitInterval = try a.number(1, "rate-limit-ms", in: 0...60_000) / 1000 }
            try engineCall { try engine.setPolicy(policy) }
            return .ok([])
        case "/hapsync/status":
            try a.count(0...0, "no arguments")
            let measured = clock.withLock { $0 } ?? OSCTime.wallOffset()
            let s = statistics
            let health = engine.outputHealth
            let held = library.held
            return .reply("/hapsync/status", [
                .string("engine-time"), .float(engine.currentTime),
                .string("clock-uncertainty-us"), .float(measured.uncertainty * 1e6),
                .string("patterns"), .int(Int64(patterns.count)),
                .string("patterns-distinct"), .int(Int64(held.patterns)),
                .string("pattern-memory"), .int(Int64(held.bytes)), .string("pattern-memory-limit"), .int(Int64(library.budget)),
                .string("loading"), .int(Int64(loading.count)),
                .string("players"), .int(Int64(playerCount)),
                .string("packets"), .int(Int64(s.packets)), .string("messages"), .int(Int64(s.messages)),
                .string("errors"), .int(Int64(s.errors)), .string("malformed"), .int(Int64(s.malformed)),
                .string("oversized"), .int(Int64(s.oversized)), .string("late"), .int(Int64(s.late)),
                .string("rate-limited"), .int(Int64(s.rateLimited)),
                .string("applied"), .int(Int64(engine.statistics.applied)),
                .string("output-failure"), .string(health.failure ?? ""),
                .string("output-lost"), .int(Int64(health.lost)),
            ])
        case "/hapsync/help":
            return .reply("/hapsync/help", Self.addresses.map { .string("\($0.path) \($0.arguments)".trimmingCharacters(in: .whitespaces) + " — " + $0.summary) })
        default:
            throw CommandError("unknown address; /hapsync/help lists them")
        }
    }

    // MARK: - Helpers

    private func checkName(_ name: String) throws(CommandError) {
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }) else {
            throw CommandError("name \"\(name)\" must be 1 to 64 letters, digits, '.', '_' or '-'")
        }
    }

    /// A new name needs a place among `maxPatterns` (counting the loads under way).
    private func checkRoom(for name: String) throws(CommandError) {
        guard patterns[name] != nil || loading[name] != nil || patterns.count + loading.count < configuration.maxPatterns else {
            throw CommandError(tooManyPatterns)
        }
    }

    private var tooManyPatterns: String { "\(configuration.maxPatterns) patterns are loaded, the limit; /hapsync/unload one first" }

    private func start(_ player: HapticPatternPlayer, named name: String, id wanted: Int64?, at time: Double) throws(CommandError) -> Int64 {
        // A player replaced is let go after the lock: its release may deliver notifications
        // (a manual-clock engine pumps), whose handlers take the lock.
        var replaced: HapticPatternPlayer?
        defer { replaced = nil }
        let entry = Entry(player: player, name: name, startAt: max(time, engine.currentTime))
        let id: Int64 = try players.withLock { (list) throws(CommandError) -> Int64 in
            if let wanted {
                guard list[wanted] != nil || list.count < configuration.maxPlayers else {
                    throw CommandError("\(configuration.maxPlayers) players are playing, the limit")
                }
                replaced = list[wanted]?.player
                list[wanted] = entry
                return wanted
            }
            guard list.count < configuration.maxPlayers else { throw CommandError("\(configuration.maxPlayers) players are playing, the limit") }
            while list[nextPlayer] != nil { nextPlayer = nextPlayer >= Int64(Int32.max) ? 1 : nextPlayer + 1 }
            let id = nextPlayer
            nextPlayer = nextPlayer >= Int64(Int32.max) ? 1 : nextPlayer + 1
            list[id] = entry
            return id
        }
        try? replaced?.stop(atTime: HapticEngine.timeImmediate)
        player.completionHandler = { [weak self, weak player] _ in
            guard let self, let player, !player.isPlaying else { return }
            self.remove(id, player)
        }
        do {
            try player.start(atTime: time)
        } catch {
            remove(id, player)
            throw CommandError("cannot start: \(error)")
        }
        return id
    }

    /// Frees id `id` if it still names `player` (a later play may have taken it); the player is
    /// let go after the lock (see `start`).
    private func remove(_ id: Int64, _ player: HapticPatternPlayer) {
        let gone = players.withLock { list -> HapticPatternPlayer? in
            guard list[id]?.player === player else { return nil }
            return list.removeValue(forKey: id)?.player
        }
        _ = gone
    }

    private func player(_ a: Arguments) throws(CommandError) -> (Int64, HapticPatternPlayer) {
        let id = try a.int(0, "player", in: 1...Int64(Int32.max))
        guard let p = players.withLock({ $0[id]?.player }) else { throw CommandError("no player \(id) (it ended, or was never started)") }
        return (id, p)
    }

    private func engineCall(_ body: () throws -> Void) throws(CommandError) {
        do { try body() } catch { throw CommandError("\(error)") }
    }
}

/// A message's arguments, read with errors naming the position, the role and the value.
struct Arguments {
    let address: String
    let values: [OSCValue]

    var count: Int { values.count }

    func count(_ allowed: ClosedRange<Int>, _ spec: String) throws(OSCCommands.CommandError) {
        guard allowed.contains(values.count) else {
            throw OSCCommands.CommandError("takes \(spec), got \(values.count) argument\(values.count == 1 ? "" : "s")")
        }
    }

    func string(_ i: Int, _ role: String) throws(OSCCommands.CommandError) -> String {
        guard case .string(let s) = values[i] else { throw wrong(i, role, "a string") }
        return s
    }

    func number(_ i: Int, _ role: String, in range: ClosedRange<Double>) throws(OSCCommands.CommandError) -> Double {
        let v: Double
        switch values[i] {
        case .float(let f): v = f
        case .int(let n): v = Double(n)
        default: throw wrong(i, role, "a number")
        }
        guard v.isFinite, range.contains(v) else {
            throw OSCCommands.CommandError("argument \(i + 1) (\(role)) \(v) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }

    func int(_ i: Int, _ role: String, in range: ClosedRange<Int64>) throws(OSCCommands.CommandError) -> Int64 {
        guard case .int(let n) = values[i] else { throw wrong(i, role, "an int") }
        guard range.contains(n) else {
            throw OSCCommands.CommandError("argument \(i + 1) (\(role)) \(n) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }

    func flag(_ i: Int, _ role: String) throws(OSCCommands.CommandError) -> Bool {
        switch values[i] {
        case .bool(let b): return b
        case .int(let n) where n == 0 || n == 1: return n == 1
        default: throw wrong(i, role, "0, 1, T or F")
        }
    }

    func control(_ i: Int) throws(OSCCommands.CommandError) -> AHAPDynamicParameterID {
        let name = try string(i, "control")
        guard let id = AHAPDynamicParameterID(rawValue: name) else {
            throw OSCCommands.CommandError("argument \(i + 1) (control) \"\(name)\" is not a dynamic parameter (HapticIntensityControl, AudioVolumeControl, ...)")
        }
        return id
    }

    private func wrong(_ i: Int, _ role: String, _ want: String) -> OSCCommands.CommandError {
        OSCCommands.CommandError("argument \(i + 1) (\(role)) must be \(want), got \(values[i])")
    }
}
