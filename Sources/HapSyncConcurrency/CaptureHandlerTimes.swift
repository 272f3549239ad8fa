import Synchronization

/// How long a live capture's handler took (`MonitorCapture`, the native PipeWire sink's
/// capture): each call (a fragment), and the most in one 100 ms window of CLOCK_MONOTONIC (fixed
/// windows: a burst across two is split): after the thread was held up, the backlog comes in a
/// burst of calls, which at a real-time priority keep every lower thread of that core waiting.
/// Shared by the captures of one run (a capture made anew records on); one capture records at a
/// time.
package final class CaptureHandlerTimes: Sendable {
    /// How long each handler call took: one per fragment the server sent (and one per piece
    /// of a hole handed over as silence).
    package let perFragment = DurationHistogram()
    /// The window being summed (its start / 100 ms), its sum so far, the largest sum, ns.
    private let window = Atomic<UInt64>(0)
    private let windowSum = Atomic<UInt64>(0)
    private let busiest = Atomic<UInt64>(0)

    /// Nothing recorded yet.
    package init() {}

    /// Records a call that began at `began` (CLOCK_MONOTONIC ns) and took `took` ns. One
    /// writer; does not allocate, lock or block.
    package func record(began: UInt64, took: UInt64) {
        perFragment.record(nanoseconds: took)
        let w = began / 100_000_000
        var sum = took
        if window.load(ordering: .relaxed) == w { sum &+= windowSum.load(ordering: .relaxed) } else { window.store(w, ordering: .relaxed) }
        windowSum.store(sum, ordering: .relaxed)
        if sum > busiest.load(ordering: .relaxed) { busiest.store(sum, ordering: .relaxed) }
    }

    /// The most the handler took in one 100 ms window, ns. Any thread.
    package var busiestWindow: UInt64 { busiest.load(ordering: .relaxed) }
}
