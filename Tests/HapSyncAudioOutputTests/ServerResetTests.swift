import Foundation
import Glibc
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Synchronization
import Testing

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
