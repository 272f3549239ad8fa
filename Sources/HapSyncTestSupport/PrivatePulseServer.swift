import Foundation
import Glibc

/// A private PulseAudio server of a test's own (its own socket and runtime folder, one null sink), so
/// it can be killed and started again, or played to, without touching the server other tests use
/// (the sync test records that server's monitor). Ended by its PID.
///
/// Spawned with `spawnQuietly` (pulseaudio closes the descriptors it inherits, which
/// Foundation's `Process` reads as the child's exit).
public final class PrivatePulseServer {
    /// The server's own runtime folder (0700), removed with the server.
    public let folder: URL
    /// The server's socket, for `PULSE_SERVER=unix:...` or a client's server name.
    public var socket: String { folder.appendingPathComponent("native").path }
    private var pid: pid_t?

    /// Makes the folder; the server starts with `start()`.
    public init() throws {
        folder = URL(fileURLWithPath: "/tmp/hapsync-pulse-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Starts the server and waits (at most 10 s) until it answers.
    public func start() throws {
        guard let exe = ["/usr/bin/pulseaudio", "/usr/local/bin/pulseaudio"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "pulseaudio is not installed (bash .ci/install-deps --tests)"])
        }
        let arguments = [exe, "-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no", "--log-target=stderr",
                         "-L", "module-null-sink sink_name=private rate=48000 format=float32le channels=2",
                         "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socket)"]
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = folder.path
        env["HOME"] = folder.path
        // Not the process under test: .ci/rt-alloc-check's malloc counter stays out of it.
        env["LD_PRELOAD"] = nil
        let child = try spawnQuietly(arguments, environment: env)
        pid = child
        let giveUp = Date().addingTimeInterval(10)
        while !answers() {
            guard Date() < giveUp else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the private server did not answer"]) }
            usleep(50_000)
        }
    }

    /// Whether the server accepts a connection on its socket.
    public func answers() -> Bool {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(self.socket.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }

    /// Kills the server at once (SIGKILL: a crash, not a goodbye) and waits for it.
    public func kill() {
        guard let pid else { return }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        self.pid = nil
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }
}
