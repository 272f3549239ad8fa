import Foundation
import HapSyncGeneration
import HapSyncTestSupport

/// live-onsets: `StreamingOnsetDetector` (how `hapsync live` finds onsets as the sound plays)
/// scored on the generate benchmark's labelled set (`OnsetTestSet`) beside the offline
/// `OnsetDetector` (what `hapsync generate` uses) on the same decoded audio in the same run, ±25 ms,
/// per SNR group and over all files; how long after its start each onset was decided, against
/// the promised look-ahead; and each detector's CPU cost as a multiple of real time.
///
/// The stream is fed in chunks of 10 ms (a sound server's monitor fragment); its onsets do not
/// depend on the chunk size (StreamingOnsetDetectorTests). `short` (the smoke run): one 3 s track
/// instead of three 24 s ones. `variant`: which draw of the labelled set. `rounds` timed runs,
/// the two detectors interleaved file by file, after a warm-up run that also gives the onsets
/// scored.
func liveOnsetBenchmark(short: Bool, rounds: Int, assets: URL, variant: Int) throws -> [Row] {
    let tolerance = 0.025
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-bench-live-onsets-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let formats: [(rate: Int, format: WAVWriter.Format)] = short ? [(48_000, .float32)] : [(44_100, .pcm16), (48_000, .float32), (48_000, .pcm16)]
    let set = try OnsetTestSet(directory: dir, seconds: short ? 3 : 24, formats: formats, assets: assets, variant: variant)
    // Decoded once, outside the timing: both detectors read the same samples.
    let audio = try set.files.map { try HapticGenerator.decodeMono($0.url) }
    let setSeconds = set.files.reduce(0) { $0 + $1.seconds }

    /// The offline detector's onset times, as `hapsync generate` finds them.
    func offline(_ i: Int) -> [Double] {
        OnsetDetector(sampleRate: audio[i].sampleRate).detect(audio[i].samples).map(\.time)
    }
    /// The streaming detector's onsets, the file fed in 10 ms chunks.
    func streaming(_ i: Int, into onsets: inout [StreamingOnset]) -> StreamingOnsetDetector {
        let (samples, rate) = audio[i]
        let detector = StreamingOnsetDetector(sampleRate: rate)
        let chunk = Int(rate / 100)
        onsets.removeAll(keepingCapacity: true)
        samples.withUnsafeBufferPointer { all in
            var from = 0
            while from < all.count {
                let to = min(from + chunk, all.count)
                detector.process(UnsafeBufferPointer(rebasing: all[from..<to]), channels: 1, into: &onsets)
                from = to
            }
        }
        return detector
    }

    // The onsets scored, and the warm-up.
    var found: [StreamingOnset] = []
    found.reserveCapacity(4_096)
    var detections = [[[Double]]](repeating: [], count: 2)
    var delays: [Double] = [], atTheBound = 0
    var lookAhead = 0.0
    for i in set.files.indices {
        let detector = streaming(i, into: &found)
        lookAhead = detector.lookAhead.seconds
        for o in found {
            delays.append(Double(o.decidedAt - o.frame) / audio[i].sampleRate)
            if o.decidedAt - o.frame == Int64(detector.lookAhead.frames) { atTheBound += 1 }
        }
        detections[0].append(found.map { $0.time(sampleRate: audio[i].sampleRate) }.filter { $0 >= OnsetTestSet.scoredFrom })
        detections[1].append(offline(i).filter { $0 >= OnsetTestSet.scoredFrom })
    }
    let lookAheadMs = Int((lookAhead * 1000).rounded())
    let subjects = ["streaming (look-ahead \(lookAheadMs) ms)", "offline OnsetDetector"]

    // Speed: each round, every file through each detector, interleaved file by file.
    var speed = [[Double]](repeating: [], count: 2)
    for _ in 0..<rounds {
        var seconds = [0.0, 0.0]
        for i in set.files.indices {
            var t0 = now()
            _ = streaming(i, into: &found)
            seconds[0] += Double(now() - t0) / 1e9
            t0 = now()
            _ = offline(i)
            seconds[1] += Double(now() - t0) / 1e9
        }
        for k in 0..<2 { speed[k].append(setSeconds / seconds[k]) }
    }

    let labelCount = set.tracks.reduce(0) { $0 + $1.labels.count }
    print("live-onsets: labelled set \(variant == 0 ? "0 (Bench/README.md's)" : "\(variant) (held out)"), as generate makes it: \(set.tracks.count) drum track(s) of "
        + "\(Int(set.files[0].seconds)) s, \(labelCount) hits, each clean and over white noise, pink noise and a music bed at "
        + "\(OnsetTestSet.snrs.map { "\(Int($0))" }.joined(separator: ", ")) dB SNR: \(set.files.count) files, \(Int(setSeconds)) s. "
        + "Scoring as generate's: ±\(Int(tolerance * 1000)) ms, a maximum matching, pooled over files, nothing before \(Int(OnsetTestSet.scoredFrom * 1000)) ms. "
        + "Streaming: StreamingOnsetDetector defaults (sensitivity 0.5, minimum gap 30 ms), the decoded file fed in 10 ms chunks; "
        + "offline: OnsetDetector defaults on the same samples (the baseline: 'vs baseline' is streaming ÷ offline)")

    // Per subject, per file: the matched pairs.
    let pairs = detections.map { perFile in
        set.files.indices.map { OnsetScore.match(labels: set.tracks[set.files[$0].track].labels.map(\.time), detections: perFile[$0], tolerance: tolerance) }
    }
    func score(_ subject: Int, _ include: (OnsetTestSet.File) -> Bool) -> OnsetScore {
        set.files.indices.filter { include(set.files[$0]) }.reduce(OnsetScore()) { sum, i in
            let labels = set.tracks[set.files[i].track].labels.count, matched = pairs[subject][i].count
            return sum + OnsetScore(hits: matched, falseAlarms: detections[subject][i].count - matched, misses: labels - matched)
        }
    }
    var groups: [(name: String, include: (OnsetTestSet.File) -> Bool)] = [("clean", { $0.snr == nil })]
    for snr in OnsetTestSet.snrs { groups.append(("\(Int(snr)) dB", { $0.snr == snr })) }
    groups.append(("all", { _ in true }))
    print("")
    print("| live-onsets: SNR | labels | " + subjects.map { "\($0) P / R / F" }.joined(separator: " | ") + " |")
    print("|---|---:|---:|---:|")
    var rows: [Row] = []
    for g in groups {
        let scores = [score(0, g.include), score(1, g.include)]
        print("| \(g.name) | \(scores[0].hits + scores[0].misses) | " + scores.map(\.summary).joined(separator: " | ") + " |")
        let what = g.name == "all" ? "all files" : g.name == "clean" ? "clean" : "SNR " + g.name
        for (k, s) in scores.enumerated() {
            rows.append(Row(benchmark: "live-onsets", subject: "onset F ±25 ms, \(what): \(subjects[k])", unit: "F", median: s.f, min: s.f, max: s.f,
                            ratioToBaseline: k == 0 && scores[1].f > 0 ? s.f / scores[1].f : nil))
        }
    }
    print("")
    print("| live-onsets: background | SNR | " + subjects.map { "\($0) P / R / F" }.joined(separator: " | ") + " |")
    print("|---|---|---:|---:|")
    for background in Background.allCases {
        for snr in OnsetTestSet.snrs {
            let scores = [0, 1].map { score($0) { $0.background == background && $0.snr == snr } }
            print("| \(background.rawValue) | \(Int(snr)) dB | " + scores.map(\.summary).joined(separator: " | ") + " |")
        }
    }

    // Timing: detection − label over matched pairs, and the decision's delay after the start.
    var notes: [String] = []
    for k in 0..<2 {
        var offsets: [Double] = []
        for (i, file) in set.files.enumerated() {
            let labels = set.tracks[file.track].labels
            for p in pairs[k][i] { offsets.append(detections[k][i][p.detection] - labels[p.label].time) }
        }
        notes.append("\(subjects[k]): median \(offsets.isEmpty ? "-" : String(format: "%+.1f", median(offsets) * 1000)) ms")
    }
    // HAPSYNC_BENCH_DEBUG: each matched hit placed more than 2 ms from its label, by either
    // detector, with its sound and level.
    if ProcessInfo.processInfo.environment["HAPSYNC_BENCH_DEBUG"] != nil {
        for (i, file) in set.files.enumerated() {
            let labels = set.tracks[file.track].labels
            var byLabel = [[Double?]](repeating: [nil, nil], count: labels.count)
            for k in 0..<2 { for p in pairs[k][i] { byLabel[p.label][k] = detections[k][i][p.detection] - labels[p.label].time } }
            for (l, offsets) in byLabel.enumerated() where offsets.contains(where: { ($0.map(abs) ?? 0) > 0.002 }) {
                let said = offsets.map { $0.map { String(format: "%+.1f", $0 * 1000) } ?? "-" }
                print("live-onsets debug: \(file.url.lastPathComponent) \(String(format: "%.3f", labels[l].time)) s \(labels[l].sound) "
                      + "\(String(format: "%.0f", labels[l].level)) dB: streaming \(said[0]) ms, offline \(said[1]) ms")
            }
        }
    }
    print("")
    print("live-onsets: detection − label over matched pairs: " + notes.joined(separator: "; "))
    let sortedDelays = delays.sorted()
    if !sortedDelays.isEmpty {
        let p90 = sortedDelays[min(sortedDelays.count - 1, Int(0.9 * Double(sortedDelays.count)))]
        print("live-onsets: streaming, decided − start over its \(delays.count) onsets: median \(String(format: "%.1f", median(delays) * 1000)) ms, "
            + "p90 \(String(format: "%.1f", p90 * 1000)) ms, max \(String(format: "%.1f", sortedDelays[sortedDelays.count - 1] * 1000)) ms "
            + "(look-ahead \(String(format: "%.1f", lookAhead * 1000)) ms; \(atTheBound) at exactly the look-ahead, where the bound places a start whose flux built up later)")
        rows.append(Row(benchmark: "live-onsets", subject: "streaming: decided − start (look-ahead \(lookAheadMs) ms)", unit: "ms",
                        median: median(delays) * 1000, min: sortedDelays[0] * 1000, max: sortedDelays[sortedDelays.count - 1] * 1000, ratioToBaseline: nil))
    }

    print("")
    print("live-onsets: speed: \(rounds) round(s) after a warm-up, \(set.files.count) files, \(Int(setSeconds)) s; × real time = audio seconds / wall seconds (one thread)")
    let names = ["StreamingOnsetDetector.process, 10 ms chunks", "baseline: OnsetDetector.detect, whole file"]
    for k in 0..<2 {
        let ratio = k == 0 ? median(zip(speed[0], speed[1]).map { $0 / $1 }) : nil
        rows.append(Row(benchmark: "live-onsets", subject: names[k], unit: "x real time", median: median(speed[k]), min: speed[k].min() ?? 0,
                        max: speed[k].max() ?? 0, ratioToBaseline: ratio))
    }
    return rows
}
