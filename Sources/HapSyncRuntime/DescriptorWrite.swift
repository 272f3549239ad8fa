import Glibc
import HapSyncSystem

/// The one loop that writes a buffer whole to a file descriptor with write(2): again after a
/// partial write, again after EINTR (`SystemErrno.retryingInterrupts`), and stopping at the first
/// error, which it returns with how much did get written. Output files (`OutputFile`) and the
/// command line's standard output and error (`HapSyncCLI.ConsoleStream`) are written through it.
///
/// A write into a pipe nobody reads fails with EPIPE only where SIGPIPE is ignored (the `hapsync`
/// executable ignores it); otherwise SIGPIPE ends the process, as it does any Unix tool. Blocks as
/// long as write(2) blocks; allocates nothing.
public enum DescriptorWrite {
    /// Why a write stopped before the end of its buffer.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Bytes that were written before it.
        public var written: Int
        /// The error write(2) gave; nil when it wrote nothing and gave none (a write that would
        /// not move on is reported, never retried forever).
        public var errno: SystemErrno?

        /// Makes one.
        public init(written: Int, errno: SystemErrno?) {
            self.written = written
            self.errno = errno
        }

        /// Whether the reader went away: EPIPE, a pipe or socket nobody reads any more.
        public var isBrokenPipe: Bool { errno?.code == EPIPE }

        /// The system's reason, "No space left on device", or "the system wrote nothing".
        public var description: String { errno.map { $0.message } ?? "the system wrote nothing" }
    }

    /// Writes all of `bytes` to `fd`; throws the first failure.
    public static func all(_ bytes: UnsafeRawBufferPointer, to fd: Int32) throws(Failure) {
        var done = 0
        while done < bytes.count {
            switch SystemErrno.retryingInterrupts({ write(fd, bytes.baseAddress! + done, bytes.count - done) }) {
            case .success(let n):
                guard n > 0 else { throw Failure(written: done, errno: nil) }
                done += n
            case .failure(let e):
                throw Failure(written: done, errno: e)
            }
        }
    }
}
