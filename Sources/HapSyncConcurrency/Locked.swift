import Glibc

/// A value behind a lock, used like `Synchronization.Mutex` (`withLock`), but on a
/// `pthread_mutex_t`, so that ThreadSanitizer sees the ordering it gives.
///
/// On Linux `Mutex` waits with raw futex system calls, which ThreadSanitizer does not intercept: it
/// then reports the accesses a `Mutex` protects as races (checked with a two-thread counter). Every
/// lock in HapSync's sources is a `Locked`, so `.ci/run`'s ThreadSanitizer pass reports only real
/// races. For control threads only: it can block, so it never appears on a real-time path.
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
