import AHAP
import Foundation
import HapSyncCore
import Synchronization

/// Plays haptic patterns on one monotonic clock, the way Core Haptics' `CHHapticEngine` does.
///
/// ```swift
/// let engine = try HapticEngine(configuration: .init(backend: TraceBackend(path: "out.jsonl")))
/// try engine.start()
/// let player = try engine.makePlayer(with: pattern)
/// try player.start(atTime: HapticEngine.timeImmediate)
/// ```
///
/// Threads (real-time mode): a scheduler thread (SCHED_FIFO where granted) sleeps to each
/// command's deadline with clock_nanosleep(TIMER_ABSTIME), spins the last stretch and releases the
/// command into a lock-free ring; an output thread hands commands to the backend; a notifier thread
/// runs completion and engine handlers. API calls from any thread reach the scheduler through a
/// second ring and never wait for it: starting a player posts a message and returns.
///
/// Manual mode (`Threading.manual`, with a `ManualClock`) runs no threads: `pump()` does one
/// scheduling pass, output pass and notification pass at the clock's time, so tests are exact.
public final class HapticEngine: @unchecked Sendable {
    /// How the engine runs its scheduler.
    public enum Threading: Sendable {
        /// Real threads on CLOCK_MONOTONIC (the clock must be a `MonotonicClock`).
        case realtime
        /// No threads; the caller drives time with `pump()` (for tests with a manual clock).
        case manual
    }

    /// Settings of an engine.
    public struct Configuration {
        /// Where haptic commands go.
        public var backend: HapticBackend
        /// Engine time; `MonotonicClock` unless testing.
        public var clock: EngineClock
        /// Threads or manual pumping.
        public var threading: Threading
        /// The scheduler sleeps until this long before a deadline, then spins (default 150 µs).
        public var spinMargin: UInt64
        /// SCHED_FIFO priority asked for the scheduler thread (default 80; the output thread asks one less).
        public var realtimePriority: Int32
        /// Whether to mlockall the process at start so no page fault stalls the real-time threads (default true).
        public var lockMemory: Bool
        /// Timer slack asked for the scheduler thread, ns (default 1000).
        public var timerSlack: UInt
        /// Players that can exist at once (default 32).
        public var maxPlayers: Int
        /// Output ring slots (power of two, default 4096).
        public var outputCapacity: Int
        /// Commands whose timing figures are kept for `statistics` (default 1,048,576).
        public var statisticsCapacity: Int
        /// Audio output; players whose patterns have audio follow its clock (default none).
        public var audio: AudioDevice?
        /// For players that follow the audio: haptic commands are released this long before their
        /// audio frame is heard, to make up for the haptic device's own delay (default 0).
        public var hapticLatency: UInt64
        /// How players with audio keep their haptics in step with it (default `.followAudioClock`).
        public var audioSync: AudioSync
        /// Stop on its own after this long with no player playing (Core Haptics' auto-shutdown;
        /// default nil: never). The next start of a player starts the engine again.
        public var idleTimeout: TimeInterval?
        /// Play haptics only: audio events are ignored (Core Haptics' `playsHapticsOnly`).
        public var playsHapticsOnly: Bool
        /// Play audio only: haptics are silenced (Core Haptics' `playsAudioOnly`).
        public var playsAudioOnly: Bool
        /// Accessibility and policy settings (default: as authored, 100 ms per-source limit).
        public var policy: HapticPolicy

        /// Makes a configuration; every argument has the default described on its property.
        public init(backend: HapticBackend, clock: EngineClock = MonotonicClock(), threading: Threading = .realtime,
                    spinMargin: UInt64 = 150_000, realtimePriority: Int32 = 80, lockMemory: Bool = true, timerSlack: UInt = 1000,
                    maxPlayers: Int = 32, outputCapacity: Int = 4096, statisticsCapacity: Int = 1 << 20,
                    audio: AudioDevice? = nil, hapticLatency: UInt64 = 0, audioSync: AudioSync = .followAudioClock,
                    idleTimeout: TimeInterval? = nil, playsHapticsOnly: Bool = false, playsAudioOnly: Bool = false,
                    policy: HapticPolicy = HapticPolicy()) {
            self.audio = audio
            self.idleTimeout = idleTimeout
            self.playsHapticsOnly = playsHapticsOnly
            self.playsAudioOnly = playsAudioOnly
            self.policy = policy
            self.audioSync = audioSync
            self.hapticLatency = hapticLatency
            self.backend = backend
            self.clock = clock
            self.threading = threading
            self.spinMargin = spinMargin
            self.realtimePriority = realtimePriority
            self.lockMemory = lockMemory
            self.timerSlack = timerSlack
            self.maxPlayers = maxPlayers
            self.outputCapacity = outputCapacity
            self.statisticsCapacity = statisticsCapacity
        }
    }

    /// How a player with audio keeps its haptics in step with the audio.
    public enum AudioSync: Sendable {
        /// Every haptic deadline is the moment its audio frame is heard by the audio clock's
        /// current fit, so haptics follow the sink's real rate and any jump in its timing.
        case followAudioClock
        /// Pattern time 0 is placed on the audio clock once, at start; after that deadlines run on
        /// the monotonic clock at the nominal rate, as a naive engine would. Offered to measure the
        /// difference (hapsync-bench drift); drifts by the sink's rate error.
        case openLoop
    }

    /// Why the engine stopped on its own (Core Haptics' `CHHapticEngine.StoppedReason` in spirit).
    public enum StoppedReason: Sendable, Equatable {
        /// The engine object was released while running.
        case engineDestroyed
        /// The haptic device went away (unplugged). When other outputs are configured (a trace,
        /// audio) the engine keeps running with them; otherwise it has stopped.
        case deviceDisconnected
        /// The backend failed and could not be reopened.
        case systemError(String)
        /// The audio server went away; haptics go on (on the last fitted audio clock). When it
        /// comes back the engine restarts itself and calls the reset handler.
        case audioServerLost(String)
        /// No player played for `Configuration.idleTimeout`; the next player start restarts the engine.
        case idleTimeout
        /// A `notifyWhenPlayersFinished` handler returned `.stopEngine`.
        case finished
    }

    /// What a `notifyWhenPlayersFinished` handler wants next (Core Haptics' `FinishedAction`).
    public enum FinishedAction: Sendable {
        /// Stop the engine (the stopped handler hears `.finished`).
        case stopEngine
        /// Keep it running.
        case leaveEngineRunning
    }

    /// What this engine can do.
    public struct Capabilities: Sendable, Equatable {
        /// Haptics go somewhere (the backend is not "none").
        public var supportsHaptics: Bool
        /// Audio playback (an audio device is configured).
        public var supportsAudio: Bool
        /// The haptic backend's name.
        public var hapticBackend: String
        /// The haptic device or file ("/dev/input/event5 (Xbox Wireless Controller)", a trace path).
        public var hapticDevice: String
        /// Rumble motors the device drives (0 for a trace or none).
        public var motors: Int
        /// The audio output ("pulse"), or nil.
        public var audioDevice: String?
        /// Audio events are ignored.
        public var playsHapticsOnly: Bool
        /// Haptics are silenced.
        public var playsAudioOnly: Bool
    }

    /// Errors of engine and player calls.
    public enum EngineError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The call needs a running engine.
        case notRunning
        /// All player slots are in use.
        case tooManyPlayers(limit: Int)
        /// The configuration cannot work.
        case invalidConfiguration(String)
        /// The engine's control queue is full (more than 1024 calls waiting for the scheduler).
        case controlQueueFull
        /// The backend could not be opened.
        case backendUnavailable(String)
        /// The audio output could not be started.
        case audioUnavailable(String)
        /// A live parameter that cannot be sent, or a value out of its range.
        case invalidParameter(String)

        /// A sentence for the user.
        public var description: String {
            switch self {
            case .notRunning: return "the haptic engine is not running; call start() first"
            case .tooManyPlayers(let limit): return "all \(limit) player slots are in use; release players or raise maxPlayers"
            case .invalidConfiguration(let why): return "invalid engine configuration: \(why)"
            case .controlQueueFull: return "the engine's control queue is full"
            case .backendUnavailable(let why): return "cannot open the haptic backend: \(why)"
            case .audioUnavailable(let why): return "cannot start audio output: \(why)"
            case .invalidParameter(let why): return "invalid parameter: \(why)"
            }
        }
    }

    /// Core Haptics' `CHHapticTimeImmediate`: start or stop now.
    public static let timeImmediate: TimeInterval = 0

    /// The configuration the engine was made with.
    public let configuration: Configuration
    /// Called (on the notifier thread) when the engine stops on its own.
    public var stoppedHandler: (@Sendable (StoppedReason) -> Void)? {
        get { handlers.withLock { $0.stopped } }
        set { handlers.withLock { $0.stopped = newValue } }
    }
    /// Called (on the notifier thread) after the engine had to reset its backend and carried on.
    public var resetHandler: (@Sendable () -> Void)? {
        get { handlers.withLock { $0.reset } }
        set { handlers.withLock { $0.reset = newValue } }
    }

    struct Handlers {
        var stopped: (@Sendable (StoppedReason) -> Void)?
        var reset: (@Sendable () -> Void)?
    }

    /// Control-side bookkeeping, under a lock (control threads and the notifier only).
    struct ControlState {
        /// API calls accepted (start() called, no stop() or failure since).
        var running = false
        /// Backend opened and (real-time mode) threads started; cleared by the one stop() that shuts them down.
        var started = false
        var freeSlots: [Int]
        var players: [Int: WeakPlayer] = [:]
        var oneShots: [UInt32: HapticPatternPlayer] = [:]
        var nextPlayerID: UInt32 = 1
        /// Audio of players that are gone: the audio thread may still be fading them out, so they
        /// are released when the engine stops.
        var retiredAudio: [Unmanaged<PlayerAudio>] = []
        /// Audio registered per slot.
        var audioBySlot: [Int: Unmanaged<PlayerAudio>] = [:]
        /// Start and resume calls the scheduler has not yet acknowledged, by player id.
        var pendingStarts: [UInt32: Int] = [:]
        /// Players the scheduler says are playing (not finished, stopped or paused).
        var active: Set<UInt32> = []
        /// Whether any player plays or is about to.
        var anyPlaying: Bool { !active.isEmpty || !pendingStarts.isEmpty }
        /// When a player last started or ended (engine ns): the idle timer's origin.
        var lastActivity: UInt64 = 0
        /// Stopped by the idle timer: the next player start restarts the engine.
        var idleStopped = false
        /// `notifyWhenPlayersFinished`'s handler, waiting for every player to end.
        var finishedHandler: (@Sendable (Error?) -> FinishedAction)?
        /// The latest start per rate-limited source (engine ns).
        var lastStartBySource: [String: UInt64] = [:]
        /// Starts merged by the per-source rate limit.
        var merged = 0
        var policy = HapticPolicy()
        var mutedForHaptics = false
        /// A stop asked for on the notifier thread is finishing on a helper thread.
        var stopInProgress = false
        /// The audio-server watcher is running.
        var watchingAudio = false
    }

    struct WeakPlayer { weak var player: HapticPatternPlayer? }
    /// Live parameters and player mutes, read by the scheduler and the audio thread.
    let live: LiveParameters

    let handlers = Locked(Handlers())
    let control: Locked<ControlState>
    /// API threads push under the `control` lock; the scheduler pops.
    private let controlRing = SPSCRing<ControlMessage>(capacity: 1024, serializedProducers: true)
    private let outputRing: SPSCRing<OutputCommand>
    private let schedulerNotifications = SPSCRing<EngineNotification>(capacity: 1024)
    private let outputNotifications = SPSCRing<EngineNotification>(capacity: 64)
    private let scheduler: Scheduler
    let output: OutputStage
    private let schedulerWake = Syscalls.Semaphore()
    private let outputWake = Syscalls.Semaphore()
    let notifierWake = Syscalls.Semaphore()
    /// One flag per thread, cleared in order at stop: scheduler, then output, then notifier, so each
    /// one's final pass sees everything the one before it produced.
    private let schedulerRunning = Atomic<Bool>(false)
    private let outputRunning = Atomic<Bool>(false)
    private let notifierRunning = Atomic<Bool>(false)
    private let exited = Syscalls.Semaphore()
    /// Threads that have finished; a releasing add at exit, an acquiring load in `join`, so all a
    /// thread wrote happens before whatever the joiner does next.
    private let exitCount = Atomic<Int>(0)
    /// The notifier thread's pthread id while it runs (0 otherwise).
    private let notifierThread = Atomic<UInt>(0)
    private let status = Locked(RealtimeStatus.unknown)

    /// Makes an engine; nothing runs until `start()`.
    public init(configuration: Configuration) throws(EngineError) {
        if configuration.threading == .realtime, !configuration.clock.isSystemMonotonic {
            throw .invalidConfiguration("real-time threads sleep on CLOCK_MONOTONIC; use Threading.manual with a manual clock")
        }
        guard configuration.maxPlayers >= 1, configuration.maxPlayers <= 1024 else {
            throw .invalidConfiguration("maxPlayers must be 1...1024, got \(configuration.maxPlayers)")
        }
        guard configuration.outputCapacity >= 2, configuration.outputCapacity & (configuration.outputCapacity - 1) == 0 else {
            throw .invalidConfiguration("outputCapacity must be a power of two, got \(configuration.outputCapacity)")
        }
        let policy: HapticPolicy
        do { policy = try configuration.policy.validated() } catch { throw .invalidConfiguration(error.description) }
        if let t = configuration.idleTimeout, !(t.isFinite && t > 0) {
            throw .invalidConfiguration("idleTimeout must be a positive number of seconds, got \(t)")
        }
        if configuration.playsHapticsOnly && configuration.playsAudioOnly {
            throw .invalidConfiguration("playsHapticsOnly and playsAudioOnly cannot both be set")
        }
        self.configuration = configuration
        live = LiveParameters(slots: configuration.maxPlayers)
        configuration.audio?.liveParameters = live
        var initial = ControlState(freeSlots: Array((0..<configuration.maxPlayers).reversed()))
        initial.policy = policy
        control = Locked(initial)
        outputRing = SPSCRing(capacity: configuration.outputCapacity)
        let outputWake = self.outputWake, notifierWake = self.notifierWake
        scheduler = Scheduler(capacity: configuration.maxPlayers, control: controlRing, output: outputRing,
                              notifications: schedulerNotifications, notify: { notifierWake.post() }, wakeOutput: { outputWake.post() },
                              audio: configuration.audio, hapticLatency: configuration.hapticLatency,
                              openLoop: configuration.audioSync == .openLoop, live: live)
        output = OutputStage(ring: outputRing, notifications: outputNotifications, backend: configuration.backend,
                             clock: configuration.clock, statsCapacity: configuration.statisticsCapacity, notify: { notifierWake.post() })
        applyHapticsSettings()
    }

    deinit {
        if control.withLock({ $0.started }) {
            stop()
            handlers.withLock { $0.stopped }?(.engineDestroyed)
        }
        for s in 0..<scheduler.capacity { scheduler.timelines[s]?.release() }
        // No thread runs any more: the audio the control side kept alive can go too.
        control.withLock { state in
            for audio in state.audioBySlot.values { audio.release() }
            for audio in state.retiredAudio { audio.release() }
        }
    }

    /// Engine time in seconds (the clock's nanoseconds / 1e9), the time base of `start(atTime:)`.
    public var currentTime: TimeInterval { Double(configuration.clock.now()) / 1e9 }

    /// Whether `start()` has been called without `stop()`.
    public var isRunning: Bool { control.withLock { $0.running } }

    /// What this engine can do.
    public var capabilities: Capabilities {
        Capabilities(supportsHaptics: !(configuration.backend is NullHapticBackend) && !configuration.playsAudioOnly,
                     supportsAudio: configuration.audio != nil && !configuration.playsHapticsOnly,
                     hapticBackend: configuration.backend.name, hapticDevice: configuration.backend.device,
                     motors: configuration.backend.motors, audioDevice: configuration.audio?.name,
                     playsHapticsOnly: configuration.playsHapticsOnly, playsAudioOnly: configuration.playsAudioOnly)
    }

    /// What the system granted for real-time scheduling (known after `start()`).
    public var realtimeStatus: RealtimeStatus { status.withLock { $0 } }

    /// Opens the backend and starts the threads (real-time mode). Starting a running engine does nothing.
    public func start() throws(EngineError) {
        // A stop finishing on a helper thread (one asked for from a handler) completes first.
        let waitUntil = Syscalls.monotonicNanoseconds() + 10_000_000_000
        while control.withLock({ $0.stopInProgress }), Syscalls.monotonicNanoseconds() < waitUntil { usleep(1000) }
        let now = configuration.clock.now()
        let already = control.withLock { state -> Bool in
            defer { state.running = true; state.started = true; state.idleStopped = false; state.lastActivity = now }
            return state.started
        }
        if already {
            control.withLock { $0.running = true }
            return
        }
        do {
            try configuration.backend.open()
        } catch {
            control.withLock { $0.running = false; $0.started = false }
            throw .backendUnavailable("\(error)")
        }
        if let audio = configuration.audio {
            audio.onServerLost = { [weak self] why in self?.audioLost(why) }
            do {
                try audio.open()
            } catch {
                try? configuration.backend.close()
                control.withLock { $0.running = false; $0.started = false }
                throw .audioUnavailable("\(error)")
            }
            audio.messages.resetOwnership()
        }
        guard configuration.threading == .realtime else { return }
        var lock = RealtimeStatus()
        if configuration.lockMemory {
            switch Syscalls.lockAllMemory() {
            case .success: lock.memoryLocked = true
            case .failure(let e): lock.memoryLocked = false; lock.memoryLockError = e.description
            }
        }
        status.withLock { $0 = lock }
        resetRingOwnership()
        schedulerRunning.store(true, ordering: .sequentiallyConsistent)
        outputRunning.store(true, ordering: .sequentiallyConsistent)
        notifierRunning.store(true, ordering: .sequentiallyConsistent)
        let ready = Syscalls.Semaphore()
        spawn("hapsync-sched") { [self] in schedulerLoop(ready: ready) }
        ready.wait(untilMonotonic: Syscalls.monotonicNanoseconds() + 5_000_000_000)
        spawn("hapsync-output") { [self] in outputLoop() }
        spawn("hapsync-notify") { [self] in notifierLoop() }
    }

    /// Stops every player at once, silences the backend and ends the threads. Players stay valid
    /// and can be started again after another `start()`. Safe to call from a handler: when called
    /// on the notifier thread, the shutdown finishes on a helper thread.
    public func stop() {
        // On the notifier thread (a handler called stop): the threads cannot join themselves, so the
        // rest happens on a helper. Known by identity: a thread's name is inherited by the threads
        // it creates on Linux, so the helper would look like the notifier by name.
        if notifierThread.load(ordering: .acquiring) == UInt(pthread_self()) {
            control.withLock { $0.running = false; $0.stopInProgress = true }
            Thread { [self] in
                stop()
                control.withLock { $0.stopInProgress = false }
            }.start()
            return
        }
        let wasStarted = control.withLock { state -> Bool in
            defer { state.running = false; state.started = false }
            return state.started
        }
        guard wasStarted else { return }
        send(ControlMessage(kind: .stopAll, slot: -1, player: 0, time: configuration.clock.now()))
        control.withLock { $0.active = []; $0.pendingStarts = [:] }
        if configuration.threading == .realtime {
            let base = exitCount.load(ordering: .acquiring)
            var joined = 0
            func join(_ wake: Syscalls.Semaphore) {
                wake.post()
                joined += 1
                let giveUp = Syscalls.monotonicNanoseconds() + 10_000_000_000
                // Acquiring: pairs with the exiting thread's releasing add.
                while exitCount.load(ordering: .acquiring) < base + joined, Syscalls.monotonicNanoseconds() < giveUp {
                    exited.wait(untilMonotonic: Syscalls.monotonicNanoseconds() + 10_000_000)
                }
            }
            schedulerRunning.store(false, ordering: .sequentiallyConsistent)
            join(schedulerWake)
            outputRunning.store(false, ordering: .sequentiallyConsistent)
            join(outputWake)
            notifierRunning.store(false, ordering: .sequentiallyConsistent)
            join(notifierWake)
        } else {
            pump()
        }
        try? configuration.backend.stopAll()
        try? configuration.backend.close()
        configuration.audio?.close()
        let retired = control.withLock { state -> [Unmanaged<PlayerAudio>] in
            defer { state.retiredAudio = [] }
            return state.retiredAudio
        }
        for a in retired { a.release() }
    }

    /// Forgets which threads used the rings (debug builds check each ring has one producer and one
    /// consumer thread); called when those threads change hands.
    private func resetRingOwnership() {
        controlRing.resetOwnership()
        outputRing.resetOwnership()
        schedulerNotifications.resetOwnership()
        outputNotifications.resetOwnership()
        configuration.audio?.messages.resetOwnership()
    }

    /// The audio server went away: report it; haptics go on. A watcher then waits for the server
    /// to come back, restarts the engine on it and calls the reset handler.
    private func audioLost(_ why: String) {
        handlers.withLock { $0.stopped }?(.audioServerLost(why))
        watchForAudioServer()
    }

    /// Manual mode: one scheduling pass, output pass and notification pass at the clock's time.
    /// Returns the next deadline (engine ns; `UInt64.max` when nothing is scheduled), so a
    /// simulation can advance its clock exactly there.
    @discardableResult
    public func pump() -> UInt64 {
        precondition(configuration.threading == .manual, "pump() drives engines in Threading.manual; real-time engines run themselves")
        // Manual mode has one pumping thread at a time, not necessarily the same one (the audio
        // watcher restarts the engine on its own thread): it owns the rings while it pumps.
        resetRingOwnership()
        let next = scheduler.service(clock: configuration.clock)
        output.drain()
        _ = output.serviceBackend()
        deliverNotifications()
        checkIdle()
        return next
    }

    /// Makes a player for a pattern (compiled here: allocation happens now, not when it starts).
    /// `audioFiles` maps each `EventWaveformPath` to its resolved file; with an audio device the
    /// files are decoded now and the player follows the audio clock.
    public func makePlayer(with pattern: AHAPPattern, options: RenderOptions = RenderOptions(),
                           audioFiles: [String: URL] = [:]) throws -> HapticPatternPlayer {
        var lengths: [String: Double] = [:]
        for (path, url) in audioFiles { if let info = try? AudioFileInfo(contentsOf: url) { lengths[path] = info.duration } }
        let timeline = try PatternTimeline(pattern: pattern, options: options, audioLength: { lengths[$0] })
        return try makePlayer(timeline: timeline, audioFiles: audioFiles)
    }

    /// Makes a player for a compiled timeline; with an audio device and audio voices, its files
    /// (`audioFiles`: waveform path → file) are decoded now and the player follows the audio clock.
    public func makePlayer(timeline: PatternTimeline, audioFiles: [String: URL] = [:]) throws -> HapticPatternPlayer {
        var audio: PlayerAudio?
        if let device = configuration.audio, !timeline.voices.isEmpty, !configuration.playsHapticsOnly {
            audio = try device.load(timeline, files: audioFiles)
        }
        let (slot, id) = try control.withLock { state throws(EngineError) -> (Int, UInt32) in
            guard let slot = state.freeSlots.popLast() else { throw .tooManyPlayers(limit: configuration.maxPlayers) }
            let id = state.nextPlayerID
            state.nextPlayerID &+= 1
            return (slot, id)
        }
        // The scheduler reads this slot only after a start message, which the ring orders after these writes.
        scheduler.timelines[slot] = Unmanaged.passRetained(timeline)
        scheduler.hasAudio[slot] = audio != nil
        if let audio, let device = configuration.audio {
            let retained = Unmanaged.passRetained(audio)
            control.withLock { $0.audioBySlot[slot] = retained }
            device.setSource(slot: slot, retained)
        }
        live.clear(slot: slot, unmute: true)
        let player = HapticPatternPlayer(engine: self, slot: slot, id: id, timeline: timeline)
        control.withLock { $0.players[slot] = WeakPlayer(player: player) }
        return player
    }

    /// Reads an AHAP file, compiles it and plays it once, now (Core Haptics' `playPattern(from:)`).
    /// Audio files are looked up in the file's folder, then in `resources`.
    public func playPattern(from url: URL, resources: [URL] = []) throws {
        let pattern = try AHAPReader().read(contentsOf: url).pattern
        let resolver = AHAPResourceResolver(ahapFile: url, resources: resources)
        var files: [String: URL] = [:]
        for e in pattern.events {
            if let p = e.waveformPath, case .success(let file) = resolver.resolve(p) { files[p] = file }
        }
        let player = try makePlayer(with: pattern, audioFiles: files)
        control.withLock { $0.oneShots[player.id] = player }
        try player.start(atTime: HapticEngine.timeImmediate)
    }

    /// Timing figures of every command applied so far (dispatch error = released − scheduled,
    /// apply latency = applied − released, ns), ring overflows and counts.
    public var statistics: EngineStatistics {
        let t = output.timings()
        return EngineStatistics(applied: output.appliedCount, dispatchErrors: t.dispatch, applyLatencies: t.apply,
                                outputOverflows: outputRing.overflowCount, controlOverflows: controlRing.overflowCount,
                                commands: t.commands, audioUnderruns: configuration.audio?.underruns ?? 0)
    }

    // MARK: - Player support

    /// Engine ns for a Core Haptics-style time: `timeImmediate` (or any past time) means now.
    func engineNanoseconds(_ time: TimeInterval) -> UInt64 {
        let now = configuration.clock.now()
        guard time > 0, time.isFinite else { return now }
        let t = UInt64((time * 1e9).rounded())
        return max(t, now)
    }

    func send(_ message: ControlMessage) {
        sendMessage(message)
    }

    private func sendMessage(_ message: ControlMessage) {
        // Producers (any API thread) take turns; the scheduler consumes without a lock.
        _ = control.withLock { _ in controlRing.push(message) }
        schedulerWake.post()
    }

    /// Starts the engine again if the idle timer stopped it; else requires it to be running.
    private func ensureRunning() throws(EngineError) {
        if isRunning { return }
        if control.withLock({ $0.idleStopped }) { try start(); return }
        throw .notRunning
    }

    /// Starts (or resumes) a player: the per-source rate limit may merge it (returns false).
    func startPlayer(slot: Int, id: UInt32, at time: TimeInterval, kind: ControlMessage.Kind = .start, offset: Double = 0,
                     source: String? = nil) throws(EngineError) -> Bool {
        try ensureRunning()
        let when = engineNanoseconds(time)
        let accepted = control.withLock { state -> Bool in
            if let source, state.policy.rateLimitInterval > 0 {
                if let last = state.lastStartBySource[source], when >= last, when - last < UInt64(state.policy.rateLimitInterval * 1e9) {
                    state.merged += 1
                    return false
                }
                state.lastStartBySource[source] = when
            }
            state.pendingStarts[id, default: 0] += 1
            state.lastActivity = configuration.clock.now()
            return true
        }
        guard accepted else { return false }
        if kind == .start { live.clear(slot: slot) }
        let before = controlRing.overflowCount
        send(ControlMessage(kind: kind, slot: Int32(slot), player: id, time: when, value: offset))
        if controlRing.overflowCount != before { throw .controlQueueFull }
        return true
    }

    func stopPlayer(slot: Int, id: UInt32, at time: TimeInterval, pause: Bool = false) throws(EngineError) {
        guard isRunning else { throw .notRunning }
        send(ControlMessage(kind: pause ? .pause : .stop, slot: Int32(slot), player: id, time: engineNanoseconds(time)))
    }

    /// Sends a player setting (seek, rate, loop, refresh) to the scheduler; on a stopped engine it
    /// waits in the control ring for the next start (the scheduler keeps settings across starts).
    func sendPlayer(_ kind: ControlMessage.Kind, slot: Int, id: UInt32, value: Double = 0, flag: Bool = false) {
        send(ControlMessage(kind: kind, slot: Int32(slot), player: id, time: configuration.clock.now(), value: value, flag: flag))
    }

    /// Whether the engine is running (for players deciding whether to send settings now).
    var acceptsMessages: Bool { isRunning }

    func retire(slot: Int, id: UInt32) {
        let running = control.withLock { state -> Bool in
            state.players[slot] = nil
            return state.running
        }
        if running {
            send(ControlMessage(kind: .retire, slot: Int32(slot), player: id, time: configuration.clock.now()))
            if configuration.threading == .manual { pump() }
        } else {
            freeSlot(slot)
        }
    }

    private func freeSlot(_ slot: Int) {
        scheduler.timelines[slot]?.release()
        scheduler.timelines[slot] = nil
        scheduler.hasAudio[slot] = false
        configuration.audio?.setSource(slot: slot, nil)
        control.withLock { state in
            if let audio = state.audioBySlot.removeValue(forKey: slot) { state.retiredAudio.append(audio) }
            state.freeSlots.append(slot)
        }
    }

    // MARK: - Threads

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            Syscalls.setThreadName(name)
            body()
            // Releasing: everything this thread wrote happens before a joiner's acquiring load.
            exitCount.add(1, ordering: .releasing)
            exited.post()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func schedulerLoop(ready: Syscalls.Semaphore) {
        var granted = status.withLock { $0 }
        switch Syscalls.setFIFO(priority: configuration.realtimePriority) {
        case .success: granted.fifoPriority = configuration.realtimePriority
        case .failure(let e): granted.fifoError = e.description
        }
        if case .success = Syscalls.setTimerSlack(nanoseconds: configuration.timerSlack) { granted.timerSlack = configuration.timerSlack }
        status.withLock { $0 = granted }
        ready.post()
        runSchedulerLoop()
    }

    /// The real-time loop. Does not allocate, lock or block: it sleeps only until deadlines
    /// (a semaphore wait, cut short by control messages, while the deadline is more than a
    /// millisecond away; then clock_nanosleep to `spinMargin` before it) and spins the rest.
    ///
    /// After a long sleep (over 2 ms: sparse taps) a virtual CPU that went idle wakes later than
    /// after a short one (measured on the shared VM: naive sleepers ~200 µs late against
    /// cyclictest's ~30 µs at 1 kHz), so for long sleeps the margin adapts: the running 99th
    /// percentile of how late such sleeps woke, plus 30 µs, between `spinMargin` and 1 ms. Short
    /// sleeps (a 1 kHz stream) keep `spinMargin`. (`hapsync-bench dispatch`, taps 10-30 ms apart,
    /// A/B in alternation: p99 128 and 82 µs with the fixed margin, 20 and 67 µs adaptive.)
    private func runSchedulerLoop() {
        let clock = configuration.clock
        let margin = configuration.spinMargin
        let wakeWindow: UInt64 = 1_000_000
        var longLateness = WakeLateness()
        // Sequentially consistent: the shutdown flag is read once per pass; ordering with the rings is not needed.
        defer { _ = scheduler.service(clock: clock) }  // the final pass takes the stopAll message
        while schedulerRunning.load(ordering: .sequentiallyConsistent) {
            let deadline = scheduler.service(clock: clock)
            let now = clock.now()
            if deadline == .max {
                schedulerWake.wait(untilMonotonic: now &+ 100_000_000)
                continue
            }
            if deadline <= now { continue }
            let remaining = deadline - now
            let long = remaining > 2_000_000
            let m = long ? max(margin, min(longLateness.margin, 1_000_000)) : margin
            if remaining > m + wakeWindow {
                // Far: wait, but let a control message (a player starting) cut the wait short.
                let target = deadline - m
                let posted = schedulerWake.wait(untilMonotonic: target)
                let woke = clock.now()
                if !posted, long, woke >= target { longLateness.add(woke - target) }
                if woke < target { continue }
            } else if remaining > m {
                // Near: the precise absolute sleep, uninterrupted.
                Syscalls.sleep(untilMonotonic: deadline - m)
            }
            while clock.now() < deadline {}
        }
    }

    /// A streaming estimate of the 99th percentile of wake-up lateness after long sleeps (the
    /// "frugal" estimator: up by 0.99 × 5 µs when a sample is above it, down by 0.01 × 5 µs when
    /// below, so one VM stall moves it by 5 µs only), and the spin margin it asks for. Does not
    /// allocate, lock or block.
    struct WakeLateness {
        /// The estimate, ns.
        private(set) var p99: Double = 0
        /// Takes one sample (ns late).
        mutating func add(_ lateness: UInt64) {
            let step = 5_000.0
            p99 = max(0, p99 + (Double(lateness) > p99 ? 0.99 * step : -0.01 * step))
        }
        /// The estimate plus 30 µs, ns.
        var margin: UInt64 { UInt64(p99 + 30_000) }
    }

    private func outputLoop() {
        _ = Syscalls.setFIFO(priority: max(1, configuration.realtimePriority - 1))
        while outputRunning.load(ordering: .sequentiallyConsistent) {
            output.drain()
            let now = Syscalls.monotonicNanoseconds()
            let backendDeadline = output.serviceBackend() ?? .max
            outputWake.wait(untilMonotonic: min(backendDeadline, now &+ 50_000_000))
        }
        output.drain()
    }

    private func notifierLoop() {
        notifierThread.store(UInt(pthread_self()), ordering: .releasing)
        defer { notifierThread.store(0, ordering: .releasing) }
        while notifierRunning.load(ordering: .sequentiallyConsistent) {
            deliverNotifications()
            checkIdle()
            notifierWake.wait(untilMonotonic: Syscalls.monotonicNanoseconds() &+ 50_000_000)
        }
        deliverNotifications()
    }

    /// Runs handlers for what the scheduler and output thread reported (notifier thread; may allocate).
    func deliverNotifications() {
        while let n = schedulerNotifications.pop() ?? outputNotifications.pop() {
            switch n.kind {
            case .finished, .stopped:
                // Idle from when it ended (the notification may be read later).
                let ended = min(n.time, configuration.clock.now())
                let (player, oneShot) = control.withLock { state in
                    state.active.remove(n.player)
                    state.lastActivity = max(state.lastActivity, ended)
                    return (state.players[Int(n.slot)]?.player, state.oneShots.removeValue(forKey: n.player))
                }
                if let player, player.id == n.player {
                    player.completionHandler?(n.kind == .finished ? .finished : .stopped)
                }
                _ = oneShot   // a one-shot player is released here, after its handler, outside the lock
            case .paused:
                let now = configuration.clock.now()
                control.withLock { state in
                    state.active.remove(n.player)
                    state.lastActivity = max(state.lastActivity, now)
                }
            case .began:
                control.withLock { state in
                    if let k = state.pendingStarts[n.player] { state.pendingStarts[n.player] = k > 1 ? k - 1 : nil }
                    if n.time == 1 { state.active.insert(n.player) }
                }
            case .retired:
                freeSlot(Int(n.slot))
            case .startedOnAudio:
                let player = control.withLock { $0.players[Int(n.slot)]?.player }
                if let player, player.id == n.player { player.audioStartFrame = Int64(n.time) }
            case .backendReset:
                handlers.withLock { $0.reset }?()
            case .deviceDisconnected:
                let handler = handlers.withLock { $0.stopped }
                if output.hasFailed { stop() }
                handler?(.deviceDisconnected)
            case .backendFailed:
                let reason = output.failure.withLock { $0 } ?? "backend failed"
                let handler = handlers.withLock { $0.stopped }
                // Refuse new calls now; shut the threads down (from this thread that means a helper).
                stop()
                handler?(.systemError(reason))
            }
        }
        checkFinished()
    }
}

/// Timing figures of an engine's output so far.
public struct EngineStatistics: Sendable {
    /// Commands handed to the backend.
    public var applied: Int
    /// Released − scheduled, ns, per command (the scheduler's lateness).
    public var dispatchErrors: [Int64]
    /// Applied − released, ns, per command (the ring and output thread's delay).
    public var applyLatencies: [Int64]
    /// Commands lost because the output ring was full.
    public var outputOverflows: Int
    /// Control messages lost because the control ring was full.
    public var controlOverflows: Int
    /// Every applied command: player, pattern time, applied time (ns), in order.
    public var commands: [(player: UInt32, patternTime: Double, applied: UInt64)]
    /// Audio buffer underruns reported by the audio device.
    public var audioUnderruns: Int
}
