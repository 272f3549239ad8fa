import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncMeasurement
import HapSyncRuntime

/// One click+tap pair as measured: when the tap was released and when its click was heard, by the
/// playback side's audio clock and, independently, by the sink's monitor recording or a pipe
/// sink's reader.
struct PairMeasurement {
    /// Seconds since the first pair of the run.
    var elapsed: Double
    /// Haptic release − audio heard by the engine's audio clock (µs; positive: the tap came late).
    var byEngine: Double?
    /// Haptic release − click onset heard from outside the engine (µs).
    var independent: Double?
}

/// An engine with audio for the sync and drift benchmarks (PulseAudio's protocol unless told),
/// with a history of its audio clock.
final class AudioRig {
    let audio: SoundServerOutput
    let engine: HapticEngine
    let history: AudioClockHistory

    /// An engine playing to `sink` (nil: the default sink) through `server`.
    convenience init(sync: HapticEngine.AudioSync = .followAudioClock, sink: String? = nil, server: AudioServerChoice = .pulse) throws {
        try self.init(sync: sync, audio: server.output(sink: sink, latency: 0.020, environment: ProcessInfo.processInfo.environment)!)
    }

    /// An engine playing through `audio`.
    init(sync: HapticEngine.AudioSync = .followAudioClock, audio: SoundServerOutput) throws {
        self.audio = audio
        engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: true, audio: audio, audioSync: sync))
        try engine.start()
        history = AudioClockHistory(audio.clock)
    }

    func stop() {
        history.stop()
        engine.stop()
    }

    /// Every tap of `players` paired with its click (the audio frame at the same pattern time), and
    /// with the nearest of `onsets` (click onsets heard from outside).
    func pairs(players: [HapticPatternPlayer], onsets: [UInt64]) -> [PairMeasurement] {
        let stats = engine.statistics
        var result: [PairMeasurement] = []
        var first: UInt64?
        for (i, c) in stats.commands.enumerated() where c.patternTime >= 0 {
            guard let player = players.first(where: { $0.id == c.player }), let frame = player.audioStartFrame else { continue }
            let released = c.applied &- UInt64(stats.applyLatencies[i])
            if first == nil { first = released }
            var m = PairMeasurement(elapsed: Double(released &- first!) / 1e9)
            if let offset = AudioHapticOffset.offset(hapticAt: released, patternTime: c.patternTime, startFrame: frame,
                                                     sampleRate: audio.sampleRate, heard: history.heard) {
                m.byEngine = Double(offset) / 1000
            }
            if let nearest = onsets.min(by: { abs(Int64(bitPattern: $0 &- released)) < abs(Int64(bitPattern: $1 &- released)) }),
               abs(Int64(bitPattern: nearest &- released)) < 200_000_000 {
                m.independent = Double(Int64(bitPattern: released &- nearest)) / 1000
            }
            result.append(m)
        }
        return result
    }
}

/// The monitor recording's click onsets as CLOCK_MONOTONIC times (each timed by the recording's
/// observations around it), and a note on discontinuities in the recording.
func monitorOnsets(_ recorder: PulseAudioRecorder) -> (times: [UInt64], note: String) {
    let frames = ClickOnsets.frames(in: recorder.recording)
    let times = frames.compactMap { recorder.heardTime(ofRecordedFrame: Int64($0)) }
    let jumps = recorder.discontinuities
    if ProcessInfo.processInfo.environment["HAPSYNC_BENCH_DEBUG"] != nil {
        for j in jumps { print("  monitor jump at \(String(format: "%.3f", Double(j.frame) / 48_000)) s: \(String(format: "%+.3f", j.jump / 1e6)) ms") }
        for f in frames { print("  onset at \(String(format: "%.3f", Double(f) / 48_000)) s") }
    }
    return (times, discontinuityNote("monitor recording", jumps))
}

/// "<what> continuous", or how many jumps it has and the largest.
func discontinuityNote(_ what: String, _ jumps: [(frame: Int64, jump: Double)]) -> String {
    jumps.isEmpty ? "\(what) continuous"
        : "\(what) has \(jumps.count) discontinuities (largest \(String(format: "%.1f", jumps.map { abs($0.jump) }.max()! / 1e6)) ms)"
}

/// Assets/clicks.ahap (8 clicks, each with a tap at the same pattern time, the first at 0.25 s)
/// and the audio file it plays, as `makePlayer(with:audioFiles:)` takes them.
func clicksPattern(assets: URL) throws -> (pattern: AHAPPattern, files: [String: URL]) {
    let wav = "audio/click-48k-mono-16.wav"
    return (try AHAPReader().read(contentsOf: assets.appendingPathComponent("clicks.ahap")).pattern, [wav: assets.appendingPathComponent(wav)])
}

/// The sound servers a pipe-sink benchmark plays through: PulseAudio's protocol, and PipeWire
/// natively when a PipeWire server answers.
func pipeSinkServers() -> [AudioServerChoice] { PipeWireOutput.answers() ? [.pulse, .pipewire] : [.pulse] }

/// One run of a pipe-sink benchmark that plays Assets/clicks.ahap now and then (first-sound,
/// serve's audio part): every server of `pipeSinkServers()` with plays 2.5 s apart (the pattern
/// and half a second: the stream runs on), and each again with plays 5 s apart, each finding
/// the stream paused for want of sound (`IdlePause`, 2 s).
struct PipeSinkRun {
    var server: AudioServerChoice
    /// Seconds between plays.
    var spacing: Double
    /// Whether each play finds the stream paused.
    var findsStreamPaused: Bool { spacing > 2.5 }
    /// How long to wait before the first play: 1 s, or as long as the plays are apart afterwards.
    var settle: Double { findsStreamPaused ? spacing - 2.5 : 1 }

    /// The runs, in order.
    static func all() -> [PipeSinkRun] {
        let servers = pipeSinkServers()
        return servers.map { PipeSinkRun(server: $0, spacing: 2.5) } + servers.map { PipeSinkRun(server: $0, spacing: 5) }
    }
}

/// Plays Assets/clicks.ahap `loops` times on `rig`, 2.25 s apart, after one unmeasured pass (see
/// `play`): the players, once the last has played.
func playClicks(loops: Int, on rig: AudioRig, assets: URL) throws -> [HapticPatternPlayer] {
    let (pattern, files) = try clicksPattern(assets: assets)
    return try play(pattern, files: files, loops: loops, period: 2.25, on: rig)
}

/// `pattern` (its audio `files`) played once to warm up, then `loops` times `period` seconds
/// apart; returns once the last has played. Each pass is started 0.3 s before its time, not all
/// at once: a started player holds its voices from its start on, and the mixer holds
/// `AudioStreamRenderer.voiceCapacity` (a pattern of 32 sounds fills it with 8 players waiting).
func play(_ pattern: AHAPPattern, files: [String: URL], loops: Int, period: Double, on rig: AudioRig) throws -> [HapticPatternPlayer] {
    // Warm-up: one pass, not measured.
    let warm = try rig.engine.makePlayer(with: pattern, audioFiles: files)
    try warm.start(atTime: HapticEngine.timeImmediate)
    Thread.sleep(forTimeInterval: period + 0.25)
    let t0 = rig.engine.currentTime + 0.3
    var players: [HapticPatternPlayer] = []
    for k in 0..<loops {
        let at = t0 + Double(k) * period
        let p = try rig.engine.makePlayer(with: pattern, audioFiles: files)
        Thread.sleep(forTimeInterval: max(0, at - 0.3 - rig.engine.currentTime))
        try p.start(atTime: at)
        players.append(p)
    }
    Thread.sleep(forTimeInterval: max(0, t0 + Double(loops) * period + 0.5 - rig.engine.currentTime))
    if rig.audio.droppedVoices > 0 { print("note: \(rig.audio.droppedVoices) voices dropped (the mixer was full): their clicks were not played") }
    return players
}

/// sync: Assets/clicks.ahap (8 clicks, each with a tap at the same pattern time) played `loops`
/// times through the real sound server (PulseAudio, or PipeWire's pipewire-pulse), the audio-haptic
/// offset measured per tap by the engine's audio clock and independently twice: from a recording
/// of the default sink's monitor, and, in a second run to a pipe sink, from a reader that times
/// every read of the pipe (`PipeSinkReader`: no timing report of the server's at all). All are
/// haptic release − audio heard.
func syncBenchmark(loops: Int, assets: URL, label: String = "") throws -> [Distribution] {
    var result: [Distribution] = []
    do {
        let recorder = PulseAudioRecorder(source: "@DEFAULT_MONITOR@", seconds: Double(loops) * 2.5 + 10)
        try recorder.start()
        defer { recorder.stop() }
        let rig = try AudioRig()
        defer { rig.stop() }
        let players = try playClicks(loops: loops, on: rig, assets: assets)
        let (onsets, note) = monitorOnsets(recorder)
        let pairs = rig.pairs(players: players, onsets: onsets)
        print("sync: 1 warm-up + \(loops) × clicks.ahap (8 click+tap pairs each) through \(rig.audio.serverDescription) at \(Int(rig.audio.sampleRate)) Hz; \(onsets.count) click onsets in the monitor (\(note)); sink clock \(String(format: "%+.1f", rig.audio.clock.rateErrorPPM)) ppm; \(rig.audio.underruns) underruns; \(rig.audio.droppedVoices) voices dropped")
        result += [Distribution(benchmark: "sync", subject: "haptic release − audio heard (engine's audio clock)\(label)", values: pairs.compactMap(\.byEngine)),
                   Distribution(benchmark: "sync", subject: "haptic release − click onset in the monitor (independent)\(label)", values: pairs.compactMap(\.independent))]
    }
    // To a pipe sink: through PulseAudio's protocol, and, when a PipeWire server answers, through
    // PipeWire natively in the same run.
    for server in pipeSinkServers() { result += try pipeSinkSync(loops: loops, assets: assets, server: server, label: label) }
    return result
}

/// The sync benchmark's pipe-sink run through `server`.
func pipeSinkSync(loops: Int, assets: URL, server: AudioServerChoice, label: String) throws -> [Distribution] {
    let reader = PipeSinkReader(seconds: Double(loops) * 2.5 + 10)
    try reader.start()
    defer { reader.stop() }
    let rig = try AudioRig(sink: reader.sinkName, server: server)
    defer { rig.stop() }
    let players = try playClicks(loops: loops, on: rig, assets: assets)
    let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
    let pairs = rig.pairs(players: players, onsets: onsets)
    let sink = server == .pipewire ? "pipe sink, native PipeWire" : "pipe sink"
    print("sync: the same to a pipe sink through \(rig.audio.serverDescription) (read \(reader.pacing == .asWritten ? "as written" : "at the nominal rate"), \(reader.realtimeRefusal.map { "without SCHED_FIFO: \($0)" } ?? "SCHED_FIFO")); \(onsets.count) click onsets in the pipe (\(discontinuityNote("reads", reader.discontinuities)), \(reader.starved) starved ticks); sink clock \(String(format: "%+.1f", rig.audio.clock.rateErrorPPM)) ppm; \(rig.audio.underruns) underruns")
    return [Distribution(benchmark: "sync", subject: "\(sink): haptic release − audio heard (engine's audio clock)\(label)", values: pairs.compactMap(\.byEngine)),
            Distribution(benchmark: "sync", subject: "\(sink): haptic release − click read from the pipe (independent)\(label)", values: pairs.compactMap(\.independent))]
}

/// A drift series for the table and the plot.
struct DriftSeries {
    var name: String
    /// (seconds into the run, offset µs).
    var points: [(Double, Double)]
    /// Largest |offset| (µs).
    var maxAbs: Double { points.map { abs($0.1) }.max() ?? 0 }
    /// Largest |offset − first offset| (µs): how far it wandered.
    var maxDrift: Double { guard let f = points.first?.1 else { return 0 }; return points.map { abs($0.1 - f) }.max() ?? 0 }
    /// Least-squares slope in µs per minute.
    var slopePerMinute: Double {
        let n = Double(points.count)
        guard n >= 2 else { return 0 }
        let sx = points.reduce(0) { $0 + $1.0 }, sy = points.reduce(0) { $0 + $1.1 }
        let sxx = points.reduce(0) { $0 + $1.0 * $1.0 }, sxy = points.reduce(0) { $0 + $1.0 * $1.1 }
        let d = n * sxx - sx * sx
        return d > 0 ? (n * sxy - sx * sy) / d * 60 : 0
    }
}

/// drift (real): two engines, each with its own PulseAudio stream into the same sink, play a
/// click+tap every second for `seconds`: one follows the audio clock, the other is open-loop (the
/// audio clock only at start). The second's pairs fall half a second after the first's, so the
/// monitor recording tells them apart.
func realDriftBenchmark(seconds: Double, assets: URL, label: String = "") throws -> [DriftSeries] {
    let recorder = PulseAudioRecorder(source: "@DEFAULT_MONITOR@", seconds: seconds + 15)
    try recorder.start()
    defer { recorder.stop() }
    let slaved = try AudioRig(sync: .followAudioClock)
    let open = try AudioRig(sync: .openLoop)
    // With a PipeWire server, a third engine through PipeWire natively, in the same run.
    let native = PipeWireOutput.answers() ? try AudioRig(sync: .followAudioClock, server: .pipewire) : nil
    let path = "audio/click-48k-mono-16.wav"
    let files = [path: assets.appendingPathComponent(path)]
    var builder = AHAPPatternBuilder()
    let n = max(2, Int(seconds))
    for k in 0..<n {
        builder = builder.audioCustom(at: Double(k), path: path, useVolumeEnvelope: false).transient(at: Double(k), intensity: 1, sharpness: 0.8)
    }
    let pattern = try builder.build()
    // Warm-up: both streams running a little before the measured start.
    Thread.sleep(forTimeInterval: 1)
    let a = try slaved.engine.makePlayer(with: pattern, audioFiles: files)
    let b = try open.engine.makePlayer(with: pattern, audioFiles: files)
    let c = try native?.engine.makePlayer(with: pattern, audioFiles: files)
    let t0 = slaved.engine.currentTime + 0.5
    try a.start(atTime: t0)
    try b.start(atTime: t0 + 0.5)
    try c?.start(atTime: t0 + 0.25)
    Thread.sleep(forTimeInterval: Double(n) + 1.5)
    slaved.history.stop()
    open.history.stop()
    native?.history.stop()
    let (onsets, note) = monitorOnsets(recorder)
    let pa = slaved.pairs(players: [a], onsets: onsets)
    let pb = open.pairs(players: [b], onsets: onsets)
    let pc = native.flatMap { rig in c.map { rig.pairs(players: [$0], onsets: onsets) } } ?? []
    print("drift (real): \(n) click+tap pairs per engine over \(n) s; sink clock by the audio clocks \(String(format: "%+.1f", slaved.audio.clock.rateErrorPPM)) / \(String(format: "%+.1f", open.audio.clock.rateErrorPPM)) ppm; \(onsets.count) onsets (\(note)); underruns \(slaved.audio.underruns)/\(open.audio.underruns)"
          + (native.map { ", native PipeWire: sink clock \(String(format: "%+.1f", $0.audio.clock.rateErrorPPM)) ppm, underruns \($0.audio.underruns)" } ?? "") + label)
    slaved.stop()
    open.stop()
    native?.stop()
    // HAPSYNC_BENCH_DEBUG: the pairs more than 1 ms off, by either measurement (µs).
    if ProcessInfo.processInfo.environment["HAPSYNC_BENCH_DEBUG"] != nil {
        for (name, ps) in [("follows", pa), ("open-loop", pb), ("native", pc)] {
            for p in ps where abs(p.byEngine ?? 0) > 1000 || abs(p.independent ?? 0) > 1000 {
                print(String(format: "  drift %@ %.3f s  engine %+.0f  monitor %+.0f", name, p.elapsed, p.byEngine ?? .nan, p.independent ?? .nan))
            }
        }
    }
    func series(_ name: String, _ ps: [PairMeasurement], _ key: KeyPath<PairMeasurement, Double?>) -> DriftSeries {
        DriftSeries(name: name, points: ps.compactMap { p in p[keyPath: key].map { (p.elapsed, $0) } })
    }
    var result = [series("real, follows audio clock (by engine clock)\(label)", pa, \.byEngine),
                  series("real, open-loop (by engine clock)\(label)", pb, \.byEngine),
                  series("real, follows audio clock (by monitor)\(label)", pa, \.independent),
                  series("real, open-loop (by monitor)\(label)", pb, \.independent)]
    if native != nil {
        result += [series("real, native PipeWire, follows audio clock (by engine clock)\(label)", pc, \.byEngine),
                   series("real, native PipeWire, follows audio clock (by monitor)\(label)", pc, \.independent)]
    }
    return result
}

/// A waveform sync series: burst start − click onset per click+tap pair, in sink frames.
struct WaveformSync {
    var subject: String
    var offsets: [Int]

    /// The p-th percentile of the offsets (frames).
    func percentile(_ p: Double) -> Int { offsets.sorted().nearestRankPercentile(p) ?? 0 }
}

/// sync, waveform: Assets/clicks.ahap played `loops` times with its audio and waveform haptics
/// (`rear`, the DualSense profile) on one 4-channel null sink of the ambient server, its monitor
/// recorded by parec: per pair, where the burst starts (to the sample, by the burst's shape)
/// minus where its click starts, in sink frames. Mixed into the audio's stream (what HapSync does
/// when both play to one sink) beside the baseline of the same run: the drive signal in a stream
/// of its own on the same sink, placed by the sink's clock.
func waveformSyncBenchmark(loops: Int, assets: URL) throws -> [WaveformSync] {
    let (pattern, files) = try clicksPattern(assets: assets)
    let burst = BurstAlignment.burst(profile: .dualSense, intensity: 1, sharpness: 0.8)
    var result: [WaveformSync] = []
    for mixed in [true, false] {
        let recording = try QuadSinkRecording(server: nil)
        let audio = PulseAudioOutput(configuration: .init(sink: recording.sink))
        let output = WaveformOutput(configuration: .init(sink: recording.sink, channels: .rear, audio: mixed ? audio : nil))
        let engine = try HapticEngine(configuration: .init(backend: output, lockMemory: true, audio: audio, hapticLatency: output.configuration.lead))
        try engine.start()
        Thread.sleep(forTimeInterval: 1)   // both streams settled before the first pair
        let t0 = engine.currentTime + 0.3
        var players: [HapticPatternPlayer] = []
        for k in 0..<loops {
            let player = try engine.makePlayer(with: pattern, audioFiles: files)
            try player.start(atTime: t0 + Double(k) * 2.25)
            players.append(player)
        }
        Thread.sleep(forTimeInterval: 0.3 + Double(loops) * 2.25 + 0.5)
        let late = output.lateCommands
        engine.stop()
        players.removeAll()
        let channels = try recording.finish()
        let m = BurstAlignment.measure(audio: channels[0], drive: channels[2], burst: burst)
        let subject = mixed ? "one stream: drive mixed into the audio (sample-locked)" : "baseline: drive in its own stream on the same sink"
        print("sync (waveform, \(mixed ? "mixed" : "two streams")): \(loops) × clicks.ahap on a 4-channel null sink of \(audio.serverName); \(m.clicks.count) clicks, \(m.bursts.count) bursts, \(m.offsets.count) pairs; \(late) late commands; \(audio.underruns) underruns")
        result.append(WaveformSync(subject: subject, offsets: m.offsets))
    }
    return result
}
