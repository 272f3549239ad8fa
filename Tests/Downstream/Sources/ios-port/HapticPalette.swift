import CoreHaptics
import Foundation

// From Apple's sample "Updating Continuous and Transient Haptic Parameters in Real Time"
// (HapticPalette), the Core Haptics parts unchanged; UIKit views and touch handling left out.
final class HapticPalette {
    var engine: CHHapticEngine!
    var continuousPlayer: CHHapticAdvancedPatternPlayer!
    let initialIntensity: Float = 1.0
    let initialSharpness: Float = 0.5
    var supportsHaptics: Bool = false

    init() {
        // Check if the device supports haptics.
        let hapticCapability = CHHapticEngine.capabilitiesForHardware()
        supportsHaptics = hapticCapability.supportsHaptics
    }

    /// - Tag: CreateAndStartEngine
    func createAndStartHapticEngine() {
        // Create and configure a haptic engine.
        do {
            engine = try CHHapticEngine()
        } catch let error {
            fatalError("Engine Creation Error: \(error)")
        }

        // Mute audio to reduce latency for collision haptics.
        engine.playsHapticsOnly = true

        // The stopped handler alerts you of engine stoppage.
        engine.stoppedHandler = { reason in
            print("Stop Handler: The engine stopped for reason: \(reason.rawValue)")
            switch reason {
            case .audioSessionInterrupt:
                print("Audio session interrupt")
            case .applicationSuspended:
                print("Application suspended")
            case .idleTimeout:
                print("Idle timeout")
            case .systemError:
                print("System error")
            case .notifyWhenFinished:
                print("Playback finished")
            case .gameControllerDisconnect:
                print("Controller disconnected.")
            case .engineDestroyed:
                print("Engine destroyed.")
            @unknown default:
                print("Unknown error")
            }
        }

        // The reset handler provides an opportunity to restart the engine.
        engine.resetHandler = {
            print("Reset Handler: Restarting the engine.")
            do {
                // Try restarting the engine.
                try self.engine.start()
                // Recreate the continuous player.
                self.createContinuousHapticPlayer()
            } catch {
                print("Failed to start the engine")
            }
        }

        // Start the haptic engine for the first time.
        do {
            try self.engine.start()
        } catch {
            print("Failed to start the engine: \(error)")
        }
    }

    /// - Tag: CreateContinuousPattern
    func createContinuousHapticPlayer() {
        // Create an intensity parameter:
        let intensity = CHHapticEventParameter(parameterID: .hapticIntensity,
                                               value: initialIntensity)

        // Create a sharpness parameter:
        let sharpness = CHHapticEventParameter(parameterID: .hapticSharpness,
                                               value: initialSharpness)

        // Create a continuous event with a long duration from the parameters.
        let continuousEvent = CHHapticEvent(eventType: .hapticContinuous,
                                            parameters: [intensity, sharpness],
                                            relativeTime: 0,
                                            duration: 100)

        do {
            // Create a pattern from the continuous haptic event.
            let pattern = try CHHapticPattern(events: [continuousEvent], parameters: [])

            // Create a player from the continuous haptic pattern.
            continuousPlayer = try engine.makeAdvancedPlayer(with: pattern)

        } catch let error {
            print("Pattern Player Creation Error: \(error)")
        }

        continuousPlayer.completionHandler = { _ in
            print("Continuous player finished")
        }
    }

    /// - Tag: PlayTransientPattern
    func playHapticTransient(time: TimeInterval,
                             intensity: Float,
                             sharpness: Float) {

        // Abort if the device doesn't support haptics.
        if !supportsHaptics {
            return
        }

        // Create an event (static) parameter to represent the haptic's intensity.
        let intensityParameter = CHHapticEventParameter(parameterID: .hapticIntensity,
                                                        value: intensity)

        // Create an event (static) parameter to represent the haptic's sharpness.
        let sharpnessParameter = CHHapticEventParameter(parameterID: .hapticSharpness,
                                                        value: sharpness)

        // Create an event to represent the transient haptic pattern.
        let event = CHHapticEvent(eventType: .hapticTransient,
                                  parameters: [intensityParameter, sharpnessParameter],
                                  relativeTime: 0)

        // Create a pattern from the haptic event.
        do {
            let pattern = try CHHapticPattern(events: [event], parameters: [])

            // Create a player to play the haptic pattern.
            let player = try engine.makePlayer(with: pattern)
            try player.start(atTime: CHHapticTimeImmediate) // Play now.
        } catch let error {
            print("Error creating a haptic transient pattern: \(error)")
        }
    }

    /// - Tag: SendDynamicParameters
    func updateContinuous(dynamicIntensity: Float, dynamicSharpness: Float) {
        // Create dynamic parameters for the updated intensity & sharpness.
        let intensityParameter = CHHapticDynamicParameter(parameterID: .hapticIntensityControl,
                                                          value: dynamicIntensity,
                                                          relativeTime: 0)

        let sharpnessParameter = CHHapticDynamicParameter(parameterID: .hapticSharpnessControl,
                                                          value: dynamicSharpness,
                                                          relativeTime: 0)

        // Send dynamic parameters to the haptic player.
        do {
            try continuousPlayer.sendParameters([intensityParameter, sharpnessParameter],
                                                atTime: 0)
        } catch let error {
            print("Dynamic Parameter Error: \(error)")
        }
    }

    func startContinuous() {
        do {
            // Begin playing continuous pattern.
            try continuousPlayer.start(atTime: CHHapticTimeImmediate)
        } catch let error {
            print("Error starting the continuous haptic player: \(error)")
        }
    }

    func stopContinuous() {
        // Stop playing the haptic pattern.
        do {
            try continuousPlayer.stop(atTime: CHHapticTimeImmediate)
        } catch let error {
            print("Error stopping the continuous haptic player: \(error)")
        }
    }
}
