import Foundation

/// The short-time analysis everything in generation reads, computed in one pass over the signal:
/// per frame (hop 5 ms), the spectral flux, the spectral centroid and a felt loudness.
public struct FrameAnalysis: Sendable {
    /// What one pass gives, one value per hop.
    public struct Frames: Sendable {
        /// Samples per frame.
        public var size: Int
        /// Samples between frame centres.
        public var hop: Int
        /// Half-wave rectified increase of the log-compressed band magnitudes (onset detection).
        public var flux: [Double]
        /// Spectral centroid, Hz (from 30 Hz up; 0 in silence).
        public var centroid: [Double]
        /// Felt loudness, dB full scale: the frame's power weighted by `FrameAnalysis.feltWeight`.
        public var loudness: [Double]
        /// The frame's power from 30 Hz to 16 kHz unweighted, dB full scale (how loud it is, bright
        /// or dull).
        public var level: [Double]
    }

    /// Samples a second.
    public let sampleRate: Double
    /// Samples per frame: the power of two nearest above 21 ms (1,024 at 44.1 and 48 kHz, 512 at
    /// 16 kHz, 4,096 at 192 kHz), at least 128.
    public let size: Int
    /// Samples between frames: 5 ms.
    public let hop: Int
    private let spectrum: Spectrum
    private let lowBin: Int, highBin: Int
    private let weights: [Double]
    /// Bin ranges of the onset bands: three to an octave from 30 Hz to 16 kHz, at least a bin each.
    private let bands: [Range<Int>]
    /// Each band's weight in the flux: √(bins / 16), at most 1. The log of a mean over few bins
    /// swings more in noise (its spread falls as 1/√bins), so without this the narrow low bands'
    /// noise would set the threshold for everything.
    private let bandWeights: [Float]

    /// Analysis of signals at `sampleRate` Hz.
    public init(sampleRate: Double) {
        self.sampleRate = sampleRate
        var size = 128
        while Double(size) < sampleRate * 0.021 { size *= 2 }
        self.size = size
        hop = max(1, Int((sampleRate * 0.005).rounded()))
        spectrum = Spectrum(size: size)
        let binHz = sampleRate / Double(size)
        lowBin = max(1, Int((30 / binHz).rounded(.up)))
        highBin = min(size / 2, Int(16_000 / binHz))
        weights = (0...size / 2).map { FrameAnalysis.feltWeight(hertz: Double($0) * binHz) }
        var edges: [Int] = []
        var f = 30.0
        while f < 16_000 * 1.26 {
            let bin = min(max(Int((f / binHz).rounded()), lowBin), highBin + 1)
            if edges.last.map({ bin > $0 }) ?? true { edges.append(bin) }
            f *= pow(2, 1.0 / 3)
        }
        bands = zip(edges, edges.dropFirst()).map { $0..<$1 }
        bandWeights = bands.map { Float(min(1, (Double($0.count) / 16).squareRoot())) }
    }

    /// How much a frequency counts toward felt loudness (power weight): skin and the hand feel
    /// vibration best from about 40 to 300 Hz (Pacinian corpuscles, most sensitive near 250 Hz)
    /// and bass is what a body and a handheld actuator pass on, so the weight is 1 up to 250 Hz
    /// and falls 12 dB an octave above it (a second-order low-pass), with a gentle fall below 30 Hz.
    public static func feltWeight(hertz f: Double) -> Double {
        let above = f / 250
        let below = f < 30 ? (f / 30) * (f / 30) : 1
        return below / (1 + above * above * above * above)
    }

    /// What the analysis reads: the signal through a DC blocker (a one-pole high-pass at 10 Hz: an
    /// offset is felt as nothing, not as a steady layer), its last 20 ms (at most a fifth of it)
    /// faded out along a raised cosine, so a file that ends mid-sound does not end with a click.
    public static func prepared(_ x: [Float], sampleRate: Double) -> [Float] {
        var out = [Float](repeating: 0, count: x.count)
        let r = 1 - 2 * Double.pi * 10 / sampleRate
        // The filter starts as if the signal had always been at its level over the first 10 ms, so
        // an offset present from the start is no step (no onset, no felt bump at 0).
        let lead = x.prefix(max(1, Int(sampleRate * 0.01)))
        var previousIn = lead.isEmpty ? 0 : lead.reduce(0.0) { $0 + Double($1) } / Double(lead.count), previousOut = 0.0
        for i in x.indices {
            let v = Double(x[i])
            previousOut = v - previousIn + r * previousOut
            previousIn = v
            out[i] = Float(previousOut)
        }
        let fade = min(Int(sampleRate * 0.02), x.count / 5)
        if fade > 0 { for k in 0..<fade { out[x.count - 1 - k] *= Float(0.5 - 0.5 * cos(Double.pi * Double(k) / Double(fade))) } }
        return out
    }

    /// Analyses a mono signal (prepared by `prepared` for onsets and loudness).
    public func analyze(_ mono: [Float]) -> Frames {
        // Frames until the last one's window has passed the end (the signal's own last sound,
        // however short, is seen whole).
        let count = mono.isEmpty ? 0 : (mono.count + size / 2) / hop + 1
        var flux = [Double](repeating: 0, count: count)
        var centroid = [Double](repeating: 0, count: count)
        var loudness = [Double](repeating: -120, count: count), level = loudness
        var magnitudes = [Float](repeating: 0, count: spectrum.bins)
        // The two frames before (lag 2: with a 21 ms frame and a 5 ms hop, one hop back overlaps
        // too much to see a rise whole).
        var twoBack = [Float](repeating: 0, count: bands.count), oneBack = twoBack, current = twoBack
        var real = [Float](repeating: 0, count: size / 2), imaginary = real
        let binHz = sampleRate / Double(size)
        // Flux is taken of the signal scaled to a peak of 1, so how loud the file was recorded does
        // not change what is an onset.
        let peak = mono.reduce(Float(0)) { max($0, abs($1)) }
        let gain: Float = peak > 0 ? 1 / peak : 1
        // Power of a full-scale sine in one Hann-windowed frame's bins (for dB full scale).
        let fullScale = Double(size) * Double(size) / 16 * 1.5 * 2
        for i in 0..<count {
            spectrum.magnitudes(mono, start: i * hop - size / 2, into: &magnitudes, real: &real, imaginary: &imaginary)
            var rise: Float = 0, power = 0.0, weighted = 0.0, moment = 0.0, total = 0.0
            for (b, range) in bands.enumerated() {
                var sum: Float = 0
                for k in range { sum += magnitudes[k] }
                current[b] = log1pf(100 * gain * sum / Float(range.count))
            }
            // Each band against the largest of itself and its neighbours two frames before (SuperFlux):
            // a tone gliding into the next band (a kick's falling pitch, vibrato) is no rise.
            for b in bands.indices {
                let before = max(twoBack[max(b - 1, 0)], twoBack[b], twoBack[min(b + 1, bands.count - 1)])
                let d = current[b] - before
                if d > 0 { rise += d * bandWeights[b] }
            }
            swap(&twoBack, &oneBack)
            swap(&oneBack, &current)
            for k in lowBin...highBin {
                let m = magnitudes[k]
                let p = Double(m) * Double(m)
                weighted += p * weights[k]
                power += p
                moment += Double(m) * Double(k) * binHz
                total += Double(m)
            }
            flux[i] = Double(rise)
            centroid[i] = total > 1e-9 ? moment / total : 0
            loudness[i] = 10 * log10(max(weighted / fullScale, 1e-12))
            level[i] = 10 * log10(max(power / fullScale, 1e-12))
        }
        return Frames(size: size, hop: hop, flux: flux, centroid: centroid, loudness: loudness, level: level)
    }
}

