import Dispatch
import HapSyncConcurrency

/// `/hapsync/live` on and off, run one at a time in the order they came on a queue of their own,
/// never on the service's thread: making or removing the live sink waits for the sound server
/// (seconds when it is slow), and every other message, time-tagged plays included, must not
/// wait behind it. Each change's answer is kept for `take()` and `wake` is called, as a finished
/// load's is. At most `capacity` changes wait; `finish()` refuses new ones and waits for those
/// queued, so that the service's own last `turnOff` comes after them.
final class LiveChanges: Sendable {
    /// Changes that may wait at once.
    static let capacity = 8
    private struct State {
        var waiting = 0
        var answers: [OSCCommands.LateAnswer] = []
        var finished = false
    }
    private let queue = DispatchQueue(label: "hapsync-serve-live")
    private let state = Locked(State())
    private let wake: @Sendable () -> Void

    /// Changes whose answers wake the service through `wake`.
    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    /// Queues `change` for `client`'s message to `address`; false when `capacity` changes wait
    /// already or the service is ending (nothing queued then).
    func submit(client: OSCCommands.Client, address: String, _ change: @escaping @Sendable () -> OSCCommands.Outcome) -> Bool {
        let queued = state.withLock { (s: inout State) -> Bool in
            guard !s.finished, s.waiting < Self.capacity else { return false }
            s.waiting += 1
            return true
        }
        guard queued else { return false }
        queue.async { [self] in
            let outcome = change()
            state.withLock { s in
                s.waiting -= 1
                s.answers.append(OSCCommands.LateAnswer(client: client, address: address, outcome: outcome))
            }
            wake()
        }
        return true
    }

    /// The answers of changes done since the last call, in the order they were done.
    func take() -> [OSCCommands.LateAnswer] {
        state.withLock { s in
            defer { s.answers = [] }
            return s.answers
        }
    }

    /// Changes queued or under way.
    var underWay: Int { state.withLock { $0.waiting } }

    /// Refuses changes from now on and returns once those queued are done. Not on the queue.
    func finish() {
        state.withLock { $0.finished = true }
        queue.sync {}
    }

    /// Returns once the changes queued so far are done (tests, the fuzzer). Not on the queue.
    func waitForQueued() { queue.sync {} }
}
