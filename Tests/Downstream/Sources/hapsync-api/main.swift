import Foundation
import HapSync

// HapSync's own API through `import HapSync`, as docs/swift-api.md shows it: a pattern built in code, an
// engine on a trace, an advanced player with a live parameter and a curve, async start and stop.
// (In an async function: in main.swift's top-level code Swift picks the synchronous overloads of
// start() and stop(), a quirk of top-level code that Apple's CHHapticEngine shares.)
func play(tracePath: String) async throws {
    let engine = try HapticEngine(configuration: .init(backend: TraceBackend(path: tracePath, replacing: true)))
    try await engine.start()
    let pattern = try AHAPPatternBuilder()
        .transient(at: 0, intensity: 1, sharpness: 0.8)
        .continuous(at: 0.05, duration: 0.3, intensity: 0.8, sharpness: 0.4)
        .build()
    let player = try engine.makeAdvancedPlayer(with: pattern)
    try player.start(atTime: HapticEngine.timeImmediate)
    try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5)], atTime: HapticEngine.timeImmediate)
    try player.scheduleParameterCurve(AHAPParameterCurve(.hapticSharpnessControl, controlPoints: [
        .init(time: 0, value: 0), .init(time: 0.2, value: 0.3)]), atTime: engine.currentTime + 0.05)
    await engine.playersFinished()
    if let error = await engine.stop() {
        print("hapsync-api: the trace is not whole: \(error)")
        exit(1)
    }
}

try await play(tracePath: CommandLine.arguments.dropFirst().first ?? "hapsync-api.jsonl")
print("hapsync-api: done")
