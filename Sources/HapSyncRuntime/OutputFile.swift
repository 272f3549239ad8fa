import Glibc
import HapSyncSystem

/// The one way HapSync writes a file the user named (`render --out`, `plot --out`, `feedback
/// --out`, a trace): what it may replace, what it writes into, what it refuses, and every write and
/// close checked.
///
/// What the path names decides:
/// - nothing: the file is created (mode 0666 less the umask);
/// - a regular file (or a symbolic link to one): replaced only when `replacing` (the user's
///   `--force`); otherwise `.exists`. A text written whole goes to a temporary file beside it that
///   is renamed over it when complete (readers never see half a file); a stream (a trace) truncates
///   it and writes in place. A link is followed: the file it names is replaced, the link stays;
/// - a character device or a FIFO (`/dev/null`, `/dev/stdout` on a pipe, a named pipe a reader
///   waits on): written into, never renamed over or truncated; no `--force` needed, as nothing is
///   replaced. A FIFO with no reader is refused (`.noReader`) instead of waiting for one;
/// - a directory, a block device, a socket: refused, with or without `replacing`.
///
/// Why: renaming a temporary file over `/dev/null` as root replaces the system's null device with
/// a regular file (what `--force` did before this type).
public final class OutputFile {
    /// Why a file was not written; each names the path.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// A regular file is there and `replacing` was not asked for.
        case exists(path: String)
        /// Something that is never written: a directory, a block device, a socket.
        case refusedKind(path: String, kind: String)
        /// A FIFO that no process reads.
        case noReader(path: String)
        /// Opening or creating failed; the text is the system's reason.
        case cannotCreate(path: String, reason: String)
        /// A write, flush or close failed ("No space left on device"); what had been written
        /// before stays.
        case writeFailed(path: String, reason: String)

        /// A sentence naming the file.
        public var description: String {
            switch self {
            case .exists(let p): return "\(p) already exists; not overwriting it"
            case .refusedKind(let p, let kind): return "\(p) is \(kind); refusing to write to it"
            case .noReader(let p): return "\(p) is a FIFO (named pipe) that nothing reads; refusing to wait for a reader"
            case .cannotCreate(let p, let reason): return "cannot create \(p): \(reason)"
            case .writeFailed(let p, let reason): return "cannot write \(p): \(reason)"
            }
        }
    }

    /// How the file is written.
    public enum Mode: Sendable, Equatable {
        /// All at once: a regular file is written to a temporary file and renamed into place by `commit()`.
        case whole
        /// As it comes (a trace): written in place from the start.
        case stream
        /// As it comes, after what is already there (a trace continued after an engine restart):
        /// never truncates; the file is created if it is gone.
        case append
    }

    /// The path as the user gave it.
    public let path: String
    /// Whether the output is a regular file (false: a character device or FIFO written into).
    public let isRegularFile: Bool
    /// Bytes written through this handle so far (for a stream, the file's length if it started empty).
    public private(set) var bytesWritten: Int64 = 0
    private var fd: Int32
    /// The temporary file being written (`.whole` on a regular file) and where it goes.
    private let temporary: String?
    private let destination: String
    /// For a text written whole: whether it replaces a regular file (else it is new, and a file
    /// that appeared at the destination meanwhile is not replaced).
    private var replaces = false
    /// The file this handle created (the path named nothing before), by device and inode; nil when
    /// it writes into or over a file that was there.
    private var created: Identity?

    private init(path: String, fd: Int32, isRegularFile: Bool, temporary: String?, destination: String) {
        self.path = path
        self.fd = fd
        self.isRegularFile = isRegularFile
        self.temporary = temporary
        self.destination = destination
    }

    deinit { discard() }

    /// What the path names now.
    private enum Target {
        case none
        case regular(resolved: String, mode: mode_t, id: Identity)
        case stream(kind: mode_t, id: Identity)
    }

    /// Which file a path named when it was checked (device and inode), so an open can tell it
    /// still names that file and not one put in its place since.
    private struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
        init(_ st: stat) { device = UInt64(st.st_dev); inode = UInt64(st.st_ino) }
    }

    /// Whether two paths name the same file (its device and inode, links followed): for a write
    /// that must never land on its own input.
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return Identity(sa) == Identity(sb)
    }

    /// Applies the rules above without creating anything: throws what `create` would refuse.
    /// For checks before long work (a trace path, before loading and decoding a pattern).
    public static func check(_ path: String, replacing: Bool) throws(Failure) {
        _ = try target(path, replacing: replacing, mode: .stream)
    }

    private static func target(_ path: String, replacing: Bool, mode: Mode) throws(Failure) -> Target {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let err = errno
            var lst = stat()
            if err == ENOENT, lstat(path, &lst) == 0 {
                throw .refusedKind(path: path, kind: "a symbolic link to nothing")
            }
            if err == ENOENT { return .none }
            throw .cannotCreate(path: path, reason: SystemErrno(err).message)
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            guard replacing || mode == .append else { throw .exists(path: path) }
            // Rename onto what a link names, not over the link.
            guard let real = realpath(path, nil) else { throw .cannotCreate(path: path, reason: SystemErrno.current.message) }
            defer { free(real) }
            return .regular(resolved: String(cString: real), mode: st.st_mode & 0o7777, id: Identity(st))
        case S_IFCHR, S_IFIFO:
            return .stream(kind: st.st_mode & S_IFMT, id: Identity(st))
        case S_IFDIR: throw .refusedKind(path: path, kind: "a directory")
        case S_IFBLK: throw .refusedKind(path: path, kind: "a block device")
        case S_IFSOCK: throw .refusedKind(path: path, kind: "a socket")
        default: throw .refusedKind(path: path, kind: "a special file")
        }
    }

    /// Opens `path` for writing by the rules above. `replacing` is the user's permission to
    /// replace a regular file (`--force`).
    public static func create(_ path: String, replacing: Bool, mode: Mode) throws(Failure) -> OutputFile {
        let flags = O_WRONLY | O_CLOEXEC | O_NOCTTY
        switch try target(path, replacing: replacing, mode: mode) {
        case .stream(let kind, let id):
            // Non-blocking open: a FIFO without a reader fails (ENXIO) instead of waiting forever.
            let fd = open(path, flags | O_NONBLOCK)
            guard fd >= 0 else {
                if errno == ENXIO, kind == S_IFIFO { throw .noReader(path: path) }
                throw .cannotCreate(path: path, reason: SystemErrno.current.message)
            }
            try verify(fd, path: path, kind: kind, id: id)
            return OutputFile(path: path, fd: fd, isRegularFile: false, temporary: nil, destination: path)
        case .regular(let resolved, let permissions, let id):
            if mode == .whole { return try temporaryBeside(path: path, destination: resolved, permissions: permissions, replacing: true) }
            // Opened without truncating and checked first: what is truncated is the file that was
            // checked, never one put in its place since (and never a FIFO, which would block).
            let fd = open(resolved, flags | O_NONBLOCK | (mode == .append ? O_APPEND : 0))
            guard fd >= 0 else { throw .cannotCreate(path: path, reason: SystemErrno.current.message) }
            try verify(fd, path: path, kind: S_IFREG, id: id)
            let file = OutputFile(path: path, fd: fd, isRegularFile: true, temporary: nil, destination: resolved)
            if mode == .append {
                file.bytesWritten = Int64(lseek(fd, 0, SEEK_END))
            } else {
                try file.truncate(to: 0)
            }
            return file
        case .none:
            if mode == .whole { return try temporaryBeside(path: path, destination: path, permissions: nil, replacing: false) }
            // O_EXCL: a file (or link) that appeared since the check is not replaced unasked.
            let fd = open(path, flags | O_CREAT | O_EXCL, 0o666)
            guard fd >= 0 else { throw .cannotCreate(path: path, reason: SystemErrno.current.message) }
            let file = OutputFile(path: path, fd: fd, isRegularFile: true, temporary: nil, destination: path)
            var st = stat()
            if fstat(fd, &st) == 0 { file.created = Identity(st) }
            return file
        }
    }

    /// Checks that a descriptor just opened is the file `path` named when it was checked (same kind,
    /// device and inode), then makes its writes block as usual (a slow reader is waited for).
    /// Closes it and throws if not.
    private static func verify(_ fd: Int32, path: String, kind: mode_t, id: Identity) throws(Failure) {
        var st = stat()
        var problem: String?
        if fstat(fd, &st) != 0 {
            problem = SystemErrno.current.message
        } else if st.st_mode & S_IFMT != kind || Identity(st) != id {
            problem = "it was replaced by another file while being opened; nothing was written"
        } else {
            let flags = fcntl(fd, F_GETFL)
            if flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 { problem = SystemErrno.current.message }
        }
        if let problem {
            close(fd)
            throw .cannotCreate(path: path, reason: problem)
        }
    }

    /// A new temporary file in the destination's folder (so the rename stays on one file system),
    /// with the permissions of the file it replaces, or 0666 less the umask.
    private static func temporaryBeside(path: String, destination: String, permissions: mode_t?, replacing: Bool) throws(Failure) -> OutputFile {
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[...$0]) } ?? ""
        let base = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        for _ in 0..<100 {
            let candidate = folder + "." + base + ".hapsync-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
            let fd = open(candidate, O_WRONLY | O_CLOEXEC | O_CREAT | O_EXCL, 0o666)
            if fd < 0, errno == EEXIST { continue }
            guard fd >= 0 else { throw .cannotCreate(path: path, reason: SystemErrno.current.message) }
            if let permissions, fchmod(fd, permissions) != 0 {
                let reason = SystemErrno.current.message
                close(fd)
                unlink(candidate)
                throw .cannotCreate(path: path, reason: "cannot give the new file the permissions of the old: \(reason)")
            }
            let file = OutputFile(path: path, fd: fd, isRegularFile: true, temporary: candidate, destination: destination)
            file.replaces = replacing
            return file
        }
        throw .cannotCreate(path: path, reason: "no free temporary name in \(folder.isEmpty ? "." : folder)")
    }

    /// Writes all of `bytes` (`DescriptorWrite.all`: short writes and interrupted calls retried).
    /// On failure throws `.writeFailed`; `bytesWritten` then counts what did reach the file.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard fd >= 0 else { throw .writeFailed(path: path, reason: "already closed") }
        do throws(DescriptorWrite.Failure) {
            try DescriptorWrite.all(bytes, to: fd)
            bytesWritten += Int64(bytes.count)
        } catch {
            bytesWritten += Int64(error.written)
            throw .writeFailed(path: path, reason: error.description)
        }
    }

    /// Writes a string's UTF-8 bytes.
    public func write(_ text: String) throws(Failure) {
        var failure: Failure?
        Array(text.utf8).withUnsafeBytes { raw in
            do throws(Failure) { try write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Cuts a regular file back to `length` bytes (the end of the last whole record after a
    /// failed write), so what stays is well-formed. Nothing to do for a device or FIFO.
    public func truncate(to length: Int64) throws(Failure) {
        guard isRegularFile, temporary == nil, fd >= 0 else { return }
        let rc = SystemErrno.retryingInterrupts { ftruncate(fd, off_t(length)) }
        if case .failure(let e) = rc { throw .writeFailed(path: path, reason: e.message) }
        bytesWritten = length
    }

    /// Finishes the file: closes it (checked: a close can report a write the system deferred)
    /// and, for a text written whole, renames it into place. After a failure nothing is renamed
    /// and the temporary file is removed.
    public func commit() throws(Failure) {
        guard fd >= 0 else { return }
        let closing = fd
        fd = -1
        // close is not retried on EINTR: on Linux the descriptor is gone either way.
        if close(closing) != 0 {
            let reason = SystemErrno.current.message
            if let temporary { unlink(temporary) }
            throw .writeFailed(path: path, reason: reason)
        }
        if let temporary {
            // Checked again just before the rename: never rename over anything but a regular
            // file, nor over a file that appeared since a new one was asked for.
            var st = stat()
            let present = lstat(destination, &st) == 0
            let refusal: Failure? = !present ? nil
                : !replaces ? .exists(path: path)
                : st.st_mode & S_IFMT != S_IFREG ? .refusedKind(path: path, kind: "no longer a regular file")
                : nil
            if let refusal {
                unlink(temporary)
                throw refusal
            }
        }
        if let temporary, rename(temporary, destination) != 0 {
            let reason = SystemErrno.current.message
            unlink(temporary)
            throw .writeFailed(path: path, reason: reason)
        }
    }

    /// Abandons the file: closes it and removes a temporary file (the destination is untouched).
    public func discard() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        if let temporary { unlink(temporary) }
    }

    /// Closes the file and removes it if this handle created it and the path still names that
    /// file: what a run that failed before it began leaves behind is nothing, so the same command
    /// can be run again without `--force`. A file that was there before is left as it is.
    /// Returns whether it removed the file.
    @discardableResult
    public func removeCreated() -> Bool {
        discard()
        guard let created else { return false }
        var st = stat()
        guard lstat(path, &st) == 0, Identity(st) == created else { return false }
        return unlink(path) == 0
    }

    /// Writes `text` to `path` whole, by the rules above.
    public static func write(_ text: String, to path: String, replacing: Bool) throws(Failure) {
        let file = try create(path, replacing: replacing, mode: .whole)
        do {
            try file.write(text)
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }
}
