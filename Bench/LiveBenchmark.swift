import Foundation
import Glibc
import HapSyncConcurrency
import HapSyncCore
import HapSyncGeneration
import HapSyncMeasurement
import HapSyncPulseAudio
import HapSyncTestSupport

/// `hapsync-bench live`: `hapsync live` as a user runs it, on the sound server this runs under.
/// Files of the labelled onset set (`OnsetTestSet`: the clean drum track, and the same over the
/// music bed at 10 dB) are played with paplay into the live sink; the real sink is a pipe sink
/// read at SCHED_FIFO with a timestamp per read. Per file:
/// - where each label is heard: the pass-through copies the file's samples exactly (16-bit PCM
///   into a float sink at full volume), so the recording's first sound is the file's first
///   sound, and label frame l is heard at the pipe's time of recording frame r0 + l − f0;
/// - the live run's transients (its trace) scored against those heard times, ±25 ms, beside
///   `generate`'s offline detector on the same file against the labels (the baseline);
/// - each transient matched to a label: transient − when that label is heard at the real sink
///   (µs), beside the offline detector's onset − label time;
/// - the lag `hapsync live` reports, and its CPU time over the run (utime + stime from /proc).
func liveBenchmark(short: Bool, assets: URL, label: String) throws -> (rows: [Row], distributions: [Distribution]) {
    guard PulseAudioOutput().canConnect() else {
        print("live: no PulseAudio-protocol server answers (run under .ci/with-pulse or .ci/with-pipewire); left out")
        return ([], [])
    }
    guard let paplay = ["/usr/bin/paplay", "/bin/paplay"].first(where: { (path: String) in access(path, X_OK) == 0 }) else {
        print("live: paplay is not installed (Debian: pulseaudio-utils); left out")
        return ([], [])
    }
    let hapsync = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("hapsync")
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-bench-live-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let set = try OnsetTestSet(directory: dir, seconds: short ? 6 : 24, formats: [(48_000, .pcm16)], assets: assets)
    let files = set.files.filter { $0.snr == nil || ($0.background == .music && $0.snr == 10) }
    let server = (try? LiveTools.run("/usr/bin/pactl", ["info"]))?.split(separator: "\n")
        .first { $0.hasPrefix("Server Name:") }.map { $0.dropFirst(12).trimmingCharacters(in: .whitespaces) } ?? "server"
    var rows: [Row] = [], distributions: [Distribution] = []
    var allSync: [Double] = [], allOffline: [Double] = [], cpu: [Double] = [], lags: [Double] = []
    for file in files {
        let name = file.snr.map { "music bed at \(Int($0)) dB" } ?? "clean"
        let labels = set.tracks[file.track].labels.map(\.time)
        let (samples, rate) = try HapticGenerator.decodeMono(file.url)
        let offline = try HapticGenerator.generate(contentsOf: file.url).onsets.map(\.time).filter { $0 >= OnsetTestSet.scoredFrom }
        let reader = PipeSinkReader(seconds: file.seconds + 15)
        try reader.start()
        defer { reader.stop() }
        let trace = dir.appendingPathComponent("live.jsonl")
        let (text, cpuShare) = try LiveTools.runLive(hapsync, ["live", "--sink", reader.sinkName, "--seconds", String(file.seconds + 3),
                                                               "--haptics", "trace:\(trace.path)", "--force"]) {
            _ = try LiveTools.run(paplay, ["--device=hapsync-live", file.url.path])
        }
        cpu.append(cpuShare)
        if let lag = text.split(separator: "\n").first(where: { $0.hasPrefix("lag (") }).flatMap({ line in
            line.split(separator: " ").firstIndex(of: "p50").flatMap { Double(line.split(separator: " ")[$0 + 1]) }
        }) { lags.append(lag) }
        // Where the file's first sound is in the recording and in the file.
        let recording = reader.recording
        guard let r0 = recording.firstIndex(where: { abs($0) > 1e-4 }), let f0 = samples.firstIndex(where: { abs($0) > 1e-4 }) else {
            print("live (\(name)): nothing of the file reached the pipe sink; \(text)")
            continue
        }
        // The matching wants both ascending; the pipe's clock, fitted through starved reads, can
        // place two close hits out of order by a fraction of a millisecond.
        let heard = labels.compactMap { reader.heardTime(ofFrame: Int64(r0 + Int(($0 * rate).rounded()) - f0)) }.map { Double($0) / 1e9 }.sorted()
        let taps = LiveTools.transients(trace).map { Double($0) / 1e9 }.sorted()
        guard heard.count == labels.count, let first = heard.first else {
            print("live (\(name)): the pipe's clock did not place every label")
            continue
        }
        let scoredFrom = first - labels[0] + OnsetTestSet.scoredFrom
        let liveScore = OnsetScore(labels: heard, detections: taps.filter { $0 >= scoredFrom }, tolerance: 0.025)
        let offlineScore = OnsetScore(labels: labels, detections: offline, tolerance: 0.025)
        rows.append(Row(benchmark: "live", subject: "onset F ±25 ms, \(name), \(server)\(label): hapsync live", unit: "F",
                        median: liveScore.f, min: liveScore.f, max: liveScore.f, ratioToBaseline: offlineScore.f > 0 ? liveScore.f / offlineScore.f : nil))
        rows.append(Row(benchmark: "live", subject: "onset F ±25 ms, \(name): generate (offline, baseline)", unit: "F",
                        median: offlineScore.f, min: offlineScore.f, max: offlineScore.f, ratioToBaseline: nil))
        for t in taps {
            if let h = heard.min(by: { abs($0 - t) < abs($1 - t) }), abs(h - t) <= 0.025 { allSync.append((t - h) * 1e6) }
        }
        for o in offline {
            if let l = labels.min(by: { abs($0 - o) < abs($1 - o) }), abs(l - o) <= 0.025 { allOffline.append((o - l) * 1e6) }
        }
        let nearest = taps.compactMap { t in heard.min(by: { abs($0 - t) < abs($1 - t) }).map { (t - $0) * 1000 } }.sorted()
        print("live (\(name), \(server)\(label)): \(taps.count) transients for \(labels.count) labels; P/R/F \(liveScore.summary) (offline \(offlineScore.summary)); "
              + "each transient − the nearest hit heard, median \(String(format: "%.2f", nearest.isEmpty ? 0 : nearest[nearest.count / 2])) ms; "
              + "the pipe: \(reader.discontinuities.count) discontinuities, \(reader.starved) starved reads; "
              + "\(text.split(separator: "\n").filter { $0.hasPrefix("lag") || $0.hasPrefix("sound played") || $0.hasPrefix("capture") }.joined(separator: "; "))")
    }
    distributions.append(Distribution(benchmark: "live", subject: "transient − its hit heard at the real sink (pipe), \(server)\(label)", values: allSync))
    distributions.append(Distribution(benchmark: "live", subject: "baseline: generate's onset − the hit's label (offline)", values: allOffline))
    if !cpu.isEmpty {
        rows.append(Row(benchmark: "live", subject: "CPU of hapsync live (capture, analysis, engine, the sound played on), \(server)\(label)", unit: "% of a core",
                        median: cpu.sorted()[cpu.count / 2], min: cpu.min()!, max: cpu.max()!, ratioToBaseline: nil))
    }
    if !lags.isEmpty {
        rows.append(Row(benchmark: "live", subject: "lag: sound heard after it reached the live sink, p50, \(server)\(label)", unit: "ms",
                        median: lags.sorted()[lags.count / 2], min: lags.min()!, max: lags.max()!, ratioToBaseline: nil))
    }
    return (rows, distributions)
}

/// What the live benchmark asks of the system.
enum LiveTools {
    static func run(_ program: String, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = args
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Runs `hapsync live` with `arguments`, waits (at most 10 s) for its sink, calls `play`
    /// (paplay into it), and waits for the run to end: its summary (standard output) and its
    /// CPU time over the run from `play` on, % of a core (utime + stime from /proc).
    static func runLive(_ hapsync: URL, _ arguments: [String], play: () throws -> Void) throws -> (summary: String, cpu: Double) {
        let live = Process()
        live.executableURL = hapsync
        live.arguments = arguments
        let out = Pipe()
        live.standardOutput = out
        live.standardError = FileHandle.nullDevice
        try live.run()
        let summary = Locked(Data())
        let collect = Thread { summary.withLock { $0 = out.fileHandleForReading.readDataToEndOfFile() } }
        collect.start()
        var waited = 0
        while !hasSink("hapsync-live"), waited < 200 {
            usleep(50_000)
            waited += 1
        }
        let started = Date()
        try play()
        var cpuTicks = 0.0
        while live.isRunning {
            cpuTicks = self.cpuTicks(pid: live.processIdentifier) ?? cpuTicks
            usleep(100_000)
        }
        live.waitUntilExit()
        while !collect.isFinished { usleep(10_000) }
        let cpu = cpuTicks / Double(sysconf(Int32(_SC_CLK_TCK))) / max(Date().timeIntervalSince(started), 1e-3) * 100
        return (String(decoding: summary.withLock { $0 }, as: UTF8.self), cpu)
    }

    static func hasSink(_ name: String) -> Bool {
        ((try? run("/usr/bin/pactl", ["list", "short", "sinks"])) ?? "").split(separator: "\n")
            .contains { $0.split(separator: "\t").dropFirst().first.map(String.init) == name }
    }

    /// utime + stime of a process, clock ticks.
    static func cpuTicks(pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
        return u + s
    }

    /// The scheduled times of a trace's transients, CLOCK_MONOTONIC ns.
    static func transients(_ trace: URL) -> [Int64] {
        ((try? String(contentsOf: trace, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["kind"] as? String == "transient" else { return nil }
            return (o["scheduled_ns"] as? NSNumber)?.int64Value
        }
    }
}
