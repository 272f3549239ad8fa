import HapSyncCore
import HapSyncRuntime
import Synchronization

/// A clock that moves only when the test moves it, for deterministic scheduling tests
/// (use with `HapticEngine.Threading.manual` and `pump()`).
public final class ManualClock: EngineClock {
    private let time: Atomic<UInt64>

    /// Starts at `nanoseconds` (default 1 s, so that "past" times exist).
    public init(nanoseconds: UInt64 = 1_000_000_000) { time = Atomic(nanoseconds) }

    /// The current manual time. Does not allocate, lock or block.
    public func now() -> UInt64 { time.load(ordering: .acquiring) }

    /// False: real-time threads cannot sleep on it.
    public var isSystemMonotonic: Bool { false }

    /// Sets the time (it may not go backwards).
    public func set(nanoseconds: UInt64) {
        precondition(nanoseconds >= now(), "ManualClock cannot go backwards")
        time.store(nanoseconds, ordering: .releasing)
    }

    /// Moves time forward by `nanoseconds`.
    public func advance(nanoseconds: UInt64) { set(nanoseconds: now() + nanoseconds) }

    /// Moves time forward by `seconds`.
    public func advance(seconds: Double) { advance(nanoseconds: UInt64(nanosecondsOf: seconds)) }
}
