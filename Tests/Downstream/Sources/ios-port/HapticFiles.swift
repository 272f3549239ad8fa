import CoreHaptics
import Foundation

// From Apple's "Playing a Custom Haptic Pattern from a File" and "Playing Collision-Based Haptic
// Patterns" (HapticBounce, HapticRicochet), the Core Haptics parts unchanged: an AHAP file from
// the main bundle, an audio resource registered by URL and played by an AudioCustom event, an
// advanced player that loops, and the engine started with `async`.
final class HapticFiles {
    var engine: CHHapticEngine!
    var supportsHaptics: Bool = false

    init() throws {
        supportsHaptics = CHHapticEngine.capabilitiesForHardware().supportsHaptics
        engine = try CHHapticEngine()
    }

    func playHapticsFile(named filename: String) {
        // If the device doesn't support Core Haptics, abort.
        if !supportsHaptics {
            return
        }

        // Express the path to the AHAP file before attempting to load it.
        guard let path = Bundle.main.path(forResource: filename, ofType: "ahap") else {
            print("No \(filename).ahap in the main bundle")
            return
        }

        do {
            // Start the engine in case it's idle.
            try engine.start()

            // Tell the engine to play a pattern.
            try engine.playPattern(from: URL(fileURLWithPath: path))

        } catch { // Engine startup errors
            print("An error occurred playing \(filename): \(error).")
        }
    }

    func registerImplode() -> CHHapticAudioResourceID? {
        guard let path = Bundle.main.path(forResource: "Implode", ofType: "wav") else {
            print("No Implode.wav in the main bundle")
            return nil
        }
        do {
            return try engine.registerAudioResource(URL(fileURLWithPath: path),
                                                    options: [CHHapticAudioResourceKeyUseVolumeEnvelope: true])
        } catch {
            print("Audio resource error: \(error)")
            return nil
        }
    }

    func playCollision(with audioResource: CHHapticAudioResourceID, magnitude: Float) throws {
        let sharpness = CHHapticEventParameter(parameterID: .hapticSharpness, value: 0.5)
        let intensity = CHHapticEventParameter(parameterID: .hapticIntensity, value: magnitude)
        let volume = CHHapticEventParameter(parameterID: .audioVolume, value: magnitude)
        let transient = CHHapticEvent(eventType: .hapticTransient, parameters: [intensity, sharpness], relativeTime: 0)
        let audio = CHHapticEvent(audioResourceID: audioResource, parameters: [volume], relativeTime: 0)
        let pattern = try CHHapticPattern(events: [transient, audio], parameters: [])
        let player = try engine.makePlayer(with: pattern)
        try player.start(atTime: CHHapticTimeImmediate)
    }

    func playLoopingHeartbeat() async throws {
        try await engine.start()
        let pattern = try CHHapticPattern(dictionary: [
            CHHapticPattern.Key.pattern: [
                [CHHapticPattern.Key.event: [CHHapticPattern.Key.eventType: CHHapticEvent.EventType.hapticTransient,
                                             CHHapticPattern.Key.time: 0.0,
                                             CHHapticPattern.Key.eventParameters: [
                                                [CHHapticPattern.Key.parameterID: CHHapticEvent.ParameterID.hapticIntensity,
                                                 CHHapticPattern.Key.parameterValue: 1.0]]]],
                [CHHapticPattern.Key.event: [CHHapticPattern.Key.eventType: CHHapticEvent.EventType.hapticContinuous,
                                             CHHapticPattern.Key.time: 0.1,
                                             CHHapticPattern.Key.eventDuration: 0.15]],
                [CHHapticPattern.Key.parameterCurve: [
                    CHHapticPattern.Key.parameterID: CHHapticDynamicParameter.ID.hapticIntensityControl,
                    CHHapticPattern.Key.time: 0.1,
                    CHHapticPattern.Key.parameterCurveControlPoints: [
                        [CHHapticPattern.Key.time: 0.0, CHHapticPattern.Key.parameterValue: 1.0],
                        [CHHapticPattern.Key.time: 0.15, CHHapticPattern.Key.parameterValue: 0.2]]]],
            ]
        ])
        let player = try engine.makeAdvancedPlayer(with: pattern)
        player.loopEnabled = true
        player.loopEnd = 0.4
        try player.start(atTime: CHHapticTimeImmediate)
        try player.pause(atTime: engine.currentTime + 0.5)
        try player.seek(toOffset: 0.1)
        try player.resume(atTime: engine.currentTime + 0.6)
        // 1.1 s: well before the wrap at 1.2 s (a stop at that very moment would race the wrap's
        // tap by however long the seek took to reach the scheduler).
        try player.stop(atTime: engine.currentTime + 1.1)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            player.completionHandler = { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }
}
