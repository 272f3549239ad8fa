/// How a stream's latency grows when it underruns: each time underruns were seen since the last
/// look, by half again (rounded up to a whole millisecond), up to `cap`; down only when its owner
/// says the graph has gone a calm spell (`settle`). The one rule
/// for every output that adapts (PipeWire's `node.latency`, PulseAudio's `tlength`). Pure, so
/// tests drive it.
package struct AdaptiveLatency: Sendable, Equatable {
    /// The latency asked for at the start, seconds.
    package let initial: Double
    /// The most it grows to, seconds (the larger of 100 ms and `initial`).
    package let cap: Double
    /// The latency now, seconds.
    package private(set) var current: Double
    private var seen = 0

    /// A stream that starts at `initial` seconds and may grow to `cap` (default 0.1).
    package init(initial: Double, cap: Double = 0.1) {
        self.initial = initial
        self.cap = max(cap, initial)
        current = initial
    }

    /// Takes the stream's underrun count so far; returns the new latency when it grew.
    package mutating func underruns(_ total: Int) -> Double? {
        guard total > seen else { return nil }
        seen = total
        guard current < cap else { return nil }
        // Whole milliseconds, up (less a hair, so that 30.000000000000004 ms stays 30).
        current = min(cap, (current * 1500 - 1e-6).rounded(.up) / 1000)
        return current
    }

    /// Back to `seconds`, never below `initial`, when it grew past that: a stream whose graph has
    /// gone a calm spell without an underrun (`hapsync live`'s step back). Returns the new
    /// latency, or nil when it did not change.
    package mutating func settle(to seconds: Double) -> Double? {
        let target = max(initial, min(seconds.isFinite ? seconds : current, current))
        guard target < current else { return nil }
        current = target
        return current
    }
}
