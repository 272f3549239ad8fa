import Foundation
import HapSyncConcurrency

/// The engine's threads: the real-time scheduler loop, the output loop and the notifier loop.
extension HapticEngine {
    // MARK: - Starting threads (control side)

    /// Starts a named thread that counts itself out when it ends (`stop` joins on that count).
    func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
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

    /// The scheduler thread: asks for real-time rights (recording what it got), says it is ready,
    /// then runs the real-time loop.
    func schedulerLoop(ready: Syscalls.Semaphore) {
        Syscalls.prefaultStack()
        var granted = status.withLock { $0 }
        switch Syscalls.setRealtime(priority: configuration.realtimePriority) {
        case .success(let g): granted.fifoPriority = g.priority; granted.fifoThroughRealtimeKit = g.throughRealtimeKit
        case .failure(let e): granted.fifoError = e.description
        }
        if case .success = Syscalls.setTimerSlack(nanoseconds: configuration.timerSlack) { granted.timerSlack = configuration.timerSlack }
        status.withLock { $0 = granted }
        ready.post()
        runSchedulerLoop()
    }

    // MARK: - Real-time (scheduler thread)

    /// The real-time loop. Does not allocate, lock or block: it sleeps only until deadlines
    /// (a semaphore wait, cut short by control messages and by the audio clock moving frames
    /// earlier (`AudioClock.earlierWake`), while the deadline is more than a millisecond away;
    /// then clock_nanosleep to `spinMargin` before it) and spins the rest.
    /// With a `timingResolution` above 0 (a backend that cannot use that precision, and not
    /// `precise`) it only sleeps: the semaphore wait to the deadline.
    ///
    /// After a long sleep (over 2 ms: sparse taps) a virtual CPU that went idle wakes later than
    /// after a short one, so for long sleeps the margin adapts: the running 99th percentile of how
    /// late such sleeps woke, plus 30 µs, between `spinMargin` and 1 ms. Short sleeps (a 1 kHz
    /// stream) keep `spinMargin`. (The measurements: Bench/results/design-measurements.md.)
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
            if timingResolution > 0 {
                // Precision by need: the backend cannot use sub-wake-up precision, so sleep to the
                // deadline (a control message still cuts the wait short) and spin not at all.
                schedulerWake.wait(untilMonotonic: deadline)
                continue
            }
            let long = remaining > 2_000_000
            let m = long ? max(margin, min(longLateness.margin, 1_000_000)) : margin
            if remaining > m + wakeWindow {
                // Far: wait, but let a control message (a player starting) or the audio clock
                // moving frames earlier cut the wait short.
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

    // MARK: - Real-time (output thread)

    /// The output thread: asks for real-time rights (recording what it got), says it is ready,
    /// then drains the output ring into the backend and gives the backend the time it asks for,
    /// waiting on a semaphore in between. The loop does not allocate, lock or block beyond what
    /// the backend's `apply` and `service` do (see `OutputStage`).
    func outputLoop(ready: Syscalls.Semaphore) {
        Syscalls.prefaultStack()
        // Granted directly: 0 in an atomic, nothing else (this thread allocates nothing,
        // `.ci/rt-alloc-check`). Otherwise (refused, or granted by RealtimeKit, which allocated
        // and blocked while this thread was not real-time) the answer is kept before the flag.
        let answer = Syscalls.setRealtime(priority: configuration.outputThreadPriority)
        if case .success(let grant) = answer, !grant.throughRealtimeKit {
            outputFIFOResult.store(0, ordering: .releasing)
        } else {
            outputRealtimeAnswer.withLock { $0 = answer }
            outputFIFOResult.store(1, ordering: .releasing)
        }
        ready.post()
        while outputRunning.load(ordering: .sequentiallyConsistent) {
            let now = Syscalls.monotonicNanoseconds()
            // When the scheduler holds the stage it posts this thread as it lets go, so the wait
            // below ends at once and the pass runs then.
            let next = output.outputPassIfFree()
            outputWake.wait(untilMonotonic: min(next ?? .max, now &+ 50_000_000))
        }
        output.drainIfFree()
    }

    // MARK: - Notifier thread (not real-time: runs handlers)

    /// The notifier thread: delivers notifications, checks the idle timer, waits 50 ms or until woken.
    func notifierLoop() {
        notifierThread.store(currentThreadID(), ordering: .releasing)
        defer { notifierThread.store(0, ordering: .releasing) }
        while notifierRunning.load(ordering: .sequentiallyConsistent) {
            deliverNotifications()
            checkIdle()
            let wake = Syscalls.monotonicNanoseconds() &+ 50_000_000
            notifierWake.wait(untilMonotonic: min(wake, nextFeltTime ?? wake))
        }
        deliverNotifications()
        deliverFelt(all: true)
    }

    /// Runs handlers for what the scheduler and output thread reported (notifier thread; may allocate).
}
