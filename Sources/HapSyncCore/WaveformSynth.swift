import Foundation

/// What a voice-coil actuator can take, and how HapSync drives it: the frequency band sharpness
/// maps onto, the loudest sustained level (RMS) and peak allowed, a low-pass for actuators
/// that should get no highs, and the transient burst's length.
///
/// Why these numbers:
/// - The skin's vibration receptors (Pacinian corpuscles) are most sensitive around 200-300 Hz
///   and fall off steeply above ~500 Hz; below ~80 Hz vibration feels like a "rumble" rather
///   than a buzz. Sharpness 0 → 1 therefore sweeps from a dull low end to ~300 Hz.
/// - The DualSense drives two Foster Electric voice-coil actuators from its rear audio channels
///   (its 4-channel USB audio interface; front channels go to the speaker). They reproduce
///   roughly 50 Hz to well over 500 Hz (people play music through them), so the full 60-300 Hz
///   band is used, with headroom: 0.5 RMS and 0.9 peak of full scale.
/// - A bass shaker (tactile transducer) is built for 20-100 Hz: 25-80 Hz, low-passed at
///   120 Hz so that nothing audible leaks into the room.
/// Frequencies are interpolated logarithmically (equal sharpness steps feel like equal steps).
public struct ActuatorProfile: Sendable, Equatable {
    /// The profile's name as `--haptics waveform:SINK:PROFILE` spells it.
    public var name: String
    /// Sharpness 0 and 1 map onto these frequencies (Hz), logarithmically between.
    public var frequencies: ClosedRange<Double>
    /// The highest sustained level, RMS of full scale (0...1), over ~100 ms.
    public var maxRMS: Double
    /// The highest sample, of full scale.
    public var peakLimit: Double
    /// A second-order low-pass (Hz), or nil for none.
    public var lowPass: Double?
    /// A transient burst's length in cycles of its frequency.
    public var transientCycles: Double

    /// Makes a profile.
    public init(name: String, frequencies: ClosedRange<Double>, maxRMS: Double, peakLimit: Double, lowPass: Double? = nil,
                transientCycles: Double = 3) {
        self.name = name
        self.frequencies = frequencies
        self.maxRMS = maxRMS
        self.peakLimit = peakLimit
        self.lowPass = lowPass
        self.transientCycles = transientCycles
    }

    /// A DualSense's voice-coil actuators (its rear channels).
    public static let dualSense = ActuatorProfile(name: "dualsense", frequencies: 60...300, maxRMS: 0.5, peakLimit: 0.9)
    /// A bass shaker on a sound card's output.
    public static let shaker = ActuatorProfile(name: "shaker", frequencies: 25...80, maxRMS: 0.6, peakLimit: 0.9, lowPass: 120,
                                               transientCycles: 2)
    /// Any other voice-coil or linear resonant actuator fed as audio.
    public static let generic = ActuatorProfile(name: "generic", frequencies: 60...250, maxRMS: 0.5, peakLimit: 0.9)

    /// The built-in profiles.
    public static let all: [ActuatorProfile] = [.dualSense, .shaker, .generic]

    /// The oscillator frequency for a sharpness (0...1, clamped), Hz.
    public func frequency(sharpness: Double) -> Double {
        let s = min(max(sharpness, 0), 1)
        return frequencies.lowerBound * pow(frequencies.upperBound / frequencies.lowerBound, s)
    }

    /// The drive amplitude (of full scale) for an intensity (0...1, clamped): perceived vibration
    /// magnitude grows as amplitude^0.6 (Stevens' power law for vibration on the hand), so
    /// amplitude = intensity^(1/0.6) makes equal intensity steps feel equal.
    public static func amplitude(intensity: Double) -> Double {
        pow(min(max(intensity, 0), 1), 1 / 0.6)
    }
}

/// The drive signal for one actuator: a phase-continuous oscillator following the continuous
/// level, plus transient bursts, through the profile's safety stages (DC blocker, optional
/// low-pass, RMS cap, peak limiter).
///
/// - Continuous: amplitude `ActuatorProfile.amplitude(intensity)` and frequency
///   `profile.frequency(sharpness)`, both glided over ~2 ms so a step never clicks; the phase
///   runs on across frequency changes.
/// - Transients: `transientCycles` cycles at the sharpness frequency, amplitude from intensity,
///   under a Hann window (starts and ends at zero, no click); added to the continuous signal.
/// - Safety: a DC blocker (high-pass, 10 Hz), the low-pass if the profile has one, an RMS
///   estimate over ~100 ms that lowers the gain when it would pass `maxRMS`, and a peak limiter
///   (instant attack, 50 ms release) holding every sample within `peakLimit`.
///
/// `setLevel`, `trigger` and `render` do not allocate, lock or block: the synthesizer may run
/// on an audio thread.
public struct WaveformSynth: Sendable {
    /// The profile it drives.
    public let profile: ActuatorProfile
    /// Samples per second.
    public let sampleRate: Double

    /// The continuous level's intensity as last set (0...1).
    public private(set) var levelIntensity = 0.0
    /// The continuous level's sharpness as last set (0...1).
    public private(set) var levelSharpness = 0.0
    /// The oscillator's frequency now (Hz; gliding towards the level's).
    public var currentFrequency: Double { frequency }

    private var phase = 0.0
    private var amplitude = 0.0, targetAmplitude = 0.0
    private var frequency: Double, targetFrequency: Double
    private let glide: Double
    // The transient burst in progress.
    private var burstPhase = 0.0, burstFrequency = 0.0, burstAmplitude = 0.0
    private var burstIndex = 0, burstLength = 0
    // Safety stages.
    private var dcIn = 0.0, dcOut = 0.0
    private let dcPole: Double
    private var lp = (x1: 0.0, x2: 0.0, y1: 0.0, y2: 0.0)
    private let lpCoefficients: (b0: Double, b1: Double, b2: Double, a1: Double, a2: Double)?
    private var meanSquare = 0.0
    private let rmsPole: Double
    private var limiterGain = 1.0
    private let limiterRelease: Double

    /// A silent synthesizer.
    public init(profile: ActuatorProfile, sampleRate: Double) {
        self.profile = profile
        self.sampleRate = sampleRate
        frequency = profile.frequencies.lowerBound
        targetFrequency = frequency
        glide = 1 - exp(-1 / (0.002 * sampleRate))
        dcPole = exp(-2 * Double.pi * 10 / sampleRate)
        rmsPole = exp(-1 / (0.1 * sampleRate))
        limiterRelease = 1 - exp(-1 / (0.05 * sampleRate))
        if let fc = profile.lowPass {
            // RBJ biquad low-pass, Q = 1/√2.
            let w = 2 * Double.pi * fc / sampleRate, alpha = sin(w) / (2 * 0.7071067811865476), c = cos(w)
            let a0 = 1 + alpha
            lpCoefficients = ((1 - c) / 2 / a0, (1 - c) / a0, (1 - c) / 2 / a0, -2 * c / a0, (1 - alpha) / a0)
        } else {
            lpCoefficients = nil
        }
    }

    /// The continuous level from now on. Does not allocate, lock or block.
    public mutating func setLevel(intensity: Double, sharpness: Double) {
        levelIntensity = intensity
        levelSharpness = sharpness
        targetAmplitude = ActuatorProfile.amplitude(intensity: intensity)
        // A level that falls silent keeps its frequency, so the fade-out does not sweep.
        if intensity > 0 { targetFrequency = profile.frequency(sharpness: sharpness) }
        if amplitude == 0, targetAmplitude > 0 { frequency = targetFrequency }
    }

    /// Starts a transient burst now (replacing one in progress). Does not allocate, lock or block.
    public mutating func trigger(intensity: Double, sharpness: Double) {
        burstFrequency = profile.frequency(sharpness: sharpness)
        burstAmplitude = ActuatorProfile.amplitude(intensity: intensity)
        burstLength = max(1, Int((profile.transientCycles / burstFrequency * sampleRate).rounded()))
        burstIndex = 0
        burstPhase = 0
    }

    /// The length of a transient burst at a sharpness, in seconds.
    public func transientDuration(sharpness: Double) -> Double {
        profile.transientCycles / profile.frequency(sharpness: sharpness)
    }

    /// Writes `count` samples to `output[0]`, `output[stride]`, ... Does not allocate, lock or block.
    public mutating func render(into output: UnsafeMutablePointer<Float>, count: Int, stride: Int = 1) {
        let twoPi = 2 * Double.pi
        for i in 0..<count {
            amplitude += (targetAmplitude - amplitude) * glide
            frequency += (targetFrequency - frequency) * glide
            phase += twoPi * frequency / sampleRate
            if phase >= twoPi { phase -= twoPi }
            var x = amplitude * sin(phase)
            if burstIndex < burstLength {
                let window = 0.5 - 0.5 * cos(twoPi * Double(burstIndex) / Double(burstLength))
                x += burstAmplitude * window * sin(burstPhase)
                burstPhase += twoPi * burstFrequency / sampleRate
                burstIndex += 1
            }
            // DC blocker.
            let y = x - dcIn + dcPole * dcOut
            dcIn = x
            dcOut = y
            var z = y
            if let c = lpCoefficients {
                let out = c.b0 * z + c.b1 * lp.x1 + c.b2 * lp.x2 - c.a1 * lp.y1 - c.a2 * lp.y2
                lp = (z, lp.x1, out, lp.y1)
                z = out
            }
            // RMS cap: the gain that keeps the ~100 ms RMS within maxRMS.
            meanSquare = rmsPole * meanSquare + (1 - rmsPole) * z * z
            let rms = meanSquare.squareRoot()
            if rms > profile.maxRMS { z *= profile.maxRMS / rms }
            // Peak limiter: 50 ms release, then an instant attack if this sample would pass.
            limiterGain += (1 - limiterGain) * limiterRelease
            if abs(z) * limiterGain > profile.peakLimit { limiterGain = profile.peakLimit / abs(z) }
            let limited = Float(z * limiterGain)
            output[i * stride] = min(max(limited, -Float(profile.peakLimit)), Float(profile.peakLimit))
        }
    }

    /// The whole drive signal of a compiled pattern, offline: its command stream (levels and
    /// taps, with curves and parameters applied as the render applies them) at `sampleRate`.
    public static func render(_ timeline: PatternTimeline, profile: ActuatorProfile, sampleRate: Double,
                              tail: Double = 0.1) -> [Float] {
        var synth = WaveformSynth(profile: profile, sampleRate: sampleRate)
        let total = Int(((timeline.end + tail) * sampleRate).rounded(.up))
        var out = [Float](repeating: 0, count: max(total, 0))
        var written = 0
        out.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for c in timeline.commands {
                let at = min(total, max(written, Int((c.time * sampleRate).rounded())))
                synth.render(into: base + written, count: at - written)
                written = at
                switch c.kind {
                case .transient: synth.trigger(intensity: c.intensity, sharpness: c.sharpness)
                case .level: synth.setLevel(intensity: c.intensity, sharpness: c.sharpness)
                }
            }
            synth.render(into: base + written, count: total - written)
        }
        return out
    }
}
