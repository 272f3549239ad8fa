import CHapSyncSystem
import Glibc
import HapSyncSystem

/// The one place where the runtime calls the system: clocks, sleeps, scheduling policy, memory
/// locking, timer slack and semaphores. The engine and its threads call the system only through
/// here; errno becomes a `SystemErrno` and EINTR is retried by `SystemErrno.retryingInterrupts`.
enum Syscalls {

    // MARK: - Real-time (scheduler and output threads)

    /// CLOCK_MONOTONIC in nanoseconds (`SystemClock`'s). Does not allocate, lock or block.
    @inline(__always)
    static func monotonicNanoseconds() -> UInt64 { SystemClock.monotonicNanoseconds() }

    /// CLOCK_REALTIME in nanoseconds since 1970 (`SystemClock`'s). Does not allocate, lock or block.
    @inline(__always)
    static func realtimeNanoseconds() -> Int64 { SystemClock.realtimeNanoseconds() }

    /// Sleeps until an absolute CLOCK_MONOTONIC time with clock_nanosleep(TIMER_ABSTIME),
    /// retrying after signals. Blocks only in the kernel's sleep; does not allocate or lock.
    static func sleep(untilMonotonic deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        // clock_nanosleep returns its error instead of setting errno.
        _ = SystemErrno.retryingInterrupts { () -> Int32 in
            let rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil)
            if rc == 0 { return 0 }
            errno = rc
            return -1
        }
    }

    // MARK: - Thread set-up (a thread starting)

    /// Faults in (and, under mlockall, locks) the top 256 KiB of the calling thread's stack, at
    /// thread start, so the real-time loop's stack never takes a first-touch fault later.
    static func prefaultStack() { hapsync_prefault_stack(256 << 10) }

    /// Names the calling thread (at most 15 bytes; shown by top, ps -L and debuggers).
    static func setThreadName(_ name: String) {
        _ = hapsync_set_thread_name(String(decoding: name.utf8.prefix(15), as: UTF8.self))
    }

    /// Sets SCHED_FIFO at `priority` for the calling thread.
    static func setFIFO(priority: Int32) -> Result<Void, SystemErrno> {
        var param = sched_param()
        param.sched_priority = priority
        let rc = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &param)
        return rc == 0 ? .success(()) : .failure(SystemErrno(rc))
    }

    /// SCHED_FIFO at `priority` for the calling thread: directly when the process may (root,
    /// RLIMIT_RTPRIO), else, refused for lack of permission, through RealtimeKit at the priority
    /// it moves `priority` to. The direct path does not allocate, lock or block; the RealtimeKit
    /// path does all three (at a thread's start, before its real-time loop).
    static func setRealtime(priority: Int32) -> Result<RealtimeGrant, RealtimeRefusal> {
        switch setFIFO(priority: priority) {
        case .success: return .success(RealtimeGrant(priority: priority, throughRealtimeKit: false))
        case .failure(let e):
            guard e.isPermissionDenied else { return .failure(RealtimeRefusal(direct: e)) }
            return realtimeKit(thread: hapsync_gettid(), asked: priority, refused: e)
        }
    }

    /// RealtimeKit for thread `tid` of this process, after `refused` was the direct answer.
    /// Allocates and blocks (a D-Bus round trip): never from a real-time loop.
    static func realtimeKit(thread tid: Int32, asked: Int32, refused: SystemErrno) -> Result<RealtimeGrant, RealtimeRefusal> {
        switch RealtimeKit.makeRealtime(thread: tid, asked: asked) {
        case .success(let p): return .success(RealtimeGrant(priority: p, throughRealtimeKit: true))
        case .failure(let r): return .failure(RealtimeRefusal(direct: refused, realtimeKit: r.description))
        }
    }

    /// Locks the process's pages in memory as they are touched, now and in future mappings
    /// (MCL_ONFAULT, Linux 4.4; before it, every page of every mapping at once).
    ///
    /// Without MCL_ONFAULT, mlockall populates every mapping (libpulse's 64 MiB shared memory
    /// pool, every 8 MiB thread stack): hundreds of MB resident and a slow call. With it, the price
    /// is one minor fault the first time a real-time thread touches a page, which stays locked
    /// after; the rings are written at creation and the real-time threads' stacks faulted in at
    /// their start (`prefaultStack`), so what still faults there is the statistics buffers as they
    /// fill, a page (512 commands' figures) at a time. A trace costs none: its ring is written when
    /// made. (The measurements: Bench/results/design-measurements.md.)
    static func lockAllMemory() -> Result<Void, SystemErrno> {
        if mlockall(Int32(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) == 0 { return .success(()) }
        guard errno == EINVAL else { return .failure(SystemErrno(errno)) }
        return mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0 ? .success(()) : .failure(SystemErrno(errno))
    }

    /// Sets the calling thread's timer slack.
    static func setTimerSlack(nanoseconds: UInt) -> Result<Void, SystemErrno> {
        hapsync_set_timer_slack(nanoseconds) == 0 ? .success(()) : .failure(SystemErrno(errno))
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
            // Fails with ETIMEDOUT when the deadline passes.
            if case .success = SystemErrno.retryingInterrupts({ hapsync_sem_wait_until(sem, Int64(clamping: deadline)) }) { return true }
            return false
        }
    }
}

/// The chokepoint's calls for threads that other modules run beside the engine (the measurement
/// instruments' readers): the same sleep and scheduling calls the engine's threads make.
public enum HelperThreadCalls {
    /// Sleeps until CLOCK_MONOTONIC time `deadline` (ns), retrying after signals. Blocks only in
    /// the kernel's sleep.
    public static func sleep(untilMonotonic deadline: UInt64) { Syscalls.sleep(untilMonotonic: deadline) }

    /// Asks for SCHED_FIFO at `priority` for the calling thread: directly, else through RealtimeKit
    /// (`Syscalls.setRealtime`).
    public static func requestFIFO(priority: Int32) -> Result<RealtimeGrant, RealtimeRefusal> { Syscalls.setRealtime(priority: priority) }

    /// RealtimeKit for thread `tid` of this process (a sound server's data thread that was
    /// refused SCHED_FIFO at `asked` with `refused`), from a control thread. Allocates and blocks.
    public static func requestRealtimeKit(thread tid: Int32, asked: Int32, refused: SystemErrno) -> Result<RealtimeGrant, RealtimeRefusal> {
        Syscalls.realtimeKit(thread: tid, asked: asked, refused: refused)
    }

    /// Names the calling thread (at most 15 bytes; shown by top, ps -L and debuggers).
    public static func setName(_ name: String) { Syscalls.setThreadName(name) }
}
