import Dispatch
import HapSyncConcurrency

/// `/hapsync/live` on and off, run one at a time in the order they came on a queue of their own,
/// never on the service's thread: making or removing the live sink waits for the sound server
/// (seconds when it is slow), and every other message, time-tagged plays included, must not
/// wait behind it. Each change's answer is kept for `take()` and `wake` is called, as a finished
/// load's is. At most `capacity` changes wait. `finish()` refuses new ones, answers those not
/// begun yet that the service is ending (they are not done), and waits for the one under way,
/// so that the service's own last `turnOff` comes after it.
final class LiveChanges: Sendable {
    /// Changes that may wait at once.
    static let capacity = 8
    /// Why a change was not queued.
    enum Refusal: Error {
        /// `capacity` changes wait already.
        case full
        /// The service is ending (`finish()`).
        case ending
    }
    private struct State {
        var waiting = 0
        var answers: [OSCCommands.LateAnswer] = []
        var finished = false
    }
    private let queue = DispatchQueue(label: "hapsync-serve-live")
    /// Set on `queue`, so that a wait called from a change itself returns instead of waiting for
    /// itself (which libdispatch traps on).
    private static let onQueue = DispatchSpecificKey<Bool>()
    private let state = Locked(State())
    private let wake: @Sendable () -> Void

    /// Changes whose answers wake the service through `wake`.
    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
        queue.setSpecific(key: Self.onQueue, value: true)
    }

    /// Queues `change` for `client`'s message to `address`, or says why not.
    func submit(client: OSCCommands.Client, address: String, _ change: @escaping @Sendable () -> OSCCommands.Outcome) throws(Refusal) {
        try state.withLock { (s: inout State) throws(Refusal) in
            guard !s.finished else { throw .ending }
            guard s.waiting < Self.capacity else { throw .full }
            s.waiting += 1
            // Queued under the lock: a `finish()` after it sees the change waiting.
            queue.async { [self] in
                let ending = state.withLock { $0.finished }
                let outcome = ending ? .error("the service is ending: not done") : change()
                state.withLock { s in
                    s.waiting -= 1
                    s.answers.append(OSCCommands.LateAnswer(client: client, address: address, outcome: outcome))
                }
                wake()
            }
        }
    }

    /// The answers of changes done (or refused at the end) since the last call, in order.
    func take() -> [OSCCommands.LateAnswer] {
        state.withLock { s in
            defer { s.answers = [] }
            return s.answers
        }
    }

    /// Changes queued or under way.
    var underWay: Int { state.withLock { $0.waiting } }

    /// Refuses changes from now on, answers those not begun yet, and returns once the one under
    /// way is done (at once when called from a change itself).
    func finish() {
        state.withLock { $0.finished = true }
        waitForQueued()
    }

    /// Returns once the changes queued so far are done (tests, the fuzzer, `finish`); at once
    /// when called from a change itself.
    func waitForQueued() {
        guard DispatchQueue.getSpecific(key: Self.onQueue) != true else { return }
        queue.sync {}
    }
}
