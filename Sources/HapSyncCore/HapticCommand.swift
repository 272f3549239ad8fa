/// One entry of the haptic command stream: a change of the continuous actuator level, or a tap.
///
/// Fixed-size and trivially copyable, so the real-time path can move it through a ring buffer.
public struct HapticCommand: Sendable, Equatable {
    /// What the command asks of the actuator.
    public enum Kind: UInt8, Sendable {
        /// Set the continuous level (continuous events combined) to `intensity` / `sharpness`;
        /// it holds until the next level command. Intensity 0 means stop.
        case level
        /// Play a tap of the timeline's transient length with `intensity` / `sharpness`, on top of
        /// the continuous level.
        case transient
    }

    /// Pattern time in seconds.
    public var time: Double
    /// Level change or tap.
    public var kind: Kind
    /// 0...1.
    public var intensity: Double
    /// 0...1.
    public var sharpness: Double

    /// Makes a command.
    public init(time: Double, kind: Kind, intensity: Double, sharpness: Double) {
        self.time = time
        self.kind = kind
        self.intensity = intensity
        self.sharpness = sharpness
    }
}

/// What the haptic actuator should do at one moment of a pattern.
public struct HapticState: Sendable, Equatable {
    /// Everything active combined (continuous events and taps within their logical length):
    /// intensities summed and saturated at 1.
    public var intensity: Double
    /// Sharpness of everything active, weighted by each contribution's intensity (0 when silent).
    public var sharpness: Double
    /// Continuous events only: what the latest level command says.
    public var continuousIntensity: Double
    /// Sharpness of the continuous events only.
    public var continuousSharpness: Double

    /// Silence.
    public static let silent = HapticState(intensity: 0, sharpness: 0, continuousIntensity: 0, continuousSharpness: 0)

    /// Makes a state.
    public init(intensity: Double, sharpness: Double, continuousIntensity: Double, continuousSharpness: Double) {
        self.intensity = intensity
        self.sharpness = sharpness
        self.continuousIntensity = continuousIntensity
        self.continuousSharpness = continuousSharpness
    }
}
