import Foundation
import HapSyncConcurrency

/// What the scheduler and the output thread report, turned into handler calls and bookkeeping on
/// the notifier thread (or in `pump`).
extension HapticEngine {
    /// Runs handlers for what the scheduler and output thread reported (notifier thread or `pump`;
    /// may allocate and lock).
    func deliverNotifications() {
        while let n = schedulerNotifications.pop() ?? outputNotifications.pop() {
            switch n.event {
            case .finished(let at), .stopped(let at):
                // Idle from when it ended (the notification may be read later).
                let ended = min(at, configuration.clock.now())
                let (player, oneShot) = control.withLock { state in
                    state.active.remove(n.player)
                    state.lastActivity = max(state.lastActivity, ended)
                    configuration.audio?.audiblePlayersActive(state.anyAudiblePlaying)
                    return (state.players[Int(n.slot)]?.player, state.oneShots.removeValue(forKey: n.player))
                }
                if let player, player.id == n.player {
                    awaitOutput(through: n.outputMark)
                    if case .finished(let at) = n.event, let due = feltTime(at) {
                        // Its last commands and audio still play out: the handler runs when they have.
                        finishesToFeel.withLock { $0.append(FinishToFeel(player: player, due: due, oneShot: oneShot)) }
                        continue
                    }
                    if case .finished = n.event { player.completionHandler?(.finished) } else { player.completionHandler?(.stopped) }
                }
                _ = oneShot   // a one-shot player is released here, after its handler, outside the lock
            case .paused:
                let now = configuration.clock.now()
                control.withLock { state in
                    state.active.remove(n.player)
                    state.lastActivity = max(state.lastActivity, now)
                    configuration.audio?.audiblePlayersActive(state.anyAudiblePlaying)
                }
            case .began(let playing):
                control.withLock { state in
                    if let k = state.pendingStarts[n.player] { state.pendingStarts[n.player] = k > 1 ? k - 1 : nil }
                    if playing { state.active.insert(n.player) }
                    configuration.audio?.audiblePlayersActive(state.anyAudiblePlaying)
                }
            case .retired:
                freeSlot(Int(n.slot))
            case .startedOnAudio(let frame):
                let player = control.withLock { $0.players[Int(n.slot)]?.player }
                if let player, player.id == n.player {
                    player.audioStartFrame = frame
                    player.audioStartHandler?(frame)
                }
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
        deliverFelt(all: false)
        checkFinished()
    }

    /// A run that finished whose end is still being felt and heard: its handler runs at `due`.
    struct FinishToFeel {
        let player: HapticPatternPlayer
        let due: UInt64
        /// A one-shot player, kept until its handler has run.
        let oneShot: HapticPatternPlayer?
    }

    /// Runs the completion handlers of finished runs whose end has been felt (`all`: every one,
    /// the engine stopping). Notifier thread or `pump`.
    func deliverFelt(all: Bool) {
        let now = configuration.clock.now()
        let due = finishesToFeel.withLock { list -> [FinishToFeel] in
            let ready = list.filter { all || $0.due <= now }
            list.removeAll { all || $0.due <= now }
            return ready
        }
        for f in due { f.player.completionHandler?(.finished) }
    }

    /// When the end of a run that finished at deadline `at` is felt and heard, if that is still
    /// to come: the engine releases commands `hapticLatency` early (a waveform stream's buffer, a
    /// pad's delay), so its last ones and its audio play out until `at + hapticLatency`, and a
    /// handler that stops the engine then cuts nothing off. Nil in manual mode (the test's clock
    /// moves only when told) or without a haptic latency.
    func feltTime(_ at: UInt64) -> UInt64? {
        let latency = effectiveHapticLatency
        guard configuration.threading != .manual, latency > 0 else { return nil }
        let felt = at &+ latency
        return felt > configuration.clock.now() ? felt : nil
    }

    /// The earliest time a finished run's handler is due, if any (the notifier wakes for it).
    var nextFeltTime: UInt64? { finishesToFeel.withLock { $0.map(\.due).min() } }

    /// Waits (notifier thread, polling every 0.5 ms, at most 2 s) until the output thread has
    /// dealt with every command pushed before output mark `mark`, so that a player's handler runs
    /// after what it played has reached the backend. Returns at once when the output thread is not
    /// running (manual mode drains before it delivers; a stopping engine drains as it stops).
    func awaitOutput(through mark: Int) {
        var waited = 0
        while outputRunning.load(ordering: .sequentiallyConsistent), output.handledCount &- mark < 0, waited < 4000 {
            usleep(500)
            waited += 1
        }
    }

    // MARK: - Finishing and idling

    /// Calls `handler` once every player has finished or stopped (at once if none plays): its
    /// answer stops the engine (the stopped handler then hears `.finished`) or leaves it running.
    /// Core Haptics' `notifyWhenPlayersFinished(finishedHandler:)`.
    public func notifyWhenPlayersFinished(_ handler: @escaping @Sendable (Error?) -> FinishedAction) {
        control.withLock { $0.finishedHandler = handler }
        if configuration.threading == .manual { checkFinished() } else { poke() }
    }

    /// Wakes the notifier thread (it checks the finished handler and the idle timer).
    private func poke() { notifierWake.post() }

    /// Runs the finished handler if every player has ended (notifier thread or `pump`).
    func checkFinished() {
        // Not while a finished run's end is still being felt: its handler comes first.
        guard finishesToFeel.withLock({ $0.isEmpty }) else { return }
        let handler = control.withLock { state -> (@Sendable (Error?) -> FinishedAction)? in
            guard !state.anyPlaying, let h = state.finishedHandler else { return nil }
            state.finishedHandler = nil
            return h
        }
        guard let handler else { return }
        if handler(nil) == .stopEngine {
            let stopped = handlers.withLock { $0.stopped }
            stop()
            stopped?(.finished)
        }
    }

    /// Stops the engine when no player has played for `idleTimeout` (notifier thread or `pump`).
    func checkIdle() {
        guard let timeout = control.withLock({ $0.idleTimeout }) else { return }
        let now = configuration.clock.now()
        let idle = control.withLock { state -> Bool in
            guard state.running, !state.anyPlaying, now >= state.lastActivity,
                  now - state.lastActivity >= UInt64(nanosecondsOf: timeout) else { return false }
            state.idleStopped = true
            return true
        }
        guard idle else { return }
        let stopped = handlers.withLock { $0.stopped }
        stop()
        stopped?(.idleTimeout)
    }
}
