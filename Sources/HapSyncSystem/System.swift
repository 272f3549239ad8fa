import Glibc

/// An errno from a system call, with the system's message: the one errno type of HapSync (the
/// runtime's `Syscalls`, the evdev backend's `EvdevSystem`, the AHAP reader's file checks, the
/// fake pad).
public struct SystemErrno: Error, Sendable, Equatable, CustomStringConvertible {
    /// The errno value.
    public var code: Int32
    /// Makes one.
    public init(_ code: Int32) { self.code = code }
    /// The calling thread's errno now, right after the call that failed.
    public static var current: SystemErrno { SystemErrno(errno) }
    /// The system's message for the code alone: "Permission denied". The one call to strerror.
    public var message: String { String(cString: strerror(code)) }
    /// The system's message for the code: "Permission denied (errno 13)".
    public var description: String { message + " (errno \(code))" }
    /// Whether the system refused for lack of permission (EPERM, EACCES).
    public var isPermissionDenied: Bool { code == EPERM || code == EACCES }

    /// Runs a system call that returns −1 and sets errno on failure, again after each EINTR: the
    /// one EINTR retry. Does not allocate, lock or block beyond the call itself.
    @inlinable
    public static func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> Result<T, SystemErrno> {
        while true {
            let rc = call()
            if rc >= 0 { return .success(rc) }
            if errno != EINTR { return .failure(SystemErrno(errno)) }
        }
    }
}

/// The system's clocks in nanoseconds: the one place they are read (`MonotonicClock` and
/// `WallClock` in HapSyncRuntime build on these).
public enum SystemClock {
    /// CLOCK_MONOTONIC in nanoseconds. Does not allocate, lock or block.
    @inlinable
    public static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// CLOCK_REALTIME (the wall clock) in nanoseconds since 1970. Does not allocate, lock or block.
    @inlinable
    public static func realtimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }
}
