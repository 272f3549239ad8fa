import Foundation
import HapSyncTestSupport

/// What the generate benchmark mixes its hits over: white noise, pink noise, or a music-like bed
/// whose soft note changes are not onsets anyone would tap to (the realistic hard case).
enum Background: String, CaseIterable {
    /// Gaussian white noise.
    case white
    /// Pink noise (−3 dB an octave): white noise through Paul Kellet's economy filter.
    case pink
    /// Sustained chords of harmonic tones with slow swells and a bass line, every change a 200 ms
    /// crossfade (`musicBed`).
    case music

    /// `seconds` of this background at `sampleRate` Hz, mean square 1, and the times at which
    /// its notes change (the music bed's chord and bass changes; none for noise).
    func render(seconds: Double, sampleRate: Double, random: inout SeededRandom) -> (samples: [Float], changes: [(time: Double, what: String)]) {
        let n = Int(seconds * sampleRate)
        var x: [Float]
        var changes: [(time: Double, what: String)] = []
        switch self {
        case .white:
            x = (0..<n).map { _ in Float(random.gaussian()) }
        case .pink:
            var b0 = 0.0, b1 = 0.0, b2 = 0.0
            x = (0..<n).map { _ in
                let w = random.gaussian()
                b0 = 0.99765 * b0 + w * 0.0990460
                b1 = 0.96300 * b1 + w * 0.2965164
                b2 = 0.57000 * b2 + w * 1.0526913
                return Float(b0 + b1 + b2 + w * 0.1848)
            }
        case .music:
            (x, changes) = Background.musicBed(seconds: seconds, sampleRate: sampleRate, random: &random)
        }
        let power = x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, n))
        let scale = Float(power > 0 ? 1 / power.squareRoot() : 1)
        return (x.map { $0 * scale }, changes)
    }

    /// A bed of music with no percussive onsets: four-note chords (C, Am, F, G, in a random
    /// order, 1.6 to 3.2 s each) of a harmonic tone (10 partials, amplitude 1/k^1.3) swelling
    /// slowly (0.12 Hz, ±35 %), over a bass (5 partials, 1/k²) on the chord's root, fifth or
    /// octave, changing every 0.4 to 1 s. Every note fades in and out over 200 ms (raised cosine),
    /// centred on the change, so one note crossfades into the next.
    static func musicBed(seconds: Double, sampleRate sr: Double, random: inout SeededRandom) -> (samples: [Float], changes: [(time: Double, what: String)]) {
        let n = Int(seconds * sr)
        let tableSize = 4_096
        func table(partials: Int, slope: Double) -> [Float] {
            (0..<tableSize).map { i in
                Float((1...partials).reduce(0.0) { $0 + sin(2 * Double.pi * Double($1 * i) / Double(tableSize)) / pow(Double($1), slope) })
            }
        }
        let chordTable = table(partials: 10, slope: 1.3), bassTable = table(partials: 5, slope: 2)
        let chords: [[Int]] = [[48, 52, 55, 60], [45, 52, 57, 60], [41, 48, 53, 57], [43, 50, 55, 59]]
        let fade = 0.2
        var chordLayer = [Float](repeating: 0, count: n), bassLayer = [Float](repeating: 0, count: n)
        var changes: [(time: Double, what: String)] = []

        // One note from `start` to `end` (its crossfades centred on both), added into `layer`.
        func note(_ midi: Int, _ start: Double, _ end: Double, _ wave: [Float], _ gain: Float, into layer: inout [Float]) {
            let step = 440 * pow(2, Double(midi - 69) / 12) / sr * Double(tableSize)
            let from = max(0, Int((start - fade / 2) * sr)), to = min(n, Int((end + fade / 2) * sr))
            guard to > from else { return }
            // The phase follows absolute time (a fixed offset per pitch), so a note held across a
            // change (a common tone, a repeated bass note) crossfades into itself with no dip.
            var phase = (Double(from) * step + Double(midi * 397)).truncatingRemainder(dividingBy: Double(tableSize))
            for i in from..<to {
                let t = Double(i) / sr
                let rise = min(1, max(0, (t - (start - fade / 2)) / fade)), fall = min(1, max(0, ((end + fade / 2) - t) / fade))
                let envelope = Float((0.5 - 0.5 * cos(Double.pi * rise)) * (0.5 - 0.5 * cos(Double.pi * fall)))
                let k = Int(phase)
                let frac = Float(phase - Double(k))
                let a = wave[k % tableSize], b = wave[(k + 1) % tableSize]
                layer[i] += gain * envelope * (a + (b - a) * frac)
                phase += step
                if phase >= Double(tableSize) { phase -= Double(tableSize) }
            }
        }

        var t = 0.0, previous = -1, bass = -1
        while t < seconds {
            var c = random.integer(0...chords.count - 1)
            if c == previous { c = (c + 1) % chords.count }
            previous = c
            let end = min(seconds + fade, t + random.uniform(1.6...3.2))
            for m in chords[c] { note(m, t, end, chordTable, 0.25, into: &chordLayer) }
            if t > 0 { changes.append((t, "chord change")) }
            var b = t
            while b < end - 0.05 {
                let bassEnd = min(end, b + random.uniform(0.4...1.0))
                let root = chords[c][0] - 12
                let pitch = [root, root + 7, root + 12][random.pick([3, 1.5, 1])]
                note(pitch, b, bassEnd, bassTable, 0.6, into: &bassLayer)
                if b > 0, pitch != bass { changes.append((b, "bass change")) }
                bass = pitch
                b = bassEnd
            }
            t = end
        }
        let swellPhase = random.unit() * 2 * Double.pi
        let samples = (0..<n).map { i in
            chordLayer[i] * Float(0.65 + 0.35 * sin(2 * Double.pi * 0.12 * Double(i) / sr + swellPhase)) + bassLayer[i]
        }
        return (samples, changes)
    }
}
