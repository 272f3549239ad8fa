import Glibc
import HapSyncSystem

/// The sysfs reads device discovery makes, behind one protocol: following a link to the device
/// directory it names, and reading a small attribute file. `SysfsTree` reads the kernel's tree
/// (or a copy of one under another root); tests give it a fixture tree in a temporary folder.
///
/// Paths are absolute sysfs paths ("/sys/class/input/event5/device"), whatever the root.
public protocol SysfsReading: Sendable {
    /// `path` with every symbolic link resolved (realpath(3)): the device's own directory under
    /// /sys/devices, or why it cannot be followed.
    func resolve(_ path: String) -> Result<String, SysfsProblem>
    /// The content of the attribute file at `path` without its trailing newline ("054c" for
    /// `idVendor`), or nil when it is absent or unreadable.
    func attribute(_ path: String) -> String?
}

/// A sysfs path that could not be followed, and why, in words for a note.
public struct SysfsProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path as asked for.
    public var path: String
    /// Why: "a broken link", "not there", "permission denied", ...
    public var reason: String

    /// A problem with `path`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// "/sys/class/sound/card1/device: a broken link".
    public var description: String { "\(path): \(reason)" }
}

/// The kernel's sysfs, read through realpath(3), open(2) and read(2), under `root` (empty: the
/// real /sys; a folder: a fixture tree laid out as /sys is, whose relative links stay inside it).
public struct SysfsTree: SysfsReading {
    /// The folder the tree's "/sys" is in ("" for the machine's own).
    public var root: String

    /// The tree under `root` (default: the machine's own /sys); a root given is taken with its
    /// own links resolved, so that what `resolve` finds under it still starts with it.
    public init(root: String = "") {
        guard !root.isEmpty, let resolved = realpath(root, nil) else {
            self.root = root.hasSuffix("/") ? String(root.dropLast()) : root
            return
        }
        defer { free(resolved) }
        let text = String(cString: resolved)
        self.root = text == "/" ? "" : text
    }

    /// realpath(3) of `root + path`, given back without `root`; a path that does not resolve is
    /// told apart: a link on the way whose target is missing ("a broken link: ... points to
    /// nothing"), a missing entry ("not there"), no access.
    public func resolve(_ path: String) -> Result<String, SysfsProblem> {
        guard let resolved = realpath(root + path, nil) else {
            let e = errno
            guard e == ENOENT else { return .failure(SysfsProblem(path: path, reason: SystemErrno(e).message.lowercased())) }
            return .failure(SysfsProblem(path: path, reason: danglingLink(on: path).map { "a broken link: \($0) points to nothing" } ?? "not there"))
        }
        defer { free(resolved) }
        let text = String(cString: resolved)
        guard root.isEmpty || text == root || text.hasPrefix(root + "/") else {
            return .failure(SysfsProblem(path: path, reason: "leads out of the tree, to \(text)"))
        }
        return .success(root.isEmpty ? text : String(text.dropFirst(root.count)))
    }

    /// The link that leads nowhere on the way along `path`: the longest leading part of it that
    /// lstat(2) finds, when that part is a symbolic link stat(2) cannot follow.
    private func danglingLink(on path: String) -> String? {
        var found = ""
        var status = stat()
        for component in path.split(separator: "/") {
            let next = found + "/" + component
            guard lstat(root + next, &status) == 0 else { break }
            found = next
        }
        guard !found.isEmpty, lstat(root + found, &status) == 0, status.st_mode & S_IFMT == S_IFLNK,
              stat(root + found, &status) != 0 else { return nil }
        return found
    }

    /// The file's first 4 KiB (sysfs attributes are one short line), trimmed of surrounding white
    /// space; nil when it cannot be opened or read.
    public func attribute(_ path: String) -> String? {
        guard case .success(let fd) = SystemErrno.retryingInterrupts({ open(root + path, O_RDONLY | O_CLOEXEC) }) else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { raw in
            SystemErrno.retryingInterrupts { read(fd, raw.baseAddress, raw.count) }
        }
        guard case .success(let n) = count else { return nil }
        let text = String(decoding: buffer.prefix(n), as: UTF8.self)
        return String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
