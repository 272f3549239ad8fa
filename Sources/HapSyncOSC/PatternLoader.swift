import Foundation
import HapSyncConcurrency

/// The thread `hapsync serve` loads patterns on, so that reading, compiling and decoding a
/// pattern (seconds for a large one) never holds up the service thread and the other clients.
///
/// Contract:
/// - `submit` (service thread) queues a load and returns at once; at most `capacity` wait, and a
///   submit beyond is refused (false) for the caller to answer as busy.
/// - One load at a time, in order, on the loader's own thread (normal priority: it competes
///   with other work, never with the engine's real-time threads).
/// - Each result is handed back through `finished()` (service thread), and `wake` is called
///   after it is ready, so the service can answer without polling.
/// - `stop` ends the thread after the load under way; loads still waiting are dropped. `submit`,
///   `stop` and `finished` are called from one thread at a time (the service's).
final class PatternLoader: @unchecked Sendable {
    /// A load to do: the name it is for and the work.
    struct Job: Sendable {
        let name: String
        let work: @Sendable () -> Result<PatternLibrary.Entry, OSCCommands.CommandError>
    }

    /// Loads that may wait at once.
    let capacity: Int
    private let queue = Locked<(jobs: [Job], done: [(name: String, result: Result<PatternLibrary.Entry, OSCCommands.CommandError>)], stopping: Bool)>(([], [], false))
    private let more = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    /// Signalled after each result (for `waitForResult`).
    private let resultReady = DispatchSemaphore(value: 0)
    private let wake: @Sendable () -> Void
    private var started = false

    /// A loader holding at most `capacity` waiting loads; `wake` is called (on the loader thread)
    /// after each result is ready.
    init(capacity: Int, wake: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.wake = wake
    }

    /// Queues `job`; false, with nothing queued, when `capacity` loads already wait or the
    /// loader has stopped. Starts the thread at the first job.
    func submit(_ job: Job) -> Bool {
        let queued = queue.withLock { q -> Bool in
            guard !q.stopping, q.jobs.count < capacity else { return false }
            q.jobs.append(job)
            return true
        }
        guard queued else { return false }
        if !started {
            // Only the service thread submits and stops: `started` needs no lock.
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "hapsync-loader"
            thread.start()
        }
        more.signal()
        return true
    }

    /// Loads waiting or under way.
    var waiting: Int { queue.withLock { $0.jobs.count } }

    /// Blocks until a result is ready for `finished()` (at once if one is); false, at once, when
    /// none is ready and no load waits (none will come).
    func waitForResult() -> Bool {
        while true {
            let (ready, waiting) = queue.withLock { ($0.done.isEmpty == false, $0.jobs.isEmpty == false) }
            if ready { return true }
            if !waiting { return false }
            resultReady.wait()
        }
    }

    /// The results ready since the last call, in the order the loads finished.
    func finished() -> [(name: String, result: Result<PatternLibrary.Entry, OSCCommands.CommandError>)] {
        queue.withLock { q in defer { q.done = [] }; return q.done }
    }

    /// Ends the thread after the load under way (waiting for it) and drops the rest. Calls after
    /// the first do nothing.
    func stop() {
        queue.withLock { $0.stopping = true; $0.jobs = [] }
        guard started else { return }
        started = false
        more.signal()
        ended.wait()
    }

    private func run() {
        while true {
            more.wait()
            guard let job = queue.withLock({ q -> Job? in q.stopping ? nil : q.jobs.first }) else {
                if queue.withLock({ $0.stopping }) { ended.signal(); return }
                continue
            }
            let result = job.work()
            queue.withLock { q in
                if !q.jobs.isEmpty { q.jobs.removeFirst() }
                q.done.append((job.name, result))
            }
            resultReady.signal()
            wake()
        }
    }
}
