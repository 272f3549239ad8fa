import Glibc
import Synchronization

/// Durations a thread records (a real-time one: `record` does not allocate, lock or block) and
/// any thread reads as they come: how many, their sum, the longest, and percentiles from a
/// histogram whose bins are a quarter of an octave wide from 1 µs to about 2 minutes (a
/// percentile is the upper edge of its bin: at most 19 % above the duration it stands for;
/// shorter than 1 µs counts in the first bin, longer than the last bin's edge in the last).
///
/// One writer at a time (several would lose counts between their loads and stores, not corrupt
/// anything). A reader may see a recording half done (its count and not yet its sum): the
/// figures are for a summary, not for a decision on the real-time path.
public final class DurationHistogram: @unchecked Sendable {
    /// Bins: 4 a factor of two, 27 factors of two from 1 µs.
    static let binCount = 4 * 27
    private let bins: UnsafeMutablePointer<Atomic<Int>>
    private let total = Atomic<Int>(0)
    private let sum = Atomic<UInt64>(0)
    private let longest = Atomic<UInt64>(0)

    /// A histogram with nothing recorded (its bins allocated here, never on `record`).
    public init() {
        bins = .allocate(capacity: Self.binCount)
        for i in 0..<Self.binCount { (bins + i).initialize(to: Atomic(0)) }
    }

    deinit {
        bins.deinitialize(count: Self.binCount)
        bins.deallocate()
    }

    /// The bin of a duration of `ns` nanoseconds: ⌈4 log2(ns / 1 µs)⌉, within 0..<binCount
    /// (bin b holds durations above the edge of bin b − 1 up to 1 µs × 2^(b / 4)). Does not
    /// allocate, lock or block.
    @inline(__always) static func bin(ofNanoseconds ns: UInt64) -> Int {
        guard ns > 1_000 else { return 0 }
        // A hair under the exact quarter so that a duration on an edge stays in that edge's bin.
        let quarters = (4 * log2(Double(ns) / 1_000) - 1e-9).rounded(.up)
        return Int(min(quarters, Double(binCount - 1)))
    }

    /// The upper edge of bin `bin`, ns: 1 µs × 2^(bin / 4).
    static func upperEdge(ofBin bin: Int) -> Double { 1_000 * exp2(Double(bin) / 4) }

    /// Records one duration of `ns` nanoseconds. One writer; does not allocate, lock or block.
    public func record(nanoseconds ns: UInt64) {
        (bins + Self.bin(ofNanoseconds: ns)).pointee.add(1, ordering: .relaxed)
        total.add(1, ordering: .relaxed)
        sum.add(ns, ordering: .relaxed)
        if ns > longest.load(ordering: .relaxed) { longest.store(ns, ordering: .relaxed) }
    }

    /// How many durations were recorded. Any thread.
    public var count: Int { total.load(ordering: .relaxed) }

    /// The longest recorded, ns (0 before the first). Any thread.
    public var maximum: UInt64 { longest.load(ordering: .relaxed) }

    /// The sum of all recorded, ns. Any thread.
    public var totalNanoseconds: UInt64 { sum.load(ordering: .relaxed) }

    /// Their mean, ns (nil before the first). Any thread.
    public var mean: Double? {
        let n = count
        return n == 0 ? nil : Double(sum.load(ordering: .relaxed)) / Double(n)
    }

    /// The `p`th percentile (0-100, NaN as 100), ns: the upper edge of the bin that holds it (the
    /// nearest rank, ⌈p × count / 100⌉), or the longest recorded if that is less (nil before the
    /// first). Any thread but a real-time one: it allocates a copy of the bins.
    public func percentile(_ p: Double) -> Double? {
        var counts = [Int](repeating: 0, count: Self.binCount)
        for i in 0..<Self.binCount { counts[i] = (bins + i).pointee.load(ordering: .relaxed) }
        let n = counts.reduce(0, +)
        guard n > 0 else { return nil }
        let rank = max(1, Int((min(max(p.isNaN ? 100 : p, 0), 100) * Double(n) / 100).rounded(.up)))
        var seen = 0
        for (i, c) in counts.enumerated() {
            seen += c
            if seen >= rank { return min(Self.upperEdge(ofBin: i), Double(maximum)) }
        }
        return Double(maximum)
    }
}
