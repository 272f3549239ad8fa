// hapsync-bench: HapSync's benchmarks, each figure beside a baseline measured in the same run.
//
//   swift run -c release hapsync-bench [--json FILE] [--corpus DIR] [NAME...]
//
// Benchmarks so far: parse (AHAP reading speed on the conformance corpus), render (compiling
// the corpus into timelines and command streams at 1 kHz, as a multiple of real time), ring (SPSC
// ring vs a Mutex queue), trigger (immediate start to first output), dispatch (release − scheduled
// for dense patterns vs naive sleeping and cyclictest), sync (audio-haptic offset through PulseAudio,
// by the engine's clock and by the sink's monitor). Still to come: drift, cpu, plots.
//
//   --seconds S   length of each dispatch run (default 30; .ci/run uses 1 as a smoke test) Later issues add
// dispatch, sync, drift, ring, trigger, render and cpu here.
import AHAP
import Foundation
import HapSyncCore

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

var args = Array(CommandLine.arguments.dropFirst())
var jsonPath: String?
var corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("shared/conformance/apple-unityplugins/SampleAHAPs")
var names: [String] = []
var dispatchSeconds = 30.0
while let a = args.first {
    args.removeFirst()
    switch a {
    case "-h", "--help":
        print("USAGE: hapsync-bench [--json FILE] [--corpus DIR] [NAME...]\nBenchmarks: parse, render, ring, trigger, dispatch, sync (needs a PulseAudio server)")
        exit(0)
    case "--json": jsonPath = args.isEmpty ? nil : args.removeFirst()
    case "--corpus": corpus = URL(fileURLWithPath: args.isEmpty ? "." : args.removeFirst())
    case "--seconds": dispatchSeconds = args.isEmpty ? 30 : (Double(args.removeFirst()) ?? 30)
    default: names.append(a)
    }
}
let all = ["parse", "render", "ring", "trigger", "dispatch", "sync"]
if names.isEmpty { names = all }
for n in names where !all.contains(n) {
    FileHandle.standardError.write(Data("error: unknown benchmark '\(n)'; known: \(all.joined(separator: ", "))\n".utf8))
    exit(64)
}
if buildKind == "debug" {
    print(String(repeating: "!", count: 72))
    print("!!! DEBUG BUILD: numbers are meaningless. Use: swift run -c release hapsync-bench")
    print(String(repeating: "!", count: 72))
}
var uts = utsname()
uname(&uts)
let kernel = withUnsafeBytes(of: uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, Linux \(kernel), \(buildKind) build")

var rows: [Row] = []
if names.contains("parse") { rows += parseBenchmark(corpus: corpus) }
if names.contains("render") { rows += renderBenchmark(corpus: corpus) }
if names.contains("ring") { rows += ringBenchmark(items: Int(max(1, dispatchSeconds / 30) * 5_000_000)) }
var distributions: [Distribution] = []
do {
    if names.contains("trigger") { distributions += try triggerBenchmark(count: dispatchSeconds < 5 ? 20 : 200) }
    if names.contains("dispatch") { distributions += try dispatchBenchmark(seconds: dispatchSeconds) }
    if names.contains("sync") {
        let assets = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Assets")
        distributions += try syncBenchmark(loops: max(1, Int(dispatchSeconds / 2.25)), assets: assets)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}

func fmt(_ x: Double) -> String { x >= 100 ? String(Int(x.rounded())) : String((x * 100).rounded() / 100) }
print("")
print("| benchmark | subject | unit | median | min | max | vs baseline |")
print("|---|---|---|---:|---:|---:|---:|")
for r in rows {
    print("| \(r.benchmark) | \(r.subject) | \(r.unit) | \(fmt(r.median)) | \(fmt(r.min)) | \(fmt(r.max)) | \(r.ratioToBaseline.map { fmt($0) + "x" } ?? "-") |")
}
if !distributions.isEmpty {
    print("")
    print("| benchmark | subject | count | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs | > 1 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for d in distributions {
        print("| \(d.benchmark) | \(d.subject) | \(d.values.count) | \(fmt(d.percentile(50))) | \(fmt(d.percentile(90))) | \(fmt(d.percentile(99))) | \(fmt(d.percentile(99.9))) | \(fmt(d.values.max() ?? 0)) | \(d.overOneMillisecond) |")
    }
}
if let jsonPath {
    let doc: JSONValue = .object([
        ("machine", .object([("cores", .integer(ProcessInfo.processInfo.activeProcessorCount)), ("kernel", .string(kernel)), ("build", .string(buildKind))])),
        ("distributions", .array(distributions.map { d in
            .object([("benchmark", .string(d.benchmark)), ("subject", .string(d.subject)), ("count", .integer(d.values.count)),
                     ("p50", .number(d.percentile(50))), ("p90", .number(d.percentile(90))), ("p99", .number(d.percentile(99))),
                     ("p999", .number(d.percentile(99.9))), ("max", .number(d.values.max() ?? 0)), ("over1ms", .integer(d.overOneMillisecond))])
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
