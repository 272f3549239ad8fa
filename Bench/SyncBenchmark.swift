import AHAP
import AudioOutput
import Foundation
import HapSyncCore
import HapSyncRuntime

/// sync: Assets/clicks.ahap (8 clicks, each with a tap at the same pattern time) played `loops`
/// times through the real PulseAudio server, the audio-haptic offset measured twice per tap: from
/// the engine's audio clock (haptic release − the moment its frame is heard), and independently
/// from a recording of the sink's monitor (click onset − haptic release).
func syncBenchmark(loops: Int, assets: URL) throws -> [Distribution] {
    let recorder = PulseAudioRecorder(source: "@DEFAULT_MONITOR@", seconds: Double(loops) * 2.5 + 10)
    try recorder.start()
    defer { recorder.stop() }
    let audio = PulseAudioOutput()
    let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), audio: audio))
    try engine.start()
    defer { engine.stop() }
    let url = assets.appendingPathComponent("clicks.ahap")
    let pattern = try AHAPReader().read(contentsOf: url).pattern
    let files = ["audio/click-48k-mono-16.wav": assets.appendingPathComponent("audio/click-48k-mono-16.wav")]
    let period = 2.25
    let t0 = engine.currentTime + 0.3
    var players: [HapticPatternPlayer] = []
    for k in 0..<loops {
        let p = try engine.makePlayer(with: pattern, audioFiles: files)
        try p.start(atTime: t0 + Double(k) * period)
        players.append(p)
    }
    Thread.sleep(forTimeInterval: 0.3 + Double(loops) * period + 0.5)
    let stats = engine.statistics
    var byEngineClock: [Double] = [], byMonitor: [Double] = []
    let onsets = PulseAudioRecorder.onsets(recorder.recording).compactMap { recorder.clock.time(ofFrame: Int64($0)) }
    for (i, c) in stats.commands.enumerated() where c.patternTime >= 0 {
        guard let player = players.first(where: { $0.id == c.player }), let frame = player.audioStartFrame else { continue }
        let released = c.applied &- UInt64(stats.applyLatencies[i])
        if let heard = audio.clock.time(ofFrame: frame + Int64((c.patternTime * audio.sampleRate).rounded())) {
            byEngineClock.append(Double(Int64(bitPattern: released &- heard)) / 1000)
        }
        if let nearest = onsets.min(by: { abs(Int64(bitPattern: $0 &- released)) < abs(Int64(bitPattern: $1 &- released)) }),
           abs(Int64(bitPattern: nearest &- released)) < 100_000_000 {
            byMonitor.append(Double(Int64(bitPattern: nearest &- released)) / 1000)
        }
    }
    print("sync: \(loops) × clicks.ahap (8 click+tap pairs each) through PulseAudio at \(Int(audio.sampleRate)) Hz; \(onsets.count) click onsets found in the monitor; sink clock \(String(format: "%+.1f", audio.clock.rateErrorPPM)) ppm; \(audio.underruns) underruns; \(audio.droppedVoices) voices dropped")
    return [Distribution(benchmark: "sync", subject: "haptic release − audio heard (engine's audio clock)", values: byEngineClock),
            Distribution(benchmark: "sync", subject: "click onset in the monitor − haptic release (independent)", values: byMonitor)]
}
