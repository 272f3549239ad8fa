import Foundation

/// One detected onset: where a sound starts, how strongly, and how bright it is there.
public struct Onset: Sendable, Equatable {
    /// Seconds from the start of the signal, refined to the start of the energy rise (1 ms).
    public var time: Double
    /// Onset strength: the spectral-flux peak over the adaptive threshold (without its floor), > 1
    /// unless the floor decided.
    public var strength: Double
    /// Spectral centroid of the frame after the onset, Hz.
    public var centroid: Double
}

/// Onset detection by spectral flux with an adaptive threshold and a minimum gap.
///
/// The method (Dixon 2006, "Onset detection revisited"; Böck et al. 2012), with each band's rise
/// judged against its own noise first:
/// 1. Frames of about 21 ms (`FrameAnalysis`: 1,024 samples at 48 kHz), a hop of 5 ms,
///    Hann-windowed, over the signal the generator gives (DC blocked, its last 20 ms faded).
/// 2. A logarithmic filterbank: the magnitudes averaged in bands of a third of an octave from
///    30 Hz to 16 kHz (at least one bin each), log-compressed as log(1 + 100·mean). Below 300 Hz
///    (the first band edge above: 301-375 Hz by rate) the bands come from frames twice as long
///    (of the signal decimated to 4-8 kHz, at lower rates as it is): bins half as wide, so a
///    kick's or a thud's few hundred hertz fill more of them.
///    Bands, not bins, so a kick's low bands count as much as a hi-hat's hundreds of bins and
///    broadband noise averages out inside the wide bands.
/// 3. Each band's rise: its mean level over the next 15 ms of frames over the largest of its own
///    and its two neighbours' mean levels over 20 ms ending 10 ms before (Böck and Widmer's
///    SuperFlux, 2013, over means: a tone gliding across bands, like a kick's falling pitch, is no
///    rise, and a mean over several frames rises out of noise where one frame's ripple does not).
///    Less the band's gate, `bandGate` × its noise deviation (from its level's second
///    differences: a background's ripple, not a decay or a rare onset; see `flux`). What is left
///    is weighted by √(bins/16) up to 1 (the narrow bands' log swings more) and summed over the
///    bands: the flux. Gating each band by its own noise before summing keeps a quiet low hit
///    that rises in three bands from being drowned by the ripple of thirty noisy ones
///    (Bench/results/design-measurements.md).
/// 4. Adaptive threshold: a flux value is a candidate when it is the largest within ±30 ms and
///    exceeds `median + δ · 1.4826 · MAD` of the flux within ±250 ms (MAD: the median absolute
///    deviation; the scaled MAD is a standard deviation that a few onsets in the window do not
///    inflate), where δ falls with sensitivity (`sensitivity` 0 → δ 5, 0.5 → δ 3, 1 → δ 1.5);
///    also 1.5 × that median, and an absolute floor of 0.3 · (1.5 − sensitivity) (log units
///    summed over bands; the floor decides over steady noise, where the gated flux is mostly 0).
///    The signal is scaled to a peak of 1 first, so the floor means the same whatever the
///    recording level.
/// 5. Minimum gap: of candidates closer than `minimumGap`, the stronger stays; an onset whose
///    sound stays more than `quietestOnset` (45 dB) below the file's loudest frame (unweighted)
///    is dropped.
/// 6. Each onset's time is refined inside its frame to the 1 ms step where the signal's energy
///    (1 ms RMS) rises most, so it marks where the sound starts, not the frame's centre.
public struct OnsetDetector: Sendable {
    /// Samples a second of the signals this detector reads.
    public let sampleRate: Double
    /// 0 (only the clearest onsets) to 1 (every small one).
    public let sensitivity: Double
    /// Least time between two onsets, seconds.
    public let minimumGap: Double
    /// The frame analysis.
    public let analysis: FrameAnalysis

    /// A detector for signals at `sampleRate` Hz.
    public init(sampleRate: Double, sensitivity: Double = 0.5, minimumGap: Double = 0.03) {
        self.sampleRate = sampleRate
        self.sensitivity = min(max(sensitivity, 0), 1)
        self.minimumGap = max(minimumGap, 0)
        analysis = FrameAnalysis(sampleRate: sampleRate)
    }

    /// The onsets of a mono signal, in time order (prepared by `FrameAnalysis.prepared` first).
    public func detect(_ mono: [Float]) -> [Onset] {
        let prepared = FrameAnalysis.prepared(mono, sampleRate: sampleRate)
        return detect(prepared, frames: analysis.analyze(prepared))
    }

    /// The onsets of a signal already prepared (`FrameAnalysis.prepared`), from its frames
    /// (`analysis.analyze(prepared)`).
    public func detect(_ mono: [Float], frames: FrameAnalysis.Frames) -> [Onset] {
        let flux = flux(frames)
        let n = flux.count
        guard n > 0 else { return [] }
        let hop = Double(frames.hop) / sampleRate
        guard flux.contains(where: { $0 > 0 }) else { return [] }
        let delta = sensitivity <= 0.5 ? 5 - 4 * sensitivity : 3 - 3 * (sensitivity - 0.5)
        let floor = 0.3 * (1.5 - sensitivity)
        let peakReach = max(1, Int((0.03 / hop).rounded()))
        let medianReach = max(1, Int((0.25 / hop).rounded()))
        var deviations: [Double] = []
        var candidates: [(frame: Int, strength: Double)] = []
        var window: [Double] = []
        for i in 0..<n {
            let v = flux[i]
            guard v > 0 else { continue }
            let lo = max(0, i - peakReach), hi = min(n - 1, i + peakReach)
            var isPeak = true
            for j in lo...hi where flux[j] > v || (flux[j] == v && j < i) { isPeak = false; break }
            guard isPeak else { continue }
            window.removeAll(keepingCapacity: true)
            window.append(contentsOf: flux[max(0, i - medianReach)...min(n - 1, i + medianReach)])
            // Before the start and after the end is silence: flux 0 (a file of one short click has
            // its median in the silence around it, not in the click).
            window.append(contentsOf: repeatElement(0, count: 2 * medianReach + 1 - window.count))
            window.sort()
            let median = window[window.count / 2]
            deviations.removeAll(keepingCapacity: true)
            for w in window { deviations.append(abs(w - median)) }
            deviations.sort()
            // The median absolute deviation, scaled to a normal distribution's standard deviation.
            let spread = 1.4826 * deviations[deviations.count / 2]
            let base = median + delta * spread
            let threshold = max(base, 1.5 * median, floor)
            // Strength against the threshold short of the floor, or the floor over silence (where
            // the median and MAD are 0 and any sound would be infinitely strong).
            if v > threshold { candidates.append((i, v / max(base, floor))) }
        }
        // Each candidate's time refined, then the minimum gap on those times: of two closer than
        // it, the stronger stays.
        let refined = candidates.map { c in
            Onset(time: refine(mono, frame: c.frame, frames: frames), strength: c.strength,
                  centroid: frames.centroid[min(c.frame + 1, frames.centroid.count - 1)])
        }.filter { loudEnough($0, frames: frames) }.sorted { $0.time < $1.time }
        var kept: [Onset] = []
        for o in refined {
            if let last = kept.last, o.time - last.time < minimumGap {
                if o.strength > last.strength { kept[kept.count - 1] = o }
            } else {
                kept.append(o)
            }
        }
        return kept
    }

    /// Frames a band's level is averaged over from a frame on, to judge its rise: 3 (15 ms).
    static let riseFrames = 3
    /// Frames the level before is averaged over: 4 (20 ms), ending `riseLag` frames back (short
    /// enough that a hit 50 ms after another is measured against its tail, not its start).
    static let baseFrames = 4
    /// How far back the level before ends: 2 frames (10 ms; frames span 21 ms, the low bands'
    /// 43 ms, so the frames compared overlap: the means, not single frames, see the rise).
    static let riseLag = 2
    /// The window a band's gate is estimated over, ± seconds, and how often it is estimated.
    static let gateReach = 0.25, gateStep = 0.1

    /// The most a band's noise deviation is taken to be, × 1/√bins: stationary noise makes the
    /// log level of a band of B bins ripple by about 0.64/√B (Rayleigh magnitudes;
    /// Bench/results/design-measurements.md), so a larger swing is sound, not noise (a regular roll of hits
    /// 50 ms apart swings the level by far more, and would otherwise gate itself out).
    static let noiseRippleCeiling: Float = 1

    /// How many of a band's noise deviations it must rise by to count: 1.5 at sensitivity 0.5,
    /// doubling toward 0 and halving toward 1.
    var bandGate: Float { Float(1.5 * pow(2, 1 - 2 * sensitivity)) }

    /// The onset detection function, one value per frame (step 3 of the method): per band,
    /// the rise of its mean level over `riseFrames` from the frame over the largest of its own and
    /// its neighbours' mean levels over `baseFrames` ending `riseLag` frames back (before the
    /// start is silence); less the band's gate; what is left weighted and summed over the bands.
    ///
    /// The gate is `bandGate` × the band's noise deviation: the scaled MAD of its level's second
    /// difference over 20 ms steps, L(t) − 2·L(t − 20 ms) + L(t − 40 ms), divided by √6 (a level
    /// ripple of deviation σ gives second differences of deviation σ·√6), over every other frame
    /// within ±250 ms (kept inside the file, or padded with silence when the file is shorter), at
    /// most `noiseRippleCeiling`/√bins. A decay falls along a straight line in log level and an
    /// onset is rare, so neither counts as noise; a background's ripple does. Estimated every
    /// 100 ms.
    func flux(_ frames: FrameAnalysis.Frames) -> [Double] {
        let count = frames.count, bandCount = frames.bandCount, levels = frames.bandLevels
        var flux = [Double](repeating: 0, count: count)
        guard count > 0, bandCount > 0 else { return flux }
        precondition(levels.count == bandCount * count && frames.bandWeights.count == bandCount && frames.bandBins.count == bandCount,
                     "frames from FrameAnalysis.analyze: \(bandCount) bands of \(count) levels, a weight and a bin count each")
        func level(_ b: Int, _ i: Int) -> Float { i >= 0 ? levels[b * count + i] : 0 }
        // The mean level over `baseFrames` ending at each frame, of band `b`.
        func base(_ b: Int) -> [Float] {
            var out = [Float](repeating: 0, count: count)
            var sum = 0.0
            for i in 0..<count {
                sum += Double(level(b, i)) - Double(level(b, i - Self.baseFrames))
                out[i] = Float(sum / Double(Self.baseFrames))
            }
            return out
        }
        var below = base(0), this = below, above = bandCount > 1 ? base(1) : below
        // Per band: its rises, and its level's second differences (`ripple`).
        var rises = [Float](repeating: 0, count: count), ripple = rises
        let hopSeconds = Double(frames.hop) / sampleRate
        let reach = max(1, Int((Self.gateReach / hopSeconds).rounded()))
        let step = max(1, Int((Self.gateStep / hopSeconds).rounded()))
        let lag = max(1, Int((0.02 / hopSeconds).rounded()))
        var window: [Float] = []
        window.reserveCapacity(reach + 1)
        for b in 0..<bandCount {
            if b > 0 {
                below = this
                this = above
                above = b + 1 < bandCount ? base(b + 1) : this
            }
            var after = 0.0
            for i in 0..<min(Self.riseFrames, count) { after += Double(level(b, i)) }
            for i in 0..<count {
                let j = i - Self.riseLag
                let before = j >= 0 ? max(below[j], this[j], above[j]) : 0
                let rise = Float(after / Double(min(Self.riseFrames, count - i))) - before
                rises[i] = rise.isFinite ? rise : 0
                after -= Double(level(b, i))
                if i + Self.riseFrames < count { after += Double(level(b, i + Self.riseFrames)) }
                let d = level(b, i) - 2 * level(b, i - lag) + level(b, i - 2 * lag)
                ripple[i] = d.isFinite ? d : 0
            }
            let weight = frames.bandWeights[b]
            let ceiling = Self.noiseRippleCeiling / Float(max(frames.bandBins[b], 1)).squareRoot()
            var g = 0
            while g - step / 2 < count {
                window.removeAll(keepingCapacity: true)
                let first = max(0, min(g - reach, count - 1 - 2 * reach))
                // Every other frame (neighbours 5 ms apart in 21 ms frames tell little more).
                var i = first
                while i <= min(count - 1, first + 2 * reach) {
                    window.append(ripple[i])
                    i += 2
                }
                window.append(contentsOf: repeatElement(0, count: reach + 1 - window.count))
                let median = Self.select(&window, window.count / 2)
                for k in window.indices { window[k] = abs(window[k] - median) }
                let gate = bandGate * min(1.4826 * Self.select(&window, window.count / 2) / Float(6).squareRoot(), ceiling)
                for i in max(0, g - step / 2)..<min(count, g + step - step / 2) where rises[i] > gate {
                    flux[i] += Double((rises[i] - gate) * weight)
                }
                g += step
            }
        }
        return flux
    }

    /// The `k`th smallest of `values` (0-based), reordering them: Hoare's selection, in expected
    /// linear time.
    static func select(_ values: inout [Float], _ k: Int) -> Float {
        precondition(values.indices.contains(k))
        return values.withUnsafeMutableBufferPointer { v in
            var lo = 0, hi = v.count - 1
            while lo < hi {
                let pivot = v[(lo + hi) / 2]
                var i = lo, j = hi
                while i <= j {
                    while v[i] < pivot { i += 1 }
                    while v[j] > pivot { j -= 1 }
                    if i <= j {
                        v.swapAt(i, j)
                        i += 1
                        j -= 1
                    }
                }
                if k <= j { hi = j } else if k >= i { lo = i } else { return v[k] }
            }
            return v[k]
        }
    }

    /// How far below the file's loudest frame an onset's sound may be and still count, dB (by the
    /// unweighted `level`, so a quiet hi-hat counts as much as a kick): a noise floor that a file
    /// starts with would otherwise be an onset at 0 (its rise over the silence before the file).
    public static let quietestOnset = 45.0

    /// Whether the loudest frame within 30 ms of the onset is within `quietestOnset` of the
    /// file's loudest.
    private func loudEnough(_ o: Onset, frames: FrameAnalysis.Frames) -> Bool {
        guard let top = frames.level.max() else { return false }
        let hop = Double(frames.hop) / sampleRate
        let i = min(max(Int((o.time / hop).rounded()), 0), frames.level.count - 1)
        let near = frames.level[i...min(i + Int((0.03 / hop).rounded()), frames.level.count - 1)].max() ?? -.infinity
        return near >= top - Self.quietestOnset
    }

    /// Where the sound behind the flux peak at `frame` starts, to 1 ms. In 1 ms energy steps over
    /// the frame's span, the step that rises most above the loudest of the 3-15 ms before it (the
    /// previous sound's tail, ripple included) is the new sound; from there back to the last step
    /// still louder than 15 % of the way from that tail level to it (over single quieter steps,
    /// which a noisy sound has). The energies are those of the signal and of its first difference
    /// (a gentle high-pass: a snare over a kick's low tail stands out there), whichever shows the
    /// new sound with more contrast over the tail.
    private func refine(_ mono: [Float], frame: Int, frames: FrameAnalysis.Frames) -> Double {
        let centre = frame * frames.hop
        let step = max(1, Int(sampleRate / 1000))
        let from = max(0, centre - frames.size / 2), to = min(mono.count - step, centre + frames.size / 2)
        guard to > from + step else { return Double(min(centre, max(mono.count - 1, 0))) / sampleRate }
        // Energies of 1 ms steps from 15 ms before the span on, plain and differenced.
        let origin = from - 15 * step
        var plain: [Double] = [], differenced: [Double] = []
        for s in stride(from: origin, through: to, by: step) {
            var e = 0.0, d = 0.0
            if s >= 0 {
                for k in s..<min(s + step, mono.count) {
                    let x = Double(mono[k]), dx = x - (k > 0 ? Double(mono[k - 1]) : 0)
                    e += x * x
                    d += dx * dx
                }
            }
            plain.append(e)
            differenced.append(d)
        }
        let candidates = [Self.start(in: plain), Self.start(in: differenced)]
        let best = candidates[1].contrast > candidates[0].contrast ? candidates[1] : candidates[0]
        return Double(origin + best.step * step) / sampleRate
    }

    /// In 1 ms energies whose first 15 are before the span: the step the new sound starts at, and
    /// its contrast (its loudest step over the tail before it).
    private static func start(in energies: [Double]) -> (step: Int, contrast: Double) {
        func tail(_ i: Int) -> Double { energies[max(0, i - 15)...max(0, i - 3)].max() ?? 0 }
        var peak = 15, rise = -Double.infinity
        for i in 15..<energies.count where energies[i] - tail(i) > rise { rise = energies[i] - tail(i); peak = i }
        let base = tail(peak)
        let threshold = base + 0.15 * (energies[peak] - base)
        var start = peak
        // Back over steps above it, and over one lone dip (noise has them), not two.
        let limit = max(0, peak - 15)
        while start > limit {
            if energies[start - 1] > threshold { start -= 1 } else if start - 2 >= limit, energies[start - 2] > threshold { start -= 2 } else { break }
        }
        return (start, energies[peak] / (base + 1e-12))
    }
}
