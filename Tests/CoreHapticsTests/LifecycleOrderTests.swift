import CoreHaptics
import Foundation
import HapSyncTestSupport
import Testing

/// Starts and stops act in the order they were called (issue 26: `stop(completionHandler: nil)`
/// followed at once by `try start()` left the engine stopped in 10 of 20 runs), and only file
/// URLs are files.
@Suite("CoreHaptics: start and stop in call order; file URLs only", .serialized)
struct LifecycleOrderTests {
    private func makeEngine() throws -> CHHapticEngine {
        try CHHapticEngine(environment: ["HAPSYNC_HAPTICS": "none", "HAPSYNC_AUDIO": "none"])
    }

    private func tap() throws -> CHHapticPattern {
        try CHHapticPattern(events: [CHHapticEvent(eventType: .hapticTransient, parameters: [], relativeTime: 0)], parameters: [])
    }

    /// 20 rounds of stop(completionHandler: nil) then start() at once: the later start wins every
    /// time. A pause after the start lets a stop still queued behind it land (it would have, at
    /// any point, before the fix); the check itself waits for nothing.
    @Test func aStartAfterAStopWins() throws {
        let engine = try makeEngine()
        try engine.start()
        for round in 0..<20 {
            engine.stop(completionHandler: nil)
            try engine.start()
            Thread.sleep(forTimeInterval: 0.02)
            #expect(engine.hapSyncEngine.isRunning, "round \(round): the engine was stopped after the later start")
            let player = try engine.makePlayer(with: try tap())
            #expect(throws: Never.self, "round \(round)") { try player.start(atTime: CHHapticTimeImmediate) }
        }
        engine.stop(completionHandler: nil)
    }

    /// The same with both calls taking handlers, and the other order: a stop after a start wins.
    @Test func handlersRunInCallOrder() async throws {
        let engine = try makeEngine()
        let order = AsyncStream<String>.makeStream()
        engine.start { _ in order.continuation.yield("start 1") }
        engine.stop { _ in order.continuation.yield("stop") }
        engine.start { _ in order.continuation.yield("start 2") }
        var seen: [String] = []
        for await event in order.stream {
            seen.append(event)
            if seen.count == 3 { break }
        }
        #expect(Set(seen) == ["start 1", "stop", "start 2"])
        #expect(engine.hapSyncEngine.isRunning, "the last call was a start: \(seen)")
        try await engine.start()
        engine.stop(completionHandler: nil)
        try await engine.start()
        try await engine.stop()
        #expect(!engine.hapSyncEngine.isRunning, "the last call was a stop")
    }

    /// A URL of another scheme whose path names a real local AHAP file is not read as that file.
    @Test func onlyFileURLsAreRead() throws {
        let folder = try TemporaryDirectory("url")
        defer { folder.remove() }
        let local = folder.file("url.ahap")
        try Data(#"{"Version": 1, "Pattern": [{"Event": {"Time": 0, "EventType": "HapticTransient"}}]}"#.utf8).write(to: local)
        #expect((try? CHHapticPattern(contentsOf: local)) != nil, "the file itself reads")
        let remote = try #require(URL(string: "http://example.invalid\(local.path)"))
        do {
            _ = try CHHapticPattern(contentsOf: remote)
            Issue.record("read \(remote) as the local file \(local.path)")
        } catch let error as CHHapticError {
            #expect(error.code == .fileNotFound, "\(error)")
            #expect("\(error)".contains("http://example.invalid"), "\(error)")
        }
        let engine = try makeEngine()
        try engine.start()
        #expect(throws: CHHapticError.self) { try engine.playPattern(from: remote) }
        engine.stop(completionHandler: nil)
    }
}
