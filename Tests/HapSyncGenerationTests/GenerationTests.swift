import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncTestSupport
import Testing
@testable import HapSyncGeneration

/// Signals with known onsets, made here: a seeded generator, hits of three kinds, backgrounds.
enum TestSignals {
    static let rate = 48_000.0

    /// xorshift64*: the same numbers on every run.
    struct Random {
        var state: UInt64
        mutating func next() -> Double {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return Double((state &* 2_685_821_657_736_338_717) >> 11) / Double(1 << 53)
        }
        mutating func noise() -> Float { Float(next() * 2 - 1) }
    }

    /// A hit of `kind` (0 kick, 1 snare, 2 hi-hat) at full scale.
    static func hit(_ kind: Int, random: inout Random) -> [Float] {
        let n = Int(rate * (kind == 2 ? 0.05 : 0.25))
        return (0..<n).map { i in
            let t = Double(i) / rate
            // The last 20 ms fade out: a decay cut short is a click, a real onset.
            let fade = Float(min(1, Double(n - i) / (rate * 0.02)))
            return fade * sound(kind, t, &random)
        }
    }

    private static func sound(_ kind: Int, _ t: Double, _ random: inout Random) -> Float {
            switch kind {
            case 0: return Float(sin(2 * .pi * (50 * t + 100 * 0.03 * (1 - exp(-t / 0.03)))) * exp(-t / 0.08))
            case 1: return Float((0.6 * sin(2 * .pi * 200 * t) + 0.8 * Double(random.noise())) * exp(-t / 0.05))
            default: return random.noise() * Float(exp(-t / 0.012))
            }
    }

    /// `seconds` of signal with hits at `times` (kind by index, gain by `gains`), over `background`
    /// (nil: silence) at `snr` dB (hits' power over the background's, over the whole signal).
    static func mix(seconds: Double, times: [Double], gains: [Float], snr: Double?, seed: UInt64 = 7) -> [Float] {
        var random = Random(state: seed)
        var hits = [Float](repeating: 0, count: Int(seconds * rate))
        for (k, t) in times.enumerated() {
            let h = hit(k % 3, random: &random)
            let start = Int(t * rate)
            for i in h.indices where start + i < hits.count { hits[start + i] += gains[k % gains.count] * h[i] }
        }
        guard let snr else { return hits.map { $0 * 0.5 } }
        let bed = (0..<hits.count).map { _ in random.noise() }
        let power = { (x: [Float]) in x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1)) }
        let scale = Float((power(hits) / power(bed) / pow(10, snr / 10)).squareRoot())
        return zip(hits, bed).map { 0.4 * ($0 + scale * $1) }
    }

    /// Hits at irregular times, at least 80 ms apart.
    static func times(count: Int, seed: UInt64 = 3) -> [Double] {
        var random = Random(state: seed)
        var t = 0.2
        return (0..<count).map { _ in defer { t += 0.08 + random.next() * 0.3 }; return (t * 1000).rounded() / 1000 }
    }

    /// Precision, recall and F-measure of `found` against `truth` within ±25 ms (`OnsetScore`).
    static func score(_ found: [Double], _ truth: [Double]) -> (p: Double, r: Double, f: Double) {
        let s = OnsetScore(labels: truth, detections: found, tolerance: 0.025)
        return (s.precision, s.recall, s.f)
    }
}

@Suite("Onset detection")
struct OnsetDetectionTests {
    @Test func hitsOverSilenceAreFoundWhereTheyStart() {
        let truth = TestSignals.times(count: 40)
        let signal = TestSignals.mix(seconds: truth.last! + 0.5, times: truth, gains: [1, 0.3, 0.6], snr: nil)
        let onsets = OnsetDetector(sampleRate: TestSignals.rate).detect(signal)
        #expect(onsets.count == truth.count, "\(onsets.map(\.time))")
        for (o, t) in zip(onsets, truth) { #expect(abs(o.time - t) <= 0.005, "onset \(o.time) for a hit at \(t)") }
    }

    @Test(arguments: [20.0, 10.0])
    func hitsOfSimilarLevelOverWhiteNoiseAreFound(snr: Double) {
        let truth = TestSignals.times(count: 60, seed: 11)
        let signal = TestSignals.mix(seconds: truth.last! + 0.5, times: truth, gains: [1, 0.5, 0.7], snr: snr)
        let s = TestSignals.score(OnsetDetector(sampleRate: TestSignals.rate).detect(signal).map(\.time), truth)
        #expect(s.f >= 0.9, "SNR \(snr) dB: precision \(s.p), recall \(s.r)")
    }

    /// Quiet kicks among loud ones over noise at 10 dB SNR: −18 dB over white noise, and −12 dB
    /// over a rumble (white noise through a one-pole low-pass at 150 Hz, where the kicks are). A
    /// quiet kick rises in three low bands, which the ripple of thirty noisy bands summed ungated
    /// drowned: the method before, one-frame flux summed over the bands ungated, gave F 0.85 and
    /// 0.65 here.
    @Test(arguments: [(Float(0.125), false, 0.9), (0.25, true, 0.85)])
    func quietLowHitsInNoiseAreFound(quiet: Float, rumble: Bool, least: Double) {
        let truth = TestSignals.times(count: 60, seed: 13)
        var random = TestSignals.Random(state: 21)
        var hits = [Float](repeating: 0, count: Int((truth.last! + 0.5) * TestSignals.rate))
        let kick = TestSignals.hit(0, random: &random)
        for (k, t) in truth.enumerated() {
            let start = Int(t * TestSignals.rate)
            for i in kick.indices where start + i < hits.count { hits[start + i] += (k % 2 == 0 ? 1 : quiet) * kick[i] }
        }
        let power = { (x: [Float]) in x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1)) }
        var low: Float = 0
        let bed = hits.map { _ -> Float in
            let n = random.noise()
            low = 0.98 * low + 0.02 * n
            return rumble ? low : n
        }
        let scale = Float((power(hits) / power(bed) / 10).squareRoot())
        let signal = zip(hits, bed).map { 0.4 * ($0 + scale * $1) }
        let s = TestSignals.score(OnsetDetector(sampleRate: TestSignals.rate).detect(signal).map(\.time), truth)
        #expect(s.f >= least, "precision \(s.p), recall \(s.r)")
    }

    /// Rolls: hits 50 and 62.5 ms apart (32nds at 120 BPM), the same sound over and over (a snare,
    /// a hi-hat, a kick) or kick, snare and hat in turn, clean: each is found. A regular roll
    /// makes its bands' levels swing like loud noise; the gates take no more than noise's ripple
    /// (`noiseRippleCeiling`), and each rise is measured against the 20 ms before it.
    @Test(arguments: [0.05, 0.0625])
    func rollsAreFoundHitByHit(spacing: Double) {
        for kinds in [[1], [2], [0], [0, 1, 2]] {
            var random = TestSignals.Random(state: 5)
            let truth = (0..<40).map { 0.3 + Double($0) * spacing }
            var signal = [Float](repeating: 0, count: Int((truth.last! + 0.5) * TestSignals.rate))
            for (k, t) in truth.enumerated() {
                let h = TestSignals.hit(kinds[k % kinds.count], random: &random)
                let start = Int(t * TestSignals.rate)
                for i in h.indices where start + i < signal.count { signal[start + i] += 0.5 * h[i] }
            }
            let s = TestSignals.score(OnsetDetector(sampleRate: TestSignals.rate).detect(signal).map(\.time), truth)
            #expect(s.r >= 0.95 && s.p >= 0.95, "hits \(kinds) every \(spacing) s: precision \(s.p), recall \(s.r)")
        }
    }

    /// Steady noise, white and low-passed, is no onset: each band's rise is gated by the ripple
    /// that noise gives it (8 and 10 onsets in 20 s; 36 and 39 with the gates at 0).
    @Test func steadyNoiseIsNoOnset() {
        for rumble in [false, true] {
            var random = TestSignals.Random(state: 31)
            var low: Float = 0
            let fade = Int(TestSignals.rate * 0.3)
            let signal = (0..<Int(TestSignals.rate * 20)).map { i -> Float in
                let n = random.noise()
                low = 0.98 * low + 0.02 * n
                // Faded in over 300 ms: a noise that starts at once is an onset.
                return (rumble ? 10 * low : n) * 0.3 * Float(min(1, Double(i) / Double(fade)))
            }
            let onsets = OnsetDetector(sampleRate: TestSignals.rate).detect(signal)
            #expect(onsets.count <= 12, "\(rumble ? "rumble" : "white noise"): \(onsets.count) onsets")
        }
    }

    /// A hit just before the end of the file is found, whatever the file's length (the last
    /// frames got no flux when their gate estimate fell past the end).
    @Test func aHitAtTheVeryEndIsFound() {
        var random = TestSignals.Random(state: 41)
        let hit = TestSignals.hit(1, random: &random)
        for extra in stride(from: 0, to: 4_800, by: 120) {
            for before in [0.008, 0.012] {
                let count = 48_000 + extra
                var signal = [Float](repeating: 0, count: count)
                let start = count - Int(before * TestSignals.rate)
                for i in 0..<(count - start) { signal[start + i] = 0.5 * hit[i] }
                let onsets = OnsetDetector(sampleRate: TestSignals.rate).detect(signal)
                #expect(onsets.contains { abs($0.time - Double(start) / TestSignals.rate) < 0.005 }, "\(count) samples: \(onsets.map(\.time))")
            }
        }
    }

    /// The selection the gates use gives what sorting gives, duplicates and all.
    @Test func selectionMatchesSorting() {
        var random = TestSignals.Random(state: 17)
        for n in [1, 2, 3, 10, 51, 101] {
            for _ in 0..<20 {
                let values = (0..<n).map { _ in Float((random.next() * 8).rounded(.down)) - 3 }
                for k in [0, n / 2, n - 1] {
                    var scratch = values
                    #expect(OnsetDetector.select(&scratch, k) == values.sorted()[k], "\(values), k \(k)")
                }
            }
        }
    }

    @Test func twoHitsCloserThanTheMinimumGapAreOne() {
        let signal = TestSignals.mix(seconds: 1, times: [0.3, 0.31], gains: [1], snr: nil)
        #expect(OnsetDetector(sampleRate: TestSignals.rate, minimumGap: 0.03).detect(signal).count == 1)
        let apart = TestSignals.mix(seconds: 1, times: [0.3, 0.36], gains: [1], snr: nil)
        #expect(OnsetDetector(sampleRate: TestSignals.rate, minimumGap: 0.03).detect(apart).count == 2)
    }

    @Test func lowerSensitivityNeverFindsMore() {
        let truth = TestSignals.times(count: 40, seed: 5)
        let signal = TestSignals.mix(seconds: truth.last! + 0.5, times: truth, gains: [1, 0.05, 0.2, 0.5], snr: 15)
        let counts = [0.0, 0.25, 0.5, 0.75, 1].map { OnsetDetector(sampleRate: TestSignals.rate, sensitivity: $0).detect(signal).count }
        #expect(counts == counts.sorted() && counts.first! < counts.last!, "\(counts)")
    }

    @Test func silenceAndEmptySignalsHaveNoOnsets() {
        #expect(OnsetDetector(sampleRate: TestSignals.rate).detect([]).isEmpty)
        #expect(OnsetDetector(sampleRate: TestSignals.rate).detect([Float](repeating: 0, count: 48_000)).isEmpty)
        // A steady tone: one onset, where it starts.
        let tone = (0..<48_000).map { i in Float(sin(2 * Double.pi * 440 * Double(i) / 48_000) * 0.5) }
        let onsets = OnsetDetector(sampleRate: TestSignals.rate).detect([Float](repeating: 0, count: 4_800) + tone)
        #expect(onsets.count == 1 && abs((onsets.first?.time ?? 0) - 0.1) < 0.002, "\(onsets)")
    }

    @Test func centroidTellsAKickFromAHiHat() {
        var random = TestSignals.Random(state: 1)
        func alone(_ kind: Int) -> [Float] {
            var x = [Float](repeating: 0, count: 28_800)
            for (i, v) in TestSignals.hit(kind, random: &random).enumerated() { x[9_600 + i] = v }
            return x
        }
        let k = OnsetDetector(sampleRate: TestSignals.rate).detect(alone(0)), h = OnsetDetector(sampleRate: TestSignals.rate).detect(alone(2))
        #expect(k.count == 1 && h.count == 1, "kick \(k), hi-hat \(h)")
        #expect(HapticGenerator.sharpness(centroid: k.first?.centroid ?? 0) < 0.4 && HapticGenerator.sharpness(centroid: h.first?.centroid ?? 0) > 0.7,
                "kick \(k.first?.centroid ?? 0) Hz, hi-hat \(h.first?.centroid ?? 0) Hz")
    }
}

@Suite("Line simplification")
struct LineSimplificationTests {
    @Test func everyDroppedSampleIsWithinTheBound() {
        var random = TestSignals.Random(state: 9)
        var value = 0.5
        let points = (0..<2_000).map { i -> (time: Double, value: Double) in
            value = min(max(value + (random.next() - 0.5) * 0.05, 0), 1)
            return (Double(i) * 0.005, value)
        }
        for tolerance in [0.01, 0.05, 0.2] {
            let kept = LineSimplification.keep(points, tolerance: tolerance)
            #expect(kept.first == 0 && kept.last == points.count - 1 && kept.count < points.count)
            for (a, b) in zip(kept, kept.dropFirst()) {
                for i in a...b {
                    let line = points[a].value + (points[b].value - points[a].value) * (points[i].time - points[a].time) / (points[b].time - points[a].time)
                    #expect(abs(points[i].value - line) <= tolerance + 1e-12)
                }
            }
        }
        #expect(LineSimplification.keep([(0, 0), (1, 1), (2, 2), (3, 3)], tolerance: 0) == [0, 3], "a straight line is its two ends")
    }
}

@Suite("Pattern generation")
struct PatternGenerationTests {
    static let song: [Float] = {
        // 40 s: hits over a noise bed, so the layer is long and the events split at 30 s.
        let truth = TestSignals.times(count: 150, seed: 21).filter { $0 < 39.5 }
        return TestSignals.mix(seconds: 40, times: truth, gains: [1, 0.4, 0.7], snr: 12)
    }()

    static func curves(_ p: AHAPPattern) -> [AHAPParameterCurve] { p.entries.compactMap { if case .curve(let c) = $0 { return c } else { return nil } } }
    static func events(_ p: AHAPPattern, _ type: AHAPEventType) -> [AHAPEvent] {
        p.entries.compactMap { if case .event(let e) = $0, e.type == type { return e } else { return nil } }
    }

    @Test(arguments: [2, 4, 16, 100])
    func curvesKeepThePointLimitAndMeetEndToEnd(most: Int) throws {
        let g = try HapticGenerator.generate(mono: Self.song, sampleRate: TestSignals.rate, options: .init(maxCurvePoints: most))
        #expect(g.pattern.findings().isEmpty, "\(g.pattern.findings())")
        for id in [AHAPDynamicParameterID.hapticIntensityControl, .hapticSharpnessControl] {
            let curves = Self.curves(g.pattern).filter { $0.id == id }
            #expect(!curves.isEmpty && curves.allSatisfy { $0.controlPoints.count <= most && $0.controlPoints.count >= 2 })
            #expect(curves.first?.time == 0)
            for (a, b) in zip(curves, curves.dropFirst()) {
                let last = try #require(a.controlPoints.last), first = try #require(b.controlPoints.first)
                #expect(abs(a.time + last.time - b.time) < 1e-9 && first.time == 0 && first.value == last.value, "curves meet end to end")
            }
        }
        let continuous = Self.events(g.pattern, .hapticContinuous)
        #expect(continuous.count == 2 && continuous.allSatisfy { ($0.duration ?? 0) <= 30 }, "40 s in events of at most 30 s")
        for c in Self.curves(g.pattern) {
            #expect(zip(c.controlPoints, c.controlPoints.dropFirst()).allSatisfy { $0.time < $1.time }, "points strictly in time order")
            #expect(c.time + (c.controlPoints.last?.time ?? 0) <= 40 + 1e-9, "no point past the sound's end")
        }
    }

    @Test(arguments: GenerationStyle.allCases)
    func transientsAreFeltAsIntendedThroughTheCurves(style: GenerationStyle) throws {
        let g = try HapticGenerator.generate(mono: Self.song, sampleRate: TestSignals.rate, options: .init(style: style))
        // Through the file as written and read back, rounding included.
        let read = try AHAPReader().read(data: AHAPWriter.data(from: g.pattern))
        #expect(read.warnings.isEmpty, "\(read.warnings)")
        let timeline = try PatternTimeline(pattern: read.pattern)
        let taps = timeline.commands.filter { $0.kind == .transient }
        #expect(taps.count == g.transients.count)
        #expect(style.hasTransients == !taps.isEmpty)
        for (tap, meant) in zip(taps, g.transients) {
            #expect(abs(tap.time - meant.time) < 1e-9)
            #expect(abs(tap.intensity - meant.intensity) < 0.002 && abs(tap.sharpness - meant.sharpness) < 0.002,
                    "at \(meant.time): played \(tap.intensity)/\(tap.sharpness), meant \(meant.intensity)/\(meant.sharpness)")
        }
        let continuous = Self.events(g.pattern, .hapticContinuous)
        #expect(continuous.allSatisfy { $0.parameters.first { $0.id == .hapticIntensity }?.value == style.continuousIntensity })
    }

    @Test func aSwellBecomesAFewPointsRisingAndFalling() throws {
        // A swell: 2 s rising, 2 s falling, of a 120 Hz tone.
        let n = 4 * 48_000
        let signal = (0..<n).map { i -> Float in
            let t = Double(i) / 48_000
            return Float(sin(2 * .pi * 120 * t) * (t < 2 ? t / 2 : (4 - t) / 2) * 0.8)
        }
        let g = try HapticGenerator.generate(mono: signal, sampleRate: 48_000, options: .init(style: .ambient))
        let track = ParameterTrack(.hapticIntensityControl, entries: g.pattern.entries)
        let peak = track.value(at: 2), early = track.value(at: 0.5), late = track.value(at: 3.5)
        #expect(peak > 0.9 && early < peak && late < peak && early > 0.3, "0.5 s \(early), 2 s \(peak), 3.5 s \(late)")
        #expect(Self.curves(g.pattern).filter { $0.id == .hapticIntensityControl }.reduce(0) { $0 + $1.controlPoints.count } < 40,
                "a smooth swell needs few points")
        // Sharpness of a 120 Hz tone: low.
        #expect(ParameterTrack(.hapticSharpnessControl, entries: g.pattern.entries).value(at: 2) < 0.2)
    }

    @Test func silenceGivesAnEmptyValidPattern() throws {
        let g = try HapticGenerator.generate(mono: [Float](repeating: 0, count: 48_000), sampleRate: 48_000)
        #expect(g.pattern.entries.isEmpty && g.onsets.isEmpty && g.pattern.findings().isEmpty)
        #expect(g.curves == 0 && g.curvePoints == 0, "curves counted as written")
        let audio = try HapticGenerator.generate(mono: [], sampleRate: 48_000, options: .init(audioPath: "song.wav"))
        #expect(audio.pattern.entries.count == 1 && audio.pattern.findings().isEmpty)
    }

    @Test func includeAudioPlaysTheSourceFromTimeZero() throws {
        let g = try HapticGenerator.generate(mono: Self.song, sampleRate: TestSignals.rate, options: .init(audioPath: "music/song.wav"))
        let audio = Self.events(g.pattern, .audioCustom)
        #expect(audio.count == 1 && audio.first?.time == 0 && audio.first?.waveformPath == "music/song.wav")
    }

    @Test func aFileThatIsNoAudioIsAnErrorNamingIt() throws {
        let folder = try TemporaryDirectory("gen")
        defer { folder.remove() }
        let path = folder.file("gen.wav")
        try Data("not a sound".utf8).write(to: path)
        #expect {
            _ = try HapticGenerator.generate(contentsOf: path)
        } throws: { "\($0)".contains(path.path) }
    }

    @Test func aBundledSoundGeneratesAValidPattern() throws {
        let click = TestFiles.asset("audio/thud-44k1-mono-24.flac")
        let g = try HapticGenerator.generate(contentsOf: click)
        #expect(g.onsets.count >= 1 && g.pattern.findings().isEmpty)
        #expect(abs(g.duration - 0.25) < 0.1, "\(g.duration)")
    }
}

@Suite("Spectrum")
struct SpectrumTests {
    /// The FFT's magnitudes against a direct DFT of the same windowed frame, with the frame inside
    /// the signal and hanging over either end.
    @Test(arguments: [16, 64, 1_024])
    func magnitudesMatchADirectTransform(size: Int) {
        var random = TestSignals.Random(state: UInt64(size))
        let signal = (0..<(3 * size)).map { _ in random.noise() }
        let spectrum = Spectrum(size: size)
        var out = [Float](repeating: 0, count: spectrum.bins), re = [Float](repeating: 0, count: size), im = re
        for start in [-size / 3, size, 2 * size + size / 2] {
            spectrum.magnitudes(signal, start: start, into: &out, real: &re, imaginary: &im)
            for k in [0, 1, size / 4, size / 2 - 1, size / 2] {
                var xr = 0.0, xi = 0.0
                for n in 0..<size {
                    let j = start + n
                    let x = j >= 0 && j < signal.count ? Double(signal[j]) * (0.5 - 0.5 * cos(2 * .pi * Double(n) / Double(size))) : 0
                    xr += x * cos(-2 * .pi * Double(k * n) / Double(size))
                    xi += x * sin(-2 * .pi * Double(k * n) / Double(size))
                }
                #expect(abs(Double(out[k]) - (xr * xr + xi * xi).squareRoot()) < 1e-3 * Double(size), "size \(size), start \(start), bin \(k)")
            }
        }
    }
}

@Suite("Generation: the layer, odd inputs")
struct GenerationEdgeTests {
    /// Every analysed frame's felt level lies within the tolerance of the written intensity curve,
    /// except within ±1 ms of a transient (where the curve steps to what the tap needs), and the
    /// balanced style's curve is the ambient one's there too.
    @Test func theIntensityCurveStaysWithinTheToleranceOfTheEnvelope() throws {
        let rate = TestSignals.rate
        let signal = PatternGenerationTests.song
        let balanced = try HapticGenerator.generate(mono: signal, sampleRate: rate)
        let ambient = try HapticGenerator.generate(mono: signal, sampleRate: rate, options: .init(style: .ambient))
        let frames = FrameAnalysis(sampleRate: rate).analyze(FrameAnalysis.prepared(signal, sampleRate: rate))
        let hop = Double(frames.hop) / rate
        let levels = HapticGenerator.feltLevels(frames.loudness, hop: hop)
        let curve = ParameterTrack(.hapticIntensityControl, entries: balanced.pattern.entries)
        let plain = ParameterTrack(.hapticIntensityControl, entries: ambient.pattern.entries)
        let taps = balanced.transients.map(\.time)
        var checked = 0
        for (i, level) in levels.enumerated() {
            let t = Double(i) * hop
            guard t < balanced.duration, !taps.contains(where: { abs($0 - t) <= 0.0011 }) else { continue }
            #expect(abs(curve.value(at: t) - level) <= 0.05 + 0.001, "at \(t) s: curve \(curve.value(at: t)), envelope \(level)")
            #expect(abs(curve.value(at: t) - plain.value(at: t)) <= 0.001)
            checked += 1
        }
        #expect(checked > 7_000)
    }

    /// A quieter hit after digital silence is not felt stronger than the loud ones (its strength
    /// over silence is measured against the floor, not against a median of 0).
    @Test func aHitAfterSilenceDoesNotOutweighTheOthers() throws {
        // A quiet snare in digital silence, then loud ones over a steady noise bed (where the
        // threshold's median and MAD are not 0).
        var signal = [Float](repeating: 0, count: 48_000 * 3)
        var random = TestSignals.Random(state: 4)
        // The bed fades in over 300 ms from 0.9 s (a bed that starts at once is an onset itself).
        for i in 43_200..<signal.count { signal[i] = random.noise() * 0.01 * Float(min(1, Double(i - 43_200) / 14_400)) }
        for (start, gain) in [(24_000, Float(0.15)), (72_000, 1), (96_000, 1), (120_000, 1)] {
            for (i, v) in TestSignals.hit(1, random: &random).enumerated() where start + i < signal.count { signal[start + i] += gain * v }
        }
        let g = try HapticGenerator.generate(mono: signal, sampleRate: 48_000)
        // The hits' transients (the bed's fade-in from digital silence can add weak ones of its
        // own: see docs/generate.md, limits).
        let hits = [0.5, 1.5, 2.0, 2.5].compactMap { t in g.transients.first { abs($0.time - t) < 0.005 } }
        #expect(hits.count == 4, "\(g.transients)")
        guard hits.count == 4 else { return }
        #expect(hits[0].intensity < hits[1...].map(\.intensity).min()!, "\(g.transients)")
        #expect(g.transients.filter { t in !hits.contains { $0.time == t.time } }.allSatisfy { $0.intensity < hits[0].intensity }, "\(g.transients)")
    }

    /// A file that starts on a noise floor has no onset at its start.
    @Test func aNoiseFloorFromTheStartIsNoOnset() throws {
        var random = TestSignals.Random(state: 12)
        var signal = (0..<48_000).map { _ in random.noise() * 0.001 }
        for (i, v) in TestSignals.hit(0, random: &random).enumerated() { signal[24_000 + i] += 0.8 * v }
        let g = try HapticGenerator.generate(mono: signal, sampleRate: 48_000)
        #expect(g.onsets.count == 1 && abs((g.onsets.first?.time ?? 0) - 0.5) < 0.005, "\(g.onsets)")
    }

    /// At the rates files come in, a hit is found where it is; a sound shorter than a frame (the
    /// repo's 3 ms click) still gets its transient.
    @Test(arguments: [8_000.0, 22_050, 44_100, 96_000, 192_000])
    func otherRatesAndShortSounds(rate: Double) throws {
        var random = TestSignals.Random(state: 8)
        var signal = [Float](repeating: 0, count: Int(rate))
        let hit = TestSignals.hit(1, random: &random)
        for i in 0..<min(hit.count, Int(rate) / 2) { signal[Int(rate * 0.3) + i * Int(rate) / 48_000] = hit[i] }
        let g = try HapticGenerator.generate(mono: signal, sampleRate: rate)
        #expect(g.onsets.count == 1 && abs((g.onsets.first?.time ?? 0) - 0.3) < 0.005, "\(g.onsets)")
        // 3 ms of click, alone, and a few samples.
        let click = (0..<Int(rate * 0.003)).map { i in Float(sin(Double(i) * 0.9) * 0.8) }
        let c = try HapticGenerator.generate(mono: click, sampleRate: rate)
        #expect(c.onsets.count == 1 && c.pattern.findings().isEmpty, "\(c.onsets)")
        for n in [0, 1, 5, 100, 300] {
            let tiny = try HapticGenerator.generate(mono: [Float](repeating: 0.3, count: n), sampleRate: rate)
            #expect(tiny.pattern.findings().isEmpty && tiny.transients.allSatisfy { $0.time <= tiny.duration }, "\(n) samples")
        }
    }

    @Test func unusableInputIsAnErrorNamingIt() {
        #expect(throws: GenerationError.unusableRate(path: nil, rate: 50)) { try HapticGenerator.generate(mono: [0, 1], sampleRate: 50) }
        #expect(throws: GenerationError.self) { try HapticGenerator.generate(mono: [0, 1], sampleRate: .nan) }
        #expect(throws: GenerationError.notFinite(path: nil, index: 2, seconds: 2 / 48_000)) {
            try HapticGenerator.generate(mono: [0, 0.5, .nan, 0], sampleRate: 48_000)
        }
        #expect(throws: GenerationError.self) { try HapticGenerator.generate(mono: [0], sampleRate: 48_000, options: .init(maxCurvePoints: 5_000)) }
        #expect(throws: GenerationError.self) { try HapticGenerator.generate(mono: [0], sampleRate: 48_000, options: .init(sensitivity: 1.5)) }
        #expect("\(GenerationError.notFinite(path: "/x/song.wav", index: 7, seconds: 0.5))".hasPrefix("/x/song.wav: sample 7"))
    }

    /// A DC offset is felt as nothing: the layer over silence with an offset is what it is without.
    @Test func anOffsetIsNotALayer() throws {
        var signal = [Float](repeating: 0, count: 48_000 * 2)
        var random = TestSignals.Random(state: 6)
        for (i, v) in TestSignals.hit(0, random: &random).enumerated() { signal[4_800 + i] = v }
        let offset = signal.map { $0 * 0.9 + 0.05 }
        let g = try HapticGenerator.generate(mono: offset, sampleRate: 48_000, options: .init(style: .ambient))
        let track = ParameterTrack(.hapticIntensityControl, entries: g.pattern.entries)
        #expect(track.value(at: 1.5) < 0.05, "after the kick, silence with an offset: \(track.value(at: 1.5))")
        #expect(track.value(at: 0.02) < 0.05 && g.onsets.allSatisfy { $0.time > 0.05 }, "no step at the start: \(track.value(at: 0.02)), \(g.onsets)")
        let dc = try HapticGenerator.generate(mono: [Float](repeating: 0.5, count: 48_000), sampleRate: 48_000, options: .init(style: .ambient))
        // Pure DC: nothing to feel, so no layer at all (or one at nothing).
        #expect(PatternGenerationTests.events(dc.pattern, .hapticContinuous).isEmpty
                || ParameterTrack(.hapticIntensityControl, entries: dc.pattern.entries).value(at: 0.5) < 0.05, "\(dc.pattern.entries.count) entries")
        #expect(dc.onsets.isEmpty, "\(dc.onsets)")
    }

    @Test func lengthsRoundingToNothingWriteNoEvent() throws {
        var random = TestSignals.Random(state: 2)
        let noise = (0..<(30 * 48_000 + 2)).map { _ in random.noise() * 0.2 }
        let g = try HapticGenerator.generate(mono: noise, sampleRate: 48_000, options: .init(style: .ambient))
        let events = PatternGenerationTests.events(g.pattern, .hapticContinuous)
        #expect(events.count == 1 && events.allSatisfy { ($0.duration ?? 0) > 0 }, "\(events.map(\.duration))")
        #expect(g.curves == PatternGenerationTests.curves(g.pattern).count)
    }
}
