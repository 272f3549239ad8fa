import HapSyncAHAP
import HapSyncConcurrency
import Synchronization

/// Dynamic parameters sent to playing players at run time (Core Haptics' `sendParameters` and
/// `scheduleParameterCurve`), and each player's mute, shared between the control side (which
/// writes) and the scheduler and audio threads (which read without waiting).
///
/// Per player slot and control, a short automation: up to `capacity` breakpoints on the engine's
/// clock (ns), each either held until the next or ramping linearly to it. Before the first
/// breakpoint a control has no value (the pattern plays as written). A new send replaces
/// everything from its first time on, as a later `ParameterCurve` overrides an earlier one in a
/// file. Values combine with the pattern's own dynamic parameters by the same rules: intensity and
/// volume multiply, sharpness, pan, pitch and brightness add.
///
/// Nothing sent is dropped before it has applied: breakpoints the clock has passed by more than
/// `settledAge` (or, short of room, at all) are merged into the one in force (only the latest of
/// them still matters), and a send that would leave more than `capacity` breakpoints still to
/// come is refused whole (`Overflow`), with nothing changed.
///
/// Each (slot, control) is published through its own `SeqLock`: a writer preempted in the middle
/// of a send never holds a reader up. Each control has one real-time reader thread, which keeps
/// its snapshot here: the scheduler reads the haptic controls, the audio thread the audio ones (in
/// manual-clock tests both are the pumping thread). The control side keeps the breakpoints it
/// sent (for merging and for `points`) under its own lock and never reads the snapshots.
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

        /// The dynamic parameter that drives this control live (`HapticIntensityControl`, ...):
        /// the one mapping between the two.
        public var parameterID: AHAPDynamicParameterID {
            switch self {
            case .hapticIntensity: .hapticIntensityControl
            case .hapticSharpness: .hapticSharpnessControl
            case .audioVolume: .audioVolumeControl
            case .audioPan: .audioPanControl
            case .audioPitch: .audioPitchControl
            case .audioBrightness: .audioBrightnessControl
            }
        }

        /// The control a dynamic parameter drives live; nil for the envelope controls (attack,
        /// decay, release times), which are fixed when a pattern is compiled.
        public init?(_ id: AHAPDynamicParameterID) {
            guard let control = Self.allCases.first(where: { $0.parameterID == id }) else { return nil }
            self = control
        }

        /// The value that leaves the pattern as written (1 for multipliers, 0 for offsets): its
        /// dynamic parameter's (`AHAPDynamicParameterID.defaultValue`).
        public var neutral: Double { parameterID.defaultValue }

        /// Whether the control multiplies what the pattern plays (intensity, volume) rather than
        /// adding to it (sharpness, pan, pitch, brightness): its dynamic parameter's rule
        /// (`AHAPDynamicParameterID.combination`).
        public var multiplies: Bool { parameterID.combination == .multiply }

        /// The range of what the control acts on (pan and pitch −1...1, the rest 0...1).
        public var range: ClosedRange<Double> { self == .audioPan || self == .audioPitch ? -1...1 : 0...1 }

        /// `base` with the control's value `live` applied: multiplied or added, then clamped to
        /// `range`: the one rule for live parameters, haptic and audio alike. Does not allocate,
        /// lock or block.
        @inline(__always)
        public func apply(_ live: Double, to base: Double) -> Double {
            (multiplies ? base * live : base + live).clamped(to: range)
        }
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

    /// A send refused because it would leave more than `capacity` breakpoints in one control.
    public struct Overflow: Error, Sendable, Equatable, CustomStringConvertible {
        /// The control that is full.
        public let control: Control
        /// Breakpoints it holds that still matter (the one in force and those to come).
        public let held: Int
        /// Breakpoints the send would add.
        public let sent: Int

        /// A sentence naming the control, the counts and the bound.
        public var description: String {
            "\(control.parameterID.rawValue) holds \(held) breakpoints still to come or in force, and \(sent) more would pass the \(LiveParameters.capacity) a player keeps per control; refused (send again once some have passed)"
        }
    }

    /// One control's breakpoints as published: fixed size, plain numbers (a `SeqLock` value).
    struct Automation: BitwiseCopyable, Sendable {
        var count = 0
        /// Engine ns; the top bit says the value ramps to the next breakpoint.
        var times = InlineArray<256, UInt64>(repeating: 0)
        var values = InlineArray<256, Double>(repeating: 0)

        static let rampFlag: UInt64 = 1 << 63

        init() {}

        init(_ points: [Point]) {
            count = points.count
            for (i, p) in points.enumerated() {
                times[i] = p.time | (p.ramp ? Self.rampFlag : 0)
                values[i] = p.value
            }
        }

        @inline(__always) func time(_ i: Int) -> UInt64 { times[i] & ~Self.rampFlag }
        @inline(__always) func ramps(_ i: Int) -> Bool { times[i] & Self.rampFlag != 0 }

        /// The index of the last breakpoint at or before `t`, −1 if none (binary search: the
        /// times are sorted). Does not allocate, lock or block.
        func lastIndex(atOrBefore t: UInt64) -> Int {
            var lo = 0, hi = count
            while lo < hi {
                let mid = (lo + hi) / 2
                if time(mid) <= t { lo = mid + 1 } else { hi = mid }
            }
            return lo - 1
        }
    }

    /// Breakpoints kept per slot and control: those to come and the one in force. A send beyond
    /// it is refused (`Overflow`).
    public static let capacity = 256
    /// How long after its time a breakpoint that a later one has replaced is kept (engine ns,
    /// 1 s): a real-time reader evaluating a slightly late deadline still finds the value that
    /// was in force then.
    public static let settledAge: UInt64 = 1_000_000_000
    /// Player slots.
    public let slots: Int
    private let controls = Control.allCases.count
    /// One lock per (slot, control), index slot × controls + control; retained by this object.
    let published: UnsafeMutablePointer<Unmanaged<SeqLock<Automation>>>
    /// The real-time readers' snapshots, same index (each written by its control's reader thread only).
    private let snapshots: UnsafeMutablePointer<SeqLock<Automation>.Snapshot>
    private let mutes: UnsafeMutablePointer<Atomic<Bool>>
    /// The breakpoints as sent, same index (control side only).
    private let sent: Locked<[[Point]]>

    /// Storage for `slots` player slots, allocated once.
    public init(slots: Int) {
        precondition(InlineArray<256, UInt64>.count == Self.capacity, "Automation holds `capacity` breakpoints")
        self.slots = slots
        let n = slots * controls
        published = .allocate(capacity: n)
        snapshots = .allocate(capacity: n)
        for k in 0..<n {
            let lock = SeqLock(Automation())
            (published + k).initialize(to: .passRetained(lock))
            (snapshots + k).initialize(to: lock.snapshot())
        }
        mutes = .allocate(capacity: slots)
        for i in 0..<slots { (mutes + i).initialize(to: Atomic(false)) }
        sent = Locked(Array(repeating: [], count: n))
    }

    deinit {
        let n = slots * controls
        for k in 0..<n { published[k].release() }
        published.deinitialize(count: n); published.deallocate()
        snapshots.deinitialize(count: n); snapshots.deallocate()
        mutes.deinitialize(count: slots); mutes.deallocate()
    }

    // MARK: - Control side

    /// Replaces the automation of `control` in `slot` from `points[0].time` on with `points`
    /// (sorted by time here); earlier breakpoints are kept, those more than `settledAge` before
    /// `now` (engine ns) merged into the one in force. Throws `Overflow`, changing nothing, when
    /// that would leave more than `capacity`. Allocates and locks (control side only).
    public func send(slot: Int, _ control: Control, _ points: [Point], now: UInt64 = 0) throws(Overflow) {
        guard slot >= 0, slot < slots, !points.isEmpty else { return }
        let sorted = points.sorted { $0.time < $1.time }
        let k = slot * controls + control.rawValue
        try sent.withLock { (sent) throws(Overflow) in
            var kept = sent[k].filter { $0.time < sorted[0].time }
            // Of the breakpoints settled before `now`, only the latest is still in force.
            let settled = now > Self.settledAge ? now - Self.settledAge : 0
            if let latest = kept.lastIndex(where: { $0.time <= settled }), latest > 0 { kept.removeFirst(latest) }
            // Short of room, the other breakpoints the clock has passed go too, oldest first (a
            // control sent "now" a thousand times a second), so that only breakpoints still to
            // come, and the one in force, count against the bound.
            let over = kept.count + sorted.count - Self.capacity
            if over > 0, let latest = kept.lastIndex(where: { $0.time <= now }), latest > 0 { kept.removeFirst(min(over, latest)) }
            guard kept.count + sorted.count <= Self.capacity else {
                throw Overflow(control: control, held: kept.count, sent: sorted.count)
            }
            kept += sorted
            sent[k] = kept
            // Under the lock: writers of one SeqLock take turns.
            published[k].takeUnretainedValue().write(Automation(kept))
        }
    }

    /// Forgets every control of `slot` (a player starting afresh) and unmutes it when `unmute`.
    public func clear(slot: Int, unmute: Bool = false) {
        guard slot >= 0, slot < slots else { return }
        sent.withLock { sent in
            for c in 0..<controls {
                let k = slot * controls + c
                guard !sent[k].isEmpty else { continue }
                sent[k] = []
                published[k].takeUnretainedValue().write(Automation())
            }
            // Releasing: a reader that sees the unmute sees the cleared controls.
            if unmute { mutes[slot].store(false, ordering: .releasing) }
        }
    }

    /// Mutes or unmutes `slot` (haptics and audio).
    public func setMuted(slot: Int, _ muted: Bool) {
        guard slot >= 0, slot < slots else { return }
        // Releasing: pairs with the readers' acquiring load.
        mutes[slot].store(muted, ordering: .releasing)
    }

    /// The breakpoints of `control` in `slot` as sent (control side: tests and inspection).
    public func points(slot: Int, _ control: Control) -> [Point] {
        guard slot >= 0, slot < slots else { return [] }
        return sent.withLock { $0[slot * controls + control.rawValue] }
    }

    // MARK: - Real-time (scheduler thread: haptic controls; audio thread: audio controls)

    /// The up-to-date snapshot of (slot, control) `k`, refreshed in place. Reader thread of that
    /// control only. Does not allocate, lock or block.
    @inline(__always)
    private func automation(_ k: Int) -> UnsafeMutablePointer<SeqLock<Automation>.Snapshot> {
        // If the writer kept publishing through every attempt, the last complete snapshot stays.
        _ = published[k]._withUnsafeGuaranteedRef { $0.refresh(&snapshots[k]) }
        return snapshots + k
    }

    /// Whether `slot` is muted. Does not allocate, lock or block.
    @inline(__always)
    public func isMuted(slot: Int) -> Bool {
        // Acquiring: pairs with the control side's releasing store.
        slot >= 0 && slot < slots && mutes[slot].load(ordering: .acquiring)
    }

    /// Whether `control` of `slot` has any breakpoint. Reader thread of that control only; does
    /// not allocate, lock or block.
    @inline(__always)
    public func isSet(slot: Int, _ control: Control) -> Bool {
        slot >= 0 && slot < slots && automation(slot * controls + control.rawValue).pointee.value.count > 0
    }

    /// The value of `control` in `slot` at engine time `time`: `neutral` before its first
    /// breakpoint or when none is set. Reader thread of that control only; does not allocate,
    /// lock or block.
    public func value(slot: Int, _ control: Control, at time: UInt64) -> Double {
        guard slot >= 0, slot < slots else { return control.neutral }
        let a = automation(slot * controls + control.rawValue)
        // The last breakpoint at or before `time`.
        let i = a.pointee.value.lastIndex(atOrBefore: time)
        guard i >= 0 else { return control.neutral }
        let v = a.pointee.value.values[i]
        guard a.pointee.value.ramps(i), i + 1 < a.pointee.value.count else { return v }
        let t0 = Double(a.pointee.value.time(i)), t1 = Double(a.pointee.value.time(i + 1))
        let v1 = a.pointee.value.values[i + 1]
        return t1 > t0 ? v + (v1 - v) * (Double(time) - t0) / (t1 - t0) : v
    }

    /// `base` with `control` of `slot` at engine time `time` applied (`Control.apply`), or `base`
    /// as it is when the control has no breakpoint. Reader thread of that control only; does not
    /// allocate, lock or block.
    @inline(__always)
    public func applied(_ control: Control, slot: Int, at time: UInt64, to base: Double) -> Double {
        isSet(slot: slot, control) ? control.apply(value(slot: slot, control, at: time), to: base) : base
    }

    /// When the haptic controls of `slot` next change after `time`: the next breakpoint, or
    /// `time` + 1 ms while a ramp is under way; `UInt64.max` when they are constant from now on.
    /// Scheduler thread; does not allocate, lock or block.
    public func nextHapticChange(slot: Int, after time: UInt64) -> UInt64 {
        guard slot >= 0, slot < slots else { return .max }
        var next = UInt64.max
        for c in Control.hapticIntensity.rawValue...Control.hapticSharpness.rawValue {
            let a = automation(slot * controls + c)
            let i = a.pointee.value.lastIndex(atOrBefore: time)
            if i >= 0, a.pointee.value.ramps(i), i + 1 < a.pointee.value.count {
                // A ramp under way (the next breakpoint is after `time`).
                next = min(next, time + 1_000_000)
            } else if i + 1 < a.pointee.value.count {
                next = min(next, a.pointee.value.time(i + 1))
            }
        }
        return next
    }
}
