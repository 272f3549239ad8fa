import Glibc
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import Synchronization

/// A backend that keeps every command it is given, with the time it was applied, for tests.
public final class RecordingHapticBackend: HapticBackend, @unchecked Sendable {
    /// One applied command.
    public struct Entry: Sendable, Equatable {
        /// The command.
        public var command: OutputCommand
        /// When it was applied (engine ns).
        public var appliedAt: UInt64
    }

    private let state = Locked<(entries: [Entry], opened: Int, closed: Int, stops: Int)>(([], 0, 0, 0))
    /// When set, `apply` throws this many times before succeeding again.
    public let failures = Atomic<Int>(0)
    /// When set, `open` throws.
    public let refuseOpen = Atomic<Bool>(false)
    /// When set, `apply` sleeps this many microseconds first (a slow device).
    public let applyDelayMicroseconds = Atomic<Int>(0)

    /// The `timingResolution` it reports (set before the engine is made; default 0, exact).
    public var resolution: UInt64 = 0
    /// `resolution`.
    public var timingResolution: UInt64 { resolution }

    /// Makes an empty recorder.
    public init() {}

    /// Makes an empty recorder with room for `capacity` entries, so that recording up to that
    /// many allocates nothing on the thread that applies them (the scheduler's, for an exact
    /// backend: what `.ci/rt-alloc-check` counts). Read `entries` only once playing is over (a
    /// copy shared with the reader makes the next append copy).
    public convenience init(reserving capacity: Int) {
        self.init()
        state.withLock { $0.entries.reserveCapacity(max(0, capacity)) }
    }

    /// "recording".
    public var name: String { "recording" }
    /// Counts the call; throws when `refuseOpen` is set.
    public func open() throws {
        if refuseOpen.load(ordering: .relaxed) { throw RecordingError.refused }
        state.withLock { $0.opened += 1 }
    }
    /// Records the command (allocates and locks: a test double, not for real-time use).
    public func apply(_ command: OutputCommand, appliedAt: UInt64) throws {
        let delay = applyDelayMicroseconds.load(ordering: .relaxed)
        if delay > 0 { usleep(UInt32(delay)) }
        if failures.load(ordering: .relaxed) > 0 {
            failures.subtract(1, ordering: .relaxed)
            throw RecordingError.failed
        }
        state.withLock { $0.entries.append(Entry(command: command, appliedAt: appliedAt)) }
    }
    /// Counts the call.
    public func stopAll() { state.withLock { $0.stops += 1 } }
    /// Counts the call.
    public func close() { state.withLock { $0.closed += 1 } }

    /// Everything applied so far.
    public var entries: [Entry] { state.withLock { $0.entries } }
    /// How often open, close and stopAll were called.
    public var calls: (opened: Int, closed: Int, stops: Int) { state.withLock { ($0.opened, $0.closed, $0.stops) } }

    /// The errors this double throws.
    public enum RecordingError: Error, Sendable {
        /// `open` refused.
        case refused
        /// `apply` failed.
        case failed
    }
}
