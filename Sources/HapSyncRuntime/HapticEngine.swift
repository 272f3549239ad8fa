import Foundation
import HapSyncAHAP
import HapSyncConcurrency
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
///
/// The engine's code by concern: this file holds its state and start/stop; the public types are in
/// `HapticEngine+Configuration.swift` and `HapticEngine+Reports.swift`, players in
/// `+Players`, the threads (the real-time loop) in `+Threads`, handler delivery in
/// `+Notifications`, and idling, muting, policy and the audio-server watcher in `+Lifecycle`.
public final class HapticEngine: @unchecked Sendable {
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
        /// Players (ids) with audio, from their making to their retirement.
        var audible: Set<UInt32> = []
        /// Whether a player with audio plays or is about to (`AudioDevice.audiblePlayersActive`).
        var anyAudiblePlaying: Bool {
            !audible.isEmpty && (active.contains(where: audible.contains) || pendingStarts.keys.contains(where: audible.contains))
        }
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
        /// How often `stop()` was called: the audio watcher, which stops and restarts the engine
        /// on its own, does not restart one its caller stopped meanwhile.
        var stopCalls = 0
        /// What closing the haptic backend reported at the latest stop (nil: it closed cleanly).
        var lastStopError: Error?
        /// The idle timeout in force (starts as `Configuration.idleTimeout`; `idleTimeout` sets it).
        var idleTimeout: TimeInterval?
    }

    struct WeakPlayer { weak var player: HapticPatternPlayer? }
    /// Live parameters and player mutes, read by the scheduler and the audio thread.
    let live: LiveParameters

    let handlers = Locked(Handlers())
    let control: Locked<ControlState>
    /// API threads push under the `control` lock; the scheduler pops.
    let controlRing = SPSCRing<ControlMessage>(capacity: 1024, serializedProducers: true)
    let outputRing: SPSCRing<OutputCommand>
    let schedulerNotifications = SPSCRing<EngineNotification>(capacity: 1024)
    /// Pushed by whichever thread drains the output stage (one at a time).
    let outputNotifications = SPSCRing<EngineNotification>(capacity: 64, serializedProducers: true)
    let scheduler: Scheduler
    let output: OutputStage
    let schedulerWake = Syscalls.Semaphore()
    let outputWake = Syscalls.Semaphore()
    let notifierWake = Syscalls.Semaphore()
    /// One flag per thread, cleared in order at stop: scheduler, then output, then notifier, so each
    /// one's final pass sees everything the one before it produced.
    let schedulerRunning = Atomic<Bool>(false)
    let outputRunning = Atomic<Bool>(false)
    let notifierRunning = Atomic<Bool>(false)
    let exited = Syscalls.Semaphore()
    /// Threads that have finished; a releasing add at exit, an acquiring load in `join`, so all a
    /// thread wrote happens before whatever the joiner does next.
    let exitCount = Atomic<Int>(0)
    /// The notifier thread's id (`currentThreadID()`) while it runs (0 otherwise).
    let notifierThread = Atomic<UInt>(0)
    let status = Locked(RealtimeStatus.unknown)
    /// The engine's threads' names (at most 15 bytes: what `top -H` and `ps -L` show).
    static let schedulerThreadName = "hapsync-sched", outputThreadName = "hapsync-output", notifierThreadName = "hapsync-notify"
    /// What the output thread's SCHED_FIFO request got: 0 granted directly, 1 the answer is in
    /// `outputRealtimeAnswer`, −1 not yet asked.
    let outputFIFOResult = Atomic<Int32>(-1)
    /// The output thread's answer when it was not granted directly (refused, or granted through
    /// RealtimeKit): written by that thread before `outputFIFOResult`.
    let outputRealtimeAnswer = Locked<Result<RealtimeGrant, RealtimeRefusal>?>(nil)
    /// Held by `start()` and `stop()` (not on the notifier thread) so that one runs at a time:
    /// a start racing a stop on another thread never finds the threads half made or half joined.
    private let lifecycle = Locked(())
    /// The thread holding `lifecycle` (`currentThreadID()`; 0: none).
    private let lifecycleOwner = Atomic<UInt>(0)
    /// Finished runs whose handlers wait until their end is felt (notifier thread).
    let finishesToFeel = Locked<[FinishToFeel]>([])
    /// How finely commands are released, ns: 0 (exact: the scheduler spins the last stretch before
    /// each deadline) when `precise` or the backend needs it, else the backend's
    /// `timingResolution` (sleeping to deadlines; level changes up to that late, together).
    public let timingResolution: UInt64

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
        timingResolution = configuration.precise ? 0 : configuration.backend.timingResolution
        live = LiveParameters(slots: configuration.maxPlayers)
        configuration.audio?.liveParameters = live
        var initial = ControlState(freeSlots: Array((0..<configuration.maxPlayers).reversed()))
        initial.idleTimeout = configuration.idleTimeout
        initial.policy = policy
        control = Locked(initial)
        // Drained by the output thread, or by the scheduler handing commands straight on.
        outputRing = SPSCRing(capacity: configuration.outputCapacity, serializedConsumers: true)
        let outputWake = self.outputWake, notifierWake = self.notifierWake
        let output = OutputStage(ring: outputRing, notifications: outputNotifications, backend: configuration.backend,
                                 clock: configuration.clock, statsCapacity: configuration.statisticsCapacity, notify: { notifierWake.post() })
        self.output = output
        // The scheduler applies what it released itself when the output stage is free (one
        // wake-up from a start to the backend instead of two), then posts the output thread,
        // which re-arms the backend's own timers (and drains whatever it found taken).
        scheduler = Scheduler(capacity: configuration.maxPlayers, control: controlRing, output: outputRing,
                              notifications: schedulerNotifications, notify: { notifierWake.post() },
                              wakeOutput: { output.drainIfFree(); outputWake.post() },
                              audio: configuration.audio, hapticLatency: configuration.hapticLatency,
                              leadSource: configuration.backend as? HapticLeadAdjusting,
                              openLoop: configuration.audioSync == .openLoop, live: live, levelSlack: timingResolution)
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

    /// How far ahead of their sound commands are released now, ns: the configured `hapticLatency`,
    /// and what the backend has found it needs beyond it while playing (`HapticLeadAdjusting`: a
    /// waveform stream's sink keeping a deeper buffer than asked).
    public var effectiveHapticLatency: UInt64 { configuration.hapticLatency &+ (scheduler.leadSource?.extraLead ?? 0) }

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

    /// Seconds without a playing player after which the engine stops itself (the stopped handler
    /// hears `.idleTimeout`; the next player start restarts it); nil never. Starts as
    /// `Configuration.idleTimeout`; settable at any time (Core Haptics' `isAutoShutdownEnabled`).
    /// A value that is not a positive number of seconds is taken as nil.
    public var idleTimeout: TimeInterval? {
        get { control.withLock { $0.idleTimeout } }
        set {
            let t = newValue.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
            control.withLock { $0.idleTimeout = t }
        }
    }

    /// What the system granted for real-time scheduling (known after `start()`): the engine's
    /// threads, then those of its audio device and backend (`RealtimeThreaded`).
    public var realtimeStatus: RealtimeStatus {
        var granted = status.withLock { $0 }
        if configuration.threading == .realtime {
            if granted.fifoPriority != nil || granted.fifoError != nil {
                granted.threads.append(RealtimeThread(name: Self.schedulerThreadName, priority: granted.fifoPriority ?? configuration.realtimePriority,
                                                      error: granted.fifoError, throughRealtimeKit: granted.fifoThroughRealtimeKit))
            }
            let output = outputFIFOResult.load(ordering: .acquiring)
            if output == 0 {
                granted.threads.append(RealtimeThread(name: Self.outputThreadName, priority: configuration.outputThreadPriority))
            } else if output == 1, let answer = outputRealtimeAnswer.withLock({ $0 }) {
                granted.threads.append(RealtimeThread(name: Self.outputThreadName, asked: configuration.outputThreadPriority, result: answer))
            }
            for output in threadedOutputs { granted.threads += output.realtimeThreads }
        }
        return granted
    }

    /// The audio device and the backend, those with threads of their own (`RealtimeThreaded`).
    private var threadedOutputs: [RealtimeThreaded] {
        [configuration.audio as AnyObject?, configuration.backend as AnyObject].compactMap { $0 as? RealtimeThreaded }
    }

    /// Opens the backend and starts the threads (real-time mode). Starting a running engine does nothing.
    public func start() throws(EngineError) {
        // A stop finishing on a helper thread (one asked for from a handler) completes first.
        let waitUntil = Syscalls.monotonicNanoseconds() + 10_000_000_000
        while control.withLock({ $0.stopInProgress }), Syscalls.monotonicNanoseconds() < waitUntil {
            Syscalls.sleep(untilMonotonic: Syscalls.monotonicNanoseconds() + 1_000_000)
        }
        try serialized { () throws(EngineError) in try startUnlocked() }
    }

    /// Whether the calling thread is the engine's notifier thread (a handler is running): front
    /// ends that order starts and stops on a queue of their own run them at once from there.
    public var isNotifierThread: Bool { notifierThread.load(ordering: .acquiring) == currentThreadID() }

    /// Runs a start or a stop under the lifecycle lock, so that one runs at a time whichever
    /// threads call them; on the notifier thread (a handler: a stop holding the lock may be
    /// waiting for that thread) and on the thread already holding it (a manual-mode pump in a
    /// stop delivering a handler that stops), without waiting for it.
    private func serialized<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let me = currentThreadID()
        // Acquiring: a thread sees its own store; another thread's value only ever differs from ours.
        if isNotifierThread || lifecycleOwner.load(ordering: .acquiring) == me { return try body() }
        return try lifecycle.withLock { (_) throws(E) -> T in
            lifecycleOwner.store(me, ordering: .releasing)
            defer { lifecycleOwner.store(0, ordering: .releasing) }
            return try body()
        }
    }

    /// `start()` with the lifecycle lock held (or on the notifier thread).
    private func startUnlocked() throws(EngineError) {
        let now = configuration.clock.now()
        let already = control.withLock { state -> Bool in
            defer { state.running = true; state.started = true; state.idleStopped = false; state.lastActivity = now }
            return state.started
        }
        if already {
            control.withLock { $0.running = true }
            return
        }
        if configuration.threading == .realtime {
            // Their threads render on the engine's behalf: real-time, below the engine's own.
            for output in threadedOutputs { output.threadPriority = configuration.deviceThreadPriority }
        }
        do {
            try configuration.backend.open()
        } catch {
            control.withLock { $0.running = false; $0.started = false }
            throw .backendUnavailable("\(error)")
        }
        if let audio = configuration.audio {
            audio.onServerLost = { [weak self] why in self?.audioLost(why) }
            // Before the stream opens (nothing observes the clock yet): a fit that moves frames
            // earlier wakes the scheduler from a deadline taken from the old line.
            audio.clock.earlierWake = configuration.threading == .realtime ? schedulerWake : nil
            // Before the stream opens: its thread consumes the messages from its first callback,
            // which comes before open() returns (the previous stream's thread is gone).
            audio.messages.resetOwnership()
            do {
                try audio.open()
            } catch {
                // Nothing played: a trace made for this start goes too, so the same call can be retried.
                configuration.backend.abandon()
                control.withLock { $0.running = false; $0.started = false }
                throw .audioUnavailable("\(error)")
            }
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
        outputFIFOResult.store(-1, ordering: .relaxed)
        outputRealtimeAnswer.withLock { $0 = nil }
        resetRingOwnership()
        schedulerRunning.store(true, ordering: .sequentiallyConsistent)
        outputRunning.store(true, ordering: .sequentiallyConsistent)
        notifierRunning.store(true, ordering: .sequentiallyConsistent)
        let ready = Syscalls.Semaphore()
        spawn(Self.schedulerThreadName) { [self] in schedulerLoop(ready: ready) }
        ready.wait(untilMonotonic: Syscalls.monotonicNanoseconds() + 5_000_000_000)
        let outputReady = Syscalls.Semaphore()
        spawn(Self.outputThreadName) { [self] in outputLoop(ready: outputReady) }
        // So that realtimeStatus names it from the moment start returns.
        outputReady.wait(untilMonotonic: Syscalls.monotonicNanoseconds() + 5_000_000_000)
        spawn(Self.notifierThreadName) { [self] in notifierLoop() }
    }

    /// Stops every player at once, silences the backend and ends the threads. Players stay valid
    /// and can be started again after another `start()`. Safe to call from a handler: when called
    /// on the notifier thread, the shutdown finishes on a helper thread.
    ///
    /// Returns the error closing the haptic backend reported (a trace whose disk filled up), nil
    /// when it closed cleanly, when the engine was not running, or when the shutdown finishes on
    /// a helper thread.
    @discardableResult
    public func stop() -> Error? {
        control.withLock { $0.stopCalls += 1 }
        return shutDown()
    }

    /// `stop()` without counting it as the caller's (the audio watcher's restart).
    @discardableResult
    func shutDown() -> Error? {
        // On the notifier thread (a handler called stop): the threads cannot join themselves, so the
        // rest happens on a helper. Known by identity: a thread's name is inherited by the threads
        // it creates on Linux, so the helper would look like the notifier by name.
        if isNotifierThread {
            control.withLock { $0.running = false; $0.stopInProgress = true }
            Thread { [self] in
                shutDown()
                control.withLock { $0.stopInProgress = false }
            }.start()
            return nil
        }
        return serialized { () -> Error? in shutDownUnlocked() }
    }

    /// `shutDown()` with the lifecycle lock held: stops the threads, the audio and the backend.
    private func shutDownUnlocked() -> Error? {
        let wasStarted = control.withLock { state -> Bool in
            defer { state.running = false; state.started = false }
            return state.started
        }
        guard wasStarted else { return nil }
        send(ControlMessage(kind: .stopAll, slot: -1, player: 0, time: configuration.clock.now()))
        control.withLock { $0.active = []; $0.pendingStarts = [:] }
        var stuck: String?
        if configuration.threading == .realtime {
            let base = exitCount.load(ordering: .acquiring)
            var joined = 0
            func join(_ wake: Syscalls.Semaphore, _ name: String) {
                wake.post()
                joined += 1
                let giveUp = Syscalls.monotonicNanoseconds() + 10_000_000_000
                // Acquiring: pairs with the exiting thread's releasing add.
                while exitCount.load(ordering: .acquiring) < base + joined, Syscalls.monotonicNanoseconds() < giveUp {
                    exited.wait(untilMonotonic: Syscalls.monotonicNanoseconds() + 10_000_000)
                }
                if exitCount.load(ordering: .acquiring) < base + joined { stuck = stuck ?? name }
            }
            schedulerRunning.store(false, ordering: .sequentiallyConsistent)
            join(schedulerWake, Self.schedulerThreadName)
            outputRunning.store(false, ordering: .sequentiallyConsistent)
            join(outputWake, Self.outputThreadName)
            notifierRunning.store(false, ordering: .sequentiallyConsistent)
            join(notifierWake, Self.notifierThreadName)
        } else {
            pump()
        }
        try? configuration.backend.stopAll()
        // The audio first: a waveform output mixed into its stream stops with it, and no block
        // record reaches a trace after the trace has closed.
        configuration.audio?.close()
        // Nothing observes the clock now: it keeps no wake of a stopped scheduler.
        configuration.audio?.clock.earlierWake = nil
        var closeError: Error?
        do { try configuration.backend.close() } catch { closeError = error }
        let retired = control.withLock { state -> [Unmanaged<PlayerAudio>] in
            defer { state.retiredAudio = [] }
            return state.retiredAudio
        }
        for a in retired { a.release() }
        if let stuck { closeError = closeError ?? EngineError.threadDidNotStop(stuck) }
        control.withLock { $0.lastStopError = closeError }
        return closeError
    }

    /// Forgets which threads used the rings (debug builds check each ring has one producer and one
    /// consumer thread); called when those threads change hands.
    func resetRingOwnership() {
        controlRing.resetOwnership()
        outputRing.resetOwnership()
        schedulerNotifications.resetOwnership()
        outputNotifications.resetOwnership()
        configuration.audio?.messages.resetOwnership()
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

    /// What has gone wrong with the outputs so far while playing goes on, as it happens: the
    /// backend's report (a trace write that failed, records it lost), a backend that failed in
    /// the output stage, commands lost to a full output ring.
    public var outputHealth: OutputHealth {
        var h = configuration.backend.health
        if h.failure == nil { h.failure = output.failure.withLock { $0 } }
        h.lost += outputRing.overflowCount
        return h
    }

    /// Timing figures of every command applied so far (dispatch error = released − scheduled,
    /// apply latency = applied − released, ns), ring overflows and counts.
    public var statistics: EngineStatistics {
        let t = output.timings()
        return EngineStatistics(applied: output.appliedCount, dispatchErrors: t.dispatch, applyLatencies: t.apply,
                                outputOverflows: outputRing.overflowCount, controlOverflows: controlRing.overflowCount,
                                commands: t.commands, audioUnderruns: configuration.audio?.underruns ?? 0,
                                suppressedTransients: output.suppressedCount,
                                skippedTransients: scheduler.skippedTransients.load(ordering: .relaxed),
                                stopsApplied: output.stopsApplied)
    }
}
