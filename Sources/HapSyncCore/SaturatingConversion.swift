/// The one conversion from a `Double` (seconds, nanoseconds, frames, control-rate steps) to an
/// integer that never traps.
///
/// Swift's `Int64(x)` stops the process (SIGILL) when `x` is NaN, infinite or out of range: a
/// `Time` of 1e16 s, which is 1e25 ns, did exactly that in `info`, `render`, `plot` and `play`.
/// The reader bounds every time (`AHAPLimits.maxTime`) and the timeline every pattern it compiles
/// (`RenderOptions.maxTime`), so in-range values are the rule; every conversion still goes
/// through this one, so a value that escapes those bounds gives the nearest representable integer
/// (a deadline that never comes, a frame past every end) instead of a crash.
///
/// Written for the concrete types the code converts to, not generically: the real-time threads
/// call it, and an unspecialized generic conversion (a debug build) allocates.
extension Int64 {
    /// `x` rounded toward zero and limited to `Int64.min...Int64.max`; NaN gives 0. Does not
    /// allocate, lock or block.
    @inlinable @inline(__always)
    public init(saturating x: Double) {
        // ±2^63 are exact Doubles; every Double strictly between them converts exactly.
        if x.isNaN {
            self = 0
        } else if x <= -0x1p63 {
            self = .min
        } else if x >= 0x1p63 {
            self = .max
        } else {
            self = Int64(x)
        }
    }
}

extension UInt64 {
    /// `x` rounded toward zero and limited to `0...UInt64.max`; NaN gives 0. Does not allocate,
    /// lock or block.
    @inlinable @inline(__always)
    public init(saturating x: Double) {
        if x.isNaN || x <= 0 {
            self = 0
        } else if x >= 0x1p64 {
            self = .max
        } else {
            self = UInt64(x)
        }
    }
}

extension Int {
    /// `x` rounded toward zero and limited to `Int.min...Int.max` (`Int64(saturating:)`; Int is
    /// 64 bits wide on every platform HapSync builds for). Does not allocate, lock or block.
    @inlinable @inline(__always)
    public init(saturating x: Double) {
        self = Int(Int64(saturating: x))
    }
}

extension UInt64 {
    /// `seconds` as nanoseconds, rounded to the nearest and saturating (`UInt64(saturating:)`): the
    /// one conversion from engine seconds to engine nanoseconds. Does not allocate, lock or block.
    @inlinable @inline(__always)
    public init(nanosecondsOf seconds: Double) {
        self.init(saturating: (seconds * 1e9).rounded())
    }
}

extension UInt64 {
    /// `self + other`, or `UInt64.max` when that overflows (a time so far off it never comes).
    /// Does not allocate, lock or block.
    @inlinable @inline(__always)
    public func addingSaturated(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
