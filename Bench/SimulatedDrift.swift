import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport

/// drift (simulated): `minutes` of a tap every 100 ms (with an audio voice, so the player follows
/// the audio) on a manual clock, the sink skewed by `ppm`, observations every 10 ms with ±300 µs
/// jitter. Offset per tap = release − the true moment its frame is heard.
func simulatedDrift(minutes: Double, ppm: Double, sync: HapticEngine.AudioSync) throws -> DriftSeries {
    let time = ManualClock()
    let device = SimulatedAudioDevice(time: time, ppm: ppm, jitter: 300_000)
    let taps = Int(minutes * 600)
    var builder = AHAPPatternBuilder().audioContinuous(at: 0, duration: 1)
    for k in 0..<taps { builder = builder.transient(at: Double(k) / 10, intensity: 1, sharpness: 0.5) }
    let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), clock: time, threading: .manual,
                                                       statisticsCapacity: taps + 16, audio: device, audioSync: sync))
    try engine.start()
    let player = try engine.makePlayer(with: try builder.build())
    try player.start(atTime: engine.currentTime + 0.1)
    engine.pump()
    let end = time.now() + UInt64(minutes * 60e9) + 1_000_000_000
    var nextObservation = time.now()
    while time.now() < end {
        if time.now() >= nextObservation {
            device.observe()
            nextObservation += 10_000_000
        }
        let deadline = engine.pump()
        time.set(nanoseconds: max(time.now() + 1, min(deadline, nextObservation)))
    }
    engine.pump()
    guard let startFrame = player.audioStartFrame else { throw BenchError.failed("simulated drift: the player did not start on the audio clock") }
    let stats = engine.statistics
    var points: [(Double, Double)] = []
    for c in stats.commands where c.patternTime >= 0 {
        // Against the moment the frame is really heard (the simulated sink's truth, not its clock).
        if let offset = AudioHapticOffset.offset(hapticAt: c.applied, patternTime: c.patternTime, startFrame: startFrame,
                                                 sampleRate: device.sampleRate, heard: { UInt64(device.truth($0).rounded()) }) {
            points.append((c.patternTime, Double(offset)))
        }
    }
    engine.stop()
    let label = sync == .followAudioClock ? "follows audio clock" : "open-loop"
    return DriftSeries(name: "simulated \(String(format: "%+.0f", ppm)) ppm, \(label)", points: points.map { ($0.0, $0.1 / 1000) })
}

/// A benchmark that could not produce its figure.
enum BenchError: Error, CustomStringConvertible {
    case failed(String)
    var description: String { if case .failed(let s) = self { return s }; return "" }
}
