import Foundation

/// The short-time analysis everything in generation reads, computed in one pass over the signal:
/// per frame (hop 5 ms), the onset bands' levels, the spectral centroid, the level and a felt
/// loudness.
public struct FrameAnalysis: Sendable {
    /// What one pass gives, one value per hop.
    public struct Frames: Sendable {
        /// Samples per frame.
        public var size: Int
        /// Samples between frame centres.
        public var hop: Int
        /// The onset bands' levels, log(1 + 100 · mean magnitude) of the signal scaled to a peak
        /// of 1, `bandCount` bands (the low bands first) of one value per frame, band after band.
        public var bandLevels: [Float]
        /// How many onset bands `bandLevels` has.
        public var bandCount: Int
        /// Each band's weight in the onset detection function: √(bins / 16), at most 1, counting
        /// the bins of the band's own spectrum (the log of a mean over few bins swings more).
        public var bandWeights: [Float]
        /// How many bins each onset band averages, in its own spectrum.
        public var bandBins: [Int]
        /// How many frames there are.
        public var count: Int { level.count }
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
    /// Bin ranges of the onset bands from `lowBandsTop` up (from the first band edge at or above
    /// it: 301 Hz at 44.1 kHz, 375 Hz at 48 kHz), in the frame's spectrum: three to an octave to
    /// 16 kHz, at least a bin each.
    private let bands: [Range<Int>]
    /// Bin ranges of the onset bands from about 30 Hz (the first bin at least) up to where `bands`
    /// start, in `lowSpectrum`: three to an octave, at least a bin each.
    private let lowBands: [Range<Int>]
    /// The low bands' analysis: frames twice as long as `size` (about 43 ms, bins half as wide),
    /// of the signal low-passed and decimated by `decimation`: a kick or a thud has its few
    /// hundred hertz resolved in more bins, and its rise measured over more of its sound, than a
    /// 21 ms frame gives.
    private let lowSpectrum: Spectrum
    /// The low bands' decimation: the largest power of two that leaves at least 4 kHz (none
    /// below 8 kHz).
    private let decimation: Int
    /// The anti-alias filter before decimating: three moving averages of `decimation` samples in
    /// a row (a CIC filter: at 48 kHz 77 dB down where the band above folds onto 300 Hz and 0.1 dB
    /// at 300 Hz; 56 dB and 0.2 dB at 8 kHz),
    /// normalized to a gain of 1.
    private let decimationKernel: [Float]
    /// `Frames.bandWeights`. The log of a mean over few bins swings more in noise (its spread
    /// falls as 1/√bins), so the narrow bands' noise counts less.
    private let bandWeights: [Float]

    /// Where the low bands, analysed in the longer frames, end, Hz (at the first frame band edge
    /// at or above it).
    public static let lowBandsTop = 300.0

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
        let allBands = zip(edges, edges.dropFirst()).map { $0..<$1 }
        bands = allBands.filter { Double($0.lowerBound) * binHz >= FrameAnalysis.lowBandsTop * 0.99 }
        // The low bands: the same third octaves from 30 Hz, in bins half as wide, up to where the
        // frame's bands start.
        var decimation = 1
        while sampleRate / Double(decimation * 2) >= 4_000 { decimation *= 2 }
        self.decimation = decimation
        lowSpectrum = Spectrum(size: max(16, 2 * size / decimation))
        let lowBinHz = sampleRate / Double(decimation) / Double(lowSpectrum.size)
        let lowTop = bands.first.map { Double($0.lowerBound) * binHz } ?? Double(highBin + 1) * binHz
        var lowEdges: [Int] = []
        f = 30
        while f < lowTop * 1.001 {
            let bin = min(max(1, Int((f / lowBinHz).rounded())), lowSpectrum.size / 2)
            if lowEdges.last.map({ bin > $0 }) ?? true { lowEdges.append(bin) }
            f *= pow(2, 1.0 / 3)
        }
        let top = min(Int((lowTop / lowBinHz).rounded()), lowSpectrum.size / 2 + 1)
        if let last = lowEdges.last, top > last { lowEdges.append(top) }
        lowBands = zip(lowEdges, lowEdges.dropFirst()).map { $0..<$1 }
        let boxcar = [Float](repeating: 1 / Float(decimation), count: decimation)
        var kernel: [Float] = [1]
        for _ in 0..<3 {
            var next = [Float](repeating: 0, count: kernel.count + decimation - 1)
            for (i, a) in kernel.enumerated() { for (j, b) in boxcar.enumerated() { next[i + j] += a * b } }
            kernel = next
        }
        decimationKernel = kernel
        bandWeights = (lowBands + bands).map { Float(min(1, (Double($0.count) / 16).squareRoot())) }
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
        var centroid = [Double](repeating: 0, count: count)
        var loudness = [Double](repeating: -120, count: count), level = loudness
        var magnitudes = [Float](repeating: 0, count: spectrum.bins)
        var real = [Float](repeating: 0, count: size / 2), imaginary = real
        var lowMagnitudes = [Float](repeating: 0, count: lowSpectrum.bins)
        var lowReal = [Float](repeating: 0, count: lowSpectrum.size / 2), lowImaginary = lowReal
        let low = decimated(mono)
        // Each band's log magnitude per frame, band by band (the low bands first).
        let bandCount = lowBands.count + bands.count
        var logs = [Float](repeating: 0, count: bandCount * count)
        let binHz = sampleRate / Double(size)
        // Bands are taken of the signal scaled to a peak of 1, so how loud the file was recorded
        // does not change what is an onset; the low frames' magnitudes are scaled to the frame's
        // (a sine gives the same band level in both within about 1 dB; noise reads about 3 dB
        // lower in the low bands).
        let peak = mono.reduce(Float(0)) { max($0, abs($1)) }
        let gain: Float = peak > 0 ? 1 / peak : 1
        let lowGain = gain * Float(size) / Float(lowSpectrum.size)
        // Power of a full-scale sine in one Hann-windowed frame's bins (for dB full scale).
        let fullScale = Double(size) * Double(size) / 16 * 1.5 * 2
        for i in 0..<count {
            spectrum.magnitudes(mono, start: i * hop - size / 2, into: &magnitudes, real: &real, imaginary: &imaginary)
            if !lowBands.isEmpty {
                // The low frame centred where the frame is.
                let centre = Int((Double(i * hop) / Double(decimation)).rounded())
                lowSpectrum.magnitudes(low, start: centre - lowSpectrum.size / 2, into: &lowMagnitudes, real: &lowReal, imaginary: &lowImaginary)
                for (b, range) in lowBands.enumerated() {
                    var sum: Float = 0
                    for k in range { sum += lowMagnitudes[k] }
                    logs[b * count + i] = log1pf(100 * lowGain * sum / Float(range.count))
                }
            }
            for (b, range) in bands.enumerated() {
                var sum: Float = 0
                for k in range { sum += magnitudes[k] }
                logs[(lowBands.count + b) * count + i] = log1pf(100 * gain * sum / Float(range.count))
            }
            var power = 0.0, weighted = 0.0, moment = 0.0, total = 0.0
            for k in lowBin...highBin {
                let m = magnitudes[k]
                let p = Double(m) * Double(m)
                weighted += p * weights[k]
                power += p
                moment += Double(m) * Double(k) * binHz
                total += Double(m)
            }
            centroid[i] = total > 1e-9 ? moment / total : 0
            loudness[i] = 10 * log10(max(weighted / fullScale, 1e-12))
            level[i] = 10 * log10(max(power / fullScale, 1e-12))
        }
        return Frames(size: size, hop: hop, bandLevels: logs, bandCount: bandCount, bandWeights: bandWeights,
                      bandBins: (lowBands + bands).map(\.count), centroid: centroid, loudness: loudness, level: level)
    }

    /// The signal for the low bands: through `decimationKernel` (centred: no delay, half an input
    /// sample at most) and every
    /// `decimation`th sample kept.
    private func decimated(_ x: [Float]) -> [Float] {
        guard decimation > 1 else { return x }
        let reach = (decimationKernel.count - 1) / 2
        return (0..<(x.count + decimation - 1) / decimation).map { k in
            let centre = k * decimation
            var sum: Float = 0
            for (j, h) in decimationKernel.enumerated() {
                let n = centre + j - reach
                if n >= 0, n < x.count { sum += h * x[n] }
            }
            return sum
        }
    }
}
