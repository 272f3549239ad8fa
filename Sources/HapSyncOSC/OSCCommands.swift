import Foundation
import HapSyncAHAP
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
/// `/hapsync/live` on and off run on a queue of their own too (`LiveChanges`), in order, and
/// answer the same way: making the live sink waits for the sound server.
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
        /// The answer comes later, from `completed()`: a load, a message waiting for one, or a
        /// live change.
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

    /// One argument of an address: its role (named in errors), its OSC type and the values it
    /// takes. Messages are checked against these before an address's handler runs.
    public struct Argument: Sendable {
        /// The OSC type and what it accepts.
        public enum Kind: Sendable {
            /// A string.
            case string
            /// An int32 in the range.
            case int(ClosedRange<Int64>)
            /// A float or int, finite and in the range.
            case number(ClosedRange<Double>)
            /// 0, 1, T or F.
            case flag
            /// One of these strings.
            case choice([String])
            /// A dynamic parameter's name (HapticIntensityControl, AudioVolumeControl, ...).
            case control
        }

        /// What the argument is, as errors name it ("player", "rate").
        public let role: String
        /// Its type and range.
        public let kind: Kind
        /// Whether it may be left out (only trailing ones are).
        public let optional: Bool

        /// A string argument.
        public static func string(_ role: String, optional: Bool = false) -> Argument { Argument(role: role, kind: .string, optional: optional) }
        /// An int argument within `range`.
        public static func int(_ role: String, _ range: ClosedRange<Int64>, optional: Bool = false) -> Argument {
            Argument(role: role, kind: .int(range), optional: optional)
        }
        /// A number (float or int) within `range`.
        public static func number(_ role: String, _ range: ClosedRange<Double>, optional: Bool = false) -> Argument {
            Argument(role: role, kind: .number(range), optional: optional)
        }
        /// A flag (0, 1, T, F).
        public static func flag(_ role: String) -> Argument { Argument(role: role, kind: .flag, optional: false) }
        /// A string, one of `choices`.
        public static func choice(_ role: String, _ choices: [String]) -> Argument { Argument(role: role, kind: .choice(choices), optional: false) }
        /// A dynamic parameter's name.
        public static let control = Argument(role: "control", kind: .control, optional: false)
        /// A player id, as `/hapsync/play` answers it.
        public static func player(optional: Bool = false) -> Argument { .int("player", 1...Int64(Int32.max), optional: optional) }

        /// How `/hapsync/help` writes it: "s:name", "[f:intensity]", "s:haptics|audio".
        var syntax: String {
            let text: String
            switch kind {
            case .string, .control: text = "s:\(role)"
            case .int, .flag: text = "i:\(role)"
            case .number: text = "f:\(role)"
            case .choice(let choices): text = "s:" + choices.joined(separator: "|")
            }
            return optional ? "[\(text)]" : text
        }
    }

    /// A message checked against its address's arguments, as its handler gets it.
    struct Call {
        /// The values, each of its argument's type and in its range.
        let values: [OSCValue]
        /// Engine time of the bundle's time tag, or `HapticEngine.timeImmediate`.
        let time: Double
        /// The service's figures (for `/hapsync/status`).
        let statistics: OSCService.Statistics
        /// Who sent it.
        let client: Client

        var count: Int { values.count }

        /// Argument `i` (checked a string).
        func string(_ i: Int) -> String {
            if case .string(let s) = values[i] { return s }
            return ""
        }

        /// Argument `i` (checked a number in range).
        func number(_ i: Int) -> Double {
            switch values[i] {
            case .float(let f): return f
            case .int(let n): return Double(n)
            default: return 0
            }
        }

        /// Argument `i` (checked an int in range).
        func int(_ i: Int) -> Int64 {
            if case .int(let n) = values[i] { return n }
            return 0
        }

        /// Argument `i` (checked a flag).
        func flag(_ i: Int) -> Bool {
            switch values[i] {
            case .bool(let b): return b
            case .int(let n): return n == 1
            default: return false
            }
        }

        /// Argument `i` (checked a dynamic parameter's name).
        func control(_ i: Int) -> AHAPDynamicParameterID { AHAPDynamicParameterID(rawValue: string(i)) ?? .hapticIntensityControl }
    }

    /// What an address does with a checked message.
    typealias Handler = @Sendable (OSCCommands, Call) throws(CommandError) -> Outcome

    /// One address: its arguments, what it does (for `/hapsync/help` and docs/serve.md) and its handler.
    public struct Address: Sendable {
        /// `/hapsync/play`.
        public let path: String
        /// Its arguments in order.
        public let arguments: [Argument]
        /// Arguments that follow them as a group, repeated `repeats` times (a curve's points), or none.
        public let repeating: [Argument]
        /// How many times `repeating` may come.
        public let repeats: ClosedRange<Int>
        /// Whether its first argument names a loaded pattern (a message naming one still loading waits for it).
        public let namesAPattern: Bool
        /// What it does.
        public let summary: String
        /// What it does, run on a checked message.
        let handler: Handler

        init(_ path: String, _ arguments: [Argument], repeating: [Argument] = [], repeats: ClosedRange<Int> = 0...0,
             namesAPattern: Bool = false, _ summary: String, _ handler: @escaping Handler) {
            self.path = path
            self.arguments = arguments
            self.repeating = repeating
            self.repeats = repeats
            self.namesAPattern = namesAPattern
            self.summary = summary
            self.handler = handler
        }

        /// Its arguments as `/hapsync/help` writes them: "i:player s:control f:time f:value ...".
        public var syntax: String {
            (arguments.map(\.syntax) + repeating.map(\.syntax) + (repeating.isEmpty ? [] : ["..."])).joined(separator: " ")
        }

        /// Checks `values` against the arguments: their count, then each one's type and range,
        /// with errors naming the position, the role and the value.
        func check(_ values: [OSCValue]) throws(CommandError) {
            let required = arguments.filter { !$0.optional }.count
            let count = values.count
            if repeating.isEmpty {
                guard (required...arguments.count).contains(count) else {
                    let spec = arguments.isEmpty ? "no arguments" : syntax
                    throw CommandError("takes \(spec), got \(count) argument\(count == 1 ? "" : "s")")
                }
            } else {
                let extra = count - arguments.count
                guard extra >= repeating.count * repeats.lowerBound, extra <= repeating.count * repeats.upperBound,
                      extra % repeating.count == 0 else {
                    throw CommandError("takes \(syntax) (\(repeats.lowerBound) to \(repeats.upperBound) pairs), got \(count) arguments")
                }
            }
            for (i, value) in values.enumerated() {
                let argument = i < arguments.count ? arguments[i] : repeating[(i - arguments.count) % repeating.count]
                try argument.check(value, at: i)
            }
        }
    }

    /// The address space: every address, its arguments and its handler, in the order
    /// `/hapsync/help` answers them and docs/serve.md lists them.
    public static let addresses: [Address] = [
        Address("/hapsync/load", [.string("name"), .string("path")], namesAPattern: true,
                "load an AHAP file (a path relative to a resource root) as NAME") { c, call throws(CommandError) in try c.load(call) },
        Address("/hapsync/unload", [.string("name")], namesAPattern: true,
                "forget a loaded pattern (players keep theirs)") { c, call throws(CommandError) in try c.unload(call) },
        Address("/hapsync/play", [.string("name"), .player(optional: true)], namesAPattern: true,
                "play a loaded pattern (at the bundle's time tag); answers the player id") { c, call throws(CommandError) in try c.play(call) },
        Address("/hapsync/feedback", [.string("style"), .number("intensity", 0...1, optional: true)],
                "play a built-in feedback style (success, impact-heavy, ...); answers the player id") { c, call throws(CommandError) in try c.feedback(call) },
        Address("/hapsync/stop", [.player()], "stop a player (at the time tag)") { c, call throws(CommandError) in try c.stop(call) },
        Address("/hapsync/pause", [.player()], "pause a player (at the time tag)") { c, call throws(CommandError) in
            try c.onPlayer(call) { player, time in try player.pause(atTime: time) }
        },
        Address("/hapsync/resume", [.player()], "resume a paused player (at the time tag)") { c, call throws(CommandError) in try c.resume(call) },
        Address("/hapsync/seek", [.player(), .number("offset", 0...AHAPLimits.default.maxTime)],
                "move a player to OFFSET seconds of its pattern") { c, call throws(CommandError) in
            try c.onPlayer(call) { player, _ in try player.seek(toOffset: call.number(1)) }
        },
        Address("/hapsync/loop", [.player(), .flag("on"), .number("end", HapticPatternPlayer.loopEnds, optional: true)],
                "loop a player (1) or not (0), wrapping at END seconds (0: the pattern's end)") { c, call throws(CommandError) in
            try c.onPlayer(call) { player, _ in try player.setLoop(call.flag(1), end: call.count > 2 ? call.number(2) : 0) }
        },
        Address("/hapsync/rate", [.player(), .number("rate", HapticPatternPlayer.playbackRates)],
                "playback rate (0.01 to 100: pattern seconds per second)") { c, call throws(CommandError) in
            try c.onPlayer(call) { player, _ in try player.setPlaybackRate(call.number(1)) }
        },
        Address("/hapsync/param", [.player(), .control, .number("value", anyFinite)],
                "send a dynamic parameter (HapticIntensityControl, AudioVolumeControl, ...)") { c, call throws(CommandError) in
            try c.onPlayer(call) { player, time in try player.sendParameters([AHAPDynamicParameter(call.control(1), call.number(2))], atTime: time) }
        },
        Address("/hapsync/curve", [.player(), .control], repeating: [.number("time", 0...AHAPLimits.default.maxTime), .number("value", anyFinite)],
                repeats: 1...16, "schedule a parameter curve: 1 to 16 (time, value) points") { c, call throws(CommandError) in try c.curve(call) },
        Address("/hapsync/mute", [.choice("what", ["haptics", "audio"]), .flag("on")],
                "mute the engine's haptics or audio (1) or not (0)") { c, call throws(CommandError) in c.mute(call) },
        Address("/hapsync/policy", [.number("intensity-scale", 0...1), .number("rate-limit-ms", 0...60_000, optional: true)],
                "the accessibility policy for everything played") { c, call throws(CommandError) in try c.policy(call) },
        Address("/hapsync/live", [.flag("on")],
                "1: make the 'HapSync Live' sink and feel what applications play into it, the sound played on to the service's audio sink; 0: remove it, what played into it moved back; answers what it did") { c, call throws(CommandError) in
            try c.live(call)
        },
        Address("/hapsync/live/gain", [.number("gain", anyFinite)], "how loud live hits feel (the profile's gain) from the next one on") { c, call throws(CommandError) in
            try c.liveGain(call)
        },
        Address("/hapsync/live/profile", [.string("name|path")],
                "a built-in live profile (dualsense, rumble, shaker) or a .json profile file in a resource folder: its gain, curve and floor") { c, call throws(CommandError) in
            try c.liveProfile(call)
        },
        Address("/hapsync/live/style", [.string("style")],
                "transients (a tap at each hit), percussive or balanced (taps over a continuous layer that follows the sound's felt loudness), ambient (that layer alone)") { c, call throws(CommandError) in
            .ok([.string(try c.liveControl.setStyle(call.string(0)))])
        },
        Address("/hapsync/players", [],
                "answers /hapsync/players with the count, then id, pattern, state (scheduled, playing, paused) and start time of each player") { c, _ throws(CommandError) in c.listPlayers() },
        Address("/hapsync/stop-all", [], "stop every player (at the time tag), scheduled ones too; answers how many") { c, call throws(CommandError) in try c.stopAll(call) },
        Address("/hapsync/status", [],
                "answers /hapsync/status with key, value pairs (counts, clock offset uncertainty, output failures and losses as they happen)") { c, call throws(CommandError) in c.status(call) },
        Address("/hapsync/help", [], "answers /hapsync/help with one string per address") { _, _ throws(CommandError) in
            .reply("/hapsync/help", addresses.map { .string("\($0.path) \($0.syntax)".trimmingCharacters(in: .whitespaces) + " — " + $0.summary) })
        },
    ]

    /// The addresses by path.
    static let byPath: [String: Address] = Dictionary(uniqueKeysWithValues: addresses.map { ($0.path, $0) })

    /// Any finite number.
    static let anyFinite = -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude

    let engine: HapticEngine
    let configuration: OSCService.Configuration
    private let resolver: AHAPResourceResolver
    private let library: PatternLibrary
    private let loader: PatternLoader
    private let liveChanges: LiveChanges
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
        liveChanges = LiveChanges(wake: wake)
    }

    deinit { loader.stop() }

    /// Stops the loader thread (after the load under way); loads still waiting are dropped.
    public func stopLoading() { loader.stop() }

    /// Refuses live changes from now on, answers those not begun yet that the service is ending
    /// (for `completed()`), and returns once the one under way is done: the service's own last
    /// `turnOff` must come after it.
    public func finishLiveChanges() { liveChanges.finish() }

    /// Returns once the live changes queued so far are done, their answers ready for
    /// `completed()` (the fuzzer and tests, not the service thread).
    public func waitForLiveChanges() { liveChanges.waitForQueued() }

    /// Live changes queued or under way.
    public var liveChangesUnderWay: Int { liveChanges.underWay }

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
        /// A refusal with `description` as its message.
        public init(_ description: String) { self.description = description }
    }

    /// Runs one message from `client`; `at` is the engine time of its bundle's time tag, nil for
    /// now. `.later` means the answer comes from `completed()`.
    public func handle(address: String, args: [OSCValue], at: Double?, statistics: OSCService.Statistics,
                       from client: Client = Client(id: 0)) -> Outcome {
        // A message naming a pattern still loading waits for it, in order.
        if Self.byPath[address]?.namesAPattern == true, case .string(let name)? = args.first, loading[name] != nil {
            guard waitingCount < Self.maxWaiting else {
                return .error("\(Self.maxWaiting) messages wait for patterns loading; try again once one is answered")
            }
            loading[name]!.waiting.append((client, address, args, at))
            waitingCount += 1
            return .later
        }
        guard let entry = Self.byPath[address] else { return .error("unknown address; /hapsync/help lists them") }
        do {
            try entry.check(args)
            return try entry.handler(self, Call(values: args, time: at ?? HapticEngine.timeImmediate, statistics: statistics, client: client))
        } catch {
            return .error(error.description)
        }
    }

    /// The answers of live changes done and of loads that finished since the last call, each
    /// load's followed by those of the messages that waited for it (which may start loads of
    /// their own).
    public func completed() -> [LateAnswer] {
        var answers = liveChanges.take()
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

    // MARK: - Handlers (each on a message its address's arguments checked)

    private func load(_ call: Call) throws(CommandError) -> Outcome {
        let name = call.string(0), path = call.string(1)
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
        loading[name] = Loading(client: call.client, what: path)
        return .later
    }

    private func unload(_ call: Call) throws(CommandError) -> Outcome {
        let name = call.string(0)
        guard patterns.removeValue(forKey: name) != nil else { throw CommandError("no pattern named '\(name)' is loaded") }
        return .ok([.string(name)])
    }

    private func play(_ call: Call) throws(CommandError) -> Outcome {
        let name = call.string(0)
        guard let playable = patterns[name]?.playable else {
            throw CommandError("no pattern named '\(name)' is loaded\(patterns.isEmpty ? " (none is: /hapsync/load NAME PATH first)" : "; loaded: \(patterns.keys.sorted().joined(separator: ", "))")")
        }
        let player: HapticPatternPlayer
        do {
            player = try engine.makePlayer(timeline: playable.timeline, audioFiles: playable.audioFiles)
        } catch {
            throw CommandError("cannot make a player for '\(name)': \(error)")
        }
        return .ok([.int(try start(player, named: name, id: call.count > 1 ? call.int(1) : nil, at: call.time))])
    }

    private func feedback(_ call: Call) throws(CommandError) -> Outcome {
        let style = call.string(0)
        guard let feedback = SensoryFeedback.named(style, intensity: call.count > 1 ? call.number(1) : 1) else {
            throw CommandError("unknown style '\(style)'; known: \(SensoryFeedback.all.map(\.name).joined(separator: ", "))")
        }
        let player: HapticPatternPlayer
        do {
            player = try engine.makeAdvancedPlayer(with: feedback.pattern)
        } catch {
            throw CommandError("cannot make a player for '\(style)': \(error)")
        }
        return .ok([.int(try start(player, named: style, id: nil, at: call.time))])
    }

    /// Runs `body` on the player argument 0 names, at the message's time; answers its id.
    private func onPlayer(_ call: Call, _ body: (HapticPatternPlayer, Double) throws -> Void) throws(CommandError) -> Outcome {
        let (id, player) = try self.player(call)
        try engineCall { try body(player, call.time) }
        return .ok([.int(id)])
    }

    private func stop(_ call: Call) throws(CommandError) -> Outcome {
        let (id, player) = try self.player(call)
        try engineCall { try player.stop(atTime: call.time) }
        // A stop of a player that is not playing (paused, or between runs) ends no run, so
        // no completion will come to free its id and slot: it leaves now.
        if !player.isPlaying { remove(id, player) }
        return .ok([.int(id)])
    }

    private func resume(_ call: Call) throws(CommandError) -> Outcome {
        let (id, player) = try self.player(call)
        try engineCall { try player.resume(atTime: call.time) }
        players.withLock { $0[id]?.startAt = max(call.time, engine.currentTime) }
        return .ok([.int(id)])
    }

    private func stopAll(_ call: Call) throws(CommandError) -> Outcome {
        let all = players.withLock { $0 }
        for (id, entry) in all {
            try engineCall { try entry.player.stop(atTime: call.time) }
            if !entry.player.isPlaying { remove(id, entry.player) }
        }
        return .ok([.int(Int64(all.count))])
    }

    private func listPlayers() -> Outcome {
        let now = engine.currentTime
        let list = players.withLock { $0 }.sorted { $0.key < $1.key }
        var values: [OSCValue] = [.int(Int64(list.count))]
        for (id, entry) in list {
            let state = !entry.player.isPlaying ? "paused" : entry.startAt > now ? "scheduled" : "playing"
            values += [.int(id), .string(entry.name), .string(state), .float(entry.startAt)]
        }
        return .reply("/hapsync/players", values)
    }

    private func curve(_ call: Call) throws(CommandError) -> Outcome {
        let points = stride(from: 2, to: call.count, by: 2).map { AHAPControlPoint(time: call.number($0), value: call.number($0 + 1)) }
        return try onPlayer(call) { player, time in
            try player.scheduleParameterCurve(AHAPParameterCurve(call.control(1), controlPoints: points), atTime: time)
        }
    }

    private func mute(_ call: Call) -> Outcome {
        let what = call.string(0), on = call.flag(1)
        if what == "haptics" { engine.isMutedForHaptics = on } else { engine.isMutedForAudio = on }
        return .ok([.string(what), .int(on ? 1 : 0)])
    }

    private func policy(_ call: Call) throws(CommandError) -> Outcome {
        var policy = engine.policy
        policy.intensityScale = call.number(0)
        if call.count > 1 { policy.rateLimitInterval = call.number(1) / 1000 }
        try engineCall { try engine.setPolicy(policy) }
        return .ok([])
    }

    var liveControl: any LiveControl {
        get throws(CommandError) {
            guard let live = configuration.live else {
                throw CommandError("this service has no live haptics: they play the sound on, and it was started with --audio none")
            }
            return live
        }
    }

    private func live(_ call: Call) throws(CommandError) -> Outcome {
        let control = try liveControl
        let on = call.flag(0)
        do throws(LiveChanges.Refusal) {
            try liveChanges.submit(client: call.client, address: "/hapsync/live") {
                guard on else { return .ok([.int(0), .string(control.turnOff() ?? "live haptics were off")]) }
                do throws(CommandError) {
                    return .ok([.int(1), .string(try control.turnOn())])
                } catch {
                    return .error(error.description)
                }
            }
        } catch {
            switch error {
            case .full: throw CommandError("\(LiveChanges.capacity) live changes are waiting; try again once one is answered")
            case .ending: throw CommandError("the service is ending")
            }
        }
        return .later
    }

    private func liveGain(_ call: Call) throws(CommandError) -> Outcome {
        .ok([.float(try liveControl.setGain(call.number(0)))])
    }

    private func liveProfile(_ call: Call) throws(CommandError) -> Outcome {
        let control = try liveControl
        let value = call.string(0)
        // A file only as a .json in a resource folder, so that nothing else is read on a peer's say-so.
        guard value.hasSuffix(".json") else {
            guard !value.contains("/") else { throw CommandError("profile \"\(value)\" must be a built-in name or a .json file in a resource folder") }
            return .ok([.string(try control.setProfile(named: value, file: nil))])
        }
        switch resolver.resolve(value) {
        case .success(let url): return .ok([.string(try control.setProfile(named: value, file: url))])
        case .failure(let failure): throw CommandError("profile \(failure.description)")
        }
    }

    private func status(_ call: Call) -> Outcome {
        let measured = clock.withLock { $0 } ?? OSCTime.wallOffset()
        let s = call.statistics
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
        ] + (configuration.live?.status ?? [(key: "live", value: .string("none"))]).flatMap { [.string($0.key), $0.value] })
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

    /// The player argument 0 names, or an error saying there is none.
    private func player(_ call: Call) throws(CommandError) -> (Int64, HapticPatternPlayer) {
        let id = call.int(0)
        guard let p = players.withLock({ $0[id]?.player }) else { throw CommandError("no player \(id) (it ended, or was never started)") }
        return (id, p)
    }

    private func engineCall(_ body: () throws -> Void) throws(CommandError) {
        do { try body() } catch { throw CommandError("\(error)") }
    }
}

extension OSCCommands.Argument {
    /// Checks `value`, argument `i` (0-based) of a message, with an error naming the position,
    /// the role and the value.
    func check(_ value: OSCValue, at i: Int) throws(OSCCommands.CommandError) {
        func wrong(_ want: String) -> OSCCommands.CommandError {
            OSCCommands.CommandError("argument \(i + 1) (\(role)) must be \(want), got \(value)")
        }
        switch kind {
        case .string:
            guard case .string = value else { throw wrong("a string") }
        case .choice(let choices):
            guard case .string(let s) = value else { throw wrong("a string") }
            guard choices.contains(s) else {
                throw OSCCommands.CommandError("argument \(i + 1) (\(role)) must be \(choices.joined(separator: " or ")), got \"\(s)\"")
            }
        case .control:
            guard case .string(let name) = value else { throw wrong("a string") }
            guard AHAPDynamicParameterID(rawValue: name) != nil else {
                throw OSCCommands.CommandError("argument \(i + 1) (control) \"\(name)\" is not a dynamic parameter (HapticIntensityControl, AudioVolumeControl, ...)")
            }
        case .int(let range):
            guard case .int(let n) = value else { throw wrong("an int") }
            guard range.contains(n) else {
                throw OSCCommands.CommandError("argument \(i + 1) (\(role)) \(n) is outside \(range.lowerBound)...\(range.upperBound)")
            }
        case .number(let range):
            let v: Double
            switch value {
            case .float(let f): v = f
            case .int(let n): v = Double(n)
            default: throw wrong("a number")
            }
            guard v.isFinite, range.contains(v) else {
                throw OSCCommands.CommandError("argument \(i + 1) (\(role)) \(v) is outside \(range.lowerBound)...\(range.upperBound)")
            }
        case .flag:
            switch value {
            case .bool: break
            case .int(let n) where n == 0 || n == 1: break
            default: throw wrong("0, 1, T or F")
            }
        }
    }
}
