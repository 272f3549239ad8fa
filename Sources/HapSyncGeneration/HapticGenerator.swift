import Foundation
import HapSyncAHAP
import HapSyncAudioFiles
import HapSyncCore

/// What a generated pattern stresses.
public enum GenerationStyle: String, Sendable, CaseIterable {
    /// Transients at every onset over a quiet continuous layer (drums, UI sounds, impacts).
    case percussive
    /// The continuous layer alone, at full strength: no transients (pads, ambience, engines).
    case ambient
    /// Transients at onsets over a continuous layer at a little over half strength (songs).
    case balanced

    /// The continuous layer's event intensity: what its curve's loudness is scaled by.
    public var continuousIntensity: Double {
        switch self {
        case .percussive: return 0.35
        case .ambient: return 1
        case .balanced: return 0.6
        }
    }

    /// Whether onsets become transients.
    public var hasTransients: Bool { self != .ambient }
}

/// How `HapticGenerator` turns a sound into haptics.
public struct GenerationOptions: Sendable, Equatable {
    /// What the pattern stresses.
    public var style: GenerationStyle
    /// Onset detection's sensitivity, 0 (only the clearest onsets) to 1 (every small one).
    public var sensitivity: Double
    /// Most control points in one `ParameterCurve` (at least 2): 16 by default, the limit people
    /// report for Core Haptics on iPhones, so the files also play there.
    public var maxCurvePoints: Int
    /// Largest difference between the analysed envelope and the curve drawn through the kept
    /// points (intensity and sharpness units, 0...1).
    public var curveTolerance: Double
    /// Least time between two transients, seconds.
    public var minimumGap: Double
    /// With a value, an `AudioCustom` event at time 0 plays this file (`EventWaveformPath`,
    /// relative to the pattern's folder or resource roots): the sound with its haptics.
    public var audioPath: String?

    /// The most control points a curve may have.
    public static let curvePointRange = 2...AHAPLimits.default.maxCurvePoints
    /// Sensitivity's range.
    public static let sensitivityRange = 0.0...1.0

    /// Options; the defaults suit a song.
    public init(style: GenerationStyle = .balanced, sensitivity: Double = 0.5, maxCurvePoints: Int = 16,
                curveTolerance: Double = 0.05, minimumGap: Double = 0.03, audioPath: String? = nil) {
        self.style = style
        self.sensitivity = sensitivity
        self.maxCurvePoints = maxCurvePoints
        self.curveTolerance = curveTolerance
        self.minimumGap = minimumGap
        self.audioPath = audioPath
    }
}

/// Why haptics could not be generated, naming the file, sample or option.
public enum GenerationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be decoded.
    case audio(AudioFileDecoder.LoadError)
    /// The sample rate is outside what the analysis reads (`HapticGenerator.sampleRates`).
    case unusableRate(path: String?, rate: Double)
    /// A sample is NaN or infinite (a damaged float file).
    case notFinite(path: String?, index: Int, seconds: Double)
    /// An option is out of its range.
    case option(String)

    /// A sentence for the user.
    public var description: String {
        switch self {
        case .audio(let e): return e.description
        case .unusableRate(let path, let rate):
            return "\(path.map { "\($0): " } ?? "")a sample rate of \(AHAPWriter.formatNumber(rate)) Hz cannot be analysed "
                + "(from \(Int(HapticGenerator.sampleRates.lowerBound)) to \(Int(HapticGenerator.sampleRates.upperBound)) Hz)"
        case .notFinite(let path, let index, let seconds):
            return "\(path.map { "\($0): " } ?? "")sample \(index) (at \(String(format: "%.6f", seconds)) s) is not a finite number; the file is damaged"
        case .option(let why): return why
        }
    }
}

/// A generated pattern and what it was made from.
public struct GeneratedHaptics: Sendable {
    /// The pattern: canonical AHAP once written with `AHAPWriter`.
    public var pattern: AHAPPattern
    /// Every onset detected (also with the ambient style, which writes none).
    public var onsets: [Onset]
    /// What each transient is meant to feel like (time, intensity, sharpness), before the curves:
    /// the pattern writes each so that, through them, this is what plays.
    public var transients: [(time: Double, intensity: Double, sharpness: Double)]
    /// The sound's length, seconds.
    public var duration: Double
    /// Control points written, over all curves.
    public var curvePoints: Int
    /// Curves written.
    public var curves: Int
}

/// Haptics from sound, as a designer would author them: a transient at each onset and a
/// continuous layer that follows the sound's felt loudness and brightness.
///
/// - Onsets: `OnsetDetector` (spectral flux, adaptive threshold, minimum gap). A transient's
///   intensity is 0.3 + 0.7 × the mean of the onset's relative strength (log strength over the
///   file's strongest) and the felt loudness just after it (0...1); its sharpness is the spectral
///   centroid after the onset on the `sharpness(centroid:)` scale.
/// - Continuous layer: `FrameAnalysis` loudness (low frequencies weighted: `feltWeight`) in dB,
///   mapped linearly from 50 dB below the file's loudest frame (0) to it (1), smoothed (10 ms
///   attack, 80 ms release); sharpness from the centroid, smoothed over 50 ms and held through
///   silence. Each becomes one `HapticIntensityControl` / `HapticSharpnessControl` curve
///   simplified by `LineSimplification` within `curveTolerance`, split into curves of at most
///   `maxCurvePoints` that share their end points, under `HapticContinuous` events (intensity by
///   style, sharpness 0; at most 30 s each) spanning the sound.
/// - Curves act on transients too (intensity × control, sharpness + control): each transient is
///   written so that what is felt is what it should be, and where the control at its time falls
///   short, the curve steps to it from 1 ms before and is back on its envelope 1 ms after. Away
///   from those ±1 ms, the curves are within `curveTolerance` of the analysed envelope.
public enum HapticGenerator {
    /// Sample rates the analysis reads, Hz.
    public static let sampleRates = 4_000.0...Double(AudioFileInfo.maxSampleRate)

    /// Generates haptics for a mono signal at `sampleRate` Hz; throws for a rate outside
    /// `sampleRates`, a sample that is not finite, or an option out of its range.
    public static func generate(mono: [Float], sampleRate: Double, options: GenerationOptions = .init()) throws(GenerationError) -> GeneratedHaptics {
        try generate(mono: mono, sampleRate: sampleRate, options: options, path: nil)
    }

    static func generate(mono input: [Float], sampleRate: Double, options: GenerationOptions, path: String?) throws(GenerationError) -> GeneratedHaptics {
        guard sampleRates.contains(sampleRate) else { throw .unusableRate(path: path, rate: sampleRate) }
        if let bad = input.firstIndex(where: { !$0.isFinite }) { throw .notFinite(path: path, index: bad, seconds: Double(bad) / sampleRate) }
        guard GenerationOptions.sensitivityRange.contains(options.sensitivity) else {
            throw .option("sensitivity must be from \(AHAPWriter.formatNumber(GenerationOptions.sensitivityRange.lowerBound)) to "
                + "\(AHAPWriter.formatNumber(GenerationOptions.sensitivityRange.upperBound)), not \(options.sensitivity)")
        }
        guard GenerationOptions.curvePointRange.contains(options.maxCurvePoints) else {
            throw .option("maxCurvePoints must be from \(GenerationOptions.curvePointRange.lowerBound) to \(GenerationOptions.curvePointRange.upperBound), not \(options.maxCurvePoints)")
        }
        guard options.curveTolerance >= 0, options.curveTolerance < 1, options.minimumGap >= 0, options.minimumGap <= 10 else {
            throw .option("curveTolerance must be in 0..<1 and minimumGap in 0...10 s")
        }
        let mono = FrameAnalysis.prepared(input, sampleRate: sampleRate)
        let detector = OnsetDetector(sampleRate: sampleRate, sensitivity: options.sensitivity, minimumGap: options.minimumGap)
        let frames = detector.analysis.analyze(mono)
        let onsets = detector.detect(mono, frames: frames)
        let duration = Double(input.count) / sampleRate
        let hop = Double(frames.hop) / sampleRate

        let loud = feltLevels(frames.loudness, hop: hop)
        let sharp = sharpnessLevels(frames.centroid, levels: loud, hop: hop)
        // The curves from the frames inside the sound, and one point at its end (the frames past
        // it are for onsets; their clamped times would stack points at the end).
        let inside = max(1, min(loud.count, Int((duration / hop).rounded(.up))))
        var times = (0..<inside).map { Double($0) * hop }
        var levels = Array(loud.prefix(inside)), sharps = Array(sharp.prefix(inside))
        if let last = times.last, last < duration, inside < loud.count {
            times.append(duration)
            levels.append(loud[inside])
            sharps.append(sharp[inside])
        }

        // Transients: what should be felt at each onset.
        let strongest = onsets.map(\.strength).max() ?? 1
        let taps: [(time: Double, intensity: Double, sharpness: Double)] = !options.style.hasTransients ? [] : onsets.map { o in
            let i = Int((o.time / hop).rounded())
            let after = loud.isEmpty ? 0 : loud[min(i, loud.count - 1)...min(i + Int((0.03 / hop).rounded()), loud.count - 1)].max() ?? 0
            let relative = strongest > 1 ? log(o.strength) / log(strongest) : 1
            return (rounded(o.time, 4), rounded(0.3 + 0.7 * (relative + after) / 2, 3), rounded(sharpness(centroid: o.centroid), 3))
        }

        var intensityPoints = simplified(times, levels, tolerance: options.curveTolerance)
        var sharpnessPoints = simplified(times, sharps, tolerance: options.curveTolerance)
        let intensityEnvelope = intensityPoints, sharpnessEnvelope = sharpnessPoints
        for tap in taps {
            stepUp(&intensityPoints, along: intensityEnvelope, to: tap.intensity, at: tap.time, when: { $0 < tap.intensity })
            stepUp(&sharpnessPoints, along: sharpnessEnvelope, to: tap.sharpness, at: tap.time, when: { $0 > tap.sharpness })
        }
        let intensityCurves = split(intensityPoints, .hapticIntensityControl, most: options.maxCurvePoints)
        let sharpnessCurves = split(sharpnessPoints, .hapticSharpnessControl, most: options.maxCurvePoints)

        var entries: [AHAPEntry] = []
        if let path = options.audioPath {
            entries.append(.event(AHAPEvent(time: 0, type: .audioCustom, waveformPath: path, useVolumeEnvelope: false)))
        }
        var written: [AHAPParameterCurve] = []
        if duration >= 0.001, loud.contains(where: { $0 > 0 }) {
            var start = 0.0
            while duration - start >= 0.001 {
                let length = min(AHAPEvent.maximumContinuousDuration, duration - start)
                entries.append(.event(AHAPEvent(time: rounded(start, 4), type: .hapticContinuous, duration: rounded(length, 4), parameters: [
                    AHAPEventParameter(.hapticIntensity, options.style.continuousIntensity), AHAPEventParameter(.hapticSharpness, 0),
                ])))
                start += length
            }
            written = intensityCurves + sharpnessCurves
            entries += written.map(AHAPEntry.curve)
        }
        // Each transient written so that, through the curves, what is felt is what it should be.
        let intensityTrack = ParameterTrack(.hapticIntensityControl, entries: entries)
        let sharpnessTrack = ParameterTrack(.hapticSharpnessControl, entries: entries)
        for tap in taps {
            let control = intensityTrack.value(at: tap.time)
            entries.append(.event(AHAPEvent(time: tap.time, type: .hapticTransient, parameters: [
                AHAPEventParameter(.hapticIntensity, control > 0 ? rounded(min(1, tap.intensity / control), 3) : 1),
                AHAPEventParameter(.hapticSharpness, rounded(min(max(tap.sharpness - sharpnessTrack.value(at: tap.time), 0), 1), 3)),
            ])))
        }
        entries.sort { time(of: $0) < time(of: $1) }
        let pattern = AHAPPattern(version: 1, metadata: .init(.object([
            JSONMember(key: "Project", value: .string("HapSync")),
            JSONMember(key: "Description", value: .string("generated from sound: \(options.style.rawValue), sensitivity \(AHAPWriter.formatNumber(options.sensitivity))")),
        ])), entries: entries)
        return GeneratedHaptics(pattern: pattern, onsets: onsets, transients: taps, duration: duration,
                                curvePoints: written.reduce(0) { $0 + $1.controlPoints.count }, curves: written.count)
    }

    /// Decodes `url` with the project's decoder (`AudioFileDecoder`, at the file's own rate),
    /// mixes it to mono and generates haptics for it.
    public static func generate(contentsOf url: URL, options: GenerationOptions = .init()) throws(GenerationError) -> GeneratedHaptics {
        let decoded: (samples: [Float], sampleRate: Double)
        do { decoded = try decodeMono(url) } catch { throw .audio(error) }
        return try generate(mono: decoded.samples, sampleRate: decoded.sampleRate, options: options, path: url.path)
    }

    /// A file's samples as mono at its own rate (the mean of the decoder's two channels), the file
    /// opened and its header read once.
    public static func decodeMono(_ url: URL) throws(AudioFileDecoder.LoadError) -> (samples: [Float], sampleRate: Double) {
        let (stereo, rate) = try AudioFileDecoder.decodeAtItsOwnRate(url)
        var mono = [Float](repeating: 0, count: stereo.frames)
        for i in 0..<stereo.frames { mono[i] = 0.5 * (stereo.left[i] + stereo.right[i]) }
        return (mono, rate)
    }

    /// A spectral centroid on the sharpness scale: log-frequency from 100 Hz (0) to 4 kHz (1),
    /// where dull thuds and bright clicks sit.
    public static func sharpness(centroid: Double) -> Double {
        guard centroid > 0 else { return 0 }
        return min(max(log(centroid / 100) / log(40), 0), 1)
    }

    /// Felt loudness per frame, 0...1: 50 dB below the loudest frame → 0, the loudest → 1,
    /// smoothed by a 10 ms attack and an 80 ms release (`LevelFollower`).
    static func feltLevels(_ loudness: [Double], hop: Double) -> [Double] {
        guard let top = loudness.max(), top > -100 else { return loudness.map { _ in 0 } }
        var follower = LevelFollower(hop: hop)
        return loudness.map { follower.next(LevelFollower.relative(db: $0, loudest: top)) }
    }

    /// Sharpness per frame: the centroid's, smoothed over 50 ms, held where the sound is silent
    /// (`SharpnessFollower`).
    static func sharpnessLevels(_ centroid: [Double], levels: [Double], hop: Double) -> [Double] {
        var follower = SharpnessFollower(hop: hop)
        var out = [Double](repeating: 0, count: centroid.count)
        for i in centroid.indices { out[i] = follower.next(centroid: centroid[i], level: levels[i]) ?? 0 }
        // Before the first sound: its sharpness, so the curve starts where the sound does.
        if let first = levels.firstIndex(where: { $0 > 0.05 }) { for i in 0..<first { out[i] = out[first] } }
        return out
    }

    /// The simplified curve through `(times[i], values[i])`, values rounded to 3 decimals.
    static func simplified(_ times: [Double], _ values: [Double], tolerance: Double) -> [(time: Double, value: Double)] {
        let points = zip(times, values).map { (time: $0, value: $1) }
        return LineSimplification.keep(points, tolerance: tolerance).map { (rounded(points[$0].time, 4), rounded(points[$0].value, 3)) }
    }

    /// Makes the curve reach `value` at `time` when `needs` says its value there falls short: from
    /// 1 ms before it steps to `value`, and 1 ms after it is back on `envelope` (the curve before
    /// any step), so the layer differs from its envelope only within ±1 ms of the transient.
    static func stepUp(_ points: inout [(time: Double, value: Double)], along envelope: [(time: Double, value: Double)],
                       to value: Double, at time: Double, when needs: (Double) -> Bool) {
        guard !points.isEmpty, needs(interpolate(points, at: time)) else { return }
        let before = max(0, rounded(time - 0.001, 4)), after = rounded(time + 0.001, 4)
        let from = rounded(interpolate(points, at: before), 3), back = rounded(interpolate(envelope, at: after), 3)
        let lastTime = points[points.count - 1].time
        points.removeAll { $0.time >= before && $0.time <= after }
        let at = points.firstIndex { $0.time > time } ?? points.count
        var inserted: [(time: Double, value: Double)] = before < time ? [(before, from), (time, value)] : [(time, value)]
        if after <= lastTime { inserted.append((after, back)) }
        points.insert(contentsOf: inserted, at: at)
    }

    /// The piecewise-linear value of `points` at `t` (held before the first and after the last).
    static func interpolate(_ points: [(time: Double, value: Double)], at t: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 0 }
        if t <= first.time { return first.value }
        if t >= last.time { return last.value }
        var lo = 0, hi = points.count - 1
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if points[mid].time <= t { lo = mid } else { hi = mid }
        }
        let a = points[lo], b = points[hi]
        return b.time > a.time ? a.value + (b.value - a.value) * (t - a.time) / (b.time - a.time) : b.value
    }

    /// Curves of at most `most` points; each after the first starts at the last point of the one
    /// before, so the value is continuous across them.
    static func split(_ points: [(time: Double, value: Double)], _ id: AHAPDynamicParameterID, most: Int) -> [AHAPParameterCurve] {
        guard !points.isEmpty else { return [] }
        let most = max(most, 2)
        var curves: [AHAPParameterCurve] = []
        var start = 0
        repeat {
            let end = min(start + most, points.count)
            let t0 = points[start].time
            curves.append(AHAPParameterCurve(id, time: t0, controlPoints: points[start..<end].map {
                AHAPControlPoint(time: rounded($0.time - t0, 4), value: $0.value)
            }))
            start = end - 1
        } while start < points.count - 1
        return curves
    }

    /// `x` rounded to `digits` decimals (what the file keeps).
    static func rounded(_ x: Double, _ digits: Int) -> Double {
        let scale = pow(10, Double(digits))
        return (x * scale).rounded() / scale
    }

    private static func time(of entry: AHAPEntry) -> Double {
        switch entry {
        case .event(let e): return e.time
        case .parameter(let p): return p.time
        case .curve(let c): return c.time
        }
    }
}

/// The continuous layer's felt level, frame by frame: a frame's loudness relative to the loudest
/// (`relative`), followed with a 10 ms attack and an 80 ms release, below 0.001 → 0. One rule
/// for `generate` (the loudest: the file's loudest frame) and `hapsync live` (the loudest so far,
/// falling slowly). Does not allocate.
public struct LevelFollower: Sendable {
    private let attack: Double, release: Double
    /// The level after the last frame, 0...1.
    public private(set) var level = 0.0

    /// A follower for frames `hop` seconds apart.
    public init(hop: Double) {
        attack = 1 - exp(-hop / 0.01)
        release = 1 - exp(-hop / 0.08)
    }

    /// A loudness `db` on the felt scale, 0...1: 50 dB below `loudest` → 0, `loudest` → 1.
    public static func relative(db: Double, loudest: Double) -> Double { min(max((db - (loudest - 50)) / 50, 0), 1) }

    /// The level after a frame whose relative loudness is `target` (0...1).
    public mutating func next(_ target: Double) -> Double {
        let t = target.isFinite ? min(max(target, 0), 1) : 0
        level += (t - level) * (t > level ? attack : release)
        return level < 1e-3 ? 0 : level
    }
}

/// The continuous layer's sharpness, frame by frame: the centroid's on the `sharpness(centroid:)`
/// scale, smoothed over 50 ms, held while the level is 0.05 or less. Nil before the first frame
/// with sound. Does not allocate.
public struct SharpnessFollower: Sendable {
    private let smoothing: Double
    private var value: Double?

    /// A follower for frames `hop` seconds apart.
    public init(hop: Double) { smoothing = 1 - exp(-hop / 0.05) }

    /// The sharpness after a frame of spectral centroid `centroid` Hz at felt `level` (0...1).
    public mutating func next(centroid: Double, level: Double) -> Double? {
        if level > 0.05 {
            let target = HapticGenerator.sharpness(centroid: centroid.isFinite ? centroid : 0)
            value = value.map { $0 + (target - $0) * smoothing } ?? target
        }
        return value
    }
}
