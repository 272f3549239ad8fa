import Glibc
import HapSyncRuntime
import HapSyncSystem

/// A named pipe (FIFO) that we create and read: the system calls of `PipeSinkReader` on it, and the
/// only ones this module makes itself (its thread sleeps and asks for priority through the
/// runtime's `HelperThreadCalls`). Errors are `SystemErrno`s and EINTR is retried by
/// `SystemErrno.retryingInterrupts`, as in the runtime's chokepoint.
///
/// The pipe is opened for reading *and* writing (Linux allows it on a FIFO): with a writer of our
/// own it never reads as ended while the server closes and reopens its end, so `waitReadable`
/// only wakes for data. We never write to it.
struct NamedPipe {
    /// The pipe's path.
    let path: String
    private let fd: Int32

    /// Creates the FIFO at `path` (mode 0600; one already there is used) and opens it non-blocking.
    init(creatingAt path: String) throws(SystemErrno) {
        if mkfifo(path, 0o600) != 0, errno != EEXIST { throw SystemErrno(errno) }
        switch SystemErrno.retryingInterrupts({ open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }) {
        case .success(let fd): self.fd = fd
        case .failure(let e): throw e
        }
        self.path = path
    }

    /// Sets the pipe's capacity to `bytes` (the kernel rounds up to a power-of-two number of pages);
    /// the capacity it has now.
    @discardableResult
    func setCapacity(_ bytes: Int32) -> Int32 {
        // F_SETPIPE_SZ and F_GETPIPE_SZ (F_LINUX_SPECIFIC_BASE + 7 and + 8 in <linux/fcntl.h>):
        // Glibc defines them only under _GNU_SOURCE, so Swift's Glibc module does not export them.
        _ = fcntl(fd, 1031, bytes)
        return fcntl(fd, 1032)
    }

    /// Waits until there is something to read or `milliseconds` have passed; true when readable.
    func waitReadable(milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard case .success(let n) = SystemErrno.retryingInterrupts({ poll(&p, 1, milliseconds) }) else { return false }
        return n > 0 && p.revents & Int16(POLLIN) != 0
    }

    /// Reads what is there, up to `capacity` bytes, into `buffer`; the byte count (0: nothing).
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        switch SystemErrno.retryingInterrupts({ Glibc.read(fd, buffer, capacity) }) {
        case .success(let n): return n
        case .failure: return 0   // EAGAIN: nothing yet
        }
    }

    /// Closes the pipe and removes it from the file system.
    func remove() {
        close(fd)
        unlink(path)
    }
}
