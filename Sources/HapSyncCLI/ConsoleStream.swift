import Glibc
import HapSyncConcurrency
import HapSyncRuntime

extension HapSyncCLI {
    /// One stream of a `Console` (standard output or standard error): a writer, and the first write
    /// that failed, after which the stream writes nothing more.
    ///
    /// Contract:
    /// - A write hands the whole text to the writer (`DescriptorWrite.all`: write(2), partial
    ///   writes and EINTR retried) or records why it could not; it never throws or traps.
    /// - After the first failure every later write is a no-op: a dead pipe is not fed, a full disk
    ///   is not written with a gap in what it holds. `failure` says what happened, and commands
    ///   that produce much check it between chunks to stop early (`Console.outputFailed`);
    ///   `HapSyncCLI.main` turns it into the exit status.
    /// - Any thread: writes are serialized by a lock held across the write, so two threads' texts
    ///   never interleave and the first failure is the first. The lock can block as long as the
    ///   write does (a full terminal), so no real-time thread writes to a console.
    public final class ConsoleStream: Sendable {
        private let writer: @Sendable (UnsafeRawBufferPointer) throws(DescriptorWrite.Failure) -> Void
        private let failed = Locked<DescriptorWrite.Failure?>(nil)

        /// A stream that writes with `writer` (a test's: one that fails on cue).
        public init(writer: @escaping @Sendable (UnsafeRawBufferPointer) throws(DescriptorWrite.Failure) -> Void) {
            self.writer = writer
        }

        /// A stream that writes to descriptor `fd` with write(2).
        ///
        /// A descriptor that is not open (the process was started with `>&-`) is first given
        /// /dev/null opened read-only: writes to it still fail (EBADF), and no file the command
        /// opens later can take its number and receive the console's text.
        public convenience init(descriptor fd: Int32) {
            if fcntl(fd, F_GETFD) == -1, errno == EBADF {
                let placeholder = open("/dev/null", O_RDONLY | O_CLOEXEC)
                if placeholder >= 0, placeholder != fd {
                    _ = dup2(placeholder, fd)
                    close(placeholder)
                }
            }
            self.init { (bytes) throws(DescriptorWrite.Failure) in try DescriptorWrite.all(bytes, to: fd) }
        }

        /// Writes `text`, or nothing once a write has failed.
        public func write(_ text: String) {
            failed.withLock { failure in
                guard failure == nil, !text.isEmpty else { return }
                var text = text
                text.withUTF8 { utf8 in
                    do throws(DescriptorWrite.Failure) {
                        try writer(UnsafeRawBufferPointer(utf8))
                    } catch {
                        failure = error
                    }
                }
            }
        }

        /// The first write that failed; nil while every write has succeeded.
        public var failure: DescriptorWrite.Failure? { failed.withLock { $0 } }
    }
}
