import Foundation
import Glibc
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncRuntime

/// This process's CPU time (all threads), ns.
func processCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A backend standing in for a rumble pad: it applies nothing, and says it can use command times
/// only to 10 ms, as an evdev pad with its default update interval does.
final class CoarseBackend: HapticBackend, @unchecked Sendable {
    var name: String { "coarse" }
    var timingResolution: UInt64 { 10_000_000 }
    func open() {}
    func apply(_ command: OutputCommand, appliedAt: UInt64) {}
    func stopAll() {}
    func close() {}
}

/// The sound server's processes: HAPSYNC_SOUND_SERVER_PIDS (set by .ci/with-pulse and
/// .ci/with-pipewire, which started them), else those named pulseaudio, pipewire-pulse, pipewire
/// or wireplumber in /proc (read only; nothing is signalled; other users' servers count too).
func soundServerPIDs() -> (pids: [Int32], source: String) {
    if let given = ProcessInfo.processInfo.environment["HAPSYNC_SOUND_SERVER_PIDS"] {
        return (given.split(separator: " ").compactMap { Int32($0) }, "HAPSYNC_SOUND_SERVER_PIDS")
    }
    let names: Set<String> = ["pulseaudio", "pipewire-pulse", "pipewire", "wireplumber"]
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return (entries.compactMap { Int32($0) }.filter { pid in
        let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        return comm.map(names.contains) ?? false
    }, "found by name in /proc")
}

/// CPU time (user + system) of process `pid`, ns, from /proc/PID/stat; nil when it is gone.
func processCPUNanoseconds(pid: Int32) -> UInt64? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    // After "pid (comm)": state is field 3, utime 14, stime 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
    let hz = UInt64(sysconf(Int32(_SC_CLK_TCK)))
    return (user + system) * 1_000_000_000 / max(hz, 1)
}

/// This process's CPU, and the sound servers' together, in % of one core over 1-second windows
/// for `seconds`.
func cpuWindows(seconds: Double, servers: [Int32] = []) -> (ours: [Double], server: [Double]) {
    var ours: [Double] = [], server: [Double] = []
    for _ in 0..<max(1, Int(seconds)) {
        let c0 = processCPUNanoseconds(), s0 = servers.map { processCPUNanoseconds(pid: $0) }, t0 = MonotonicClock.nanoseconds()
        Thread.sleep(forTimeInterval: 1)
        let wall = Double(MonotonicClock.nanoseconds() - t0)
        ours.append(Double(processCPUNanoseconds() - c0) / wall * 100)
        // Only processes read at both ends (one that ended in between counts nothing).
        let used = zip(s0, servers.map { processCPUNanoseconds(pid: $0) }).reduce(UInt64(0)) { sum, pair in
            guard let a = pair.0, let b = pair.1, b >= a else { return sum }
            return sum + (b - a)
        }
        server.append(Double(used) / wall * 100)
    }
    return (ours, server)
}

/// A pattern of `length` seconds: a continuous haptic under an intensity curve of 10 ms ramps (a
/// level change every millisecond), and with `tone` an audio tone beside it.
func continuousPattern(length: Double, tone: Bool) throws -> AHAPPattern {
    var b = AHAPPatternBuilder()
    var t = 0.0
    while t < length {
        let d = min(30, length - t)
        b = b.continuous(at: t, duration: d, intensity: 1, sharpness: 0.5)
        if tone { b = b.audioContinuous(at: t, duration: d, volume: 0.3) }
        let points = (0...Int(d * 100)).map { (time: Double($0) / 100, value: $0 % 2 == 0 ? 0.3 : 0.9) }
        var start = 0
        while start < points.count {
            let chunk = Array(points[start..<min(points.count, start + 4000)])
            b = b.curve(.hapticIntensityControl, at: t + chunk[0].time, points: chunk.map { ($0.time - chunk[0].time, $0.value) })
            start += 4000
        }
        t += 30
    }
    return try b.build()
}

/// cpu: this process's CPU (and, with audio, the sound server's own beside it, from /proc) in
/// each state, in the same run:
/// - idle with no engine (the baseline: the benchmark itself), an engine idle (haptics only; with
///   PulseAudio);
/// - playing a continuous haptic under a 1 kHz-changing intensity curve: to a backend of 10 ms
///   resolution (evdev-like: the scheduler sleeps, level changes go out together) beside the
///   same to an exact backend (`precise`: the scheduler spins to each deadline);
/// - an engine idle with native PipeWire output, when a PipeWire server answers: its stream paused
///   after 2 s of silence, beside one that never pauses;
/// - an engine idle with PulseAudio output: its stream corked after 2 s of silence, beside one
///   never corked (timing asked every 100 ms, and every 10 ms, while silent);
/// - the same with a tone through PulseAudio, both ways;
/// - the same pattern's drive signal to waveform haptics (a stream of its own on the sink).
func cpuBenchmark(seconds: Double) throws -> [Row] {
    func row(_ subject: String, _ xs: [Double]) -> Row {
        Row(benchmark: "cpu", subject: subject, unit: "% of one core", median: median(xs), min: xs.min()!, max: xs.max()!, ratioToBaseline: nil)
    }
    let length = max(2, seconds + 1)
    var rows: [Row] = try mixerBlockCost()
    rows.append(row("baseline: no engine (the benchmark process waiting)", cpuWindows(seconds: seconds).ours))

    let haptic = try HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: true))
    try haptic.start()
    Thread.sleep(forTimeInterval: 0.2)
    rows.append(row("engine started, idle, haptics only", cpuWindows(seconds: seconds).ours))
    haptic.stop()

    /// Plays `pattern` on a fresh engine with `backend` (and `audio`) and measures.
    func playing(_ subject: String, backend: HapticBackend, audio: PulseAudioOutput? = nil, lead: UInt64 = 0, tone: Bool) throws {
        let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: true, audio: audio, hapticLatency: lead))
        try engine.start()
        defer { engine.stop() }
        let player = try engine.makePlayer(with: try continuousPattern(length: length, tone: tone))
        try player.start(atTime: HapticEngine.timeImmediate)
        Thread.sleep(forTimeInterval: 0.5)
        let servers = audio == nil && !(backend is WaveformOutput) ? [] : soundServerPIDs().pids
        let m = cpuWindows(seconds: seconds, servers: servers)
        rows.append(row(subject, m.ours))
        if !servers.isEmpty { rows.append(row("  the sound server's own CPU meanwhile", m.server)) }
        try? player.stop(atTime: HapticEngine.timeImmediate)
    }
    try playing("playing: continuous haptic, 1 kHz level changes, backend of 10 ms resolution (evdev-like)", backend: CoarseBackend(), tone: false)
    try playing("baseline: the same to an exact backend (precise: spins to each deadline)", backend: NullHapticBackend(), tone: false)

    // Native PipeWire's idle engine, when a PipeWire server answers (under .ci/with-pipewire): as
    // it is (the stream pauses after 2 s of silence; measured from 2.5 s on), and beside it a
    // stream that never pauses (its data thread renders every cycle).
    if PipeWireOutput.answers(remote: nil) {
        for pause in [2.0, nil] {
            let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: true,
                                                               audio: PipeWireOutput(configuration: .init(pauseWhenIdle: pause))))
            try engine.start()
            Thread.sleep(forTimeInterval: pause == nil ? 0.2 : 2.5)
            let m = cpuWindows(seconds: seconds, servers: soundServerPIDs().pids)
            rows.append(row(pause == nil ? "baseline: the same with a stream that never pauses (its data thread renders every cycle)"
                                         : "engine started, idle, with native PipeWire output (its stream paused after 2 s of silence)", m.ours))
            rows.append(row("  the sound server's own CPU meanwhile", m.server))
            engine.stop()
        }
    }

    let probe = PulseAudioOutput()
    guard probe.canConnect() else {
        print("cpu: no PulseAudio server; the audio rows are left out")
        return rows
    }
    // As it is (the stream corked after 2 s of silence; measured from 2.5 s on), beside a stream
    // never corked, asking for timing every 100 ms while silent, and every 10 ms (as before).
    let idle: [(pause: Double?, interval: Double, subject: String)] = [
        (IdlePause.defaultSeconds, 0.1, "engine started, idle, with PulseAudio output (its stream corked after 2 s of silence)"),
        (nil, 0.1, "baseline: the same with a stream never corked (timing asked every 100 ms while silent)"),
        (nil, 0.01, "baseline: the same asking for timing every 10 ms"),
    ]
    for (pause, interval, subject) in idle {
        let audio = PulseAudioOutput(configuration: .init(idleTimingInterval: interval, pauseWhenIdle: pause))
        let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: true, audio: audio))
        try engine.start()
        Thread.sleep(forTimeInterval: pause.map { $0 + 0.5 } ?? 0.2)
        let m = cpuWindows(seconds: seconds, servers: soundServerPIDs().pids)
        rows.append(row(subject + (pause != nil && !audio.isPaused ? " (NOT corked when measured)" : ""), m.ours))
        rows.append(row("  the sound server's own CPU meanwhile", m.server))
        engine.stop()
    }
    try playing("playing: the same + a tone through PulseAudio, backend of 10 ms resolution", backend: CoarseBackend(), audio: PulseAudioOutput(), tone: true)
    try playing("baseline: the same + tone to an exact backend (precise)", backend: NullHapticBackend(), audio: PulseAudioOutput(), tone: true)
    let waveform = WaveformOutput(configuration: .init(sink: "@DEFAULT_SINK@", channels: .all))
    try playing("playing: the same pattern as waveform haptics (drive signal in its own stream on the default sink)", backend: waveform,
                lead: waveform.configuration.lead, tone: false)
    let servers = soundServerPIDs()
    print("cpu: process CPU time (CLOCK_PROCESS_CPUTIME_ID) over 1-s windows, \(max(1, Int(seconds))) per state; the sound server's from /proc/PID/stat (utime + stime, 10 ms ticks) of \(servers.pids.count) process(es), \(servers.source)")
    return rows
}

/// mixer: what `AudioMixer.render` costs per 5 ms block (240 frames at 48 kHz, the stream's
/// request size): silent, one tone, eight file voices, beside the floor of the same run (zeroing
/// the block). Nanoseconds per block, from 1000 blocks in each of 5 rounds (25 s of output), the
/// frames running on across rounds so that every voice sounds throughout.
func mixerBlockCost() throws -> [Row] {
    let frames = 240
    let out = UnsafeMutablePointer<Float>.allocate(capacity: frames * 2)
    defer { out.deallocate() }
    var checksum: Float = 0
    func perBlock(_ body: (Int64) -> Void) -> [Double] {
        var block: Int64 = 0
        return (0..<5).map { _ in
            let t0 = MonotonicClock.nanoseconds()
            for _ in 0..<1000 {
                body(block * Int64(frames))
                // Read the block, so that no render (the floor's zeroing least) is optimized away.
                checksum += out[Int(block) % (frames * 2)]
                block += 1
            }
            return Double(MonotonicClock.nanoseconds() - t0) / 1000
        }
    }
    // One 30 s file shared by every file voice (more than the 25 s the rounds render).
    let file = AudioSamples(mono: (0..<(30 * 48_000)).map { Float(sin(Double($0) * 0.05)) * 0.2 })
    func mixer(_ pattern: AHAPPattern?) throws -> AudioMixer {
        let m = AudioMixer(sampleRate: 48_000, capacity: PulseAudioOutput.voiceCapacity)
        guard let pattern else { return m }
        let timeline = try PatternTimeline(pattern: pattern)
        let samples = (0..<timeline.voices.count).map { i -> AudioSamples? in
            if case .file = timeline.voices[i].source { return file }
            return nil
        }
        m.start(slot: 0, audio: Unmanaged.passRetained(PlayerAudio(timeline: timeline, samples: samples)), startFrame: 0)
        return m
    }
    let silent = try mixer(nil)
    let tone = try mixer(try AHAPPatternBuilder().audioContinuous(at: 0, duration: 30, volume: 0.5).build())
    var files = AHAPPatternBuilder()
    for k in 0..<8 { files = files.audioCustom(at: 0, path: "f\(k).wav", duration: 30, volume: 0.3, pan: Double(k) / 8 - 0.5) }
    let eight = try mixer(try files.build())
    let rows: [(String, [Double])] = [
        ("floor: zeroing the 240-frame stereo block", perBlock { _ in out.update(repeating: 0, count: frames * 2) }),
        ("AudioMixer.render, 240-frame block, silent (no voices)", perBlock { silent.render(into: out, frames: frames, firstFrame: $0) }),
        ("AudioMixer.render, 240-frame block, one tone", perBlock { tone.render(into: out, frames: frames, firstFrame: $0) }),
        ("AudioMixer.render, 240-frame block, eight file voices", perBlock { eight.render(into: out, frames: frames, firstFrame: $0) }),
    ]
    print("mixer: 240-frame blocks (5 ms at 48 kHz) rendered in process, 5 rounds of 1000; one block's budget is 5,000,000 ns (checksum \(checksum))")
    return rows.map { name, xs in
        Row(benchmark: "mixer", subject: name, unit: "ns per block", median: median(xs), min: xs.min()!, max: xs.max()!, ratioToBaseline: nil)
    }
}
