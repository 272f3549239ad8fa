import AHAP
import AudioOutput
import Foundation
import Glibc
import HapSyncCore
import HapSyncRuntime

/// This process's CPU time (all threads), ns.
func processCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Process CPU in % of one core over 1-second windows for `seconds`.
func cpuWindows(seconds: Double) -> [Double] {
    var result: [Double] = []
    for _ in 0..<max(1, Int(seconds)) {
        let c0 = processCPUNanoseconds(), t0 = MonotonicClock.nanoseconds()
        Thread.sleep(forTimeInterval: 1)
        result.append(Double(processCPUNanoseconds() - c0) / Double(MonotonicClock.nanoseconds() - t0) * 100)
    }
    return result
}

/// cpu: this process's CPU while idle with no engine (the baseline: the benchmark itself), idle
/// with an engine started (haptics only; and with PulseAudio), and while playing a continuous
/// pattern with audio (a continuous haptic under a 1 kHz-changing intensity curve plus a tone).
func cpuBenchmark(seconds: Double) throws -> [Row] {
    func row(_ subject: String, _ xs: [Double], baseline: Double? = nil) -> Row {
        Row(benchmark: "cpu", subject: subject, unit: "% of one core", median: median(xs), min: xs.min()!, max: xs.max()!,
            ratioToBaseline: nil)
    }
    var rows: [Row] = []
    rows.append(row("baseline: no engine (the benchmark process waiting)", cpuWindows(seconds: seconds)))

    let haptic = try HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: true))
    try haptic.start()
    Thread.sleep(forTimeInterval: 0.2)
    rows.append(row("engine started, idle, haptics only", cpuWindows(seconds: seconds)))
    haptic.stop()

    let audio = PulseAudioOutput()
    let engine: HapticEngine
    do {
        engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: true, audio: audio))
        try engine.start()
    } catch {
        print("cpu: no PulseAudio server (\(error)); the audio rows are left out")
        return rows
    }
    defer { engine.stop() }
    Thread.sleep(forTimeInterval: 0.2)
    rows.append(row("engine started, idle, with PulseAudio output", cpuWindows(seconds: seconds)))

    // Continuous: 30 s segments of a continuous haptic and a tone, intensity curve every 10 ms.
    let length = max(2, seconds + 1)
    var b = AHAPPatternBuilder()
    var t = 0.0
    while t < length {
        let d = min(30, length - t)
        b = b.continuous(at: t, duration: d, intensity: 1, sharpness: 0.5).audioContinuous(at: t, duration: d, volume: 0.3)
        let points = (0...Int(d * 100)).map { (time: Double($0) / 100, value: $0 % 2 == 0 ? 0.3 : 0.9) }
        var start = 0
        while start < points.count {
            let chunk = Array(points[start..<min(points.count, start + 4000)])
            b = b.curve(.hapticIntensityControl, at: t + chunk[0].time, points: chunk.map { ($0.time - chunk[0].time, $0.value) })
            start += 4000
        }
        t += 30
    }
    let player = try engine.makePlayer(with: try b.build())
    try player.start(atTime: HapticEngine.timeImmediate)
    Thread.sleep(forTimeInterval: 0.5)
    rows.append(row("playing: continuous haptic, 1 kHz level changes + tone through PulseAudio", cpuWindows(seconds: seconds)))
    try? player.stop(atTime: HapticEngine.timeImmediate)
    print("cpu: process CPU time (CLOCK_PROCESS_CPUTIME_ID) over 1-s windows, \(max(1, Int(seconds))) per state; the PulseAudio server's own CPU is not included")
    return rows
}
