import HapSyncRuntime

/// OSC time tags (NTP: seconds since 1900 and a 2^-32 fraction) mapped to engine time
/// (CLOCK_MONOTONIC), through the wall clock read beside the monotonic one at receipt.
public enum OSCTime {
    /// Seconds from the NTP epoch (1900) to the Unix epoch (1970).
    public static let ntpToUnix: Double = 2_208_988_800

    /// The wall clock's offset from CLOCK_MONOTONIC (s) and its uncertainty (s): the wall clock is
    /// read between two monotonic reads, and the narrowest of three brackets is kept.
    public static func wallOffset() -> (offset: Double, uncertainty: Double) {
        let (offset, uncertainty) = WallClock.offset()
        return (Double(offset) / 1e9, Double(uncertainty) / 1e9)
    }

    /// CLOCK_MONOTONIC, seconds (the engine's `currentTime`).
    public static func monotonic() -> Double { Double(MonotonicClock.nanoseconds()) / 1e9 }
    /// CLOCK_REALTIME, seconds since 1970.
    public static func realtime() -> Double { Double(WallClock.nanoseconds()) / 1e9 }

    /// A time tag as Unix seconds, or nil for "immediately" (0 seconds, fraction 1) and the zero tag.
    public static func unixSeconds(seconds: UInt32, fraction: UInt32) -> Double? {
        if seconds == 0 { return nil }
        return Double(seconds) - ntpToUnix + Double(fraction) / 4_294_967_296
    }
}
