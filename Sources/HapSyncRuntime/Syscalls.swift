import CHapSyncSystem
import Glibc

/// The one place where the runtime calls the system: clocks, sleeps, scheduling policy, memory
/// locking, timer slack and semaphores. Higher-level code never calls libc directly; errno
/// handling and EINTR retries live here.
enum Syscalls {
    /// An errno value with its system message.
    struct Errno: Error, Equatable, CustomStringConvertible {
        var code: Int32
        /// The system's message for the code ("Operation not permitted").
        var description: String { String(cString: strerror(code)) + " (errno \(code))" }
        /// Whether the system refused for lack of permission.
        var isPermissionDenied: Bool { code == EPERM || code == EACCES }
    }

    /// CLOCK_MONOTONIC in nanoseconds. Does not allocate, lock or block.
    @inline(__always)
    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Sleeps until an absolute CLOCK_MONOTONIC time with clock_nanosleep(TIMER_ABSTIME),
    /// retrying after signals. Blocks only in the kernel's sleep; does not allocate or lock.
    static func sleep(untilMonotonic deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// Names the calling thread (at most 15 bytes; shown by top, ps -L and debuggers).
    static func setThreadName(_ name: String) {
        _ = hapsync_set_thread_name(String(decoding: name.utf8.prefix(15), as: UTF8.self))
    }

    /// Sets SCHED_FIFO at `priority` for the calling thread.
    static func setFIFO(priority: Int32) -> Result<Void, Errno> {
        var param = sched_param()
        param.sched_priority = priority
        let rc = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &param)
        return rc == 0 ? .success(()) : .failure(Errno(code: rc))
    }

    /// Locks all current and future pages of the process in memory.
    static func lockAllMemory() -> Result<Void, Errno> {
        mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0 ? .success(()) : .failure(Errno(code: errno))
    }

    /// Sets the calling thread's timer slack.
    static func setTimerSlack(nanoseconds: UInt) -> Result<Void, Errno> {
        hapsync_set_timer_slack(nanoseconds) == 0 ? .success(()) : .failure(Errno(code: errno))
    }

    /// A POSIX semaphore allocated once; posting never allocates, locks or blocks.
    final class Semaphore: @unchecked Sendable {
        private let raw: UnsafeMutableRawPointer
        private var sem: UnsafeMutablePointer<sem_t> { raw.assumingMemoryBound(to: sem_t.self) }

        init() {
            raw = UnsafeMutableRawPointer.allocate(byteCount: Int(hapsync_sem_size()), alignment: 16)
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: Int(hapsync_sem_size()))
            sem_init(raw.assumingMemoryBound(to: sem_t.self), 0, 0)
        }

        deinit {
            sem_destroy(sem)
            raw.deallocate()
        }

        /// Wakes one waiter (a futex wake in the kernel). Does not allocate, lock or block.
        func post() { sem_post(sem) }

        /// Waits until posted or until an absolute CLOCK_MONOTONIC time; true when posted.
        @discardableResult
        func wait(untilMonotonic deadline: UInt64) -> Bool {
            while true {
                if hapsync_sem_wait_until(sem, Int64(clamping: deadline)) == 0 { return true }
                if errno != EINTR { return false }
            }
        }
    }
}
