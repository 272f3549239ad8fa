import Foundation
import HapSyncAHAP
import HapSyncHapticOutput
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// The `async` forms: start, wait for players, stop and know the trace is written, also when a
/// handler stopped the engine.
@Suite("Engine async API")
struct AsyncEngineTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory

    init() throws {
        scratch = try TemporaryDirectory("async")
    }

    private func tracePath() -> String { scratch.file("t.jsonl").path }

    private func lines(_ path: String) -> [Substring] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    @Test func startPlayWaitAndStop() async throws {
        let path = tracePath()
        let engine = try HapticEngine(configuration: .init(backend: TraceBackend(path: path)))
        try await engine.start()
        let pattern = try AHAPPatternBuilder().transient(at: 0).transient(at: 0.05, intensity: 0.5).build()
        let player = try engine.makePlayer(with: pattern)
        try player.start(atTime: HapticEngine.timeImmediate)
        await engine.playersFinished()
        #expect(engine.isRunning, "waiting for players leaves the engine running")
        let error = await engine.stop()
        #expect(error == nil)
        let written = lines(path)
        #expect(written.filter { $0.contains("\"kind\":\"transient\"") }.count == 2, "\(written)")
        #expect(written.last?.contains("\"kind\":\"stop-all\"") == true, "the trace is whole when stop returns")
        await engine.playersFinished()   // not running: returns at once
    }

    /// A stop begun in a completion handler finishes on a helper thread; `stopped()` waits for it.
    @Test func aStopBegunByAHandlerCanBeAwaited() async throws {
        let path = tracePath()
        let engine = try HapticEngine(configuration: .init(backend: TraceBackend(path: path)))
        try await engine.start()
        let player = try engine.makePlayer(with: try AHAPPatternBuilder().transient(at: 0).build())
        let handlerRan = AsyncStream<Void>.makeStream()
        player.completionHandler = { _ in
            engine.stop()   // on the notifier thread: finishes on a helper
            handlerRan.continuation.yield()
        }
        try player.start(atTime: HapticEngine.timeImmediate)
        for await _ in handlerRan.stream { break }
        #expect(await engine.stopped() == nil)
        #expect(!engine.isRunning)
        #expect(lines(path).last?.contains("\"kind\":\"stop-all\"") == true, "the trace is whole once stopped() returns")
    }

    /// What a trace could not write is what `stop()` returns.
    @Test func stopReturnsTheTracesWriteError() async throws {
        let engine = try HapticEngine(configuration: .init(backend: TraceBackend(path: "/dev/full")))
        try await engine.start()
        let player = try engine.makePlayer(with: try AHAPPatternBuilder().transient(at: 0).build())
        try player.start(atTime: HapticEngine.timeImmediate)
        await engine.playersFinished()
        let error = await engine.stop()
        #expect(error.map { "\($0)" }?.contains("No space left on device") == true, "\(String(describing: error))")
        #expect(await engine.stopped().map { "\($0)" } == error.map { "\($0)" })
    }
}
