import Foundation
import HapSyncSystem

/// The one way HapSync opens a file it was given as input data (an audio resource): only a
/// regular file, checked before it is opened and again on the open descriptor, and opened so
/// that the open itself can never block.
///
/// Why: `open(2)` of a FIFO for reading waits for a writer (forever, in a resource folder), and a
/// device node is no audio file (opening some has side effects, reading others never ends). So:
/// 1. `stat` the path: anything but a regular file is refused without being opened;
/// 2. open it with `O_NONBLOCK` (a FIFO swapped in after the check opens at once instead of
///    hanging), `O_NOCTTY` (a terminal swapped in never becomes ours) and `O_CLOEXEC`;
/// 3. `fstat` the descriptor: it must still be a regular file (what the path named may have
///    changed between 1 and 2).
/// `O_NONBLOCK` has no effect on reads of a regular file, so the descriptor reads normally.
///
/// This is the only place in the AHAP module (Foundation and the system layer, `HapSyncSystem`, for
/// errno's message) that makes these system calls (they reach it through Foundation, which
/// re-exports the C library on Linux): Foundation's own file APIs open with a blocking `open(2)`.
public enum RegularFile {
    /// Why a path was not opened.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not a regular file; the associated text names its kind ("a FIFO", "a character device", ...).
        case notRegular(path: String, kind: String)
        /// The system call failed; the text is the system's reason.
        case cannotOpen(path: String, reason: String)

        /// A sentence naming the file.
        public var description: String {
            switch self {
            case .notRegular(let path, let kind): return "\(path) is \(kind), not a regular file; refusing to read it"
            case .cannotOpen(let path, let reason): return "cannot open \(path): \(reason)"
            }
        }
    }

    /// What kind of file `path` names without opening it ("a FIFO", "a directory", ...), following
    /// symbolic links; nil for a regular file. A path that cannot be examined is `.cannotOpen`.
    public static func kind(of path: String) -> Result<String?, Failure> {
        var st = stat()
        guard stat(path, &st) == 0 else { return .failure(.cannotOpen(path: path, reason: SystemErrno.current.message)) }
        return .success(kind(mode: st.st_mode))
    }

    /// Opens `path` for reading as described above; the handle closes its descriptor when released.
    public static func open(_ path: String) throws(Failure) -> FileHandle {
        switch kind(of: path) {
        case .failure(let f): throw f
        case .success(let k?): throw .notRegular(path: path, kind: k)
        case .success(nil): break
        }
        let fd = Foundation.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: SystemErrno.current.message) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let reason = SystemErrno.current.message
            close(fd)
            throw .cannotOpen(path: path, reason: reason)
        }
        if let k = kind(mode: st.st_mode) {
            close(fd)
            throw .notRegular(path: path, kind: k)
        }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// The kind named in messages, nil for a regular file.
    static func kind(mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "a special file"
        }
    }
}
