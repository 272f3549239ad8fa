import Synchronization

/// Dynamic parameters sent to playing players at run time (Core Haptics' `sendParameters` and
/// `scheduleParameterCurve`), and each player's mute, shared lock-free between the control side
/// (which writes) and the scheduler and audio threads (which read).
///
/// Per player slot and control, a short automation: up to `capacity` breakpoints on the engine's
/// clock (ns), each either held until the next or ramping linearly to it. Before the first
/// breakpoint a control has no value (the pattern plays as written). A new send replaces
/// everything from its first time on, as a later `ParameterCurve` overrides an earlier one in a
/// file. Values combine with the pattern's own dynamic parameters by the same rules: intensity and
/// volume multiply, sharpness, pan, pitch and brightness add.
///
/// Publication uses a sequence lock per (slot, control) with every field in an `Atomic`, so readers
/// never lock, allocate or block and tools like ThreadSanitizer see no plain shared memory.
public final class LiveParameters: @unchecked Sendable {
    /// What a live parameter controls.
    public enum Control: Int, CaseIterable, Sendable {
        /// Multiplies haptic intensity (transients and continuous).
        case hapticIntensity
        /// Adds to haptic sharpness.
        case hapticSharpness
        /// Multiplies audio volume.
        case audioVolume
        /// Adds to audio pan.
        case audioPan
        /// Adds to audio pitch.
        case audioPitch
        /// Adds to audio brightness.
        case audioBrightness

        /// The value that leaves the pattern as written (1 for multipliers, 0 for offsets).
        public var neutral: Double { self == .hapticIntensity || self == .audioVolume ? 1 : 0 }
    }

    /// One breakpoint.
    public struct Point: Sendable, Equatable {
        /// Engine time, ns.
        public var time: UInt64
        /// The control's value from `time`.
        public var value: Double
        /// Whether the value ramps linearly to the next breakpoint (a curve) rather than holding.
        public var ramp: Bool

        /// Makes a breakpoint.
        public init(time: UInt64, value: Double, ramp: Bool) {
            self.time = time
            self.value = value
            self.ramp = ramp
        }
    }

    /// Breakpoints kept per slot and control.
    public static let capacity = 64
    /// Player slots.
    public let slots: Int
    private static let rampFlag: UInt64 = 1 << 63
    private let controls = Control.allCases.count
    private let sequence: UnsafeMutablePointer<Atomic<UInt64>>
    private let counts: UnsafeMutablePointer<Atomic<Int>>
    private let times: UnsafeMutablePointer<Atomic<UInt64>>
    private let values: UnsafeMutablePointer<Atomic<UInt64>>
    private let mutes: UnsafeMutablePointer<Atomic<Bool>>
    /// Writers take turns (control side only; readers never take it).
    private let writers = Locked(())

    /// Storage for `slots` player slots, allocated once.
    public init(slots: Int) {
        self.slots = slots
        let n = slots * controls
        sequence = .allocate(capacity: n)
        counts = .allocate(capacity: n)
        times = .allocate(capacity: n * Self.capacity)
        values = .allocate(capacity: n * Self.capacity)
        mutes = .allocate(capacity: slots)
        for i in 0..<n {
            (sequence + i).initialize(to: Atomic(0))
            (counts + i).initialize(to: Atomic(0))
        }
        for i in 0..<(n * Self.capacity) {
            (times + i).initialize(to: Atomic(0))
            (values + i).initialize(to: Atomic(0))
        }
        for i in 0..<slots { (mutes + i).initialize(to: Atomic(false)) }
    }

    deinit {
        let n = slots * controls
        sequence.deinitialize(count: n); sequence.deallocate()
        counts.deinitialize(count: n); counts.deallocate()
        times.deinitialize(count: n * Self.capacity); times.deallocate()
        values.deinitialize(count: n * Self.capacity); values.deallocate()
        mutes.deinitialize(count: slots); mutes.deallocate()
    }

    // MARK: - Control side

    /// Replaces the automation of `control` in `slot` from `points[0].time` on with `points`
    /// (sorted by time here). Older breakpoints before that time are kept, oldest dropped first
    /// when there is no room. Allocates and locks (control side only).
    public func send(slot: Int, _ control: Control, _ points: [Point]) {
        guard slot >= 0, slot < slots, !points.isEmpty else { return }
        let sorted = points.sorted { $0.time < $1.time }
        let k = slot * controls + control.rawValue
        writers.withLock { _ in
            var kept = read(k).filter { $0.time < sorted[0].time }
            kept += sorted
            if kept.count > Self.capacity { kept.removeFirst(kept.count - Self.capacity) }
            publish(k, kept)
        }
    }

    /// Forgets every control of `slot` (a player starting afresh) and unmutes it when `unmute`.
    public func clear(slot: Int, unmute: Bool = false) {
        guard slot >= 0, slot < slots else { return }
        writers.withLock { _ in
            for c in 0..<controls { publish(slot * controls + c, []) }
            if unmute { mutes[slot].store(false, ordering: .releasing) }
        }
    }

    /// Mutes or unmutes `slot` (haptics and audio).
    public func setMuted(slot: Int, _ muted: Bool) {
        guard slot >= 0, slot < slots else { return }
        mutes[slot].store(muted, ordering: .releasing)
    }

    /// The breakpoints of `control` in `slot` (for tests and inspection).
    public func points(slot: Int, _ control: Control) -> [Point] {
        guard slot >= 0, slot < slots else { return [] }
        return read(slot * controls + control.rawValue)
    }

    private func read(_ k: Int) -> [Point] {
        while true {
            let s1 = sequence[k].load(ordering: .acquiring)
            if s1 & 1 == 1 { continue }
            let n = counts[k].load(ordering: .relaxed)
            var result: [Point] = []
            for i in 0..<n {
                let t = times[k * Self.capacity + i].load(ordering: .relaxed)
                let v = values[k * Self.capacity + i].load(ordering: .relaxed)
                result.append(Point(time: t & ~Self.rampFlag, value: Double(bitPattern: v), ramp: t & Self.rampFlag != 0))
            }
            if sequence[k].load(ordering: .acquiring) == s1 { return result }
        }
    }

    private func publish(_ k: Int, _ points: [Point]) {
        let s = sequence[k].load(ordering: .relaxed)
        // Odd while writing; releasing so a reader that sees the next even number sees the fields.
        sequence[k].store(s &+ 1, ordering: .releasing)
        for (i, p) in points.enumerated() {
            times[k * Self.capacity + i].store(p.time | (p.ramp ? Self.rampFlag : 0), ordering: .relaxed)
            values[k * Self.capacity + i].store(p.value.bitPattern, ordering: .relaxed)
        }
        counts[k].store(points.count, ordering: .relaxed)
        sequence[k].store(s &+ 2, ordering: .releasing)
    }

    // MARK: - Real-time side

    /// Whether `slot` is muted. Does not allocate, lock or block.
    @inline(__always)
    public func isMuted(slot: Int) -> Bool {
        slot >= 0 && slot < slots && mutes[slot].load(ordering: .acquiring)
    }

    /// Whether `control` of `slot` has any breakpoint. Does not allocate, lock or block.
    @inline(__always)
    public func isSet(slot: Int, _ control: Control) -> Bool {
        slot >= 0 && slot < slots && counts[slot * controls + control.rawValue].load(ordering: .acquiring) > 0
    }

    /// The value of `control` in `slot` at engine time `time`: `neutral` before its first
    /// breakpoint or when none is set. Does not allocate, lock or block (it retries only if it
    /// overlaps a write).
    public func value(slot: Int, _ control: Control, at time: UInt64) -> Double {
        guard slot >= 0, slot < slots else { return control.neutral }
        let k = slot * controls + control.rawValue
        while true {
            let s1 = sequence[k].load(ordering: .acquiring)
            if s1 & 1 == 1 { continue }
            let n = counts[k].load(ordering: .relaxed)
            var result = control.neutral
            var i = n - 1
            // The last breakpoint at or before `time`.
            while i >= 0, times[k * Self.capacity + i].load(ordering: .relaxed) & ~Self.rampFlag > time { i -= 1 }
            if i >= 0 {
                let raw = times[k * Self.capacity + i].load(ordering: .relaxed)
                let v = Double(bitPattern: values[k * Self.capacity + i].load(ordering: .relaxed))
                result = v
                if raw & Self.rampFlag != 0, i + 1 < n {
                    let t0 = Double(raw & ~Self.rampFlag)
                    let t1 = Double(times[k * Self.capacity + i + 1].load(ordering: .relaxed) & ~Self.rampFlag)
                    let v1 = Double(bitPattern: values[k * Self.capacity + i + 1].load(ordering: .relaxed))
                    if t1 > t0 { result = v + (v1 - v) * (Double(time) - t0) / (t1 - t0) }
                }
            }
            if sequence[k].load(ordering: .acquiring) == s1 { return result }
        }
    }

    /// When the haptic controls of `slot` next change after `time`: the next breakpoint, or
    /// `time` + 1 ms while a ramp is under way; `UInt64.max` when they are constant from now on.
    /// Does not allocate, lock or block.
    public func nextHapticChange(slot: Int, after time: UInt64) -> UInt64 {
        guard slot >= 0, slot < slots else { return .max }
        var next = UInt64.max
        for c in 0..<2 {   // hapticIntensity, hapticSharpness
            let k = slot * controls + c
            while true {
                let s1 = sequence[k].load(ordering: .acquiring)
                if s1 & 1 == 1 { continue }
                let n = counts[k].load(ordering: .relaxed)
                var candidate = UInt64.max
                for i in 0..<n {
                    let raw = times[k * Self.capacity + i].load(ordering: .relaxed)
                    let t = raw & ~Self.rampFlag
                    if t > time { candidate = t; break }
                    if raw & Self.rampFlag != 0, i + 1 < n,
                       times[k * Self.capacity + i + 1].load(ordering: .relaxed) & ~Self.rampFlag > time {
                        candidate = time + 1_000_000
                        break
                    }
                }
                if sequence[k].load(ordering: .acquiring) == s1 { next = min(next, candidate); break }
            }
        }
        return next
    }
}
