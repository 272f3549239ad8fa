import CoreHaptics
import Foundation
import HapSyncTestSupport
import Testing

/// Apple's pattern for a reset: the reset handler restarts the engine. Here the audio server is a
/// private PulseAudio server killed and started again.
@Suite("CoreHaptics: stopped and reset handlers", .serialized)
struct CoreHapticsResetTests {
    @Test func theResetHandlerRestartsTheEngine() async throws {
        let server = try PrivatePulseServer()
        try server.start()
        let traceFolder = try TemporaryDirectory("ch-reset")
        defer { traceFolder.remove() }
        let trace = traceFolder.file("ch-reset.jsonl")
        let engine = try CHHapticEngine(environment: ["HAPSYNC_HAPTICS": "trace:\(trace.path)", "PULSE_SERVER": "unix:\(server.socket)",
                                                      "HAPSYNC_SINK": "private"])
        let stopped = AsyncStream<CHHapticEngine.StoppedReason>.makeStream()
        let reset = AsyncStream<Void>.makeStream()
        engine.stoppedHandler = { reason in stopped.continuation.yield(reason) }
        engine.resetHandler = {
            do { try engine.start() } catch { Issue.record("restart failed: \(error)") }
            reset.continuation.yield()
        }
        try await engine.start()
        server.kill()
        for await reason in stopped.stream {
            #expect(reason == .audioSessionInterrupt, "the audio server went away")
            break
        }
        try server.start()
        for await _ in reset.stream { break }   // the engine looks for the server once a second
        // Players made after the reset play.
        let pattern = try CHHapticPattern(events: [CHHapticEvent(eventType: .hapticTransient, parameters: [], relativeTime: 0)], parameters: [])
        let player = try engine.makeAdvancedPlayer(with: pattern)
        let done = AsyncStream<Error?>.makeStream()
        player.completionHandler = { done.continuation.yield($0) }
        try player.start(atTime: CHHapticTimeImmediate)
        for await error in done.stream {
            #expect(error == nil)
            break
        }
        try await engine.stop()
        let text = (try? String(contentsOf: trace, encoding: .utf8)) ?? ""
        #expect(text.contains("\"kind\":\"transient\""), "\(text)")
    }
}
