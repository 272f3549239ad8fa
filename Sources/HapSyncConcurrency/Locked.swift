import Glibc

/// A value behind a lock, used like `Synchronization.Mutex` (`withLock`), on a `pthread_mutex_t`.
///
/// Contract:
/// - Any number of threads; `withLock` runs its body with exclusive access to the value and
///   returns what the body returns (or rethrows what it throws, typed), unlocking in every case.
/// - Not reentrant: calling `withLock` on the same lock from inside its body deadlocks.
/// - It can block, so it is for control threads only: no real-time path takes a `Locked` (the
///   real-time threads reach shared state through `SPSCRing` and `SeqLock`).
/// - Why not `Mutex`: on Linux `Mutex` waits with raw futex system calls, which ThreadSanitizer does
///   not intercept; it then reports the accesses a `Mutex` protects as races (checked with a
///   two-thread counter). Every lock in HapSync's sources is a `Locked`, so `.ci/run`'s
///   ThreadSanitizer pass reports only real races.
/// - Cost: an uncontended lock and unlock (two atomic operations, no system call).
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Holds `value`.
    public init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock (blocks while another thread holds it).
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
