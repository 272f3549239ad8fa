import HapSyncConcurrency
import HapSyncRuntime

/// What the engine's output has been through, for live haptics that play the sound on through
/// it: the one rule `hapsync live` and serve's `/hapsync/live` both follow, installed as the
/// engine's stopped and reset handlers.
///
/// - `.systemError`: the output failed for good; nothing plays on after it. `status.failure`
///   says why, then `failed` is called with that sentence: the run ends (its sink removed, its
///   streams moved back) rather than leave applications playing into a sink nobody hears.
/// - `.audioServerLost`: the output is down (`status.isDown`) until the engine's next reset,
///   which comes when it is back on a server that came back. Its capture's failure is the run's
///   to report; this only says when the output can carry a new run.
/// - A reset: the output is up again; the reset ended the engine's players, so `status.resets`
///   counts it and `reset` is called (a style's continuous layer is made anew).
///
/// The status is updated before the callback runs, so a run being made meanwhile that reads it
/// afterwards (under its own lock, which the callback also takes) misses nothing.
final class LiveOutputWatch: Sendable {
    /// What the output went through so far.
    struct Status: Sendable {
        /// Whether the output is down with a server that went away (from `.audioServerLost` to
        /// the engine's next reset).
        var isDown = false
        /// Why the output failed for good (`.systemError`); nil while it has not.
        var failure: String?
        /// Engine resets so far (each ended the engine's players).
        var resets = 0
        /// Times the output went down with its server so far (`.audioServerLost`).
        var losses = 0

        /// Whether the output is back to carry a run on a server that came back: up, and, where
        /// it `sharesTheServer` with the capture (the native PipeWire sink), gone down with it
        /// since `lossesBefore` and up again, so that a server answering again at once
        /// (socket-activated) is not taken for one the output never left.
        func isBack(sharesTheServer: Bool, lossesBefore: Int) -> Bool {
            !isDown && (!sharesTheServer || losses > lossesBefore)
        }
    }

    private let current = Locked(Status())

    /// The status now (taken under a brief lock of its own, which nothing else is held under).
    var status: Status { current.withLock { $0 } }

    /// Installs the watch as `engine`'s stopped and reset handlers (replacing any). `failed` and
    /// `reset` run on the engine's threads, after `status` says what happened; they may take
    /// their caller's locks but must not wait on the engine.
    init(engine: HapticEngine, failed: @escaping @Sendable (String) -> Void, reset: @escaping @Sendable () -> Void) {
        let current = self.current
        engine.stoppedHandler = { reason in
            switch reason {
            case .systemError(let why):
                let failure = "the haptic or audio output failed: \(why)"
                current.withLock { $0.failure = failure }
                failed(failure)
            case .audioServerLost:
                current.withLock { status in
                    status.isDown = true
                    status.losses += 1
                }
            default:
                break
            }
        }
        engine.resetHandler = {
            current.withLock { status in
                status.isDown = false
                status.resets += 1
            }
            reset()
        }
    }
}
