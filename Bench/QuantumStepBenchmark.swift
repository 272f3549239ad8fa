import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncMeasurement
import HapSyncRuntime
import Synchronization

/// quantum-step: PipeWire natively, the graph's quantum changing under a playing stream. Clicks
/// 60 ms apart, each with a tap at the same pattern time, played to a pipe sink (its reader times
/// every read: no server timing used) while a second stream asking for 5 ms cycles joins the
/// same sink and leaves it every 0.37 s, so that the graph's quantum shrinks and grows back
/// under the first (512 ↔ 128 frames at 48 kHz). On PipeWire before 0.3.68 a timer driver starts
/// the cycle after each change an old quantum on, and taps released by the old line around it
/// go out off by the change (`PipeWireOutput.expectQuantumStep`). Each tap against its click as
/// read from the pipe, with the step expected (HapSync) and without (the baseline), one after
/// the other. Left out when no PipeWire server answers.
func quantumStepBenchmark(seconds: Double, assets: URL) throws -> [Distribution] {
    guard PipeWireOutput.answers() else {
        print("quantum-step: no PipeWire server answers (run under .ci/with-pipewire); left out")
        return []
    }
    // The clicks of Assets/clicks.ahap, 60 ms apart over 2 s (each found after 30 ms of quiet).
    let wav = "audio/click-48k-mono-16.wav"
    let events = stride(from: 0.1, to: 2.0, by: 0.06).map { t in
        """
        { "Event": { "Time": \(t), "EventType": "AudioCustom", "EventWaveformPath": "\(wav)", "EventWaveformUseVolumeEnvelope": false } },
        { "Event": { "Time": \(t), "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "ParameterValue": 1.0 } ] } }
        """
    }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-bench-quantum-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("dense-clicks.ahap")
    try Data("{ \"Version\": 1.0, \"Pattern\": [\n\(events.joined(separator: ",\n"))\n] }\n".utf8).write(to: file)
    let pattern = try AHAPReader().read(contentsOf: file).pattern
    let files = [wav: assets.appendingPathComponent(wav)]
    let period = 2.1
    let loops = max(1, Int(seconds / period))
    var result: [Distribution] = []
    for expects in [true, false] {
        let reader = PipeSinkReader(seconds: Double(loops) * period + 10)
        try reader.start()
        defer { reader.stop() }
        var configuration = PipeWireOutput.Configuration(sink: reader.sinkName, latency: 0.010, pauseWhenIdle: nil)
        configuration.expectsQuantumSteps = expects
        let audio = PipeWireOutput(configuration: configuration)
        let rig = try AudioRig(audio: audio)
        defer { rig.stop() }
        // The second stream, joining and leaving until the clicks have played.
        let toggling = Atomic<Bool>(true)
        let joins = Atomic<Int>(0)
        let toggler = Thread {
            while toggling.load(ordering: .relaxed) {
                let other = PipeWireOutput(configuration: .init(sink: reader.sinkName, latency: 0.005, pauseWhenIdle: nil))
                if (try? other.open()) != nil { joins.add(1, ordering: .relaxed) }
                Thread.sleep(forTimeInterval: 0.37)
                other.close()
                Thread.sleep(forTimeInterval: 0.37)
            }
        }
        toggler.start()
        let stopToggling = {
            toggling.store(false, ordering: .relaxed)
            while !toggler.isFinished { usleep(10_000) }
        }
        defer { stopToggling() }
        let players = try play(pattern, files: files, loops: loops, period: period, on: rig)
        stopToggling()
        let onsets = ClickOnsets.frames(in: reader.recording, quiet: 0.03).compactMap { reader.heardTime(ofFrame: Int64($0)) }
        let pairs = rig.pairs(players: players, onsets: onsets)
        let offsets = pairs.compactMap(\.independent)
        // HAPSYNC_BENCH_DEBUG: each tap in order, seconds from the first: release − click heard by the pipe (ms).
        if ProcessInfo.processInfo.environment["HAPSYNC_BENCH_DEBUG"] != nil {
            print(pairs.map { String(format: "%.2f:%+.1f", $0.elapsed, ($0.independent ?? .nan) / 1000) }.joined(separator: " "))
        }
        let late = offsets.filter { $0 > 1000 }, early = offsets.filter { $0 < -1000 }
        let magnitudes = offsets.map(abs).sorted()
        let at = { (p: Double) in (magnitudes.nearestRankPercentile(p) ?? .nan) / 1000 }
        let fit = audio.clock.fit
        let subject = expects ? "the step expected (HapSync)" : "baseline: the step not expected"
        let ms = { (xs: [Double]) in xs.sorted().map { String(format: "%+.1f", $0 / 1000) }.joined(separator: " ") }
        print("quantum-step: pipe sink, native PipeWire \(audio.serverVersion), \(subject): \(offsets.count) taps, the second stream joined \(joins.load(ordering: .relaxed)) times; "
              + String(format: "|release − heard by the pipe| p50 %.2f, p90 %.2f, p99 %.2f, max %.2f ms; ", at(50), at(90), at(99), at(100))
              + "\(late.count) late by more than 1 ms [\(ms(late))], \(early.count) early [\(ms(early))] (ms); steps the clock expected: \(fit.stepsCame) came, \(fit.stepsWithdrawn) withdrawn; underruns \(audio.underruns)")
        result.append(Distribution(benchmark: "quantum-step", subject: "haptic release − click read from the pipe, native PipeWire, \(subject)", values: offsets))
    }
    return result
}
