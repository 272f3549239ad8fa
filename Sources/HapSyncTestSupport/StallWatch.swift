import Foundation
import HapSyncConcurrency
import HapSyncRuntime
import Synchronization

/// Tells whether the machine stalled while it watched: a thread of its own (SCHED_FIFO 90 when
/// granted, above the engine's 80 and the sound server's) wakes every millisecond on
/// CLOCK_MONOTONIC and keeps each wake-up more than `threshold` late. A shared VM that stops for a
/// few ms (another tenant; the sound server underruns after it) shows as such a wake-up; ordinary
/// load on the other threads does not, since nothing of ours runs above it.
public final class StallWatch: @unchecked Sendable {
    /// Lateness that counts as a stall, ns (1 ms: ten times this VM's measured p99.9 wake-up).
    public let threshold: UInt64
    private let stalls = Locked<[(at: UInt64, late: UInt64)]>([])
    private let running = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    private let refusal = Locked<String?>(nil)

    /// A watch that counts wake-ups later than `threshold` nanoseconds; `start()` starts it.
    public init(threshold: UInt64 = 1_000_000) { self.threshold = threshold }

    /// Starts watching on a thread of its own.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Thread { [self] in
            HelperThreadCalls.setName("hapsync-stall")
            if case .failure(let e) = HelperThreadCalls.requestFIFO(priority: 90) { refusal.withLock { $0 = "\(e)" } }
            var deadline = MonotonicClock.nanoseconds()
            while running.load(ordering: .acquiring) {
                deadline += 1_000_000
                HelperThreadCalls.sleep(untilMonotonic: deadline)
                let now = MonotonicClock.nanoseconds()
                if now > deadline + threshold {
                    stalls.withLock { $0.append((at: deadline, late: now - deadline)) }
                    deadline = now
                }
            }
            exited.signal()
        }.start()
    }

    /// Stops watching and waits for the thread to end.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        exited.wait()
    }

    /// Whether any wake-up so far came later than the threshold, or a stall was reported.
    public var stalled: Bool { sawStall || !reported.withLock { $0.isEmpty } }

    /// Whether the watch itself saw a wake-up later than the threshold (reports left out).
    public var sawStall: Bool { stalls.withLock { !$0.isEmpty } }

    /// Records a stall that a witness other than the watch saw (the sound server's own timing
    /// jumping while this process ran on time), in words: `stalled` is true from now on, and
    /// `summary` says it. Any thread.
    public func report(_ stall: String) { reported.withLock { $0.append(stall) } }
    private let reported = Locked<[String]>([])

    /// The stalls seen so far, and what the watch ran at: "2 stalls, worst 14.2 ms (SCHED_FIFO 90)".
    public var summary: String {
        let s = stalls.withLock { $0 }
        let priority = refusal.withLock { $0 }.map { "without SCHED_FIFO: \($0)" } ?? "SCHED_FIFO 90"
        let others = reported.withLock { $0 }.map { "; \($0)" }.joined()
        guard let worst = s.map(\.late).max() else { return "no stall (\(priority))\(others)" }
        return "\(s.count) stall\(s.count == 1 ? "" : "s"), worst \(String(format: "%.1f", Double(worst) / 1e6)) ms (\(priority))\(others)"
    }

    deinit { stop() }
}
