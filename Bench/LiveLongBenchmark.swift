import Foundation
import Glibc
import HapSyncMeasurement
import HapSyncPulseAudio
import HapSyncTestSupport

/// `hapsync-bench live-long`: one `hapsync live` run of `seconds` (10 minutes by default), a click
/// every half second played into the live sink with paplay, the real sink a pipe sink read at
/// SCHED_FIFO with a timestamp per read. Does the sync hold and the lag stay put over the run?
/// - each click's transient against where the pipe heard it, the first minute (the baseline) beside
///   the last;
/// - the lag's growth: how much longer the pipe took from the first click to the last than the
///   file's span between them (the live sink, paplay's stream and the pipe sink run on one clock
///   here, so any growth is the pass-through's), unless `cardPPM` sets the pipe's reader (the
///   real sink's "sound card") that far off the system's clock the live sink runs on, as a real
///   card's crystal is (PulseAudio only: PipeWire's pipe sink keeps its graph's clock), when the
///   growth says how well the pass-through follows the two clocks apart;
/// - how often the pass-through fixed its distance anew, its underruns and late frames, and CPU.
func liveLongBenchmark(seconds: Double, label: String = "", cardPPM: Double = 0) throws -> [Row] {
    guard PulseAudioOutput().canConnect() else {
        print("live-long: no PulseAudio-protocol server answers (run under .ci/with-pulse or .ci/with-pipewire); left out")
        return []
    }
    guard let paplay = ["/usr/bin/paplay", "/bin/paplay"].first(where: { (path: String) in access(path, X_OK) == 0 }) else {
        print("live-long: paplay is not installed (Debian: pulseaudio-utils); left out")
        return []
    }
    let hapsync = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("hapsync")
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-bench-live-long-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    // The clicks of LiveTests: decaying 180 Hz bursts, every 0.5 s from 0.5 s.
    let rate = 48_000, spacing = 0.5
    var mono = [Float](repeating: 0, count: Int(seconds * Double(rate)))
    var clickFrames: [Int] = []
    var start = Int(0.5 * Double(rate))
    while start + 1_440 < mono.count {
        for i in 0..<1_440 { mono[start + i] = 0.8 * Float(exp(-Double(i) / 192) * sin(2 * .pi * 180 * Double(i) / Double(rate))) }
        clickFrames.append(start)
        start += Int(spacing * Double(rate))
    }
    let track = dir.appendingPathComponent("clicks.wav")
    try WAVWriter.write(mono, sampleRate: rate, format: .pcm16, to: track)
    mono = []
    let server = (try? LiveTools.run("/usr/bin/pactl", ["info"]))?.split(separator: "\n")
        .first { $0.hasPrefix("Server Name:") }.map { $0.dropFirst(12).trimmingCharacters(in: .whitespaces) } ?? "server"

    let reader = PipeSinkReader(seconds: seconds + 20, cardPPM: cardPPM)
    try reader.start()
    defer { reader.stop() }
    let trace = dir.appendingPathComponent("live.jsonl")
    print("live-long: \(clickFrames.count) clicks over \(Int(seconds)) s into hapsync-live on \(server)\(label)")
    let (text, cpu, audio, notes) = try LiveTools.runLiveNoting(hapsync, ["live", "--sink", reader.sinkName, "--seconds", String(seconds + 4),
                                                                   "--haptics", "trace:\(trace.path)", "--force"]) {
        _ = try LiveTools.run(paplay, ["--device=hapsync-live", track.path])
    }
    // What the run changed by itself (growths and steps back after underruns), and when: the
    // play began at 0; paplay's file has its first click at 0.5 s (the poll: within 1 s after).
    for note in notes { print(String(format: "live-long: at %.0f s: ", note.at) + note.line) }

    let heardFrames = ClickOnsets.frames(in: reader.recording)
    let heard = heardFrames.compactMap { reader.heardTime(ofFrame: Int64($0)) }.map { Double($0) / 1e9 }
    let taps = LiveTools.transients(trace).map { Double($0) / 1e9 }.sorted()
    // A few clicks lost to underruns still leave the run measured (the span counts from the first
    // and last click, so those must be heard: a span a half-second off is said to be).
    guard heard.count >= clickFrames.count - 10, let first = heard.first, let last = heard.last else {
        print("live-long: the pipe heard \(heard.count) of \(clickFrames.count) clicks; \(text)")
        return []
    }
    let unheard = clickFrames.count - heard.count
    // HAPSYNC_BENCH_DEBUG: each click's time at the pipe from the first, against the file's.
    if ProcessInfo.processInfo.environment["HAPSYNC_BENCH_DEBUG"] != nil {
        for (k, h) in heard.enumerated() where k < clickFrames.count {
            let file = Double(clickFrames[k] - clickFrames[0]) / Double(rate)
            print(String(format: "click %d: at the pipe %.4f s after the first, in the file %.4f s: %+.3f ms", k, h - heard[0], file, (h - heard[0] - file) * 1000))
        }
    }
    // Per click: its transient − when the pipe heard it (ms), the nearest within 25 ms.
    let errors = heard.map { h -> (at: Double, ms: Double?) in
        let t = taps.min { abs($0 - h) < abs($1 - h) }
        return (h - first, t.flatMap { abs($0 - h) <= 0.025 ? ($0 - h) * 1000 : nil })
    }
    let firstMinute = errors.filter { $0.at < 60 }.compactMap(\.ms).sorted()
    let lastMinute = errors.filter { $0.at >= (last - first) - 60 }.compactMap(\.ms).sorted()
    let missed = errors.filter { $0.ms == nil }.count
    // The file's span between its first and last click, against the pipe's.
    let growth = ((last - first) - Double(clickFrames.last! - clickFrames.first!) / Double(rate)) * 1000
    func median(_ x: [Double]) -> Double { x.isEmpty ? .nan : x[x.count / 2] }
    print("live-long (\(server)\(label), played on: \(audio ?? "not said")): \(taps.count) transients for \(heard.count) clicks heard (\(unheard) of the file's not heard), \(missed) without one within 25 ms; "
          + "transient − click heard: first minute p50 \(String(format: "%.2f", median(firstMinute))) ms, last minute p50 \(String(format: "%.2f", median(lastMinute))) ms; "
          + "the pipe's span from the first click to the last − the file's: \(String(format: "%.2f", growth)) ms; "
          + "the pipe: \(reader.discontinuities.count) discontinuities, \(reader.starved) starved reads; "
          + "\(text.split(separator: "\n").filter { $0.hasPrefix("lag") || $0.hasPrefix("sound played") || $0.hasPrefix("capture") || $0.hasPrefix("transients") }.joined(separator: "; "))")
    let run = seconds >= 120 ? "\(Int((seconds / 60).rounded())) min" : "\(Int(seconds)) s"
    var rows: [Row] = []
    if !firstMinute.isEmpty, !lastMinute.isEmpty {
        rows.append(Row(benchmark: "live-long", subject: "transient − click heard at the real sink, last minute of \(run), \(server)\(label)", unit: "ms",
                        median: median(lastMinute), min: lastMinute.first!, max: lastMinute.last!, ratioToBaseline: nil))
        rows.append(Row(benchmark: "live-long", subject: "baseline: the same, first minute", unit: "ms",
                        median: median(firstMinute), min: firstMinute.first!, max: firstMinute.last!, ratioToBaseline: nil))
    }
    rows.append(Row(benchmark: "live-long", subject: "lag growth over \(run) (pipe's span − file's), \(server)\(label)", unit: "ms",
                    median: growth, min: growth, max: growth, ratioToBaseline: nil))
    rows.append(Row(benchmark: "live-long", subject: "clicks without a transient within 25 ms, of \(heard.count)", unit: "clicks",
                    median: Double(missed), min: Double(missed), max: Double(missed), ratioToBaseline: nil))
    rows.append(Row(benchmark: "live-long", subject: "CPU of hapsync live over \(run), \(server)\(label)", unit: "% of a core",
                    median: cpu, min: cpu, max: cpu, ratioToBaseline: nil))
    return rows
}
