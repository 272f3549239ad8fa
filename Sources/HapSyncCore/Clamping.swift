extension Double {
    /// This value limited to `range` (the one clamp: parameter values, rates, levels). Written for
    /// `Double`, not generically, so the real-time threads can call it in debug builds without an
    /// allocation. Does not allocate, lock or block.
    @inlinable @inline(__always)
    public func clamped(to range: ClosedRange<Double>) -> Double {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
