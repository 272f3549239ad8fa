/// The event parameters an AHAP `Event` can carry in `EventParameters`, with Core Haptics'
/// documented ranges and defaults.
///
/// Where Apple's headers state a default it is used (AttackTime, DecayTime, ReleaseTime 0,
/// Sustained 1, AudioPan 0, AudioBrightness 1). Where they state only a range, HapSync takes the
/// "no attenuation / neutral" end the header describes: HapticIntensity 1, AudioVolume 1,
/// AudioPitch 0, and HapticSharpness 0.5 (the middle of its range).
public enum AHAPEventParameterID: String, Sendable, CaseIterable, Hashable {
    /// Perceived strength of a haptic event, 0 (weak) to 1 (strong).
    case hapticIntensity = "HapticIntensity"
    /// Feel of a haptic event, 0 (round, dull) to 1 (crisp, sharp).
    case hapticSharpness = "HapticSharpness"
    /// Envelope attack adjuster, 0 to 1; higher values lengthen the attack exponentially.
    case attackTime = "AttackTime"
    /// Envelope decay adjuster, 0 to 1; higher values lengthen the decay exponentially.
    case decayTime = "DecayTime"
    /// Envelope release adjuster, 0 to 1; higher values lengthen the release exponentially.
    case releaseTime = "ReleaseTime"
    /// Boolean as a number: 1 sustains for EventDuration (attack-release), 0 attack-decay only.
    case sustained = "Sustained"
    /// Volume of an audio event, 0 (silent) to 1 (no attenuation).
    case audioVolume = "AudioVolume"
    /// Stereo pan of an audio event, -1 (left) to 1 (right).
    case audioPan = "AudioPan"
    /// Pitch adjuster of an audio event, -1 (lowest) to 1 (highest).
    case audioPitch = "AudioPitch"
    /// High-frequency content of an audio event, 0 (most filtered) to 1 (unfiltered).
    case audioBrightness = "AudioBrightness"

    /// The documented range; values outside are clamped when read.
    public var range: ClosedRange<Double> {
        switch self {
        case .audioPan, .audioPitch: return -1...1
        default: return 0...1
        }
    }

    /// The value an event has when the parameter is not given.
    public var defaultValue: Double {
        switch self {
        case .hapticIntensity, .sustained, .audioVolume, .audioBrightness: return 1
        case .hapticSharpness: return 0.5
        case .attackTime, .decayTime, .releaseTime, .audioPan, .audioPitch: return 0
        }
    }

    /// Whether the parameter acts on events of this type (Core Haptics ignores it otherwise).
    public func applies(to type: AHAPEventType) -> Bool {
        switch self {
        case .hapticIntensity, .hapticSharpness: return type.isHaptic
        case .audioVolume, .audioPan, .audioPitch, .audioBrightness: return !type.isHaptic
        case .attackTime, .decayTime, .releaseTime, .sustained: return true
        }
    }
}

/// The dynamic parameters of `Parameter` and `ParameterCurve` entries: they modulate every event
/// active at their time.
public enum AHAPDynamicParameterID: String, Sendable, CaseIterable, Hashable {
    /// Multiplies haptic intensity, 0 to 1 (default 1: no effect).
    case hapticIntensityControl = "HapticIntensityControl"
    /// Adds to haptic sharpness, -1 to 1 (default 0).
    case hapticSharpnessControl = "HapticSharpnessControl"
    /// Adjusts haptic attack time, -1 (shorter) to 1 (longer).
    case hapticAttackTimeControl = "HapticAttackTimeControl"
    /// Adjusts haptic decay time, -1 (shorter) to 1 (longer).
    case hapticDecayTimeControl = "HapticDecayTimeControl"
    /// Adjusts haptic release time, -1 (shorter) to 1 (longer).
    case hapticReleaseTimeControl = "HapticReleaseTimeControl"
    /// Multiplies audio volume, 0 to 1 (default 1: no effect).
    case audioVolumeControl = "AudioVolumeControl"
    /// Adds to audio pan, -1 (more left) to 1 (more right).
    case audioPanControl = "AudioPanControl"
    /// Adds to audio pitch, -1 to 1.
    case audioPitchControl = "AudioPitchControl"
    /// Adds to audio brightness, -1 (more filtering) to 1 (less filtering).
    case audioBrightnessControl = "AudioBrightnessControl"
    /// Adjusts audio attack time, -1 (shorter) to 1 (longer).
    case audioAttackTimeControl = "AudioAttackTimeControl"
    /// Adjusts audio decay time, -1 (shorter) to 1 (longer).
    case audioDecayTimeControl = "AudioDecayTimeControl"
    /// Adjusts audio release time, -1 (shorter) to 1 (longer).
    case audioReleaseTimeControl = "AudioReleaseTimeControl"

    /// How a dynamic parameter combines with an event's own value.
    public enum Combination: Sendable {
        /// The event value is multiplied by the control (intensity, volume).
        case multiply
        /// The control is added to the event value, then clamped to the parameter's range.
        case add
    }

    /// Multiply for the two "level" controls, add for all others.
    public var combination: Combination {
        switch self {
        case .hapticIntensityControl, .audioVolumeControl: return .multiply
        default: return .add
        }
    }

    /// The documented range; values outside are clamped when read.
    public var range: ClosedRange<Double> { combination == .multiply ? 0...1 : -1...1 }

    /// The value that leaves events unchanged (1 for multiply, 0 for add).
    public var defaultValue: Double { combination == .multiply ? 1 : 0 }

    /// Whether it acts on haptic events (otherwise on audio events).
    public var isHaptic: Bool { rawValue.hasPrefix("Haptic") }
}
