import Foundation
import Glibc

/// A private PipeWire server of a test's own: `pipewire` and `wireplumber` (its session manager,
/// which links streams to sinks, on a session D-Bus of its own) in a runtime folder of their own,
/// `pipewire-pulse` too when asked (as desktops run it), and one null sink `private` made with
/// `pw-cli`, so that the test can kill the server and start it again without touching the server
/// other tests use. Clients reach it with `PIPEWIRE_REMOTE` = `socket`, and through the PulseAudio
/// protocol at `pulseSocket`. Each process is ended by its PID.
public final class PrivatePipeWireServer {
    /// The server's own runtime folder (0700), removed with the server.
    public let folder: URL
    /// The server's socket, for `PIPEWIRE_REMOTE`.
    public var socket: String { folder.appendingPathComponent("pipewire-0").path }
    /// pipewire-pulse's socket (when started with it), for `PULSE_SERVER=unix:...`.
    public var pulseSocket: String { folder.appendingPathComponent("pulse/native").path }
    /// The null sink's node name.
    public let sink = "private"
    /// Whether `start` starts pipewire-pulse as well.
    public let withPulse: Bool
    private var pids: [pid_t] = []
    private var bus: String { folder.appendingPathComponent("bus").path }
    private var busPID: pid_t?

    /// Makes the folder; the server starts with `start()`, with pipewire-pulse when `withPulse`.
    public init(withPulse: Bool = false) throws {
        self.withPulse = withPulse
        folder = URL(fileURLWithPath: "/tmp/hapsync-pipewire-\(UUID().uuidString.prefix(8))")
        // pipewire-pulse stats its folder, then makes it and fails if a client made it between:
        // made here first, 0700 as both expect (as .ci/with-pipewire does).
        for sub in ["", "state", "config", "pulse"] {
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

    /// Runs the tool `name` with `arguments` against this server; its exit status.
    @discardableResult
    private func runTool(_ name: String, _ arguments: [String]) throws -> Int32 {
        let pid = try spawn([try Self.executable(name)] + arguments)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return status
    }

    /// Runs `pw-cli ARGS` against this server; its exit status.
    @discardableResult
    private func pwCLI(_ arguments: [String]) throws -> Int32 { try runTool("pw-cli", ["-r", socket] + arguments) }

    /// Starts pipewire, then wireplumber (and pipewire-pulse), then makes the sink; waits (at most
    /// 10 s each) until the server answers, the sink exists and pipewire-pulse sees it.
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
        guard withPulse else { return }
        pids.append(try spawn([try Self.executable("pipewire-pulse")]))
        try waitFor("pipewire-pulse did not show the sink", seconds: 10) {
            (try? runTool("pactl", ["--server=unix:\(pulseSocket)", "get-sink-volume", sink])) == 0
        }
    }

    /// Kills the server, its session manager and pipewire-pulse at once (SIGKILL: a crash) and
    /// waits for them.
    public func kill() {
        for pid in pids.reversed() { Glibc.kill(pid, SIGKILL) }
        for pid in pids {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
        pids = []
        for path in [socket, socket + ".lock", pulseSocket] { try? FileManager.default.removeItem(atPath: path) }
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
