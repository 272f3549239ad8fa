import Foundation
import HapSyncAHAP
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

    /// Whether the idle timer stopped the engine (the next player start restarts it).
    public var isIdleStopped: Bool { control.withLock { $0.idleStopped && !$0.running } }

    // MARK: - Audio server

    /// The audio server went away: report it; haptics go on. A watcher then waits for the server
    /// to come back, restarts the engine on it and calls the reset handler.
    func audioLost(_ why: String) {
        handlers.withLock { $0.stopped }?(.audioServerLost(why))
        watchForAudioServer()
    }

    /// How many times, a second apart, a restart on a server that came back is tried.
    static let restartAttempts = 10

    /// After the audio server went away: checks once a second whether it is back (answers, with a
    /// sink to play to); when it is, stops the engine (players end as stopped), starts it again on
    /// the server and calls the reset handler. A restart that fails (a server coming back takes a
    /// few seconds to set up its sinks and links) is tried again each second, `restartAttempts`
    /// times in all, before it is reported to the stopped handler as `.systemError`. Gives up
    /// when the engine is stopped by the caller (also while it restarts: an engine its caller
    /// stopped stays stopped).
    func watchForAudioServer() {
        guard let audio = configuration.audio else { return }
        let go = control.withLock { state -> Bool in
            if state.watchingAudio { return false }
            state.watchingAudio = true
            return true
        }
        guard go else { return }
        Thread { [weak self] in
            var failures = 0
            var stops = 0
            while true {
                Thread.sleep(forTimeInterval: 1)
                guard let self else { return }
                if failures == 0 {
                    stops = self.control.withLock { $0.stopCalls }
                    guard self.isRunning else { self.control.withLock { $0.watchingAudio = false }; return }
                    guard audio.canConnect() else { continue }
                    self.shutDown()
                }
                // The caller stopped the engine meanwhile: it stays stopped.
                let stoppedByCaller = { self.control.withLock { $0.stopCalls } != stops }
                guard !stoppedByCaller() else { self.control.withLock { $0.watchingAudio = false }; return }
                do {
                    try self.start()
                } catch {
                    failures += 1
                    if failures < Self.restartAttempts { continue }
                    self.control.withLock { $0.watchingAudio = false }
                    self.handlers.withLock { $0.stopped }?(.systemError("the audio server came back but the engine could not restart on it (\(failures) tries, a second apart): \(error)"))
                    return
                }
                self.control.withLock { $0.watchingAudio = false }
                if stoppedByCaller() {
                    self.shutDown()
                    return
                }
                self.handlers.withLock { $0.reset }?()
                return
            }
        }.start()
    }
}
