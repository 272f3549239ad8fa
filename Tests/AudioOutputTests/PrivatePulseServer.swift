import AudioOutput
import Foundation
import Glibc

/// A private PulseAudio server of a test's own (its own socket and runtime folder, one null sink), so
/// it can be killed and started again, or played to, without touching the server other tests use
/// (the sync test records that server's monitor). Ended by its PID.
final class PrivatePulseServer {
    let folder: URL
    var socket: String { folder.appendingPathComponent("native").path }
    private var process: Process?

    init() throws {
        folder = URL(fileURLWithPath: "/tmp/hapsync-pulse-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Starts the server and waits (at most 10 s) until it answers.
    func start() throws {
        guard let exe = ["/usr/bin/pulseaudio", "/usr/local/bin/pulseaudio"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "pulseaudio is not installed (bash .ci/install-deps)"])
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = ["-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
                       "-L", "module-null-sink sink_name=private rate=48000 format=float32le channels=2",
                       "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socket)"]
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = folder.path
        env["HOME"] = folder.path
        // Not the process under test: .ci/rt-alloc-check's malloc counter stays out of it.
        env["LD_PRELOAD"] = nil
        p.environment = env
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        let probe = PulseAudioOutput(configuration: .init(server: "unix:\(socket)"))
        let giveUp = Date().addingTimeInterval(10)
        while !probe.canConnect() {
            guard Date() < giveUp else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the private server did not answer"]) }
            usleep(50_000)
        }
    }

    /// Kills the server at once (SIGKILL: a crash, not a goodbye) and waits for it.
    func kill() {
        guard let p = process else { return }
        Glibc.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }
}
