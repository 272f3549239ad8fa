import AHAP
import Foundation
import HapSyncCore

/// Engine lifecycle in Core Haptics' terms: idle auto-shutdown, `notifyWhenPlayersFinished`,
/// muting, the accessibility policy, the audio server coming back, and built-in feedback.
extension HapticEngine {
    // MARK: - Muting and policy

    /// Silences haptics (levels drop to 0, taps are dropped) without stopping anything; audio is
    /// not affected (Core Haptics' `isMutedForHaptics`).
    public var isMutedForHaptics: Bool {
        get { control.withLock { $0.mutedForHaptics } }
        set {
            control.withLock { $0.mutedForHaptics = newValue }
            applyHapticsSettings()
        }
    }

    /// Silences audio; voices go on advancing so that unmuting resumes in step (Core Haptics'
    /// `isMutedForAudio`).
    public var isMutedForAudio: Bool {
        get { configuration.audio?.isMuted ?? false }
        set { configuration.audio?.isMuted = newValue }
    }

    /// The accessibility and policy settings in force (see `HapticPolicy`). Setting an invalid
    /// policy (a scale outside 0...1) throws `invalidConfiguration` and leaves the old one.
    public var policy: HapticPolicy { control.withLock { $0.policy } }

    /// Replaces the policy; it applies at once to everything playing.
    public func setPolicy(_ policy: HapticPolicy) throws(EngineError) {
        let checked: HapticPolicy
        do { checked = try policy.validated() } catch { throw .invalidConfiguration(error.description) }
        control.withLock { $0.policy = checked }
        applyHapticsSettings()
    }

    /// Starts merged by the per-source rate limit so far.
    public var mergedStarts: Int { control.withLock { $0.merged } }

    /// Pushes policy and mute to the output stage and asks the scheduler to re-send the current
    /// level, so a sustained level follows at once.
    func applyHapticsSettings() {
        let (policy, muted) = control.withLock { ($0.policy, $0.mutedForHaptics) }
        // Relaxed: independent settings read by the output thread command by command.
        output.hapticsOn.store(policy.hapticsEnabled && !muted && !configuration.playsAudioOnly, ordering: .relaxed)
        output.intensityScaleBits.store(Float(policy.intensityScale).bitPattern, ordering: .relaxed)
        if isRunning {
            send(ControlMessage(kind: .refresh, slot: -1, player: 0, time: configuration.clock.now()))
            if configuration.threading == .manual { pump() }
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
        guard let timeout = configuration.idleTimeout else { return }
        let now = configuration.clock.now()
        let idle = control.withLock { state -> Bool in
            guard state.running, !state.anyPlaying, now >= state.lastActivity,
                  now - state.lastActivity >= UInt64(timeout * 1e9) else { return false }
            state.idleStopped = true
            return true
        }
        guard idle else { return }
        let stopped = handlers.withLock { $0.stopped }
        stop()
        stopped?(.idleTimeout)
    }

    /// Whether the idle timer stopped the engine (the next player start restarts it).
    public var isIdleStopped: Bool { control.withLock { $0.idleStopped && !$0.running } }

    // MARK: - Audio server

    /// After the audio server went away: checks once a second whether it is back; when it is,
    /// stops the engine (players end as stopped), starts it again on the server and calls the
    /// reset handler. Gives up when the engine is stopped by the caller.
    func watchForAudioServer() {
        guard let audio = configuration.audio else { return }
        let go = control.withLock { state -> Bool in
            if state.watchingAudio { return false }
            state.watchingAudio = true
            return true
        }
        guard go else { return }
        Thread { [weak self] in
            while true {
                Thread.sleep(forTimeInterval: 1)
                guard let self else { return }
                guard self.isRunning else { self.control.withLock { $0.watchingAudio = false }; return }
                guard audio.canConnect() else { continue }
                self.stop()
                do {
                    try self.start()
                } catch {
                    continue
                }
                self.control.withLock { $0.watchingAudio = false }
                self.handlers.withLock { $0.reset }?()
                return
            }
        }.start()
    }

    // MARK: - Players

    /// Makes a player with pause, resume, seek, looping and playback rate (Core Haptics'
    /// `makeAdvancedPlayer(with:)`; every HapSync player has them).
    public func makeAdvancedPlayer(with pattern: AHAPPattern, options: RenderOptions = RenderOptions(),
                                   audioFiles: [String: URL] = [:]) throws -> HapticAdvancedPatternPlayer {
        try makePlayer(with: pattern, options: options, audioFiles: audioFiles)
    }

    /// Plays a built-in feedback style now (SwiftUI's `sensoryFeedback`, `hapsync feedback NAME`).
    /// With a `source`, the policy's per-source rate limit applies: a second call from the same
    /// source within the interval merges into the first (returns false) instead of stacking.
    @discardableResult
    public func play(_ feedback: SensoryFeedback, source: String? = nil) throws -> Bool {
        let player = try makePlayer(with: feedback.pattern)
        player.source = source
        control.withLock { $0.oneShots[player.id] = player }
        // Kept alive until it ends; dropped at once if it never starts (merged, or an error).
        let started: Bool
        do { started = try player.start(atTime: HapticEngine.timeImmediate) } catch {
            _ = control.withLock { $0.oneShots.removeValue(forKey: player.id) }
            throw error
        }
        if !started { _ = control.withLock { $0.oneShots.removeValue(forKey: player.id) } }
        return started
    }
}
