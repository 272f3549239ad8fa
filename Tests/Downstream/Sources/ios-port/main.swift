import CoreHaptics
import Foundation

// The Linux side of the port (not Apple's code): runs the Apple code of HapticPalette.swift and
// HapticFiles.swift in order (or one of them) and stops the engines, so that the trace or the pad holds it all.
// The outputs come from the environment (HAPSYNC_HAPTICS, HAPSYNC_AUDIO, HAPSYNC_TRACE); the AHAP
// and WAV files the Apple code asks the main bundle for lie beside the executable.

func pause(_ seconds: Double) { Thread.sleep(forTimeInterval: seconds) }

func runPalette() async throws {
    let palette = HapticPalette()
    guard palette.supportsHaptics else {
        print("ios-port: no haptic output (set HAPSYNC_HAPTICS)")
        exit(1)
    }
    palette.createAndStartHapticEngine()
    palette.playHapticTransient(time: 0, intensity: 1, sharpness: 0.8)
    pause(0.1)
    palette.createContinuousHapticPlayer()
    palette.startContinuous()
    for step in 1...5 {
        pause(0.06)
        palette.updateContinuous(dynamicIntensity: Float(6 - step) / 5, dynamicSharpness: Float(step) / 10)
    }
    palette.stopContinuous()
    pause(0.1)
    try await palette.engine.stop()
    print("ios-port: palette done")
}

func runFiles() async throws {
    let files = try HapticFiles()
    files.playHapticsFile(named: "RumbleSteps")
    pause(2.1)
    guard let implode = files.registerImplode() else { exit(1) }
    try files.playCollision(with: implode, magnitude: 0.8)
    pause(0.3)
    try await files.playLoopingHeartbeat()
    try await files.engine.stop()
    print("ios-port: files done")
}

// `ios-port palette`, `ios-port files`, or both in turn (each engine replaces a trace file it is given).
let part = CommandLine.arguments.dropFirst().first
if part == nil || part == "palette" { try await runPalette() }
if part == nil || part == "files" { try await runFiles() }
print("ios-port: done")
