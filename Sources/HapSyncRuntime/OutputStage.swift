import HapSyncConcurrency
import HapSyncCore
import Synchronization

/// The output side: takes released commands from the ring and hands them to the backend, stamping
/// each with the time it was applied, and keeps the timing figures of every command.
///
/// `drain()` runs on the output thread (or in `pump()` with a manual clock), and on the scheduler
/// thread when it hands commands straight on (`drainIfFree`: an immediate start then reaches the
/// backend in one thread wake-up, not two). A flag lets one thread at a time drain: whoever finds
/// it taken does not wait (the scheduler posts the output thread instead; the output thread goes
/// back to its wait, and the scheduler drains what it pushed itself). On the normal path it does
/// not allocate, lock or block beyond what the backend's `apply` does; the failure path (a backend
/// error) takes a lock to store the error and tries to close and reopen the backend once.
final class OutputStage: @unchecked Sendable {
    let ring: SPSCRing<OutputCommand>
    let notifications: SPSCRing<EngineNotification>
    let backend: HapticBackend
    let clock: EngineClock
    private let notify: @Sendable () -> Void

    /// Dispatch error (released − scheduled) and apply latency (applied − released) per command,
    /// ns, in preallocated storage; `recorded` is published with a releasing store.
    let statsCapacity: Int
    private let dispatchErrors: UnsafeMutablePointer<Int64>
    private let applyLatencies: UnsafeMutablePointer<Int64>
    private let appliedTimes: UnsafeMutablePointer<UInt64>
    /// Each recorded command's `extraLead`.
    private let extraLeads: UnsafeMutablePointer<UInt64>
    private let patternTimes: UnsafeMutablePointer<Double>
    private let players: UnsafeMutablePointer<UInt32>
    private let recorded = Atomic<Int>(0)
    private let applied = Atomic<Int>(0)
    private let handled = Atomic<Int>(0)
    private let failed = Atomic<Bool>(false)
    let failure = Locked<String?>(nil)
    /// Policy and mute, set by control threads, read here: whether haptics play and the intensity scale.
    let hapticsOn = Atomic<Bool>(true)
    let intensityScaleBits = Atomic<UInt32>(Float(1).bitPattern)
    private let suppressed = Atomic<Int>(0)
    private let stops = Atomic<Int>(0)
    /// Taken by the thread draining (the output thread or the scheduler).
    private let draining = Atomic<Bool>(false)

    /// Stop-all commands applied (the engine's stops and restarts, not the pattern's).
    var stopsApplied: Int { stops.load(ordering: .relaxed) }

    /// Taps dropped because haptics were off.
    var suppressedCount: Int { suppressed.load(ordering: .relaxed) }

    init(ring: SPSCRing<OutputCommand>, notifications: SPSCRing<EngineNotification>, backend: HapticBackend,
         clock: EngineClock, statsCapacity: Int, notify: @escaping @Sendable () -> Void) {
        self.ring = ring
        self.notifications = notifications
        self.backend = backend
        self.clock = clock
        self.notify = notify
        self.statsCapacity = statsCapacity
        dispatchErrors = .allocate(capacity: max(statsCapacity, 1))
        applyLatencies = .allocate(capacity: max(statsCapacity, 1))
        appliedTimes = .allocate(capacity: max(statsCapacity, 1))
        extraLeads = .allocate(capacity: max(statsCapacity, 1))
        patternTimes = .allocate(capacity: max(statsCapacity, 1))
        players = .allocate(capacity: max(statsCapacity, 1))
    }

    deinit {
        dispatchErrors.deallocate()
        applyLatencies.deallocate()
        appliedTimes.deallocate()
        extraLeads.deallocate()
        patternTimes.deallocate()
        players.deallocate()
    }

    // MARK: - Real-time (output thread)

    /// Applies every waiting command unless another thread is draining; returns how many, or nil
    /// when another thread held the stage (it applies them). Does not allocate, lock or block on
    /// the normal path (see the type's note for the failure path).
    @discardableResult
    func drainIfFree() -> Int? {
        guard hold() else { return nil }
        defer { letGo() }
        return drain()
    }

    /// The output thread's pass: applies every waiting command, then gives the backend its own
    /// time (`service`), both while holding the stage, so that a backend is never entered from
    /// two threads at once (the scheduler applies through the same flag; an evdev update racing
    /// a deferred one uploaded the same effect twice within 1 ms). Returns when the backend wants
    /// the next pass (engine ns), nil for never, or when the scheduler held the stage (it posts
    /// the output thread as it lets go). Does not allocate, lock or block on the normal path.
    func outputPassIfFree() -> UInt64? {
        guard hold() else { return nil }
        defer { letGo() }
        drain()
        return serviceBackend()
    }

    /// Takes the stage unless another thread holds it. Acquiring: what the previous holder did
    /// (statistics, the backend's state) is visible. Does not allocate, lock or block.
    private func hold() -> Bool { draining.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged }

    /// Lets the stage go. Releasing: hands all of it to the next holder. Does not allocate, lock or block.
    private func letGo() { draining.store(false, ordering: .releasing) }

    /// Applies every waiting command; returns how many. The caller holds the stage
    /// (`drainIfFree`), or is the only thread (manual mode, the engine stopping). Does not
    /// allocate, lock or block on the normal path.
    @discardableResult
    func drain() -> Int {
        var n = 0
        while let command = ring.pop() {
            n += 1
            handle(command)
            // Releasing: what the command did is done before a reader sees the count.
            handled.add(1, ordering: .releasing)
        }
        return n
    }

    /// Applies one command (policy, backend, statistics). Does not allocate, lock or block on the
    /// normal path.
    private func handle(_ command: OutputCommand) {
        var command = command
        // Relaxed: only this thread writes `failed`.
        if failed.load(ordering: .relaxed) { return }
        // Policy: off silences levels and drops taps; the scale multiplies every intensity.
        // Relaxed: independent settings, a command either sees a change or the next one does.
        if command.kind == .level || command.kind == .transient {
            if !hapticsOn.load(ordering: .relaxed) {
                if command.kind == .transient { suppressed.add(1, ordering: .relaxed); return }
                command.intensity = 0
            } else {
                command.intensity *= Float(bitPattern: intensityScaleBits.load(ordering: .relaxed))
            }
        }
        let now = clock.now()
        do {
            try backend.apply(command, appliedAt: now)
        } catch {
            recover(from: error, command: command)
            return
        }
        // Relaxed: only this thread writes; readers use `recorded` below.
        let i = recorded.load(ordering: .relaxed)
        if i < statsCapacity {
            dispatchErrors[i] = Int64(bitPattern: command.released &- command.scheduled)
            applyLatencies[i] = Int64(bitPattern: now &- command.released)
            appliedTimes[i] = now
            extraLeads[i] = command.extraLead
            patternTimes[i] = command.patternTime
            players[i] = command.player
            // Releasing: the two entries are written before a reader can see the new count.
            recorded.store(i + 1, ordering: .releasing)
        }
        // Relaxed: statistics.
        applied.add(1, ordering: .relaxed)
        if command.kind == .stopAll { stops.add(1, ordering: .relaxed) }
    }

    /// Failure path: note the error; a disconnected device is reported as such (and the stage
    /// stops applying unless other outputs go on); any other error gets one close-and-reopen.
    private func recover(from error: Error, command: OutputCommand?) {
        failure.withLock { $0 = "\(error)" }
        if let gone = error as? HapticDeviceDisconnected {
            if !gone.othersContinue { failed.store(true, ordering: .relaxed) }
            notifications.push(.engine(.deviceDisconnected))
            notify()
            return
        }
        let reopened: Bool
        do {
            try? backend.close()
            try backend.open()
            if let command { try backend.apply(command, appliedAt: clock.now()) }
            reopened = true
        } catch {
            failure.withLock { $0 = "\(error)" }
            reopened = false
        }
        if !reopened {
            // Relaxed: only this thread reads it in drain; others learn through the notification.
            failed.store(true, ordering: .relaxed)
        }
        notifications.push(.engine(reopened ? .backendReset : .backendFailed))
        notify()
    }

    /// Gives the backend its own time; returns when it wants the next call (engine ns), or nil.
    /// The caller holds the stage (`outputPassIfFree`) or is the only thread (manual mode).
    /// Does not allocate, lock or block on the normal path.
    func serviceBackend() -> UInt64? {
        if failed.load(ordering: .relaxed) { return nil }
        do {
            return try backend.service(now: clock.now())
        } catch {
            recover(from: error, command: nil)
            return nil
        }
    }

    /// Whether the backend failed for good.
    var hasFailed: Bool { failed.load(ordering: .relaxed) }

    /// Commands taken from the ring and dealt with (applied, dropped or failed) so far, wrapping:
    /// compared with the ring's `pushedCount`.
    var handledCount: Int { handled.load(ordering: .acquiring) }

    /// Commands handed to the backend so far.
    var appliedCount: Int { applied.load(ordering: .relaxed) }

    // MARK: - Control side

    /// Copies of the timing figures recorded so far (allocates; for reports, not the real-time path).
    func timings() -> (dispatch: [Int64], apply: [Int64], commands: [(player: UInt32, patternTime: Double, applied: UInt64, extraLead: UInt64)]) {
        // Acquiring: pairs with the releasing store in drain, so entries below the count are complete.
        let n = recorded.load(ordering: .acquiring)
        return (Array(UnsafeBufferPointer(start: dispatchErrors, count: n)), Array(UnsafeBufferPointer(start: applyLatencies, count: n)),
                (0..<n).map { (players[$0], patternTimes[$0], appliedTimes[$0], extraLeads[$0]) })
    }
}
