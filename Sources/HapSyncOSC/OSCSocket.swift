import Glibc
import HapSyncRuntime
import HapSyncSystem

/// Where `hapsync serve` listens: `udp:HOST:PORT` or `unix:PATH` (a datagram socket).
public enum OSCEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// UDP on an IPv4 address and port (port 0: any free port).
    case udp(host: String, port: UInt16)
    /// A Unix datagram socket at a path, made with mode 0600.
    case unix(path: String)

    /// What an endpoint may be, for error messages.
    public static let expectation = "udp:HOST:PORT (an IPv4 address) or unix:PATH"

    /// Parses `udp:127.0.0.1:9000`, `udp:9000` (loopback) or `unix:/run/user/1000/hapsync.sock`.
    public init?(parsing text: String) {
        if text.hasPrefix("unix:"), text.count > 5 { self = .unix(path: String(text.dropFirst(5))); return }
        guard text.hasPrefix("udp:") else { return nil }
        let rest = text.dropFirst(4)
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            guard let port = UInt16(parts[0]) else { return nil }
            self = .udp(host: "127.0.0.1", port: port)
        case 2:
            guard let port = UInt16(parts[1]), !parts[0].isEmpty else { return nil }
            self = .udp(host: String(parts[0]), port: port)
        default:
            return nil
        }
    }

    /// Whether only this machine can reach it (a loopback address or a Unix socket).
    public var isLocal: Bool {
        switch self {
        case .unix: return true
        case .udp(let host, _): return host.hasPrefix("127.") || host == "localhost"
        }
    }

    /// As written.
    public var description: String {
        switch self {
        case .udp(let host, let port): return "udp:\(host):\(port)"
        case .unix(let path): return "unix:\(path)"
        }
    }
}

/// Why a socket could not be made.
public struct OSCSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sentence naming the endpoint.
    public let description: String
}

/// The service's socket, ours rather than liblo's (liblo 0.31 binds every interface and cannot
/// make a 0600 Unix socket): datagrams in, replies back to their senders. OSC itself is liblo's.
final class OSCSocket: @unchecked Sendable {
    let fd: Int32
    let endpoint: OSCEndpoint
    /// The port bound (UDP; useful with port 0), else 0.
    private(set) var boundPort: UInt16 = 0
    private let unixPath: String?

    /// A sender's address, to reply to.
    struct Peer {
        var storage = sockaddr_storage()
        var length: socklen_t = 0
    }

    init(_ endpoint: OSCEndpoint) throws(OSCSocketError) {
        self.endpoint = endpoint
        switch endpoint {
        case .udp(let host, let port):
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw OSCSocketError(description: "\(endpoint): socket: \(SystemErrno.current.message)") }
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            let name = host == "localhost" ? "127.0.0.1" : host
            guard inet_pton(AF_INET, name, &addr.sin_addr) == 1 else {
                close(fd)
                throw OSCSocketError(description: "\(endpoint): '\(host)' is not an IPv4 address")
            }
            let rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard rc == 0 else {
                let reason = SystemErrno.current.message
                close(fd)
                throw OSCSocketError(description: "\(endpoint): cannot bind: \(reason)")
            }
            var bound = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            boundPort = UInt16(bigEndian: bound.sin_port)
            self.fd = fd
            unixPath = nil
        case .unix(let path):
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            let capacity = MemoryLayout.size(ofValue: addr.sun_path)
            guard path.utf8.count < capacity else { throw OSCSocketError(description: "\(endpoint): the path is longer than \(capacity - 1) bytes") }
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in
                for (i, b) in path.utf8.enumerated() { raw[i] = b }
                raw[path.utf8.count] = 0
            }
            // Never replace what is there: a file, a link or a socket a service answers on. A
            // socket nothing listens on (left by a service that was killed) is taken over.
            var st = stat()
            if lstat(path, &st) == 0 {
                guard st.st_mode & S_IFMT == S_IFSOCK, Self.isStale(&addr) else {
                    throw OSCSocketError(description: "\(endpoint): \(path) already exists\(st.st_mode & S_IFMT == S_IFSOCK ? " and a service listens on it" : " and is not a socket"); not replacing it")
                }
                unlink(path)
            }
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw OSCSocketError(description: "\(endpoint): socket: \(SystemErrno.current.message)") }
            // 0600 from the start: the umask makes the socket file owner-only before it exists.
            let old = umask(0o177)
            let rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            umask(old)
            guard rc == 0 else {
                let reason = SystemErrno.current.message
                close(fd)
                throw OSCSocketError(description: "\(endpoint): cannot bind: \(reason)")
            }
            self.fd = fd
            unixPath = path
        }
        // Large enough for bursts of datagrams while a command is handled.
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Whether nothing listens on the Unix datagram socket at `addr` (connecting is refused).
    private static func isStale(_ addr: inout sockaddr_un) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return rc != 0 && errno == ECONNREFUSED
    }

    deinit {
        close(fd)
        if let unixPath { unlink(unixPath) }
    }

    /// Waits up to `timeoutMilliseconds` for a datagram; returns its length (more than the
    /// buffer's when it was cut: the datagram was too large) and sender, or nil on timeout.
    func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) -> (length: Int, peer: Peer)? {
        if timeoutMilliseconds > 0 {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, timeoutMilliseconds) > 0 else { return nil }
        }
        var peer = Peer()
        peer.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = withUnsafeMutablePointer(to: &peer.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(fd, buffer.baseAddress, buffer.count, Int32(MSG_TRUNC | MSG_DONTWAIT), $0, &peer.length)
            }
        }
        guard n >= 0 else { return nil }
        return (n, peer)
    }

    /// Sends a datagram to `peer`; false when it could not (a Unix peer without an address of its
    /// own, a full buffer): replies are best effort, as UDP is.
    @discardableResult
    func send(_ bytes: UnsafeRawBufferPointer, to peer: Peer) -> Bool {
        guard peer.length > socklen_t(MemoryLayout<sa_family_t>.size) else { return false }
        var peer = peer
        let n = withUnsafePointer(to: &peer.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, peer.length)
            }
        }
        return n == bytes.count
    }
}
