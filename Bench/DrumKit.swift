import Foundation
import HapSyncAudioOutput
import HapSyncTestSupport

/// The hits of the generate benchmark's labelled set: drum sounds synthesized here and the short
/// hit sounds among the repository's Assets (a click, a plucked tap, a thud, a chime), each mono,
/// starting at its first sample (its onset) and scaled to a peak of 1.
struct DrumKit {
    /// One hit sound.
    struct Sound {
        /// What it is, for the tables ("kick", "asset tap", ...).
        var name: String
        /// Samples at the kit's rate, peak 1, the onset at sample 0.
        var samples: [Float]
        /// How often the patterns pick it, relative to the others.
        var weight: Double
    }

    /// Every sound of the kit.
    let sounds: [Sound]

    /// The kit at `sampleRate` Hz; the Assets sounds are decoded from `assets/audio` (converted to
    /// that rate by the project's decoder). Throws the decoder's error, naming the file, when one
    /// is missing or unreadable.
    init(sampleRate: Double, assets: URL, random: inout SeededRandom) throws {
        let sr = sampleRate
        var sounds = [
            Sound(name: "kick", samples: DrumKit.kick(sr), weight: 3),
            Sound(name: "snare", samples: DrumKit.snare(sr, &random), weight: 2.5),
            Sound(name: "closed hat", samples: DrumKit.hat(sr, decay: 0.025, length: 0.12, &random), weight: 3),
            Sound(name: "open hat", samples: DrumKit.hat(sr, decay: 0.18, length: 0.5, &random), weight: 1),
            Sound(name: "high tom", samples: DrumKit.tom(sr, pitch: 165), weight: 1),
            Sound(name: "low tom", samples: DrumKit.tom(sr, pitch: 98), weight: 1),
            Sound(name: "clap", samples: DrumKit.clap(sr, &random), weight: 1),
        ]
        // Each synthesized sound is cut where it ends, still a few per cent of its peak (the kick
        // at 8 %, the open hat at 6 %): without a fade that cut is a click, a second onset the
        // labels do not have.
        sounds = sounds.map { Sound(name: $0.name, samples: DrumKit.fadedOut($0.samples, seconds: 0.02, sampleRate: sr), weight: $0.weight) }
        for (file, name, weight) in [("click-48k-mono-16.wav", "asset click", 1.0), ("tap-48k-mono-16.wav", "asset tap", 1),
                                     ("thud-44k1-mono-24.flac", "asset thud", 1), ("chime-44k1-stereo-24.wav", "asset chime", 0.7)] {
            let decoded = try AudioFileDecoder.decode(assets.appendingPathComponent("audio").appendingPathComponent(file), sampleRate: sr)
            let mono = (0..<decoded.frames).map { 0.5 * (decoded.left[$0] + decoded.right[$0]) }
            sounds.append(Sound(name: name, samples: DrumKit.trimmed(mono), weight: weight))
        }
        self.sounds = sounds.map { Sound(name: $0.name, samples: DrumKit.normalized($0.samples), weight: $0.weight) }
    }

    /// A sound from its first sample above −40 dB of its peak (where a listener hears it start).
    static func trimmed(_ x: [Float]) -> [Float] {
        let peak = x.map(abs).max() ?? 0
        guard peak > 0, let first = x.firstIndex(where: { abs($0) >= 0.01 * peak }) else { return x }
        return Array(x[first...])
    }

    /// `x` with its last `seconds` faded out along a raised cosine, so it ends without a step.
    static func fadedOut(_ x: [Float], seconds: Double, sampleRate: Double) -> [Float] {
        var y = x
        let n = min(Int(seconds * sampleRate), y.count)
        for k in 0..<n { y[y.count - 1 - k] *= Float(0.5 - 0.5 * cos(Double.pi * Double(k) / Double(n))) }
        return y
    }

    /// `x` scaled to a peak of 1.
    static func normalized(_ x: [Float]) -> [Float] {
        let peak = x.map(abs).max() ?? 0
        return peak > 0 ? x.map { $0 / peak } : x
    }

    /// Kick: a sine sweeping from 150 Hz down to 50 Hz (time constant 35 ms), decaying with a
    /// 180 ms time constant, 0.45 s, with a 0.5 ms fade-in so it starts without a step.
    static func kick(_ sr: Double) -> [Float] {
        var phase = 0.0
        return (0..<Int(0.45 * sr)).map { i in
            let t = Double(i) / sr
            phase += 2 * Double.pi * (50 + 100 * exp(-t / 0.035)) / sr
            return Float(sin(phase) * exp(-t / 0.18) * min(1, t / 0.0005))
        }
    }

    /// Snare: a noise burst high-passed at 1 kHz (decay 90 ms) over a 200 Hz tone body with a
    /// 330 Hz partial (decay 60 ms), 0.3 s.
    static func snare(_ sr: Double, _ random: inout SeededRandom) -> [Float] {
        var filter = Biquad.highPass(1_000, q: 0.7, sampleRate: sr)
        return (0..<Int(0.3 * sr)).map { i in
            let t = Double(i) / sr
            let noise = filter.process(random.gaussian() * 0.35) * exp(-t / 0.09)
            let body = (sin(2 * Double.pi * 200 * t) + 0.5 * sin(2 * Double.pi * 330 * t)) * 0.6 * exp(-t / 0.06)
            return Float((noise + body) * min(1, t / 0.0005))
        }
    }

    /// Hi-hat: noise high-passed twice at 7 kHz, decaying with `decay` (closed 25 ms, open 180 ms).
    static func hat(_ sr: Double, decay: Double, length: Double, _ random: inout SeededRandom) -> [Float] {
        var a = Biquad.highPass(min(7_000, 0.4 * sr), q: 0.7, sampleRate: sr)
        var b = Biquad.highPass(min(7_000, 0.4 * sr), q: 0.7, sampleRate: sr)
        return (0..<Int(length * sr)).map { i in
            Float(b.process(a.process(random.gaussian())) * exp(-Double(i) / sr / decay))
        }
    }

    /// Tom: a sine gliding from 1.5 × `pitch` down to `pitch` (time constant 50 ms), decay 220 ms,
    /// 0.6 s.
    static func tom(_ sr: Double, pitch: Double) -> [Float] {
        var phase = 0.0
        return (0..<Int(0.6 * sr)).map { i in
            let t = Double(i) / sr
            phase += 2 * Double.pi * pitch * (1 + 0.5 * exp(-t / 0.05)) / sr
            return Float(sin(phase) * exp(-t / 0.22) * min(1, t / 0.0005))
        }
    }

    /// Clap: noise band-passed around 1.2 kHz in three 4 ms bursts 11 ms apart, then an 80 ms
    /// tail from 30 ms; 0.3 s. Labelled at its first burst.
    static func clap(_ sr: Double, _ random: inout SeededRandom) -> [Float] {
        var filter = Biquad.bandPass(1_200, q: 1, sampleRate: sr)
        return (0..<Int(0.3 * sr)).map { i in
            let t = Double(i) / sr
            var envelope = 0.0
            for start in [0.0, 0.011, 0.022] where t >= start { envelope += exp(-(t - start) / 0.004) }
            if t >= 0.03 { envelope += 0.6 * exp(-(t - 0.03) / 0.08) }
            return Float(filter.process(random.gaussian()) * envelope)
        }
    }
}
