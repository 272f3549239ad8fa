import Foundation
import HapSyncGeneration
import Testing

/// Streams with known onsets, made here: drum-like hits (kick, snare, hi-hat, tom, click) placed
/// at chosen frames, over silence or seeded noise.
private enum Stream {
    /// xorshift64*: the same numbers on every run.
    struct Random {
        var state: UInt64
        mutating func next() -> Double {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return Double((state &* 2_685_821_657_736_338_717) >> 11) / Double(1 << 53)
        }
        mutating func noise() -> Float { Float(next() * 2 - 1) }
    }

    /// The kinds of hit `hit` makes.
    enum Kind: Int, CaseIterable {
        case kick, snare, hat, tom, click
    }

    /// One hit of `kind` at `rate`, peak about 1, its first sample its onset; the last 20 ms faded
    /// out (a decay cut short is a click, an onset of its own).
    static func hit(_ kind: Kind, rate: Double, random: inout Random) -> [Float] {
        let seconds: Double = [Kind.kick: 0.3, .snare: 0.25, .hat: 0.1, .tom: 0.4, .click: 0.04][kind]!
        let n = Int(rate * seconds)
        var phase = 0.0, previous: Float = 0
        return (0..<n).map { i in
            let t = Double(i) / rate
            let fadeIn = Float(min(1, t / 0.0005))
            let fadeOut = Float(min(1, Double(n - i) / (rate * 0.02)))
            var x: Float
            switch kind {
            case .kick:
                phase += 2 * Double.pi * (50 + 100 * exp(-t / 0.035)) / rate
                x = Float(sin(phase) * exp(-t / 0.18))
            case .tom:
                phase += 2 * Double.pi * 110 * (1 + 0.5 * exp(-t / 0.05)) / rate
                x = Float(sin(phase) * exp(-t / 0.22))
            case .snare:
                let n = random.noise()
                x = Float(exp(-t / 0.09)) * 0.7 * (n - previous) + Float(0.6 * sin(2 * Double.pi * 200 * t) * exp(-t / 0.06))
                previous = n
            case .hat:
                let n = random.noise()
                x = Float(exp(-t / 0.025)) * 0.6 * (n - previous)
                previous = n
            case .click:
                x = random.noise() * Float(exp(-t / 0.001))
            }
            return x * fadeIn * fadeOut
        }
    }

    /// `seconds` of stream at `rate` with `hits` (kind, start frame, gain) over white noise whose
    /// power is `snr` dB below the hits' (nil: silence); the whole scaled by `scale`.
    static func mix(seconds: Double, rate: Double = 48_000, hits: [(kind: Kind, frame: Int, gain: Float)], snr: Double? = nil,
                    scale: Float = 0.5, seed: UInt64 = 7) -> [Float] {
        var random = Random(state: seed)
        var x = [Float](repeating: 0, count: Int(seconds * rate))
        for h in hits {
            for (i, v) in hit(h.kind, rate: rate, random: &random).enumerated() where h.frame + i < x.count { x[h.frame + i] += h.gain * v }
        }
        if let snr {
            let power = x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1))
            let gain = Float((power * 3 / pow(10, snr / 10)).squareRoot())
            for i in x.indices { x[i] += gain * random.noise() }
        }
        return x.map { $0 * scale }
    }

    /// Hits of every kind in turn at irregular times from 0.3 s, 80 to 400 ms apart, at gains
    /// from 0 to −`quietest` dB; as many as fit before `seconds` − 0.5.
    static func pattern(seconds: Double, rate: Double = 48_000, quietest: Double = 12, seed: UInt64 = 3) -> [(kind: Kind, frame: Int, gain: Float)] {
        var random = Random(state: seed)
        var t = 0.3, k = 0
        var hits: [(kind: Kind, frame: Int, gain: Float)] = []
        while t < seconds - 0.5 {
            hits.append((Kind.allCases[k % Kind.allCases.count], Int(t * rate), Float(pow(10, -random.next() * quietest / 20))))
            t += 0.08 + random.next() * 0.32
            k += 1
        }
        return hits
    }

    /// The onsets of `x` (`channels` interleaved) fed in chunks of `chunk` frames, and, for each,
    /// the last frame of the `process` call that reported it.
    static func detect(_ x: [Float], rate: Double = 48_000, channels: Int = 1, chunk: Int = 480,
                       detector: StreamingOnsetDetector? = nil) -> (onsets: [StreamingOnset], reportedBy: [Int64]) {
        let d = detector ?? StreamingOnsetDetector(sampleRate: rate)
        var onsets: [StreamingOnset] = [], reportedBy: [Int64] = []
        x.withUnsafeBufferPointer { all in
            var from = 0
            while from < all.count {
                let to = min(from + chunk * channels, all.count)
                let last = Int64(to / channels - 1)
                d.process(UnsafeBufferPointer(rebasing: all[from..<to]), channels: channels) { o in
                    onsets.append(o)
                    reportedBy.append(last)
                }
                from = to
            }
        }
        return (onsets, reportedBy)
    }

    /// Onset times in seconds.
    static func times(_ onsets: [StreamingOnset], rate: Double = 48_000) -> [Double] { onsets.map { $0.time(sampleRate: rate) } }
}

@Suite("Streaming onset detection")
struct StreamingOnsetDetectorTests {
    /// Each hit over silence is found once, within 2 ms of its first sample, for every kind.
    @Test func hitsAreFoundWhereTheyRise() {
        let hits = Stream.pattern(seconds: 8)
        let x = Stream.mix(seconds: 8, hits: hits)
        let found = Stream.detect(x).onsets
        #expect(found.count == hits.count, "\(found.count) onsets for \(hits.count) hits: \(Stream.times(found))")
        for (o, h) in zip(found, hits) {
            #expect(abs(o.frame - Int64(h.frame)) <= 96, "\(h.kind) at frame \(h.frame): onset at \(o.frame)")
        }
    }

    /// At the rates streams come in, hits are found within 2 ms of their start, and the
    /// look-ahead is 15 ms of that rate's frames.
    @Test(arguments: [8_000.0, 22_050, 44_100, 96_000, 192_000])
    func everyRate(rate: Double) {
        let hits = Stream.pattern(seconds: 3, rate: rate)
        let found = Stream.detect(Stream.mix(seconds: 3, rate: rate, hits: hits), rate: rate, chunk: Int(rate / 100)).onsets
        #expect(found.count == hits.count, "\(rate) Hz: \(Stream.times(found, rate: rate))")
        for (o, h) in zip(found, hits) { #expect(abs(Double(o.frame - Int64(h.frame)) / rate) <= 0.002, "\(rate) Hz, \(h.kind)") }
        let d = StreamingOnsetDetector(sampleRate: rate)
        #expect(d.lookAhead.frames == Int((0.015 * rate).rounded()) && abs(d.lookAhead.seconds - 0.015) < 1 / rate)
    }

    /// The chunking changes nothing: chunks of 1, 37, 480 and 4,096 frames, empty chunks between,
    /// and the whole stream at once give exactly the same onsets.
    @Test func theChunkSizeChangesNothing() {
        let hits = Stream.pattern(seconds: 4, quietest: 20, seed: 5)
        let x = Stream.mix(seconds: 4, hits: hits, snr: 10)
        let whole = Stream.detect(x, chunk: x.count).onsets
        #expect(whole.count >= hits.count * 3 / 4, "\(whole.count) onsets for \(hits.count) hits")
        for chunk in [1, 37, 480, 4_096] {
            #expect(Stream.detect(x, chunk: chunk).onsets == whole, "chunks of \(chunk)")
        }
        var withEmpty: [StreamingOnset] = []
        let d = StreamingOnsetDetector(sampleRate: 48_000)
        x.withUnsafeBufferPointer { all in
            for from in stride(from: 0, to: all.count, by: 1_000) {
                d.process(UnsafeBufferPointer(start: nil, count: 0), channels: 2, into: &withEmpty)
                d.process(UnsafeBufferPointer(rebasing: all[from..<min(from + 1_000, all.count)]), channels: 1, into: &withEmpty)
            }
        }
        #expect(withEmpty == whole)
        #expect(d.nextFrame == Int64(x.count))
    }

    /// Each onset is reported by a `process` call whose last frame is at most `lookAhead` after
    /// the onset's frame (with chunks of one frame, the call of its `decidedAt`); in bigger chunks
    /// the call holding `onset.frame + lookAhead` reports it at the latest. Over noise, quiet and
    /// low hits included, so that some starts are the ones the bound placed.
    @Test func eachOnsetIsReportedWithinTheLookAhead() {
        let hits = Stream.pattern(seconds: 6, quietest: 24, seed: 9)
        let x = Stream.mix(seconds: 6, hits: hits, snr: 5)
        let bound = Int64(StreamingOnsetDetector(sampleRate: 48_000).lookAhead.frames)
        #expect(bound == 720)
        let single = Stream.detect(x, chunk: 1)
        #expect(single.onsets.count >= hits.count / 2)
        for (o, last) in zip(single.onsets, single.reportedBy) {
            #expect(last - o.frame <= bound && last == o.decidedAt && o.decidedAt >= o.frame, "onset at \(o.frame) reported at \(last)")
        }
        let chunked = Stream.detect(x, chunk: 480)
        for (o, last) in zip(chunked.onsets, chunked.reportedBy) {
            #expect(last - 479 <= o.frame + bound && o.decidedAt <= last && o.decidedAt > last - 480,
                    "onset at \(o.frame) reported by the chunk ending at \(last)")
        }
    }

    /// Silence is no onset; nor is a steady tone after it has started (one onset, where it
    /// starts). Steady noise, white or a rumble, faded in over 300 ms: its start from silence is an
    /// onset, and over the 20 s after it the noise's own swells make at most 2 (the offline
    /// detector finds 8 and 10 there, `OnsetDetectionTests.steadyNoiseIsNoOnset`; what a chance
    /// swell of many bands at once does at sensitivity 0.5).
    @Test func silenceNoiseAndATone() {
        #expect(Stream.detect([Float](repeating: 0, count: 48_000 * 10)).onsets.isEmpty)
        let tone = (0..<48_000 * 10).map { i in i < 4_800 ? 0 : Float(sin(2 * Double.pi * 440 * Double(i) / 48_000) * 0.5) }
        let onsets = Stream.detect(tone).onsets
        #expect(onsets.count == 1 && abs(Double(onsets.first?.frame ?? 0) - 4_800) <= 96, "\(onsets)")
        var random = Stream.Random(state: 31)
        var low: Float = 0
        for rumble in [false, true] {
            let fade = 48_000 * 3 / 10
            let noise = (0..<48_000 * 20).map { i -> Float in
                let n = random.noise()
                low = 0.98 * low + 0.02 * n
                return (rumble ? 10 * low : n) * 0.3 * Float(min(1, Double(i) / Double(fade)))
            }
            let found = Stream.detect(noise).onsets
            let steady = found.filter { $0.frame >= Int64(fade) }
            let offline = OnsetDetector(sampleRate: 48_000).detect(noise).filter { $0.time >= 0.3 }
            #expect(found.count - steady.count <= 1 && steady.count <= 2 && steady.count < offline.count,
                    "\(rumble ? "rumble" : "white noise"): \(found.count) onsets at \(Stream.times(found)), the offline detector's \(offline.map(\.time))")
        }
    }

    /// Samples beyond ±1 give the same onsets as the signal within it; hard clipping keeps them
    /// near where they are; absurd values do not crash and give finite onsets.
    @Test func clippedAndOutOfRangeSamples() {
        let hits = Stream.pattern(seconds: 4, seed: 13)
        let plain = Stream.detect(Stream.mix(seconds: 4, hits: hits)).onsets
        let hot = Stream.detect(Stream.mix(seconds: 4, hits: hits, scale: 8)).onsets
        // The same onsets; a start may move by one 1 ms step where rounding tips the refinement.
        #expect(hot.count == plain.count && zip(hot, plain).allSatisfy { abs($0.frame - $1.frame) <= 48 }, "\(hot.map(\.frame)) \(plain.map(\.frame))")
        // Clipped hard (peaks up to 4× full scale cut to 1), a hit reaches its full energy at once
        // and its rise, which the start is placed on, is blunted: within 3 ms.
        let clipped = Stream.detect(Stream.mix(seconds: 4, hits: hits, scale: 8).map { min(max($0, -1), 1) }).onsets
        #expect(clipped.count == hits.count, "\(Stream.times(clipped))")
        for (o, h) in zip(clipped, hits) { #expect(abs(o.frame - Int64(h.frame)) <= 144, "\(h.kind) at \(h.frame): \(o.frame)") }
        var absurd = Stream.mix(seconds: 2, hits: Array(hits.prefix(4)))
        for i in stride(from: 20_000, to: absurd.count, by: 7_919) { absurd[i] = i % 2 == 0 ? .greatestFiniteMagnitude : -1e30 }
        let found = Stream.detect(absurd).onsets
        #expect(found.allSatisfy { $0.strength.isFinite && $0.loudness.isFinite && $0.centroid.isFinite && (0...1).contains($0.loudness) })
    }

    /// NaN and infinite samples read as 0 and are counted: sprinkled over silence they are no
    /// onset, sprinkled over a stream's silent stretches they change none of its onsets, and after
    /// a second of nothing else the detector still finds a hit.
    @Test func nonFiniteSamples() {
        var x = [Float](repeating: 0, count: 48_000 * 3)
        for i in stride(from: 0, to: x.count, by: 997) { x[i] = [Float.nan, .infinity, -.infinity][i % 3] }
        let d = StreamingOnsetDetector(sampleRate: 48_000)
        #expect(Stream.detect(x, detector: d).onsets.isEmpty)
        #expect(d.nonFiniteSamples == (x.count + 996) / 997)

        let hits = Stream.pattern(seconds: 4, seed: 17)
        let clean = Stream.mix(seconds: 4, hits: hits)
        var dirty = clean
        for i in stride(from: 0, to: dirty.count, by: 1_009) where dirty[i] == 0 { dirty[i] = .nan }
        #expect(Stream.detect(dirty).onsets == Stream.detect(clean).onsets)

        var afterNaN = [Float](repeating: .nan, count: 48_000) + [Float](repeating: 0, count: 48_000)
        afterNaN += Stream.mix(seconds: 1, hits: [(.snare, 4_800, 1)])
        let found = Stream.detect(afterNaN).onsets
        #expect(found.count == 1 && abs((found.first?.frame ?? 0) - 100_800) <= 96, "\(found)")
    }

    /// A minute of silence (and one of noise 80 dB down) and then a hit: the hit is found, where
    /// it starts, felt at full strength (nothing louder in the last minute). (The noise's start
    /// from silence is an onset of its own, and its swells make a few faint ones in the minute.)
    @Test func aHitAfterALongSilence() {
        for floor: Float in [0, 0.0001] {
            var random = Stream.Random(state: 3)
            var x = (0..<48_000 * 60).map { _ in floor * random.noise() }
            let start = x.count + 4_800
            x += Stream.mix(seconds: 1, hits: [(.kick, 4_800, 1)]).map { $0 + floor * random.noise() }
            let found = Stream.detect(x, chunk: 4_096).onsets.filter { $0.frame >= Int64(x.count - 48_000 * 2) }
            #expect(found.count == 1 && abs((found.first?.frame ?? 0) - Int64(start)) <= 96, "noise \(floor): \(found)")
            #expect((found.first?.loudness ?? 0) > 0.9)
        }
    }

    /// The same sound in every one of 6 channels (or 2) gives exactly the onsets of the mono
    /// sound: the mix is the channels' mean.
    @Test func channelsAreMixedToTheirMean() {
        let hits = Stream.pattern(seconds: 3, seed: 19)
        let mono = Stream.mix(seconds: 3, hits: hits, snr: 15)
        let expected = Stream.detect(mono).onsets
        #expect(expected.count >= hits.count * 3 / 4)
        for channels in [2, 6] {
            let interleaved = mono.flatMap { [Float](repeating: $0, count: channels) }
            #expect(Stream.detect(interleaved, channels: channels, chunk: 331).onsets == expected, "\(channels) channels")
        }
    }

    /// Loudness follows the felt level against the running reference: of a loud hit and one 20 dB
    /// down, the quiet one reads about 20/50 lower; a kick is duller than a hi-hat.
    @Test func loudnessAndCentroid() {
        let found = Stream.detect(Stream.mix(seconds: 2, hits: [(.kick, 24_000, 1), (.kick, 48_000, 0.1), (.hat, 72_000, 1)])).onsets
        #expect(found.count == 3, "\(found)")
        guard found.count == 3 else { return }
        #expect(found[0].loudness > 0.9 && abs(found[0].loudness - found[1].loudness - 0.4) < 0.1, "\(found.map(\.loudness))")
        #expect(HapticGenerator.sharpness(centroid: found[0].centroid) < 0.4 && HapticGenerator.sharpness(centroid: found[2].centroid) > 0.7,
                "kick \(found[0].centroid) Hz, hi-hat \(found[2].centroid) Hz")
    }

    /// Each hop's level (`hapsync live --style`): one per 5 ms hop at its middle frame, in the
    /// caller's numbering; a steady hum at the running reference is felt at 1, silence at 0;
    /// the follower then rises within 10 ms and falls after the hum (under the profile's floor
    /// within 200 ms), and the profile shapes what is sent.
    @Test func eachHopsFeltLevelForTheContinuousLayer() {
        let rate = 48_000.0
        let x = (0..<96_000).map { i -> Float in i >= 24_000 && i < 72_000 ? Float(0.5 * sin(2 * .pi * 90 * Double(i) / rate)) : 0 }
        let d = StreamingOnsetDetector(sampleRate: rate)
        var levels: [StreamingLevel] = []
        x.withUnsafeBufferPointer { all in
            for from in stride(from: 0, to: all.count, by: 333) {
                d.process(UnsafeBufferPointer(rebasing: all[from..<min(from + 333, all.count)]), channels: 1, firstFrame: 500 + Int64(from),
                          report: { _ in }, levels: { levels.append($0) })
            }
        }
        #expect(levels.count == 96_000 / d.hop)
        #expect(levels.enumerated().allSatisfy { $0.element.frame == 500 + Int64($0.offset * d.hop + d.hop / 2) })
        let during = levels.filter { $0.frame > 500 + 30_000 && $0.frame < 500 + 70_000 }
        #expect(during.allSatisfy { $0.loudness > 0.95 && HapticGenerator.sharpness(centroid: $0.centroid) < 0.2 }, "\(during.map(\.loudness))")
        #expect(levels.filter { $0.frame < 500 + 23_000 }.allSatisfy { $0.loudness == 0 })
        var follower = LevelFollower(hop: Double(d.hop) / rate)
        let followed = levels.map { (frame: $0.frame - 500, level: follower.next($0.loudness)) }
        let rise = followed.first { $0.level > 0.5 }?.frame ?? .max
        #expect(rise >= 24_000 && rise <= 24_000 + 480 + 2 * d.hop, "risen past 0.5 at \(rise)")
        #expect(followed.last!.level < 0.01 && followed.first { $0.frame > 72_000 + 9_600 }!.level < 0.2, "\(followed.suffix(100).map(\.level))")
        // Under the profile's floor 200 ms after the hum: nothing is felt.
        #expect(followed.filter { $0.frame > 72_000 + 9_600 }.allSatisfy { LiveProfile.dualsense.continuousLevel($0.level) == 0 })
        #expect(LiveProfile.dualsense.continuousLevel(1) == 1 && LiveProfile.dualsense.continuousLevel(0.1) == 0
                && abs(LiveProfile.dualsense.continuousLevel(0.5) - pow(0.5, 1.5)) < 1e-12 && LiveProfile.dualsense.continuousLevel(.nan) == 0)
    }

    /// `firstFrame` numbers the onsets in the caller's count; `reset` starts over as new.
    @Test func numberingAndReset() {
        let x = Stream.mix(seconds: 2, hits: Stream.pattern(seconds: 2, seed: 23))
        let plain = Stream.detect(x).onsets
        let d = StreamingOnsetDetector(sampleRate: 48_000)
        var numbered: [StreamingOnset] = []
        x.withUnsafeBufferPointer { all in
            for from in stride(from: 0, to: all.count, by: 480) {
                let chunk = UnsafeBufferPointer(rebasing: all[from..<min(from + 480, all.count)])
                d.process(chunk, channels: 1, firstFrame: 1_000_000 + Int64(from)) { numbered.append($0) }
            }
        }
        #expect(numbered.map { $0.frame - 1_000_000 } == plain.map(\.frame) && d.nextFrame == 1_000_000 + Int64(x.count))
        d.reset()
        #expect(Stream.detect(x, detector: d).onsets == plain)
    }

    /// On a labelled set made like Bench's (hits of every kind at velocities from 0 to −18 dB,
    /// clean and over white noise at 20 and 10 dB SNR), the streaming detector's F (±25 ms, pooled)
    /// is at least 0.95 × the offline `OnsetDetector`'s on the same audio.
    @Test func nearlyAsGoodAsTheOfflineDetector() {
        var streaming = OnsetScore(), offline = OnsetScore()
        for (seed, snr) in [(UInt64(29), nil), (31, 20.0), (37, 10.0)] as [(UInt64, Double?)] {
            let hits = Stream.pattern(seconds: 12, quietest: 18, seed: seed)
            let x = Stream.mix(seconds: 12, hits: hits, snr: snr, seed: seed)
            let labels = hits.map { Double($0.frame) / 48_000 }
            // The first 250 ms are the noise's own start, which no label stands for.
            let ours = Stream.times(Stream.detect(x).onsets).filter { $0 >= 0.25 }
            let theirs = OnsetDetector(sampleRate: 48_000).detect(x).map(\.time).filter { $0 >= 0.25 }
            streaming = streaming + OnsetScore(labels: labels, detections: ours, tolerance: 0.025)
            offline = offline + OnsetScore(labels: labels, detections: theirs, tolerance: 0.025)
        }
        #expect(streaming.f >= 0.95 * offline.f, "streaming \(streaming.summary), offline \(offline.summary)")
    }
}
