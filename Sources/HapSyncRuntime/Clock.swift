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
