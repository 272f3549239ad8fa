import Foundation
import Glibc

/// A private PipeWire server of a test's own: `pipewire` and `wireplumber` (its session manager,
/// which links streams to sinks, on a session D-Bus of its own) in a runtime folder of their own, and one null sink `private`
/// made with `pw-cli`, so that the test can kill the server and start it again without touching
/// the server other tests use. Clients reach it with `PIPEWIRE_REMOTE` = `socket`. Each process is
/// ended by its PID.
public final class PrivatePipeWireServer {
    /// The server's own runtime folder (0700), removed with the server.
    public let folder: URL
    /// The server's socket, for `PIPEWIRE_REMOTE`.
    public var socket: String { folder.appendingPathComponent("pipewire-0").path }
    /// The null sink's node name.
    public let sink = "private"
    private var pids: [pid_t] = []
    private var bus: String { folder.appendingPathComponent("bus").path }
    private var busPID: pid_t?

    /// Makes the folder; the server starts with `start()`.
    public init() throws {
        folder = URL(fileURLWithPath: "/tmp/hapsync-pipewire-\(UUID().uuidString.prefix(8))")
        for sub in ["", "state", "config"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
    }

    private static func executable(_ name: String) throws -> String {
        guard let path = ["/usr/bin/\(name)", "/usr/local/bin/\(name)"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "\(name) is not installed (bash .ci/install-deps --tests)"])
        }
        return path
    }

    private var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = folder.path
        env["XDG_STATE_HOME"] = folder.appendingPathComponent("state").path
        env["XDG_CONFIG_HOME"] = folder.appendingPathComponent("config").path
        env["PIPEWIRE_REMOTE"] = nil
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(bus)"
        // Not the process under test: .ci/rt-alloc-check's malloc counter stays out of it.
        env["LD_PRELOAD"] = nil
        return env
    }

    private func spawn(_ arguments: [String]) throws -> pid_t { try spawnQuietly(arguments, environment: environment) }

    private func waitFor(_ what: String, seconds: Double, _ done: () -> Bool) throws {
        let giveUp = Date().addingTimeInterval(seconds)
        while !done() {
            guard Date() < giveUp else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the private PipeWire server: \(what)"]) }
            usleep(50_000)
        }
    }

    /// Runs `pw-cli ARGS` against this server; its exit status.
    @discardableResult
    private func pwCLI(_ arguments: [String]) throws -> Int32 {
        let pid = try spawn([try Self.executable("pw-cli"), "-r", socket] + arguments)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return status
    }

    /// Starts pipewire, then wireplumber, then makes the sink; waits (at most 10 s each) until
    /// the server answers and the sink exists.
    public func start() throws {
        if busPID == nil {
            busPID = try spawn([try Self.executable("dbus-daemon"), "--session", "--nofork", "--address=unix:path=\(bus)"])
            try waitFor("its D-Bus did not start", seconds: 10) { FileManager.default.fileExists(atPath: bus) }
        }
        pids.append(try spawn([try Self.executable("pipewire")]))
        try waitFor("did not answer", seconds: 10) { FileManager.default.fileExists(atPath: socket) && (try? pwCLI(["info", "0"])) == 0 }
        pids.append(try spawn([try Self.executable("wireplumber")]))
        let node = "{ factory.name=support.null-audio-sink node.name=\(sink) media.class=Audio/Sink object.linger=true "
            + "audio.position=[FL FR] audio.rate=48000 }"
        try waitFor("would not make the sink", seconds: 10) { (try? pwCLI(["create-node", "adapter", node])) == 0 }
    }

    /// Kills the server and its session manager at once (SIGKILL: a crash) and waits for them.
    public func kill() {
        for pid in pids.reversed() { Glibc.kill(pid, SIGKILL) }
        for pid in pids {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
        pids = []
        try? FileManager.default.removeItem(atPath: socket)
        try? FileManager.default.removeItem(atPath: socket + ".lock")
    }

    deinit {
        kill()
        if let busPID {
            Glibc.kill(busPID, SIGKILL)
            var status: Int32 = 0
            while waitpid(busPID, &status, 0) < 0, errno == EINTR {}
        }
        try? FileManager.default.removeItem(at: folder)
    }
}
