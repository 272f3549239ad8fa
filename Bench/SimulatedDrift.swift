import AHAP
import Foundation
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport

/// An audio device that exists only in time: a 48 kHz sink whose clock runs `ppm` fast against the
/// engine's (manual) clock, reporting when frames are heard with PulseAudio-like jitter. Frame f is
/// truly heard at `origin + f × nsPerFrame`, nsPerFrame = (1e9 / 48000) / (1 + ppm·1e-6).
final class SimulatedAudioDevice: AudioDevice, @unchecked Sendable {
    let name = "simulated"
    let sampleRate = 48_000.0
    let clock = AudioClock(sampleRate: 48_000)
    let messages = SPSCRing<AudioMessage>(capacity: 1024)
    var onServerLost: (@Sendable (String) -> Void)?
    var liveParameters: LiveParameters?
    var isMuted = false
    let underruns = 0
    func canConnect() -> Bool { true }
    private let time: ManualClock
    private let origin: Double
    let nsPerFrame: Double
    private let jitter: Double
    private var random: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// A sink `ppm` fast whose frame 0 is heard at the clock's current time; observations are off
    /// by up to ±`jitter` ns (uniform).
    init(time: ManualClock, ppm: Double, jitter: Double = 300_000) {
        self.time = time
        origin = Double(time.now())
        nsPerFrame = 1e9 / 48_000 / (1 + ppm * 1e-6)
        self.jitter = jitter
    }

    /// When frame `f` is truly heard (ns).
    func truth(_ f: Int64) -> Double { origin + Double(f) * nsPerFrame }

    /// The frame heard now.
    var frameNow: Int64 { Int64((Double(time.now()) - origin) / nsPerFrame) }

    /// 20 ms of buffered output ahead of what is heard.
    var nextWritableFrame: Int64 { frameNow + 960 }

    /// Reports the frame heard now with jitter, as the output's timing callback does every 10 ms.
    func observe() {
        random = random &* 6364136223846793005 &+ 1442695040888963407
        let u = Double(random >> 11) / Double(1 << 53) * 2 - 1
        let f = frameNow
        clock.observe(frame: f, heardAt: UInt64(truth(f) + u * jitter))
        while messages.pop() != nil {}
    }

    func open() throws { for _ in 0..<AudioClock.settlingObservations { observe(); time.advance(nanoseconds: 10_000_000) } }
    func close() {}
    func setSource(slot: Int, _ source: Unmanaged<PlayerAudio>?) {}
    func load(_ timeline: PatternTimeline, files: [String: URL]) throws -> PlayerAudio {
        PlayerAudio(timeline: timeline, samples: timeline.voices.map { _ in nil })
    }
}

/// drift (simulated): `minutes` of a tap every 100 ms (with an audio voice, so the player follows
/// the audio) on a manual clock, the sink skewed by `ppm`, observations every 10 ms with ±300 µs
/// jitter. Offset per tap = release − the true moment its frame is heard.
func simulatedDrift(minutes: Double, ppm: Double, sync: HapticEngine.AudioSync) throws -> DriftSeries {
    let time = ManualClock()
    let device = SimulatedAudioDevice(time: time, ppm: ppm)
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
        let heard = device.truth(startFrame + Int64((c.patternTime * 48_000).rounded()))
        points.append((c.patternTime, Double(c.applied) - heard) )
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
