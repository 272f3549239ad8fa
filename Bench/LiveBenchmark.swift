import Foundation
import Glibc
import HapSyncCLI
import HapSyncConcurrency
import HapSyncCore
import HapSyncGeneration
import HapSyncHapticOutput
import HapSyncMeasurement
import HapSyncPulseAudio
import HapSyncTestSupport
import Synchronization

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
/// - each transient against its own onset (`--onsets`' log: the capture frame the detector
///   placed it at, from the capture's first sound) heard at the real sink, the recording frame
///   counted from its own first sound: the sync of the live path alone, the detector's
///   placement left out (onsets after the pipe's first discontinuity are left out: the count
///   no longer holds there; a distance set anew without one is said, not found);
/// - `aubioonset` (its defaults, our 30 ms gap: `AubioOnset.standard`) on the same file, scored
///   and timed against the labels as the offline detector is: a second baseline, left out when
///   aubio-tools is not installed;
/// - the lag `hapsync live` reports, and its CPU time over the run (utime + stime from /proc).
///
/// With `noDelay` (`hapsync-bench live-nodelay`), `hapsync live --no-delay` follows the real
/// sink's monitor instead, and paplay plays into the real sink itself: nothing is held back, so
/// each transient comes after its hit is heard, and "transient − the hit heard" is the lag a user
/// feels, measured by the pipe beside the lag the run's summary reports.
func liveBenchmark(short: Bool, assets: URL, label: String, noDelay: Bool = false) throws -> (rows: [Row], distributions: [Distribution]) {
    let bench = noDelay ? "live-nodelay" : "live"
    let command = noDelay ? "hapsync live --no-delay" : "hapsync live"
    guard PulseAudioOutput().canConnect() else {
        print("\(bench): no PulseAudio-protocol server answers (run under .ci/with-pulse or .ci/with-pipewire); left out")
        return ([], [])
    }
    guard let paplay = ["/usr/bin/paplay", "/bin/paplay"].first(where: { (path: String) in access(path, X_OK) == 0 }) else {
        print("\(bench): paplay is not installed (Debian: pulseaudio-utils); left out")
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
    // The output `hapsync live` played the sound on through (its `--audio auto` choice), as its runs say.
    var output = ""
    var rows: [Row] = [], distributions: [Distribution] = []
    var allSync: [Double] = [], allOwn: [Double] = [], allOffline: [Double] = [], allAubio: [Double] = [], cpu: [Double] = [], lags: [Double] = []
    // Per file: each transient − the nearest hit heard, median, ms (`--no-delay`: the lag felt).
    var nearestMedians: [Double] = []
    // Per run, from the summary's analysis line: per fragment p99 and max, the most in 100 ms,
    // ms; the share of the run.
    var analysis: [(p99: Double, max: Double, window: Double, share: Double)] = []
    let aubio = AubioOnset.locate() == nil ? nil : AubioOnset.standard
    if aubio == nil { print("\(bench): aubioonset is not installed (Debian: apt-get install aubio-tools); its rows are left out") }
    for file in files {
        let name = file.snr.map { "music bed at \(Int($0)) dB" } ?? "clean"
        let labels = set.tracks[file.track].labels.map(\.time)
        let (samples, rate) = try HapticGenerator.decodeMono(file.url)
        let offline = try HapticGenerator.generate(contentsOf: file.url).onsets.map(\.time).filter { $0 >= OnsetTestSet.scoredFrom }
        let reader = PipeSinkReader(seconds: file.seconds + 15)
        try reader.start()
        defer { reader.stop() }
        let trace = dir.appendingPathComponent("live.jsonl"), onsetLog = dir.appendingPathComponent("onsets.jsonl")
        let (text, cpuShare, audio) = try LiveTools.runLive(hapsync, ["live", "--sink", reader.sinkName, "--seconds", String(file.seconds + 3),
                                                               "--haptics", "trace:\(trace.path)", "--onsets", onsetLog.path, "--force"]
                                                                 + (noDelay ? ["--no-delay"] : [])) {
            _ = try LiveTools.run(paplay, ["--device=\(noDelay ? reader.sinkName : "hapsync-live")", file.url.path])
        }
        cpu.append(cpuShare)
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("analysis on the capture's thread: ") }) {
            let f = line.matches(of: /([0-9]+\.[0-9]+) (ms|%)/).compactMap { Double($0.1) }
            if f.count == 5 { analysis.append((f[1], f[2], f[4], f[3])) } else { print("\(bench) (\(name)): the analysis line did not parse: \(line)") }
        }
        if let audio { output = noDelay ? " (\(audio))" : " (played on: \(audio))" }
        if let lag = text.split(separator: "\n").first(where: { $0.hasPrefix("lag (") }).flatMap({ line in
            line.split(separator: " ").firstIndex(of: "p50").flatMap { Double(line.split(separator: " ")[$0 + 1]) }
        }) { lags.append(lag) }
        // Where the file's first sound is in the recording and in the file.
        let recording = reader.recording
        guard let r0 = recording.firstIndex(where: { abs($0) > 1e-4 }), let f0 = samples.firstIndex(where: { abs($0) > 1e-4 }) else {
            print("\(bench) (\(name)): nothing of the file reached the pipe sink; \(text)")
            continue
        }
        // The matching wants both ascending; the pipe's clock, fitted through starved reads, can
        // place two close hits out of order by a fraction of a millisecond.
        // Where each label plays in the recording (`LiveTools.placed`): by count from the first
        // sounds, followed through what moved it since (a gap in what paplay delivered, the
        // pass-through's rate following, a distance set anew after an underrun).
        let labelFrames = labels.map { Int(($0 * rate).rounded()) }
        let places = LiveTools.placed(labelFrames, file: samples, recording: recording, shift: r0 - f0)
        let heard = labelFrames.compactMap { places[$0].flatMap { reader.heardTime(ofFrame: $0) } }.map { Double($0) / 1e9 }.sorted()
        let taps = LiveTools.transients(trace).map { Double($0) / 1e9 }.sorted()
        guard heard.count == labels.count, let first = heard.first else {
            print("\(bench) (\(name)): the pipe's clock did not place every label")
            continue
        }
        let scoredFrom = first - labels[0] + OnsetTestSet.scoredFrom
        let liveScore = OnsetScore(labels: heard, detections: taps.filter { $0 >= scoredFrom }, tolerance: 0.025)
        let offlineScore = OnsetScore(labels: labels, detections: offline, tolerance: 0.025)
        rows.append(Row(benchmark: bench, subject: "onset F ±25 ms, \(name), \(server)\(output)\(label): \(command)", unit: "F",
                        median: liveScore.f, min: liveScore.f, max: liveScore.f, ratioToBaseline: offlineScore.f > 0 ? liveScore.f / offlineScore.f : nil))
        rows.append(Row(benchmark: bench, subject: "onset F ±25 ms, \(name): generate (offline, baseline)", unit: "F",
                        median: offlineScore.f, min: offlineScore.f, max: offlineScore.f, ratioToBaseline: nil))
        var aubioSummary = ""
        if let aubio {
            do {
                let onsets = try aubio.run(file.url, scratch: dir).onsets.filter { $0 >= OnsetTestSet.scoredFrom }
                let score = OnsetScore(labels: labels, detections: onsets, tolerance: 0.025)
                rows.append(Row(benchmark: bench, subject: "onset F ±25 ms, \(name): \(aubio.name) (baseline)", unit: "F",
                                median: score.f, min: score.f, max: score.f, ratioToBaseline: nil))
                allAubio += LiveTools.offsets(onsets, from: labels)
                aubioSummary = ", \(aubio.name) \(score.summary)"
            } catch {
                print("\(bench) (\(name)): \(error); aubio's row for it is left out")
            }
        }
        allSync += LiveTools.offsets(taps, from: heard)
        // Each transient against its own onset heard: the log's capture frame, from the capture's
        // first sound, is the recording's frame from its own (whatever gaps paplay's stream had,
        // both hold them), give or take the pass-through's rate following (within its 0.25 ms
        // band). Frames the pipe lost (a discontinuity: an underrun at the real sink) or the
        // pass-through skipped (its distance set anew) end the count: onsets after the first
        // are left out, and counted.
        let log = LiveOnsetLog.settled(LiveTools.onsetLog(onsetLog))
        let countsUntil = reader.discontinuities.map(\.frame).min() ?? .max
        if text.contains("set anew"), countsUntil == .max {
            print("\(bench) (\(name)): the run set its sound's distance anew with no discontinuity at the pipe: its own-onset times after that are off by what it skipped")
        }
        // Each logged transient: its onset's time from the first sound, transient − heard (µs),
        // and whether the count still holds there.
        let timed = log.compactMap { line -> (seconds: Double, offset: Double, counted: Bool)? in
            guard let placed = line.transientAt, let c0 = line.firstSound, line.frame >= c0 else { return nil }
            let frame = Int64(r0) + line.frame - c0
            return reader.heardTime(ofFrame: frame).map { (Double(line.frame - c0) / rate, (Double(placed) - Double($0)) / 1e3, frame < countsUntil) }
        }
        let own = timed.filter(\.counted).map(\.offset)
        let leftOut = timed.count - own.count
        allOwn += own
        // HAPSYNC_BENCH_DEBUG: each transient more than 1 ms from its own onset heard (counted or not).
        if ProcessInfo.processInfo.environment["HAPSYNC_BENCH_DEBUG"] != nil {
            for t in timed where abs(t.offset) > 1_000 {
                print("\(bench) debug (\(name)): onset at \(String(format: "%.3f", t.seconds)) s from the first sound: "
                      + "transient − heard \(String(format: "%+.2f", t.offset / 1e3)) ms\(t.counted ? "" : " (after the pipe's first discontinuity)")")
            }
        }
        allOffline += LiveTools.offsets(offline, from: labels)
        let ownMedianMs = String(format: "%.2f", own.isEmpty ? 0 : own.sorted()[own.count / 2] / 1e3)
        let nearest = taps.compactMap { t in heard.min(by: { abs($0 - t) < abs($1 - t) }).map { (t - $0) * 1000 } }.sorted()
        if !nearest.isEmpty { nearestMedians.append(nearest[nearest.count / 2]) }
        print("\(bench) (\(name), \(server)\(output)\(label)): \(taps.count) transients for \(labels.count) labels; P/R/F \(liveScore.summary) (offline \(offlineScore.summary)\(aubioSummary)); "
              + "each transient − the nearest hit heard, median \(String(format: "%.2f", nearest.isEmpty ? 0 : nearest[nearest.count / 2])) ms; "
              + "− its own onset heard (\(own.count) transients\(leftOut > 0 ? ", \(leftOut) after the pipe's first discontinuity left out" : "")), median \(ownMedianMs) ms; "
              + "the pipe: \(reader.discontinuities.count) discontinuities, \(reader.starved) starved reads; "
              + "\(text.split(separator: "\n").filter { $0.hasPrefix("lag") || $0.hasPrefix("sound played") || $0.hasPrefix("capture") || $0.hasPrefix("analysis") }.joined(separator: "; "))")
    }
    distributions.append(Distribution(benchmark: bench, subject: "transient − its hit heard at the real sink (pipe), \(server)\(output)\(label)", values: allSync))
    let ownDistribution = Distribution(benchmark: bench, subject: "transient − its own onset heard at the real sink (pipe; the onset log's frame), \(server)\(output)\(label)",
                                       values: allOwn)
    distributions.append(ownDistribution)
    if !allOwn.isEmpty {
        // Both ways: the table's columns are one-sided.
        let magnitudes = Distribution(benchmark: bench, subject: "|transient − its own onset heard|", values: allOwn.map(abs))
        let ms = { (us: Double, sign: String) in String(format: "%\(sign).2f", us / 1e3) }
        print("\(bench) (\(server)\(output)\(label)): transient − its own onset heard, \(allOwn.count) transients: p1 \(ms(ownDistribution.percentile(1), "+")) ms, "
              + "p50 \(ms(ownDistribution.percentile(50), "+")) ms, p99 \(ms(ownDistribution.percentile(99), "+")) ms; |x| p99 \(ms(magnitudes.percentile(99), "")) ms, "
              + "max \(ms(magnitudes.percentile(100), "")) ms; beyond ±1 ms: \(magnitudes.overOneMillisecond)")
    }
    distributions.append(Distribution(benchmark: bench, subject: "baseline: generate's onset − the hit's label (offline)", values: allOffline))
    if let aubio, !allAubio.isEmpty {
        distributions.append(Distribution(benchmark: bench, subject: "baseline: \(aubio.name)'s onset − the hit's label", values: allAubio))
    }
    if !cpu.isEmpty {
        rows.append(Row(benchmark: bench, subject: "CPU of \(command) (capture, analysis, engine\(noDelay ? "" : ", the sound played on")), \(server)\(output)\(label)", unit: "% of a core",
                        median: cpu.sorted()[cpu.count / 2], min: cpu.min()!, max: cpu.max()!, ratioToBaseline: nil))
    }
    if !analysis.isEmpty {
        // What the session's work costs the capture's thread (SCHED_FIFO, above every normal
        // process): per fragment, and the most in a 100 ms window (a backlog's burst).
        for (what, values) in [("per fragment p99", analysis.map(\.p99)), ("per fragment max", analysis.map(\.max)), ("most in 100 ms", analysis.map(\.window))] {
            rows.append(Row(benchmark: bench, subject: "analysis on the capture's thread, \(what), \(server)\(output)\(label)", unit: "ms",
                            median: values.sorted()[values.count / 2], min: values.min()!, max: values.max()!, ratioToBaseline: nil))
        }
        let shares = analysis.map(\.share)
        rows.append(Row(benchmark: bench, subject: "analysis on the capture's thread, share of the run, \(server)\(output)\(label)", unit: "% of a core",
                        median: shares.sorted()[shares.count / 2], min: shares.min()!, max: shares.max()!, ratioToBaseline: nil))
    }
    if noDelay, !nearestMedians.isEmpty {
        // The lag as felt: measured at the pipe, per file the median over its transients.
        rows.append(Row(benchmark: bench, subject: "lag: transient − the hit heard at the real sink (pipe), per file p50, \(server)\(output)\(label)", unit: "ms",
                        median: nearestMedians.sorted()[nearestMedians.count / 2], min: nearestMedians.min()!, max: nearestMedians.max()!, ratioToBaseline: nil))
    }
    if !lags.isEmpty {
        let what = noDelay ? "haptics felt after their sound was heard, as the run's summary reports it" : "sound heard after it reached the live sink"
        rows.append(Row(benchmark: bench, subject: "lag: \(what), p50, \(server)\(output)\(label)", unit: "ms",
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

    /// Runs `hapsync live` with `arguments`, waits (at most 20 s) until its capture runs, calls `play`
    /// (paplay into it), and waits for the run to end: its summary (standard output), its CPU
    /// time over the run from `play` on, % of a core (utime + stime from /proc), and the audio
    /// output it played the sound on through, as its start line names it ("pipewire 0.3.65":
    /// natively; "pulseaudio ...": PulseAudio's protocol; with `--no-delay`, which plays nothing
    /// on, how it follows the real sink's monitor), nil if it did not say.
    static func runLive(_ hapsync: URL, _ arguments: [String], play: () throws -> Void) throws -> (summary: String, cpu: Double, audio: String?) {
        let (summary, cpu, audio, _) = try runLiveNoting(hapsync, arguments, play: play)
        return (summary, cpu, audio)
    }

    /// `runLive`, with each warning and note the run wrote to standard error (those before its
    /// start line too), and when it was seen (seconds after `play` began, by a look once a
    /// second: up to a second late).
    static func runLiveNoting(_ hapsync: URL, _ arguments: [String], play: () throws -> Void) throws
        -> (summary: String, cpu: Double, audio: String?, notes: [(at: Double, line: String)]) {
        let live = Process()
        live.executableURL = hapsync
        live.arguments = arguments
        let out = Pipe()
        live.standardOutput = out
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-bench-live-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil), let errorFile = try? FileHandle(forWritingTo: errors) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errors.path])
        }
        defer { try? errorFile.close(); try? FileManager.default.removeItem(at: errors) }
        live.standardError = errorFile
        try live.run()
        let summary = Locked(Data())
        let collect = Thread { summary.withLock { $0 = out.fileHandleForReading.readDataToEndOfFile() } }
        collect.start()
        // Its capture runs once its start line says so (the sink comes first, the engine and the
        // capture after it: under load, seconds later).
        var waited = 0
        while !((try? String(contentsOf: errors, encoding: .utf8)) ?? "").contains("Ctrl-C stops"), live.isRunning, waited < 400 {
            usleep(50_000)
            waited += 1
        }
        let started = Date()
        // The run's notes, looked for every second while `play` plays and after.
        let notes = Locked<(said: [(at: Double, line: String)], seen: Int)>(([], 0))
        let lookForNotes = { @Sendable in
            let text = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            // Whole lines only: one being written is taken at the next look.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            let said = lines.filter { $0.hasPrefix("note: ") || $0.hasPrefix("warning: ") }
            let at = Date().timeIntervalSince(started)
            notes.withLock { n in
                for line in said.dropFirst(n.seen) { n.said.append((at, String(line))) }
                n.seen = max(n.seen, said.count)
            }
        }
        let watching = Atomic<Bool>(true)
        let watcher = Thread {
            while watching.load(ordering: .relaxed) {
                lookForNotes()
                usleep(1_000_000)
            }
        }
        watcher.start()
        defer { watching.store(false, ordering: .relaxed) }
        try play()
        var cpuTicks = 0.0
        while live.isRunning {
            cpuTicks = self.cpuTicks(pid: live.processIdentifier) ?? cpuTicks
            usleep(100_000)
        }
        watching.store(false, ordering: .relaxed)
        while !watcher.isFinished { usleep(10_000) }
        lookForNotes()
        live.waitUntilExit()
        while !collect.isFinished { usleep(10_000) }
        let cpu = cpuTicks / Double(sysconf(Int32(_SC_CLK_TCK))) / max(Date().timeIntervalSince(started), 1e-3) * 100
        // The start line: "live: 'hapsync-live' (PipeWire, natively) → ...; audio DESCRIPTION; Ctrl-C stops"
        // (the sink's path named only when it was made natively).
        let start = ((try? String(contentsOf: errors, encoding: .utf8)) ?? "").split(separator: "\n")
            .first { $0.hasPrefix("live: ") && $0.hasSuffix("; Ctrl-C stops") }
        // `--no-delay` plays nothing on: its start line names how it follows the real sink instead.
        let audio = start?.contains("--no-delay)") == true
            ? (start?.contains("(PipeWire, natively; --no-delay)") == true ? "its monitor followed natively" : "its monitor through PulseAudio's protocol")
            : start.flatMap { line in line.range(of: "; audio ", options: .backwards).map { String(line[$0.upperBound...].dropLast("; Ctrl-C stops".count)) } }
                .map { start?.contains("(PipeWire, natively)") == true ? "\($0), the live sink made natively" : $0 }
        return (String(decoding: summary.withLock { $0 }, as: UTF8.self), cpu, audio, notes.withLock { $0.said })
    }

    /// utime + stime of a process, clock ticks.
    static func cpuTicks(pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
        return u + s
    }

    /// Each detection − the hit nearest it (µs), for those within 25 ms of one (the scoring's
    /// tolerance): how early or late a detector places what it finds.
    static func offsets(_ detections: [Double], from hits: [Double]) -> [Double] {
        detections.compactMap { d in hits.min(by: { abs($0 - d) < abs($1 - d) }).flatMap { abs(d - $0) <= 0.025 ? (d - $0) * 1e6 : nil } }
    }

    /// Where each of `frames` (frames of `file`) plays in `recording`. Walked in order from
    /// `shift` (recording frame − file frame, from their first sounds): each is found within
    /// ±30 ms of the shift so far, where the file's 20 ms from 5 ms before it match the recording
    /// best (largest normalized correlation), and the shift follows what was found (the
    /// pass-through's rate following moves it by a fraction of a millisecond, a distance set
    /// anew after an underrun or a gap in what the player delivered by milliseconds). Where the
    /// file is silent, or nothing matches (a cosine under 0.9: not the same sound), the shift so
    /// far places it.
    static func placed(_ frames: [Int], file: [Float], recording: [Float], shift start: Int) -> [Int: Int64] {
        let before = 240, length = 960, reach = 1_440
        var shift = start
        var places: [Int: Int64] = [:]
        for frame in Set(frames).sorted() {
            let from = max(0, frame - before), to = min(file.count, from + length)
            let energy = to > from ? (from..<to).reduce(0.0) { $0 + Double(file[$1] * file[$1]) } : 0
            var best = (lag: 0, score: -Double.infinity)
            if energy > 1e-9 {
                for lag in -reach...reach {
                    let first = from + shift + lag
                    guard first >= 0, first + (to - from) <= recording.count else { continue }
                    var dot = 0.0, power = 0.0
                    for i in 0..<(to - from) {
                        let r = Double(recording[first + i])
                        dot += Double(file[from + i]) * r
                        power += r * r
                    }
                    let score = power > 0 ? dot / (power * energy).squareRoot() : -Double.infinity
                    if score > best.score { best = (lag, score) }
                }
            }
            if best.score >= 0.9 { shift += best.lag }
            places[frame] = Int64(frame + shift)
        }
        return places
    }

    /// An `hapsync live --onsets` log's lines, read as the product defines them (a last line a
    /// killed run left unfinished left out); none when it cannot be read (the run says so where
    /// it is used).
    static func onsetLog(_ url: URL) -> [LiveOnsetLog.Line] {
        (try? TraceRecord.readLines(LiveOnsetLog.Line.self, contentsOf: url.path, what: "an onset line", whileWritten: true)) ?? []
    }

    /// The scheduled times of a trace's transients, CLOCK_MONOTONIC ns; none when it cannot be read.
    static func transients(_ trace: URL) -> [Int64] {
        ((try? TraceRecord.read(contentsOf: trace.path)) ?? []).commands.filter { $0.kind == .transient }.map { Int64($0.scheduledNs) }
    }
}
