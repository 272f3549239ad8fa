import HapSyncAHAP

/// The value of one dynamic parameter over pattern time, built from the pattern's `Parameter` and
/// `ParameterCurve` entries of that ID.
///
/// Semantics (docs/rendering.md):
/// - Before any entry takes effect the parameter has its neutral default (1 for the multiplying
///   controls, 0 for the adding ones).
/// - A `Parameter` steps to its value at its `Time`.
/// - A `ParameterCurve` takes effect at its `Time`. Between that and its first control point it
///   holds the first point's value; between points it interpolates linearly; after its last point
///   it holds the last value. Two points at the same time make a step (the later point's value
///   holds from that time).
/// - The entry that took effect last governs: an entry overrides earlier ones from its start, and
///   of two entries starting at the same time the later one in the file wins.
public struct ParameterTrack: Sendable {
    /// One entry: a step value, or a curve whose points are `points[pointRange]`.
    struct Segment: Sendable {
        var start: Double
        var value: Double
        var pointRange: Range<Int>
    }

    /// The value before any entry.
    public let defaultValue: Double
    private let segments: [Segment]
    /// Control points with absolute pattern times, all curves one after another.
    private let points: [AHAPControlPoint]

    /// About how many bytes the track holds (its segments and points).
    public var memoryFootprint: Int {
        segments.count * MemoryLayout<Segment>.stride + points.count * MemoryLayout<AHAPControlPoint>.stride
    }

    /// Builds the track of `id` from a pattern's entries.
    public init(_ id: AHAPDynamicParameterID, entries: [AHAPEntry]) {
        var segments: [Segment] = []
        var points: [AHAPControlPoint] = []
        for entry in entries {
            switch entry {
            case .parameter(let p) where p.id == id:
                segments.append(Segment(start: p.time, value: p.value, pointRange: 0..<0))
            case .curve(let c) where c.id == id && !c.controlPoints.isEmpty:
                let lo = points.count
                points += c.controlPoints.map { AHAPControlPoint(time: c.time + $0.time, value: $0.value) }
                segments.append(Segment(start: c.time, value: c.controlPoints[0].value, pointRange: lo..<points.count))
            default:
                continue
            }
        }
        // Stable sort by start: equal starts keep file order, so the later entry is found last.
        self.segments = segments.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        self.points = points
        self.defaultValue = id.defaultValue
    }

    /// Whether the pattern has any entry for this parameter.
    public var isConstant: Bool { segments.isEmpty }

    // MARK: - Real-time (any thread)

    /// The value at pattern time `t`. Does not allocate, lock or block.
    public func value(at t: Double) -> Double {
        value(ofSegment: lastSegment(startingAtOrBefore: t), at: t)
    }

    /// The value at `t` as only the entries that took effect before `cutoff` make it: an entry
    /// starting at or after `cutoff` is ignored (an event that has ended is not acted on by what
    /// starts after its end, docs/rendering.md). Does not allocate, lock or block.
    public func value(at t: Double, enteredBefore cutoff: Double) -> Double {
        value(ofSegment: min(lastSegment(startingAtOrBefore: t), lastSegment(startingBefore: cutoff)), at: t)
    }

    /// The number of segments with start <= t (so the governing one is that count − 1).
    private func lastSegment(startingAtOrBefore t: Double) -> Int {
        var lo = 0, hi = segments.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if segments[mid].start <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The number of segments with start < t.
    private func lastSegment(startingBefore t: Double) -> Int {
        var lo = 0, hi = segments.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if segments[mid].start < t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The value at `t` of the segment `count − 1` (the default when `count` is 0).
    private func value(ofSegment count: Int, at t: Double) -> Double {
        guard count > 0 else { return defaultValue }
        let s = segments[count - 1]
        guard !s.pointRange.isEmpty else { return s.value }
        let first = s.pointRange.lowerBound, last = s.pointRange.upperBound - 1
        if t < points[first].time { return points[first].value }
        if t >= points[last].time { return points[last].value }
        // Last point with time <= t, within the curve (first <= j < last here).
        var a = first, b = last
        while a < b {
            let mid = (a + b + 1) / 2
            if points[mid].time <= t { a = mid } else { b = mid - 1 }
        }
        let p = points[a], q = points[a + 1]
        let span = q.time - p.time
        return span > 0 ? p.value + (q.value - p.value) * (t - p.time) / span : q.value
    }

    /// A time until which the value stays what it is at `t`: `value(at:)` is the same for every
    /// time in [t, result). `t` itself when the value is changing at `t` (between two control
    /// points of different values); infinity when it never changes again. Lets an offline walk
    /// skip the control grid where nothing moves. Does not allocate, lock or block.
    public func steady(from t: Double) -> Double {
        let lo = lastSegment(startingAtOrBefore: t)
        let nextStart = lo < segments.count ? segments[lo].start : .infinity
        guard lo > 0 else { return nextStart }
        let s = segments[lo - 1]
        guard !s.pointRange.isEmpty else { return nextStart }
        let first = s.pointRange.lowerBound, last = s.pointRange.upperBound - 1
        if t < points[first].time { return min(nextStart, points[first].time) }
        if t >= points[last].time { return nextStart }
        var a = first, b = last
        while a < b {
            let mid = (a + b + 1) / 2
            if points[mid].time <= t { a = mid } else { b = mid - 1 }
        }
        let p = points[a], q = points[a + 1]
        return p.value == q.value ? min(nextStart, q.time) : t
    }
}
