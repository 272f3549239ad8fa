/// A source of engine time in nanoseconds. Engine time (`HapticEngine.currentTime`) is this clock.
///
/// The real one is `MonotonicClock` (CLOCK_MONOTONIC); tests use `ManualClock` from
/// HapSyncTestSupport, which moves only when the test moves it.
public protocol EngineClock: AnyObject, Sendable {
    /// Current time in nanoseconds. Must not allocate, lock or block: the scheduler calls it.
    func now() -> UInt64
    /// Whether this is the system's CLOCK_MONOTONIC, which the real-time threads can sleep on.
    var isSystemMonotonic: Bool { get }
}

/// CLOCK_MONOTONIC in nanoseconds: the one time base of trace records, deadlines and audio-clock
/// samples.
public final class MonotonicClock: EngineClock {
    /// Makes the clock (it has no state).
    public init() {}
    // MARK: - Real-time (scheduler and output threads)

    /// CLOCK_MONOTONIC now, nanoseconds. Does not allocate, lock or block.
    public func now() -> UInt64 { Syscalls.monotonicNanoseconds() }
    /// CLOCK_MONOTONIC now, nanoseconds, without an instance. Does not allocate, lock or block.
    public static func nanoseconds() -> UInt64 { Syscalls.monotonicNanoseconds() }
    /// True.
    public var isSystemMonotonic: Bool { true }
}

/// The wall clock (CLOCK_REALTIME) and the one way its moments reach engine time: for what other
/// programs stamp with it (a sound server's timing replies, OSC time tags). The wall clock may be
/// stepped at any time (NTP, the user); a conversion holds for the moment it is made.
public enum WallClock {
    /// CLOCK_REALTIME now, nanoseconds since 1970. Does not allocate, lock or block.
    public static func nanoseconds() -> Int64 { Syscalls.realtimeNanoseconds() }

    /// How far the wall clock is ahead of CLOCK_MONOTONIC now (ns: wall − monotonic) and how
    /// uncertain that is (ns): the wall clock read between two monotonic reads, the narrowest of
    /// three such brackets kept. Does not allocate, lock or block.
    public static func offset() -> (offset: Int64, uncertainty: UInt64) {
        var best = (offset: Int64(0), uncertainty: UInt64.max)
        for _ in 0..<3 {
            let m1 = Syscalls.monotonicNanoseconds(), wall = Syscalls.realtimeNanoseconds(), m2 = Syscalls.monotonicNanoseconds()
            let half = (m2 &- m1) / 2
            if half < best.uncertainty { best = (wall &- Int64(bitPattern: m1 &+ half), half) }
        }
        return best
    }
}
