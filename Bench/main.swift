// hapsync-bench: HapSync's benchmarks, each figure beside a baseline measured in the same run.
//
//   swift run -c release hapsync-bench [--seconds S] [--rounds N] [--json FILE] [--plot DIR] [--corpus DIR] [--onset-set N] [NAME...]
//
// Benchmarks: parse (AHAP reading speed on the conformance corpus vs JSONDecoder), render (the
// corpus compiled into timelines and 1 kHz command streams, as a multiple of real time), ring (SPSC
// ring vs a Mutex queue), inversion (a SCHED_FIFO reader of live parameters and a normal writer
// on one core: SeqLock vs the spinning sequence lock it replaced), trigger (immediate start to first output vs a semaphore wake), dispatch
// (release − scheduled for dense patterns vs naive sleeping and cyclictest), sync (audio-haptic
// offset through PulseAudio, by the engine's clock and by the sink's monitor), underrun (the same
// to a pipe sink while the audio thread is starved, beside a run without), quantum-step (PipeWire
// natively: taps against their clicks at a pipe sink while another stream changes the graph's
// quantum, the step PipeWire 0.3.65 makes expected and, the baseline, not), first-sound (an
// immediate start with audio to its first sound read from a pipe sink), launch (`hapsync play`
// spawned to its first command, beside `--audio none`, and where its first taps land), drift (offset over a
// long playback: real, following the audio clock vs open-loop; simulated 10 min at −200/0/+200 ppm),
// cpu (process CPU idle and playing, vs the process without an engine), serve (the OSC service:
// latency and throughput beside in-process starts; time-tagged plays with audio against their
// tags, by the haptic and by a pipe sink), generate (`hapsync generate`'s
// onset F-measure on a labelled set it synthesizes, clean and at 20 to 0 dB SNR, and its speed, each
// beside aubioonset on the same files; Apple's Ricochet transients beside ours), live-onsets (the
// streaming onset detector of `hapsync live` scored on generate's labelled set beside the offline
// detector in the same run, its decision delay against its look-ahead, and both detectors' CPU
// cost as a multiple of real time), live (`hapsync live` itself: labelled drum files played into
// its sink with paplay, each transient against when its hit is heard at a pipe sink, its onset F
// beside the offline detector's and aubioonset's on the same files, its lag and CPU; under --load
// as well), live-nodelay (`hapsync live --no-delay` following the pipe sink the same files are
// played into: each transient's lag after its hit is heard, measured beside the lag the run
// reports, and its onset F; under --load as well),
// live-long (one 10-minute `hapsync live` run of clicks: its last minute's sync beside its first,
// the lag's growth; only when named; with --load, under the load). See Bench/README.md.
//
// The options are declared once below (`hapsync-bench --help` lists them); a bad value is a
// usage error (exit status 64), never a silent default.
import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCLI
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport

#if DEBUG
let buildKind = "debug"
#else
let buildKind = "release"
#endif

/// Monotonic nanoseconds.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Median of a non-empty list.
func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// One measured figure.
struct Row {
    var benchmark: String
    var subject: String
    var unit: String
    var median: Double
    var min: Double
    var max: Double
    var ratioToBaseline: Double?
}

/// Times several bodies (each processing `work` items) interleaved, so that all of them see the
/// same machine load: one warm-up each, then `runs` rounds, each round timing every body once for
/// enough iterations to last about `target` seconds. Returns items per second per body per round.
func interleaved(work: Int, runs: Int = 7, target: Double = 0.25, _ bodies: [() -> Void]) -> [[Double]] {
    let iterations = bodies.map { body -> Int in
        body()
        var n = 1
        while true {
            let t0 = now()
            for _ in 0..<n { body() }
            let dt = Double(now() - t0) / 1e9
            if dt >= target / 4 || n >= 1 << 20 { return max(1, Int(Double(n) * target / max(dt, 1e-9))) }
            n *= 4
        }
    }
    var results = Array(repeating: [Double](), count: bodies.count)
    for _ in 0..<runs {
        for (i, body) in bodies.enumerated() {
            let t0 = now()
            for _ in 0..<iterations[i] { body() }
            results[i].append(Double(work * iterations[i]) / (Double(now() - t0) / 1e9))
        }
    }
    return results
}

/// The baseline's view of an AHAP file: plain Codable structs, decoded by Foundation with JSON5
/// allowed (for trailing commas); no defaults, clamping, paths or positions.
struct CodableAHAP: Decodable {
    struct Param: Decodable { var ParameterID: String; var ParameterValue: Double?; var Time: Double? }
    struct Point: Decodable { var Time: Double; var ParameterValue: Double }
    struct Event: Decodable {
        var Time: Double; var EventType: String; var EventDuration: Double?; var EventParameters: [Param]?
        var EventWaveformPath: String?; var EventWaveformUseVolumeEnvelope: Bool?; var EventWaveformLoopEnabled: Bool?
    }
    struct Curve: Decodable { var Time: Double; var ParameterID: String; var ParameterCurveControlPoints: [Point] }
    struct Entry: Decodable { var Event: Event?; var Parameter: Param?; var ParameterCurve: Curve? }
    var Version: Double?
    var Pattern: [Entry]
}

func parseBenchmark(corpus: URL) -> [Row] {
    let files = (FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? [])
        .filter { $0.pathExtension == "ahap" }.sorted { $0.path < $1.path }
    guard !files.isEmpty else {
        FileHandle.standardError.write(Data("error: no .ahap files under \(corpus.path); pass --corpus DIR\n".utf8))
        exit(1)
    }
    let data = files.map { FileManager.default.contents(atPath: $0.path)! }
    let bytes = data.reduce(0) { $0 + $1.count }
    let reader = AHAPReader()
    var sink = 0
    let decoder = JSONDecoder()
    decoder.allowsJSON5 = true
    let measured = interleaved(work: files.count, [
        { for d in data { sink &+= reader.diagnose(data: d).diagnostics.count } },
        { for d in data { if let f = try? decoder.decode(CodableAHAP.self, from: d) { sink &+= f.Pattern.count } } },
    ])
    let ours = measured[0], foundation = measured[1]
    precondition(sink != 0)
    func row(_ subject: String, _ xs: [Double], baseline: [Double]?) -> [Row] {
        let mb = Double(bytes) / Double(files.count) / 1e6
        // The ratio is the median of the per-round ratios (each round ran both side by side).
        let ratio = baseline.map { b in median(zip(xs, b).map { $0 / $1 }) }
        return [
            Row(benchmark: "parse", subject: subject, unit: "files/s", median: median(xs), min: xs.min()!, max: xs.max()!, ratioToBaseline: ratio),
            Row(benchmark: "parse", subject: subject, unit: "MB/s", median: median(xs) * mb, min: xs.min()! * mb, max: xs.max()! * mb, ratioToBaseline: ratio),
        ]
    }
    print("parse: \(files.count) files, \(bytes) bytes, read from memory; 1 warm-up + 7 interleaved timed rounds")
    return row("AHAPReader (JSON + AHAP rules + diagnostics)", ours, baseline: foundation)
        + row("baseline: JSONDecoder allowsJSON5 into Codable structs (no checks)", foundation, baseline: nil)
}

func renderBenchmark(corpus: URL) -> [Row] {
    let files = (FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? [])
        .filter { $0.pathExtension == "ahap" }.sorted { $0.path < $1.path }
    let patterns = files.compactMap { try? AHAPReader().read(contentsOf: $0).pattern }
    // Audio lengths as the corpus's files have them (read once, outside the timing).
    let assets = corpus.deletingLastPathComponent().appendingPathComponent("StreamingAssets")
    var lengths: [String: Double] = [:]
    for p in patterns { for e in p.events { if let w = e.waveformPath, let i = try? AudioFileInfo(contentsOf: assets.appendingPathComponent(w)) { lengths[w] = i.duration } } }
    let timelines = patterns.compactMap { try? PatternTimeline(pattern: $0, audioLength: { lengths[$0] }) }
    let seconds = timelines.reduce(0) { $0 + $1.end }
    var sink = 0
    let perSecond = interleaved(work: 1, [{
        for p in patterns { if let t = try? PatternTimeline(pattern: p, audioLength: { lengths[$0] }) { sink &+= t.commands.count } }
    }])[0]
    precondition(sink != 0)
    let realTime = perSecond.map { $0 * seconds }
    print("render: \(patterns.count) patterns, \(String(format: "%.3f", seconds)) s of pattern time (until the last release), 1 kHz control rate")
    return [Row(benchmark: "render", subject: "PatternTimeline (timeline + command stream), whole corpus", unit: "x real time",
                median: median(realTime), min: realTime.min()!, max: realTime.max()!, ratioToBaseline: nil)]
}

// MARK: - Main

let secondsOption = Option<Double>("seconds", "S", .decimal("seconds", .above(0, upTo: 86_400)), default: 30,
                                   help: "length of each dispatch benchmark; the real drift runs 6 S, sync about S, live-long 20 S, and .ci/run uses 1 as a smoke test")
let roundsOption = Option<Int>("rounds", "N", .integer(nil, 1...1000), default: 3, help: "dispatch rounds, interleaving the subjects")
let jsonOption = Option<String?>("json", "FILE", .text, help: "also write the results as JSON to FILE")
let plotOption = Option<String?>("plot", "DIR", .text, help: "write SVG charts (dispatch histograms, drift over time) into DIR")
let corpusOption = Option<URL?>("corpus", "DIR", .folder, help: "the AHAP files of parse, render and generate's Apple comparison (default: the conformance corpus in ../shared)")
let setOption = Option<Int>("onset-set", "N", .integer(nil, 0...1000), default: 0,
                            help: "generate and live-onsets: which draw of the labelled onset set to score (0, Bench/README.md's; others are held out from tuning)")
let loadOption = Option<String>("load", "N|auto|none", .text, default: "none",
                                help: "sync, underrun, live and live-nodelay: also run, drift and live-long: run, with N busy threads at nice 0; auto: two per core")
let cardOption = Option<Double>("card-ppm", "P", .decimal("ppm", .from(-2000, to: 2000)), default: 0,
                                help: "live-long: the real sink's reader P ppm off the system's clock, as a sound card's crystal is (PulseAudio only)")
let all = ["parse", "render", "ring", "inversion", "trigger", "dispatch", "sync", "underrun", "quantum-step", "first-sound", "launch", "drift", "cpu", "serve", "generate", "live-onsets", "live", "live-nodelay", "live-long"]
let syntax = CommandSyntax(command: "hapsync-bench", about: """
    Benchmarks: \(all.joined(separator: ", ")) (sync, real drift and the
    audio rows of cpu need a sound server: run under .ci/with-pulse or .ci/with-pipewire on a headless machine). Default: all but live-long.
    """, groups: [OptionGroup([secondsOption, roundsOption, jsonOption, plotOption, corpusOption, setOption, loadOption, cardOption])], positionals: .any("NAME"))
let parsed: ParsedArguments
do throws(CLIError) {
    parsed = try syntax.parse(Array(CommandLine.arguments.dropFirst()))
    if BusyLoad.threads(parsing: parsed[loadOption]) == nil {
        throw syntax.usageError("--load must be none, auto or a count from 0 to 64, not '\(parsed[loadOption])'")
    }
    if let unknown = parsed.positional.first(where: { !all.contains($0) }) {
        throw syntax.usageError("unknown benchmark '\(unknown)'; known: \(all.joined(separator: ", "))")
    }
} catch {
    exit(error.report(to: .standard))
}
let jsonPath = parsed[jsonOption]
let corpus = parsed[corpusOption] ?? TestFiles.conformance.appendingPathComponent("SampleAHAPs")
let names = parsed.positional.isEmpty ? all.filter { $0 != "live-long" } : parsed.positional
let dispatchSeconds = parsed[secondsOption]
let rounds = parsed[roundsOption]
let plotDirectory = parsed[plotOption]
let load = BusyLoad(threads: BusyLoad.threads(parsing: parsed[loadOption]) ?? 0)
if buildKind == "debug" {
    print(String(repeating: "!", count: 72))
    print("!!! DEBUG BUILD: numbers are meaningless. Use: swift run -c release hapsync-bench")
    print(String(repeating: "!", count: 72))
}
var uts = utsname()
uname(&uts)
let kernel = withUnsafeBytes(of: uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
// Whether this process gets SCHED_FIFO and locked memory: ask the way the engine does.
let probe = try? HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: true))
try? probe?.start()
let granted = probe.map { "\($0.realtimeStatus)" } ?? "unknown"
probe?.stop()
let cpuModel = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
    .first { $0.hasPrefix("model name") }?.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
let machine = "\(ProcessInfo.processInfo.activeProcessorCount) cores (\(cpuModel)), Linux \(kernel), \(buildKind) build, \(granted)"
let machineShort = "\(ProcessInfo.processInfo.activeProcessorCount) cores, Linux \(kernel), \(buildKind) build, "
    + (probe?.realtimeStatus.fifoPriority != nil ? "SCHED_FIFO granted" : "no SCHED_FIFO")
print("machine: \(machine)")
print("date: \(ISO8601DateFormatter().string(from: Date()))")

var rows: [Row] = []
if names.contains("parse") { rows += parseBenchmark(corpus: corpus) }
if names.contains("render") { rows += renderBenchmark(corpus: corpus) }
if names.contains("ring") { rows += ringBenchmark(items: Int(max(1, dispatchSeconds / 30) * 5_000_000)) }
var distributions: [Distribution] = []
var drift: [DriftSeries] = []
var waveformSync: [WaveformSync] = []
do {
    if names.contains("inversion") { distributions += inversionBenchmark(seconds: max(1, dispatchSeconds / 6)) }
    if names.contains("trigger") { distributions += try triggerBenchmark(count: dispatchSeconds < 5 ? 20 : 200) }
    if names.contains("dispatch") { distributions += try dispatchBenchmark(seconds: dispatchSeconds, rounds: rounds) }
    let assets = TestFiles.assets
    /// `body` with no label, then, with the load option, again under the load with its label.
    func alsoUnderLoad(_ name: String, _ body: (String) throws -> [Distribution]) throws -> [Distribution] {
        var result = try body("")
        guard load.threads > 0 else { return result }
        print("\(name): the same under \(load.threads) busy threads at nice 0")
        load.start()
        defer { load.stop() }
        result += try body(load.label)
        return result
    }
    if names.contains("sync") {
        distributions += try alsoUnderLoad("sync") { try syncBenchmark(loops: max(1, Int(dispatchSeconds / 2.25)), assets: assets, label: $0) }
        waveformSync = try waveformSyncBenchmark(loops: max(1, Int(dispatchSeconds / 4.5)), assets: assets)
    }
    if names.contains("first-sound") { distributions += try firstSoundBenchmark(starts: max(2, Int(dispatchSeconds / 2.5)), assets: assets) }
    if names.contains("launch") { distributions += try launchBenchmark(runs: max(2, Int(dispatchSeconds / 3)), assets: assets) }
    if names.contains("underrun") {
        distributions += try alsoUnderLoad("underrun") { try underrunBenchmark(loops: max(1, Int(dispatchSeconds / 2.25)), assets: assets, label: $0) }
    }
    if names.contains("quantum-step") { distributions += try quantumStepBenchmark(seconds: max(2.1, dispatchSeconds), assets: assets) }
    if names.contains("drift") {
        // Simulated: 10 minutes (1 in the smoke run) at -200, 0 and +200 ppm, both modes.
        let minutes = dispatchSeconds < 5 ? 1.0 : 10.0
        for ppm in [-200.0, 0, 200] {
            for mode in [HapticEngine.AudioSync.followAudioClock, .openLoop] {
                drift.append(try simulatedDrift(minutes: minutes, ppm: ppm, sync: mode))
            }
        }
        print("drift (simulated): \(Int(minutes)) min of a tap every 100 ms on a manual clock, sink skewed −200/0/+200 ppm, its timing observed every 10 ms with ±300 µs jitter")
        if load.threads > 0 { print("drift (real): under \(load.threads) busy threads at nice 0") }
        load.start()
        defer { load.stop() }
        drift += try realDriftBenchmark(seconds: max(3, dispatchSeconds * 6), assets: assets, label: load.label)
    }
    if names.contains("cpu") { rows += try cpuBenchmark(seconds: max(1, dispatchSeconds / 3)) }
    if names.contains("serve") {
        let serve = try serveBenchmark(count: dispatchSeconds < 5 ? 20 : 200, packets: dispatchSeconds < 5 ? 10_000 : 100_000)
        distributions += serve.distributions
        rows += serve.rows
        // With audio, to a pipe sink, when a sound server answers.
        if PulseAudioOutput().canConnect() {
            distributions += try serveAudioBenchmark(count: dispatchSeconds < 5 ? 2 : 8, assets: assets)
        } else {
            print("serve (audio): no sound server answers; left out")
        }
    }
    if names.contains("generate") { rows += try generateBenchmark(short: dispatchSeconds < 5, rounds: rounds, assets: assets, corpus: corpus, variant: parsed[setOption]) }
    if names.contains("live-onsets") { rows += try liveOnsetBenchmark(short: dispatchSeconds < 5, rounds: rounds, assets: assets, variant: parsed[setOption]) }
    if names.contains("live") {
        var liveRows: [Row] = []
        distributions += try alsoUnderLoad("live") { label in
            let result = try liveBenchmark(short: dispatchSeconds < 5, assets: assets, label: label)
            liveRows += result.rows
            return result.distributions
        }
        rows += liveRows
    }
    if names.contains("live-nodelay") {
        var liveRows: [Row] = []
        distributions += try alsoUnderLoad("live-nodelay") { label in
            let result = try liveBenchmark(short: dispatchSeconds < 5, assets: assets, label: label, noDelay: true)
            liveRows += result.rows
            return result.distributions
        }
        rows += liveRows
    }
    // Not in the default set: it takes 20 S (10 minutes by default); with --load, the one run is
    // under the load (its baseline is its own first minute).
    if parsed.positional.contains("live-long") {
        if load.threads > 0 { print("live-long: under \(load.threads) busy threads at nice 0") }
        load.start()
        defer { load.stop() }
        let card = parsed[cardOption]
        rows += try liveLongBenchmark(seconds: dispatchSeconds * 20, label: load.label + (card == 0 ? "" : ", the card \(card > 0 ? "+" : "-")\(fmt(abs(card))) ppm"), cardPPM: card)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}

func fmt(_ x: Double) -> String { x >= 100 ? String(Int(x.rounded())) : String((x * 100).rounded() / 100) }
if !rows.isEmpty {
    print("")
    print("| benchmark | subject | unit | median | min | max | vs baseline |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows {
        print("| \(r.benchmark) | \(r.subject) | \(r.unit) | \(fmt(r.median)) | \(fmt(r.min)) | \(fmt(r.max)) | \(r.ratioToBaseline.map { fmt($0) + "x" } ?? "-") |")
    }
}
if !distributions.isEmpty {
    print("")
    print("| benchmark | subject | count | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs | > 1 ms | p99 by round µs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for d in distributions {
        let byRound = d.roundP99.isEmpty ? "-" : d.roundP99.map(fmt).joined(separator: " / ")
        print("| \(d.benchmark) | \(d.subject) | \(d.values.count) | \(fmt(d.percentile(50))) | \(fmt(d.percentile(90))) | \(fmt(d.percentile(99))) | \(fmt(d.percentile(99.9))) | \(fmt(d.values.max() ?? 0)) | \(d.overOneMillisecond) | \(byRound) |")
    }
}
if !waveformSync.isEmpty {
    print("")
    print("| sync (waveform) | pairs | p50 samples | p99 samples | max abs samples | max abs µs at 48 kHz |")
    print("|---|---:|---:|---:|---:|---:|")
    for w in waveformSync {
        let worst = w.offsets.map(abs).max() ?? 0
        print("| \(w.subject) | \(w.offsets.count) | \(w.percentile(50)) | \(w.percentile(99)) | \(worst) | \(fmt(Double(worst) * 1e6 / 48_000)) |")
    }
}
if !drift.isEmpty {
    print("")
    print("| drift | pairs | first offset µs | max abs offset µs | max drift from first µs | trend µs/min |")
    print("|---|---:|---:|---:|---:|---:|")
    for d in drift {
        print("| \(d.name) | \(d.points.count) | \(fmt(d.points.first?.1 ?? 0)) | \(fmt(d.maxAbs)) | \(fmt(d.maxDrift)) | \(fmt(d.slopePerMinute)) |")
    }
}
if let plotDirectory {
    try? FileManager.default.createDirectory(atPath: plotDirectory, withIntermediateDirectories: true)
    func write(_ name: String, _ chart: Chart) {
        let path = (plotDirectory as NSString).appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(chart.svg().utf8))
        print("wrote \(path)")
    }
    let dispatch = distributions.filter { $0.benchmark == "dispatch" }
    for pattern in ["1 kHz level stream", "taps 10-30 ms apart"] {
        let subjects = dispatch.filter { $0.subject.hasSuffix(pattern) || $0.subject.hasPrefix("cyclictest") }
        guard !subjects.isEmpty else { continue }
        var chart = Chart(title: "Dispatch error: \(pattern)", xLabel: "release − scheduled (µs, log)", yLabel: "commands per bin (log)",
                          xLog: true, yLog: true, note: "\(machineShort); empty bins drawn at 0.5")
        for (i, d) in subjects.enumerated() {
            chart.series.append(.init(name: "\(d.subject) (p99 \(fmt(d.percentile(99))) µs)", color: Chart.palette[i % 8], points: logHistogram(d.values), steps: true))
        }
        write("dispatch-\(pattern.hasPrefix("1 kHz") ? "1khz" : "taps").svg", chart)
    }
    let real = drift.filter { $0.name.hasPrefix("real") }
    if !real.isEmpty {
        var chart = Chart(title: "Audio-haptic offset over a long playback (PulseAudio null sink)", xLabel: "seconds into the run",
                          yLabel: "haptic release − audio heard (ms)", note: machineShort)
        for (i, d) in real.enumerated() {
            chart.series.append(.init(name: "\(d.name): max |offset| \(fmt(d.maxAbs / 1000)) ms", color: Chart.palette[i % 8],
                                      points: d.points.map { ($0.0, $0.1 / 1000) }, dashed: d.name.contains("monitor")))
        }
        write("drift-real.svg", chart)
    }
    let simulated = drift.filter { $0.name.hasPrefix("simulated") }
    if !simulated.isEmpty {
        var chart = Chart(title: "Simulated drift: sink clock skewed by −200, 0, +200 ppm", xLabel: "pattern time (s)",
                          yLabel: "haptic release − audio heard (ms)", note: "observations every 10 ms with ±300 µs jitter")
        for (i, d) in simulated.enumerated() {
            let step = max(1, d.points.count / 600)
            chart.series.append(.init(name: "\(d.name): max |offset| \(fmt(d.maxAbs)) µs", color: Chart.palette[i % 8],
                                      points: stride(from: 0, to: d.points.count, by: step).map { (d.points[$0].0, d.points[$0].1 / 1000) },
                                      dashed: d.name.contains("open-loop")))
        }
        write("drift-simulated.svg", chart)
        var zoom = Chart(title: "Simulated drift, following the audio clock only", xLabel: "pattern time (s)",
                         yLabel: "haptic release − audio heard (µs)", note: "observations every 10 ms with ±300 µs jitter")
        for (i, d) in simulated.filter({ !$0.name.contains("open-loop") }).enumerated() {
            let step = max(1, d.points.count / 600)
            zoom.series.append(.init(name: "\(d.name): max |offset| \(fmt(d.maxAbs)) µs", color: Chart.palette[(2 * i) % 8],
                                     points: stride(from: 0, to: d.points.count, by: step).map { d.points[$0] }))
        }
        write("drift-simulated-following.svg", zoom)
    }
}
if let jsonPath {
    let doc: JSONValue = .object([
        ("machine", .object([("cores", .integer(ProcessInfo.processInfo.activeProcessorCount)), ("cpu", .string(cpuModel)), ("kernel", .string(kernel)),
                             ("build", .string(buildKind)), ("realtime", .string(granted))])),
        ("distributions", .array(distributions.map { d in
            .object([("benchmark", .string(d.benchmark)), ("subject", .string(d.subject)), ("count", .integer(d.values.count)),
                     ("p50", .number(d.percentile(50))), ("p90", .number(d.percentile(90))), ("p99", .number(d.percentile(99))),
                     ("p999", .number(d.percentile(99.9))), ("max", .number(d.values.max() ?? 0)), ("over1ms", .integer(d.overOneMillisecond)),
                     ("p99ByRound", .array(d.roundP99.map { .number($0) }))])
        })),
        ("waveformSync", .array(waveformSync.map { w in
            .object([("subject", .string(w.subject)), ("pairs", .integer(w.offsets.count)), ("p50Samples", .integer(w.percentile(50))),
                     ("p99Samples", .integer(w.percentile(99))), ("maxAbsSamples", .integer(w.offsets.map(abs).max() ?? 0))])
        })),
        ("drift", .array(drift.map { d in
            .object([("series", .string(d.name)), ("pairs", .integer(d.points.count)), ("maxAbsOffsetMicroseconds", .number(d.maxAbs)),
                     ("maxDriftMicroseconds", .number(d.maxDrift)), ("trendMicrosecondsPerMinute", .number(d.slopePerMinute))])
        })),
        ("results", .array(rows.map { r in
            .object([("benchmark", .string(r.benchmark)), ("subject", .string(r.subject)), ("unit", .string(r.unit)),
                     ("median", .number(r.median)), ("min", .number(r.min)), ("max", .number(r.max)),
                     ("ratioToBaseline", r.ratioToBaseline.map { .number($0) } ?? JSONValue(.null))])
        })),
    ])
    _ = FileManager.default.createFile(atPath: jsonPath, contents: Data(JSONWriter.string(doc).utf8))
    print("\nwrote \(jsonPath)")
}
