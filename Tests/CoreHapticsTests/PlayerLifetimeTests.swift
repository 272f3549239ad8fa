import CoreHaptics
import Foundation
import HapSyncTestSupport
import Testing

/// As in Core Haptics, the engine keeps a started player: Apple's samples start a player made in
/// a function and let it go at once. It is let go when its run ends or the engine stops.
@Suite("CoreHaptics: player lifetime", .serialized)
struct PlayerLifetimeTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory
    var trace: URL { scratch.file("t.jsonl") }

    init() throws {
        scratch = try TemporaryDirectory("ch-life")
    }

    private func records() -> [String] {
        ((try? String(contentsOf: trace, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Apple's playHapticTransient: the player is a local of a function that has returned.
    private func playHapticTransient(_ engine: CHHapticEngine) throws {
        let event = CHHapticEvent(eventType: .hapticTransient, parameters: [], relativeTime: 0.05)
        let pattern = try CHHapticPattern(events: [event], parameters: [])
        let player = try engine.makePlayer(with: pattern)
        try player.start(atTime: CHHapticTimeImmediate)
    }

    @Test func aStartedPlayerPlaysOnWhenLetGoAndIsReleasedAtItsEnd() async throws {
        defer { try? FileManager.default.removeItem(at: trace) }
        let engine = try CHHapticEngine(environment: ["HAPSYNC_HAPTICS": "trace:\(trace.path)", "HAPSYNC_AUDIO": "none"])
        try await engine.start()
        try playHapticTransient(engine)

        // A looping player, dropped while it plays, then another dropped while paused.
        weak var looping: AnyObject?
        weak var paused: AnyObject?
        do {
            let pattern = try CHHapticPattern(events: [CHHapticEvent(eventType: .hapticTransient, parameters: [], relativeTime: 0)], parameters: [])
            let a = try engine.makeAdvancedPlayer(with: pattern)
            a.loopEnabled = true
            a.loopEnd = 0.1
            try a.start(atTime: CHHapticTimeImmediate)
            try a.stop(atTime: engine.currentTime + 0.35)
            looping = a
            let b = try engine.makeAdvancedPlayer(with: pattern)
            try b.start(atTime: CHHapticTimeImmediate)
            try b.pause(atTime: CHHapticTimeImmediate)
            paused = b
        }
        let finished = AsyncStream<Void>.makeStream()
        engine.notifyWhenPlayersFinished { _ in
            finished.continuation.yield()
            return .leaveEngineRunning
        }
        for await _ in finished.stream { break }
        #expect(looping == nil, "a player whose run ended is let go")
        #expect(paused != nil, "a paused player is kept while the engine runs")
        // One paused and then stopped: its run ends, and it is let go.
        weak var stopped: AnyObject?
        do {
            let pattern = try CHHapticPattern(events: [CHHapticEvent(eventType: .hapticTransient, parameters: [], relativeTime: 0)], parameters: [])
            let c = try engine.makeAdvancedPlayer(with: pattern)
            let ended = AsyncStream<Void>.makeStream()
            c.completionHandler = { _ in ended.continuation.yield() }
            try c.start(atTime: CHHapticTimeImmediate)
            try c.pause(atTime: CHHapticTimeImmediate)
            try await Task.sleep(nanoseconds: 100_000_000)
            try c.stop(atTime: CHHapticTimeImmediate)
            stopped = c
            for await _ in ended.stream { break }
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(stopped == nil, "a paused player that is stopped is let go")
        try await engine.stop()
        #expect(paused == nil, "the engine's stop lets every player go")
        let taps = records().filter { $0.contains("\"kind\":\"transient\"") }.count
        #expect(taps >= 4, "the dropped transient and the dropped loop played: \(records())")
    }
}
