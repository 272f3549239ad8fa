import Foundation
import Glibc

/// A Unix socket that takes connections and never answers: a stopped sound server (SIGSTOP, or
/// pipewire-pulse in front of a stopped PipeWire) as its clients see one. The kernel completes
/// each connection into the listen backlog; nothing ever reads or writes. `close()` (or deinit)
/// removes the socket.
public final class SilentServer {
    /// The socket's path.
    public let path: String
    private var fd: Int32

    /// Listens on a new socket in the temporary directory.
    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-silent-\(getpid())-\(UUID().uuidString.prefix(8))").path
        fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { Glibc.close(fd); throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: e) ?? .EIO)
        }
    }

    /// Stops listening and removes the socket.
    public func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
        unlink(path)
    }

    deinit { close() }
}
