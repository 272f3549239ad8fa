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
/// The method (Dixon 2006, "Onset detection revisited"; Böck et al. 2012):
/// 1. Frames of about 21 ms (`FrameAnalysis`: 1,024 samples at 48 kHz), a hop of 5 ms,
///    Hann-windowed, over the signal the generator gives (DC blocked, its last 20 ms faded).
/// 2. Flux on a logarithmic filterbank: the magnitudes averaged in bands of a third of an octave
///    from 30 Hz to 16 kHz (at least one bin each), log-compressed as log(1 + 100·mean), and the
///    half-wave rectified increase of each band over the largest of it and its two neighbours two
///    frames (10 ms) before (Böck and Widmer's SuperFlux, 2013: a tone gliding across bands, like
///    a kick's falling pitch, is no onset; two frames back, since frames 5 ms apart overlap too
///    much to see a rise whole), summed over the bands, each weighted by √(bins/16) up to 1 (the
///    narrow low bands' log swings more in noise).
///    Bands, not bins, so a kick's two or three low bins count as much as a hi-hat's hundreds and
///    broadband noise averages out inside the wide bands.
/// 3. Adaptive threshold: a flux value is a candidate when it is the largest within ±30 ms and
///    exceeds `median + δ · 1.4826 · MAD` of the flux within ±250 ms (MAD: the median absolute
///    deviation; the scaled MAD is a standard deviation that a few onsets in the window do not
///    inflate), where δ falls with sensitivity (`sensitivity` 0 → δ 5, 0.5 → δ 3, 1 → δ 1.5);
///    also 1.5 × that median, and an absolute floor of 2 · (1.5 − sensitivity) (log units summed
///    over bands: a decaying sound's frame-to-frame ripple stays below it, where the MAD of
///    silence is 0). The signal is scaled to a peak of 1 first, so the floor means the same
///    whatever the recording level.
/// 4. Minimum gap: of candidates closer than `minimumGap`, the stronger stays; an onset whose
///    sound stays more than `quietestOnset` (45 dB) below the file's loudest frame (unweighted)
///    is dropped.
/// 5. Each onset's time is refined inside its frame to the 1 ms step where the signal's energy
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
        let flux = frames.flux
        let n = flux.count
        guard n > 0 else { return [] }
        let hop = Double(frames.hop) / sampleRate
        guard flux.contains(where: { $0 > 0 }) else { return [] }
        let delta = sensitivity <= 0.5 ? 5 - 4 * sensitivity : 3 - 3 * (sensitivity - 0.5)
        let floor = 2 * (1.5 - sensitivity)
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
