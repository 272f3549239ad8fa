import CLo
import Foundation
import Glibc
import HapSyncRuntime
@testable import HapSyncOSC

/// A client of an `OSCService` over Unix datagram sockets, its packets encoded and its replies
/// decoded by liblo (as a client program linking liblo would): the service is tested through the
/// library that decodes its input, not by calling its dispatch directly.
final class OSCTestClient {
    let fd: Int32
    let path: String
    private var server: sockaddr_un

    /// A client bound to `path` (so that it gets replies), talking to the service at `serverPath`.
    init(path: String, serverPath: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        server = Self.address(serverPath)
        var mine = Self.address(path)
        let bound = withUnsafePointer(to: &mine) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw ClientError(description: "cannot bind \(path): \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    struct ClientError: Error, CustomStringConvertible { let description: String }

    private static func address(_ p: String) -> sockaddr_un {
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in p.utf8.enumerated() { raw[i] = b } }
        return a
    }

    /// A liblo message holding `args` (`.bool` as the T and F tags, numbers as `i` and `f`).
    static func message(_ args: [OSCValue]) -> lo_message {
        let m = lo_message_new()!
        for a in args {
            switch a {
            case .int(let v): lo_message_add_int32(m, Int32(truncatingIfNeeded: v))
            case .float(let v): lo_message_add_float(m, Float(v))
            case .string(let v): lo_message_add_string(m, v)
            case .bool(let v): if v { lo_message_add_true(m) } else { lo_message_add_false(m) }
            case .other: lo_message_add_nil(m)
            }
        }
        return m
    }

    /// Sends raw bytes.
    func send(bytes: UnsafeRawPointer, count: Int) {
        _ = withUnsafePointer(to: &server) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, count, 0, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Sends one message, alone or (with `at`: Unix seconds) in a bundle tagged with that time.
    func send(_ address: String, _ args: [OSCValue] = [], at unixTime: Double? = nil) {
        let m = Self.message(args)
        var size = 0
        if let unixTime {
            let seconds = unixTime + 2_208_988_800   // NTP counts from 1900
            let tag = lo_timetag(sec: UInt32(truncatingIfNeeded: UInt64(seconds)), frac: UInt32((seconds - seconds.rounded(.down)) * 4_294_967_296))
            let bundle = lo_bundle_new(tag)!
            lo_bundle_add_message(bundle, address, m)
            defer { lo_bundle_free_recursive(bundle) }
            let bytes = lo_bundle_serialise(bundle, nil, &size)!
            defer { free(bytes) }
            send(bytes: bytes, count: size)
        } else {
            defer { lo_message_free(m) }
            let bytes = lo_message_serialise(m, address, nil, &size)!
            defer { free(bytes) }
            send(bytes: bytes, count: size)
        }
    }

    /// The next reply (its address and arguments, decoded by liblo), nil after `timeout` ms.
    func receive(timeout: Int32 = 5000) -> (address: String, args: [OSCValue])? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, timeout) > 0 else { return nil }
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        var result: Int32 = 0
        guard let m = lo_message_deserialise(&buffer, n, &result) else { return nil }
        defer { lo_message_free(m) }
        let address = String(cString: buffer.map { CChar(bitPattern: $0) } + [0])
        let args = OSCValue.arguments(types: lo_message_get_types(m), argv: lo_message_get_argv(m), count: Int(lo_message_get_argc(m)))
        return (address, args)
    }

    /// Sends a message and waits for its reply.
    func ask(_ address: String, _ args: [OSCValue] = [], at unixTime: Double? = nil) -> (address: String, args: [OSCValue])? {
        send(address, args, at: unixTime)
        return receive()
    }
}

/// A started service on a Unix socket in `dir`, run on a thread of its own until `stop`.
final class RunningService {
    let service: OSCService
    let socketPath: String
    private let thread: Thread

    init(engine: HapticEngine, dir: URL, configure: (inout OSCService.Configuration) -> Void = { _ in }) throws {
        socketPath = dir.appendingPathComponent("s-\(UUID().uuidString.prefix(8)).sock").path
        var configuration = OSCService.Configuration(endpoints: [.unix(path: socketPath)], resourceRoots: [dir])
        configure(&configuration)
        let service = try OSCService(engine: engine, configuration: configuration)
        self.service = service
        thread = Thread { service.run() }
        thread.start()
    }

    /// A client bound next to the service's socket.
    func client() throws -> OSCTestClient {
        try OSCTestClient(path: socketPath + "-c\(UUID().uuidString.prefix(6))", serverPath: socketPath)
    }

    func stop() { service.stop() }
}
