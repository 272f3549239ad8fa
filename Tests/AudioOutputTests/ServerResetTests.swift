import AHAP
import AudioOutput
import Foundation
import Glibc
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Synchronization
import Testing

/// A private PulseAudio server of this test's own (its own socket and runtime folder), so it can be
/// killed and started again without touching the server other tests use. Ended by its PID.
final class PrivatePulseServer {
    let folder: URL
    var socket: String { folder.appendingPathComponent("native").path }
    private var process: Process?

    init() throws {
        folder = URL(fileURLWithPath: "/tmp/hapsync-reset-\(UUID().uuidString.prefix(8))")
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
                       "-L", "module-null-sink sink_name=reset rate=48000 format=float32le channels=2",
                       "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socket)"]
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = folder.path
        env["HOME"] = folder.path
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

@Suite("Audio server lost and back (private PulseAudio server)", .serialized)
struct ServerResetTests {
    @Test func engineResetsWhenTheServerComesBack() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let audio = PulseAudioOutput(configuration: .init(server: "unix:\(server.socket)"))
        let haptics = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: haptics, lockMemory: false, audio: audio))
        let reasons = Locked<[HapticEngine.StoppedReason]>([])
        let lost = DispatchSemaphore(value: 0), reset = DispatchSemaphore(value: 0)
        engine.stoppedHandler = { r in
            reasons.withLock { $0.append(r) }
            if case .audioServerLost = r { lost.signal() }
        }
        engine.resetHandler = { reset.signal() }
        try engine.start()
        defer { engine.stop() }
        let pattern = try AHAPPatternBuilder().audioContinuous(at: 0, duration: 0.2).transient(at: 0.1).build()

        server.kill()
        #expect(lost.wait(timeout: .now() + 30) == .success, "the engine noticed the server going away")
        #expect(engine.isRunning, "haptics go on without the server")
        try server.start()
        // The watcher looks once a second; this deadline only bounds a broken run.
        #expect(reset.wait(timeout: .now() + 60) == .success, "reset handler after the server came back")
        #expect(engine.isRunning)

        // Audio plays again: a new player follows the new stream's clock.
        let player = try engine.makePlayer(with: pattern)
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: engine.currentTime + 0.1)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(player.audioStartFrame != nil, "the player followed the reconnected audio clock")
        #expect(haptics.entries.contains { $0.command.kind == .transient })
        #expect(reasons.withLock { $0 }.count == 1)
    }
}
