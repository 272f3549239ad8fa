import CoreHaptics
import Foundation
import HapSyncTestSupport
import Testing

/// Core Haptics engine code as Apple's documentation writes it, run against a trace
/// (HAPSYNC_HAPTICS=trace:PATH, HAPSYNC_AUDIO=none).
@Suite("CoreHaptics: engine and players", .serialized)
struct CoreHapticsEngineTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory
    var trace: URL { scratch.file("t.jsonl") }

    init() throws {
        scratch = try TemporaryDirectory("ch")
    }

    private func makeEngine() throws -> CHHapticEngine {
        try CHHapticEngine(environment: ["HAPSYNC_HAPTICS": "trace:\(trace.path)", "HAPSYNC_AUDIO": "none"])
    }

    private func records() -> [String] {
        ((try? String(contentsOf: trace, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Apple's "Updating Continuous and Transient Haptic Parameters in Real Time", cut down: a
    /// continuous player changed by sendParameters and a curve, stopped and reset handlers that
    /// restart the engine, and `try await engine.start()`.
    @Test func continuousPlayerWithParametersAndCurves() async throws {
        defer { try? FileManager.default.removeItem(at: trace) }
        let engine = try makeEngine()
        engine.stoppedHandler = { reason in
            print("The engine stopped: \(reason)")
        }
        engine.resetHandler = { [weak engine] in
            do { try engine?.start() } catch { print("Failed to restart the engine: \(error)") }
        }
        try await engine.start()

        let intensity = CHHapticEventParameter(parameterID: .hapticIntensity, value: 1)
        let sharpness = CHHapticEventParameter(parameterID: .hapticSharpness, value: 0.5)
        let continuousEvent = CHHapticEvent(eventType: .hapticContinuous, parameters: [intensity, sharpness], relativeTime: 0, duration: 0.3)
        let pattern = try CHHapticPattern(events: [continuousEvent], parameters: [])
        let continuousPlayer = try engine.makeAdvancedPlayer(with: pattern)
        let finished = AsyncStream<Error?>.makeStream()
        continuousPlayer.completionHandler = { error in finished.continuation.yield(error) }
        try continuousPlayer.start(atTime: CHHapticTimeImmediate)

        let intensityParameter = CHHapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5, relativeTime: 0)
        try continuousPlayer.sendParameters([intensityParameter], atTime: 0)
        let points = [CHHapticParameterCurve.ControlPoint(relativeTime: 0, value: 0.5),
                      CHHapticParameterCurve.ControlPoint(relativeTime: 0.1, value: 1)]
        let curve = CHHapticParameterCurve(parameterID: .hapticSharpnessControl, controlPoints: points, relativeTime: 0)
        try continuousPlayer.scheduleParameterCurve(curve, atTime: CHHapticTimeImmediate)

        for await error in finished.stream {
            #expect(error == nil, "it played to its end")
            break
        }
        try await engine.stop()
        let levels = records().filter { $0.contains("\"kind\":\"level\"") }
        #expect(levels.count >= 2, "\(records())")
        #expect(records().last?.contains("stop-all") == true, "the trace is whole once stop returns")
    }

    /// An advanced player that loops, pauses, seeks and resumes; a transient from a dictionary;
    /// notifyWhenPlayersFinished stopping the engine.
    @Test func advancedPlayerAndFinishedHandler() async throws {
        defer { try? FileManager.default.removeItem(at: trace) }
        let engine = try makeEngine()
        try await engine.start()
        let pattern = try CHHapticPattern(dictionary: [
            .pattern: [[CHHapticPattern.Key.event: [CHHapticPattern.Key.eventType: CHHapticEvent.EventType.hapticTransient,
                                                    CHHapticPattern.Key.time: 0.0]],
                       [CHHapticPattern.Key.event: [CHHapticPattern.Key.eventType: CHHapticEvent.EventType.hapticTransient,
                                                    CHHapticPattern.Key.time: 0.05]]],
        ])
        let player = try engine.makeAdvancedPlayer(with: pattern)
        player.loopEnabled = true
        player.playbackRate = 2
        #expect(player.playbackRate == 2)
        try player.start(atTime: CHHapticTimeImmediate)
        try player.pause(atTime: engine.currentTime + 0.1)
        try player.seek(toOffset: 0.04)
        try player.resume(atTime: engine.currentTime + 0.15)
        try player.stop(atTime: engine.currentTime + 0.3)     // was lost behind the pause: the loop never ended

        let stopped = AsyncStream<CHHapticEngine.StoppedReason>.makeStream()
        engine.stoppedHandler = { reason in stopped.continuation.yield(reason) }
        engine.notifyWhenPlayersFinished { _ in .stopEngine }
        for await reason in stopped.stream {
            #expect(reason == .notifyWhenFinished && reason.rawValue == 4)
            break
        }
        #expect(records().filter { $0.contains("\"kind\":\"transient\"") }.count >= 3, "looped: \(records())")
    }

    /// Audio resources by ID, capabilities, mutes and errors with Apple's codes.
    @Test func resourcesCapabilitiesAndErrors() throws {
        defer { try? FileManager.default.removeItem(at: trace) }
        let engine = try makeEngine()
        let wav = TestFiles.conformance.appendingPathComponent("StreamingAssets/CoreHaptics/Ricochet/Implode.wav")
        try #require(FileManager.default.fileExists(atPath: wav.path), "../shared/conformance is beside the checkout")
        let id = try engine.registerAudioResource(wav)
        let audio = CHHapticEvent(audioResourceID: id, parameters: [], relativeTime: 0)
        let tap = CHHapticEvent(eventType: .hapticTransient, parameters: [], relativeTime: 0)
        _ = try engine.makePlayer(with: try CHHapticPattern(events: [audio, tap], parameters: []))
        // Options as Apple's code passes them (what they do: AudioResourceOptionsTests).
        _ = try engine.registerAudioResource(wav, options: [CHHapticAudioResourceKeyLoopEnabled: true,
                                                            CHHapticAudioResourceKeyUseVolumeEnvelope: false])
        try engine.unregisterAudioResource(id)
        #expect(throws: CHHapticError.self) { _ = try engine.makePlayer(with: try CHHapticPattern(events: [audio], parameters: [])) }
        #expect(throws: CHHapticError.self) { _ = try engine.registerAudioResource(URL(fileURLWithPath: "/nonexistent.wav")) }

        engine.isMutedForHaptics = true
        #expect(engine.isMutedForHaptics && engine.hapSyncEngine.isMutedForHaptics)
        engine.isMutedForHaptics = false
        engine.playsAudioOnly = true
        #expect(engine.hapSyncEngine.isMutedForHaptics, "audio only silences haptics")
        engine.playsAudioOnly = false
        engine.isAutoShutdownEnabled = true
        #expect(engine.isAutoShutdownEnabled && engine.hapSyncEngine.idleTimeout == CHHapticEngine.autoShutdownTimeout)

        let capability = CHHapticEngine.capabilitiesForHardware()
        let attributes = try capability.attributes(forEventParameter: .hapticSharpness, eventType: .hapticTransient)
        #expect(attributes.minValue == 0 && attributes.maxValue == 1 && attributes.defaultValue == 0.5)
        let pan = try capability.attributes(forDynamicParameter: .audioPanControl)
        #expect(pan.minValue == -1 && pan.maxValue == 1 && pan.defaultValue == 0)

        do {
            try engine.playPattern(from: URL(fileURLWithPath: "/nonexistent/pattern.ahap"))
            Issue.record("a missing file must not play")
        } catch let error as CHHapticError {
            #expect(error.code == .fileNotFound, "\(error)")
        }
        #expect(throws: CHHapticError.self) {
            _ = try CHHapticEngine(environment: ["HAPSYNC_HAPTICS": "none", "HAPSYNC_AUDIO": "alsa"])
        }
    }
}
