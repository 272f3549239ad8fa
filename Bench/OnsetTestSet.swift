import Foundation
import HapSyncTestSupport

/// The generate benchmark's labelled set, made from fixed seeds and written as WAV files into a
/// folder: drum tracks (`DrumKit` hits at known times) clean and mixed over each `Background` at
/// each of `snrs`.
///
/// SNR is the hits' power over the background's power, each the mean square over the whole file:
/// SNR dB = 10 log10(Σ hits² / Σ background²). Hits are sparse, so a hit stands above the
/// background by more than the SNR says (at 0 dB a loud hit is still clearly audible; a hit at
/// −24 dB of velocity is not). Each file is then scaled to a peak of −1 dBFS.
struct OnsetTestSet {
    /// One hit placed in a track: the truth a detection is scored against.
    struct Label {
        /// Seconds from the start of the file: the hit's first sample.
        var time: Double
        /// The `DrumKit` sound.
        var sound: String
        /// Its velocity, dB (0 is the kit's full level).
        var level: Double
    }

    /// One drum track, before any background.
    struct Track {
        /// Short name for file names and tables ("t1-44k1-16").
        var name: String
        /// Samples a second.
        var sampleRate: Int
        /// How its files are written.
        var format: WAVWriter.Format
        /// The hits alone.
        var hits: [Float]
        /// Every hit, in time order.
        var labels: [Label]
        /// The music bed's note changes (soft, unlabelled), for telling false alarms apart.
        var bedChanges: [(time: Double, what: String)] = []
    }

    /// One written file.
    struct File {
        /// Where it is.
        var url: URL
        /// Index into `tracks`.
        var track: Int
        /// Its background; nil for the clean file.
        var background: Background?
        /// Its SNR, dB; nil for the clean file.
        var snr: Double?
        /// Its length, seconds.
        var seconds: Double
    }

    /// The SNRs every background is mixed at, dB.
    static let snrs: [Double] = [20, 10, 5, 0]
    /// Least gap between two hits, seconds.
    static let minimumGap = 0.05
    /// The velocity range of hits, dB.
    static let levels = -24.0...0.0
    /// Where hits start, seconds.
    static let firstHit = 0.3
    /// Detections before this are not scored, seconds: the file starts with its background at full
    /// level, an onset of its own that every detector reports at 0 s and that no label stands for.
    static let scoredFrom = 0.25

    /// The tracks.
    private(set) var tracks: [Track] = []
    /// Every file written, track by track: the clean one, then each background at each SNR.
    private(set) var files: [File] = []

    /// Writes the set into `directory`: one track per entry of `formats` (rate and sample format),
    /// `seconds` long each. `variant` 0 is the set Bench/README.md reports; others draw other hits,
    /// times and backgrounds the same way (a held-out check that tuning on set 0 did not fit its
    /// draws). Throws when an Assets sound cannot be decoded or a file not written.
    init(directory: URL, seconds: Double, formats: [(rate: Int, format: WAVWriter.Format)], assets: URL, variant: Int = 0) throws {
        for (index, f) in formats.enumerated() {
            var random = SeededRandom(seed: 0x4841_5053 &+ UInt64(index) &+ 100 &* UInt64(variant))
            var track = try OnsetTestSet.track(seconds: seconds, sampleRate: f.rate, format: f.format, assets: assets, random: &random)
            track.name = "t\(index + 1)-\(f.rate == 44_100 ? "44k1" : "\(f.rate / 1000)k")-\(f.format == .pcm16 ? "16" : "float")"
            let clean = directory.appendingPathComponent("\(track.name)-clean.wav")
            try WAVWriter.write(OnsetTestSet.peakNormalized(track.hits), sampleRate: f.rate, format: f.format, to: clean)
            files.append(File(url: clean, track: index, background: nil, snr: nil, seconds: seconds))
            for background in Background.allCases {
                let bed = background.render(seconds: seconds, sampleRate: Double(f.rate), random: &random)
                if background == .music { track.bedChanges = bed.changes }
                for snr in OnsetTestSet.snrs {
                    let url = directory.appendingPathComponent("\(track.name)-\(background.rawValue)-\(Int(snr))dB.wav")
                    try WAVWriter.write(OnsetTestSet.mix(track.hits, over: bed.samples, snr: snr), sampleRate: f.rate, format: f.format, to: url)
                    files.append(File(url: url, track: index, background: background, snr: snr, seconds: seconds))
                }
            }
            tracks.append(track)
        }
    }

    /// A song-like file for the speed rows: a drum track over the music bed at 10 dB SNR, 44.1 kHz
    /// 16-bit, `seconds` long. Returns its length.
    static func writeSong(seconds: Double, to url: URL, assets: URL) throws -> Double {
        var random = SeededRandom(seed: 0x534F_4E47)
        let track = try OnsetTestSet.track(seconds: seconds, sampleRate: 44_100, format: .pcm16, assets: assets, random: &random)
        let bed = Background.music.render(seconds: seconds, sampleRate: 44_100, random: &random)
        try WAVWriter.write(mix(track.hits, over: bed.samples, snr: 10), sampleRate: 44_100, format: .pcm16, to: url)
        return seconds
    }

    /// A drum pattern: hits from `firstHit` to 0.3 s before the end, gaps of 0.12 to 0.7 s, now and
    /// then 50 to 80 ms, and runs of 3 to 7 sixteenths at 110 to 150 BPM (100 to 136 ms apart);
    /// each hit a `DrumKit` sound drawn by weight at a velocity drawn from `levels`.
    static func track(seconds: Double, sampleRate: Int, format: WAVWriter.Format, assets: URL, random: inout SeededRandom) throws -> Track {
        let kit = try DrumKit(sampleRate: Double(sampleRate), assets: assets, random: &random)
        let n = Int(seconds * Double(sampleRate))
        var hits = [Float](repeating: 0, count: n)
        var labels: [Label] = []
        var t = firstHit, run = 0, sixteenth = 0.125
        while t < seconds - 0.3 {
            let sound = kit.sounds[random.pick(kit.sounds.map(\.weight))]
            let level = random.uniform(levels)
            let start = Int((t * Double(sampleRate)).rounded())
            let gain = Float(pow(10, level / 20))
            for (k, s) in sound.samples.enumerated() where start + k < n { hits[start + k] += gain * s }
            labels.append(Label(time: Double(start) / Double(sampleRate), sound: sound.name, level: level))
            if run > 0 {
                run -= 1
                t += sixteenth
            } else {
                let r = random.unit()
                if r < 0.12 {
                    run = random.integer(2...6)
                    sixteenth = 15 / random.uniform(110...150)
                    t += sixteenth
                } else if r < 0.22 {
                    t += random.uniform(minimumGap...0.08)
                } else {
                    t += random.uniform(0.12...0.7)
                }
            }
        }
        return Track(name: "", sampleRate: sampleRate, format: format, hits: hits, labels: labels)
    }

    /// `hits` plus `background` (mean square 1) scaled to `snr` dB below the hits' power,
    /// peak-normalized.
    static func mix(_ hits: [Float], over background: [Float], snr: Double) -> [Float] {
        let power = hits.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, hits.count))
        let gain = Float((power / pow(10, snr / 10)).squareRoot())
        return peakNormalized(zip(hits, background).map { $0 + gain * $1 })
    }

    /// `x` scaled to a peak of −1 dBFS.
    static func peakNormalized(_ x: [Float]) -> [Float] {
        let peak = x.map(abs).max() ?? 0
        guard peak > 0 else { return x }
        let scale = 0.891 / peak
        return x.map { $0 * scale }
    }
}
