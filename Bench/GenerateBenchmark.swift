import Foundation
import HapSyncAHAP
import HapSyncGeneration
import HapSyncTestSupport

/// generate: `hapsync generate`'s onset detection scored on a labelled set this benchmark makes
/// itself (`OnsetTestSet`: drum hits at known times, clean and over noise and a music bed at
/// 20 to 0 dB SNR) beside `aubioonset` run on the same files in the same run; the speed of
/// `HapticGenerator.generate(contentsOf:)` (decode, analysis, AHAP) on the set and on a song,
/// beside aubioonset's; and the transients Apple's designers put in the Ricochet sample's AHAPs
/// beside ours for the same sounds (reported, not tuned to).
///
/// `short` (the smoke run): one 3 s track and a 5 s song instead of three 24 s tracks and a
/// 3 minute song. `variant`: which draw of the labelled set (`OnsetTestSet`). `rounds` timed runs each (the first also gives the detections scored).
func generateBenchmark(short: Bool, rounds: Int, assets: URL, corpus: URL, variant: Int) throws -> [Row] {
    let tolerance = 0.025
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-bench-generate-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let formats: [(rate: Int, format: WAVWriter.Format)] = short ? [(48_000, .float32)] : [(44_100, .pcm16), (48_000, .float32), (48_000, .pcm16)]
    let set = try OnsetTestSet(directory: dir, seconds: short ? 3 : 24, formats: formats, assets: assets, variant: variant)
    let song = dir.appendingPathComponent("song-44k1-16.wav")
    let songSeconds = try OnsetTestSet.writeSong(seconds: short ? 5 : 180, to: song, assets: assets)
    let setSeconds = set.files.reduce(0) { $0 + $1.seconds }

    var baselines: [AubioOnset] = []
    if AubioOnset.locate() == nil {
        print("generate: aubioonset is not installed (Debian: apt-get install aubio-tools); its rows are skipped")
    } else {
        baselines = [.standard, .specflux]
        // One run each on the first file: a warm-up, and a check that it works here at all.
        for b in baselines {
            do { _ = try b.run(set.files[0].url, scratch: dir) } catch {
                print("generate: \(error); aubioonset's rows are skipped")
                baselines = []
                break
            }
        }
    }
    let aubioVersion = baselines.isEmpty ? nil : AubioOnset.version()
    _ = try HapticGenerator.generate(contentsOf: set.files[0].url)

    // Round 0's detections are scored; every round is timed, the subjects interleaved file by file.
    var detections = [[[Double]]](repeating: [[Double]](repeating: [], count: set.files.count), count: 1 + baselines.count)
    var setSpeed = [[Double]](repeating: [], count: 1 + baselines.count), songSpeed = setSpeed
    for round in 0..<rounds {
        var setTime = [Double](repeating: 0, count: 1 + baselines.count)
        for (i, file) in set.files.enumerated() {
            let t0 = now()
            let ours = try HapticGenerator.generate(contentsOf: file.url)
            setTime[0] += Double(now() - t0) / 1e9
            if round == 0 { detections[0][i] = ours.onsets.map(\.time).filter { $0 >= OnsetTestSet.scoredFrom } }
            for (k, b) in baselines.enumerated() {
                let theirs = try b.run(file.url, scratch: dir)
                setTime[k + 1] += theirs.seconds
                if round == 0 { detections[k + 1][i] = theirs.onsets.filter { $0 >= OnsetTestSet.scoredFrom } }
            }
        }
        for k in setTime.indices { setSpeed[k].append(setSeconds / setTime[k]) }
        let t0 = now()
        _ = try HapticGenerator.generate(contentsOf: song)
        songSpeed[0].append(songSeconds / (Double(now() - t0) / 1e9))
        for (k, b) in baselines.enumerated() { songSpeed[k + 1].append(songSeconds / (try b.run(song, scratch: dir).seconds)) }
    }

    let subjects = ["ours"] + baselines.map(\.name)
    let labelCount = set.tracks.reduce(0) { $0 + $1.labels.count }
    let sounds = Set(set.tracks.flatMap { $0.labels.map(\.sound) }).sorted()
    print("generate: labelled set \(variant == 0 ? "0 (Bench/README.md's)" : "\(variant) (held out)"): \(set.tracks.count) drum track(s) of \(Int(set.files[0].seconds)) s (\(set.tracks.map(\.name).joined(separator: ", "))), "
        + "\(labelCount) hits of \(sounds.count) sounds (\(sounds.joined(separator: ", "))), gaps ≥ \(Int(OnsetTestSet.minimumGap * 1000)) ms with runs of 16ths, "
        + "velocities \(Int(OnsetTestSet.levels.lowerBound)) to \(Int(OnsetTestSet.levels.upperBound)) dB; each clean and over white noise, pink noise and a music bed "
        + "(chords and bass, 200 ms crossfades, not labelled) at \(OnsetTestSet.snrs.map { "\(Int($0))" }.joined(separator: ", ")) dB SNR "
        + "(hits' mean square over the background's, whole file): \(set.files.count) WAV files, \(Int(setSeconds)) s, seeded")
    print("generate: scoring: a detection matches at most one label within ±\(Int(tolerance * 1000)) ms (a maximum matching); P, R, F pooled over files; "
        + "detections in the first \(Int(OnsetTestSet.scoredFrom * 1000)) ms (the background's own start; the first hit is at \(Int(OnsetTestSet.firstHit * 1000)) ms) are not scored. "
        + "Ours: HapticGenerator.generate(contentsOf:) with its defaults (sensitivity 0.5, minimum gap 30 ms). "
        + (baselines.isEmpty ? "" : "Baseline: aubioonset (\(aubioVersion ?? "version not printed")) on the same files: its defaults (hfc, threshold 0.3) and -O specflux, "
            + "both with -M 0.03 (our minimum gap; its own is 12 ms). In the summary table, ours' 'vs baseline' is ours ÷ aubio default"))

    // MARK: Scoring

    // Per subject, per file: the matched pairs.
    let pairs = detections.map { perFile in
        set.files.indices.map { i in
            OnsetScore.match(labels: set.tracks[set.files[i].track].labels.map(\.time), detections: perFile[i], tolerance: tolerance)
        }
    }
    // Subject `subject`'s counts pooled over the files `include` accepts.
    func score(_ subject: Int, _ include: (OnsetTestSet.File) -> Bool) -> OnsetScore {
        set.files.indices.filter { include(set.files[$0]) }.reduce(OnsetScore()) { sum, i in
            let labels = set.tracks[set.files[i].track].labels.count, matched = pairs[subject][i].count
            return sum + OnsetScore(hits: matched, falseAlarms: detections[subject][i].count - matched, misses: labels - matched)
        }
    }
    typealias Group = (name: String, include: (OnsetTestSet.File) -> Bool)
    var groups: [Group] = [("clean", { $0.snr == nil })]
    for snr in OnsetTestSet.snrs { groups.append(("\(Int(snr)) dB", { $0.snr == snr })) }
    groups.append(("all", { _ in true }))
    print("")
    print("| generate: SNR | labels | " + subjects.map { "\($0) P / R / F" }.joined(separator: " | ") + " |")
    print("|---|---:|" + subjects.map { _ in "---:|" }.joined())
    var rows: [Row] = []
    for g in groups {
        let scores = subjects.indices.map { score($0, g.include) }
        let labels = scores[0].hits + scores[0].misses
        print("| \(g.name) | \(labels) | " + scores.map(\.summary).joined(separator: " | ") + " |")
        for (k, s) in scores.enumerated() {
            rows.append(Row(benchmark: "generate", subject: "onset F ±25 ms, \(g.name == "all" ? "all files" : g.name == "clean" ? "clean" : "SNR " + g.name): \(subjects[k])",
                            unit: "F", median: s.f, min: s.f, max: s.f, ratioToBaseline: k == 0 && scores.count > 1 && scores[1].f > 0 ? s.f / scores[1].f : nil))
        }
    }
    print("")
    print("| generate: background | SNR | " + subjects.map { "\($0) P / R / F" }.joined(separator: " | ") + " |")
    print("|---|---|" + subjects.map { _ in "---:|" }.joined())
    for background in Background.allCases {
        for snr in OnsetTestSet.snrs {
            let scores = subjects.indices.map { score($0) { $0.background == background && $0.snr == snr } }
            print("| \(background.rawValue) | \(Int(snr)) dB | " + scores.map(\.summary).joined(separator: " | ") + " |")
        }
    }

    // Recall by sound and velocity, over every file.
    print("")
    print("| generate: sound | labels | " + subjects.map { "\($0) recall" }.joined(separator: " | ") + " | " + subjects.map { "\($0) recall below −12 dB" }.joined(separator: " | ") + " |")
    print("|---|---:|" + subjects.map { _ in "---:|" }.joined() + subjects.map { _ in "---:|" }.joined())
    for sound in sounds {
        var total = 0, quiet = 0
        var found = [Int](repeating: 0, count: subjects.count), foundQuiet = found
        for (i, file) in set.files.enumerated() {
            let labels = set.tracks[file.track].labels
            for (l, label) in labels.enumerated() where label.sound == sound {
                total += 1
                if label.level < -12 { quiet += 1 }
                for k in subjects.indices where pairs[k][i].contains(where: { $0.label == l }) {
                    found[k] += 1
                    if label.level < -12 { foundQuiet[k] += 1 }
                }
            }
        }
        let recall = found.map { String(format: "%.2f", Double($0) / Double(max(1, total))) }
        let quietRecall = foundQuiet.map { String(format: "%.2f", Double($0) / Double(max(1, quiet))) }
        print("| \(sound) | \(total) | " + recall.joined(separator: " | ") + " | " + quietRecall.joined(separator: " | ") + " |")
    }

    // Timing of matched pairs, and false alarms on the music bed near its soft note changes.
    // The share of each track's scored time within ±50 ms of a bed change: where chance alone
    // would put that share of the false alarms.
    let changeCover = set.tracks.map { track -> Double in
        let steps = Array(stride(from: OnsetTestSet.scoredFrom, to: set.files[0].seconds, by: 0.001))
        return Double(steps.filter { t in track.bedChanges.contains { abs($0.time - t) <= 0.05 } }.count) / Double(max(1, steps.count))
    }
    var notes: [String] = []
    for k in subjects.indices {
        var offsets: [Double] = []
        var bedAlarms = 0, nearChange = 0, byChance = 0.0
        for (i, file) in set.files.enumerated() {
            let labels = set.tracks[file.track].labels
            for p in pairs[k][i] { offsets.append(detections[k][i][p.detection] - labels[p.label].time) }
            guard file.background == .music else { continue }
            let matched = Set(pairs[k][i].map(\.detection))
            for (d, t) in detections[k][i].enumerated() where !matched.contains(d) {
                bedAlarms += 1
                byChance += changeCover[file.track]
                if set.tracks[file.track].bedChanges.contains(where: { abs($0.time - t) <= 0.05 }) { nearChange += 1 }
            }
        }
        notes.append("\(subjects[k]): median \(offsets.isEmpty ? "-" : String(format: "%+.1f", median(offsets) * 1000)) ms, "
            + "\(bedAlarms) false alarms over the music bed (\(nearChange) within ±50 ms of a soft note change; \(Int(byChance.rounded())) by chance)")
    }
    print("")
    print("generate: detection − label over matched pairs: " + notes.joined(separator: "; "))

    // Where a baseline beats us (clean, or one background at one SNR), examples of what we missed
    // that it found and what we added that it did not: one of each per track, from mid-file.
    var cells: [Group] = [groups[0]]
    for background in Background.allCases {
        for snr in OnsetTestSet.snrs { cells.append(("\(background.rawValue) \(Int(snr)) dB", { $0.background == background && $0.snr == snr })) }
    }
    for cell in cells {
        let f = subjects.indices.map { score($0, cell.include).f }
        guard let better = f.indices.dropFirst().max(by: { f[$0] < f[$1] }), f[better] > f[0] else { continue }
        print("generate: \(cell.name): \(subjects[better]) (F \(String(format: "%.2f", f[better]))) beats ours (F \(String(format: "%.2f", f[0]))); examples:")
        for (i, file) in set.files.enumerated() where cell.include(file) {
            let track = set.tracks[file.track]
            let ours = Set(pairs[0][i].map(\.label)), theirs = Set(pairs[better][i].map(\.label))
            let missed = track.labels.indices.filter { theirs.contains($0) && !ours.contains($0) }
            if !missed.isEmpty {
                let label = track.labels[missed[missed.count / 2]]
                print("  missed (\(missed.count) in this file): \(file.url.lastPathComponent) at \(String(format: "%.3f", label.time)) s: "
                    + "\(label.sound) at \(String(format: "%.1f", label.level)) dB" + context(label.time, track: track, file: file))
            }
            let matched = Set(pairs[0][i].map(\.detection))
            let added = detections[0][i].indices.filter { d in
                !matched.contains(d) && !detections[better][i].contains { abs($0 - detections[0][i][d]) <= tolerance }
            }
            if !added.isEmpty {
                let t = detections[0][i][added[added.count / 2]]
                print("  false alarm (\(added.count) in this file): \(file.url.lastPathComponent) at \(String(format: "%.3f", t)) s" + context(t, track: track, file: file))
            }
        }
    }

    // MARK: Speed

    print("")
    print("generate: speed: \(rounds) round(s) after a warm-up, subjects interleaved file by file; × real time = audio seconds / wall seconds, "
        + "aubioonset's the wall time of its process (start-up included)")
    let subjectNames = ["HapticGenerator.generate(contentsOf:) (decode + analysis + AHAP)"]
        + baselines.map { "baseline: aubioonset \($0.options.joined(separator: " ")) (process wall time)" }
    for (what, speeds) in [("labelled set, \(set.files.count) files, \(Int(setSeconds)) s", setSpeed), ("song, \(Int(songSeconds)) s, 44.1 kHz 16-bit", songSpeed)] {
        for k in speeds.indices {
            let ratio = k == 0 && speeds.count > 1 ? median(zip(speeds[0], speeds[1]).map { $0 / $1 }) : nil
            rows.append(Row(benchmark: "generate", subject: "\(subjectNames[k]), \(what)", unit: "x real time",
                            median: median(speeds[k]), min: speeds[k].min() ?? 0, max: speeds[k].max() ?? 0, ratioToBaseline: ratio))
        }
    }

    rows += appleComparison(corpus: corpus, tolerance: tolerance)
    return rows
}

/// " (nearest other hit ...; nearest bass/chord change ...)": what lies around a time in `file`.
private func context(_ t: Double, track: OnsetTestSet.Track, file: OnsetTestSet.File) -> String {
    var parts: [String] = []
    let others = track.labels.filter { abs($0.time - t) > 0.0005 }
    if let near = others.min(by: { abs($0.time - t) < abs($1.time - t) }) {
        parts.append("nearest other hit \(near.sound) \(String(format: "%.1f", near.level)) dB at \(String(format: "%+.0f", (near.time - t) * 1000)) ms")
    }
    if file.background == .music, let change = track.bedChanges.min(by: { abs($0.time - t) < abs($1.time - t) }) {
        parts.append("nearest \(change.what) at \(String(format: "%+.0f", (change.time - t) * 1000)) ms")
    }
    return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
}

/// Apple's designers against our generator: for each WAV of the Ricochet sample, the AHAPs under
/// `corpus` that play it (an `AudioCustom` event naming it), their transients' times from that
/// event's start, and ours for the WAV; how many of Apple's have one of ours within ±25 and
/// ±50 ms (one-to-one), and the median offset (ours − Apple's) of the ±50 ms pairs.
private func appleComparison(corpus: URL, tolerance: Double) -> [Row] {
    let folder = corpus.deletingLastPathComponent().appendingPathComponent("StreamingAssets/CoreHaptics/Ricochet")
    let wavs = ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
        .filter { $0.pathExtension.lowercased() == "wav" }.sorted { $0.path < $1.path }
    print("")
    guard !wavs.isEmpty else {
        print("generate: Apple comparison skipped: no WAV files in \(folder.path) (--corpus names the SampleAHAPs folder beside StreamingAssets)")
        return []
    }
    let ahaps = (FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? [])
        .filter { $0.pathExtension == "ahap" }.sorted { $0.path < $1.path }
        .compactMap { url in (try? AHAPReader().read(contentsOf: url)).map { (url: url, pattern: $0.pattern) } }
    print("generate: Apple's designers vs ours: the \(wavs.count) WAVs of \(folder.path), each AHAP under \(corpus.path) that plays one (AudioCustom), "
        + "its HapticTransient times (and HapticContinuous spans) from the AudioCustom event's start; ours: HapticGenerator.generate(contentsOf:) defaults, its transients. Reported, not tuned to.")
    print("")
    print("| generate: sound | AHAP | length s | Apple transients | ours | Apple's with ours ±25 ms | ±50 ms | median offset ms | Apple's times s | ours s | Apple's continuous s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|---|")
    var rows: [Row] = []
    // The first 8 times, in seconds.
    func times(_ xs: [Double]) -> String {
        xs.isEmpty ? "-" : xs.prefix(8).map { String(format: "%.3f", $0) }.joined(separator: " ") + (xs.count > 8 ? " …" : "")
    }
    for wav in wavs {
        let generated: GeneratedHaptics
        do { generated = try HapticGenerator.generate(contentsOf: wav) } catch {
            print("| \(wav.lastPathComponent) | cannot generate: \(error) | | | | | | | | | |")
            continue
        }
        let ours = generated.pattern.events.filter { $0.type == .hapticTransient }.map(\.time).sorted()
        let players = ahaps.compactMap { a -> (name: String, transients: [Double], continuous: String)? in
            guard let audio = a.pattern.events.first(where: { $0.type == .audioCustom && ($0.waveformPath as NSString?)?.lastPathComponent == wav.lastPathComponent }) else { return nil }
            let continuous = a.pattern.events.filter { $0.type == .hapticContinuous }.map {
                String(format: "%.3f–%.3f", $0.time - audio.time, $0.time - audio.time + ($0.duration ?? 0))
            }
            return (a.url.lastPathComponent, a.pattern.events.filter { $0.type == .hapticTransient }.map { $0.time - audio.time }.sorted(),
                    continuous.isEmpty ? "-" : continuous.joined(separator: ", "))
        }
        if players.isEmpty {
            print("| \(wav.lastPathComponent) | none plays it | \(String(format: "%.3f", generated.duration)) | - | \(ours.count) | - | - | - | - | \(times(ours)) | - |")
        }
        for p in players {
            let near = OnsetScore.match(labels: p.transients, detections: ours, tolerance: tolerance)
            let within = OnsetScore.match(labels: p.transients, detections: ours, tolerance: 2 * tolerance)
            let offsets = within.map { ours[$0.detection] - p.transients[$0.label] }
            print("| \(wav.lastPathComponent) | \(p.name) | \(String(format: "%.3f", generated.duration)) | \(p.transients.count) | \(ours.count) | \(near.count) | \(within.count) | "
                + "\(offsets.isEmpty ? "-" : String(format: "%+.1f", median(offsets) * 1000)) | \(times(p.transients)) | \(times(ours)) | \(p.continuous) |")
            if !p.transients.isEmpty {
                let share = Double(within.count) / Double(p.transients.count)
                rows.append(Row(benchmark: "generate", subject: "Apple's transients in \(p.name) with one of ours within ±50 ms (\(p.transients.count) Apple's, \(ours.count) ours)",
                                unit: "fraction", median: share, min: share, max: share, ratioToBaseline: nil))
            }
        }
    }
    return rows
}
