import Foundation

/// Turns a haptic (intensity, sharpness) into the two magnitudes of an FF_RUMBLE effect: the
/// strong (low-frequency, heavy) motor and the weak (high-frequency, light) motor.
///
/// Replaceable: give the evdev backend any function of this shape. The standard mapping:
/// - Level: 0 for intensity 0 (below 0.001); otherwise 0.10 + 0.90 × intensity^0.7. The 10 % floor
///   keeps the weakest tap above the motors' stiction (below it they do not spin); the 0.7 exponent
///   lifts low intensities, which rumble motors render weakly.
/// - Split by sharpness with an equal-power crossfade: strong = level × cos(sharpness × π/2),
///   weak = level × sin(sharpness × π/2). Dull (0) is all heavy motor, sharp (1) all light motor,
///   0.5 both at 71 %.
/// - Magnitudes are level × 65535, rounded.
public struct RumbleMapping: Sendable {
    /// The mapping function: (intensity 0...1, sharpness 0...1) → (strong, weak) magnitudes.
    public var map: @Sendable (Double, Double) -> (strong: UInt16, weak: UInt16)

    /// Makes a mapping from a function.
    public init(_ map: @escaping @Sendable (Double, Double) -> (strong: UInt16, weak: UInt16)) { self.map = map }

    /// The documented standard mapping.
    public static let standard = RumbleMapping { intensity, sharpness in
        let level = level(intensity), s = min(max(sharpness, 0), 1)
        let strong = level * cos(s * Double.pi / 2), weak = level * sin(s * Double.pi / 2)
        return (magnitude(strong), magnitude(weak))
    }

    /// The standard level of an intensity, 0...1: 0 below 0.001, otherwise 0.10 + 0.90 ×
    /// intensity^0.7 (intensity clamped to 0...1).
    public static func level(_ intensity: Double) -> Double {
        let i = min(max(intensity, 0), 1)
        return i < 0.001 ? 0 : 0.10 + 0.90 * pow(i, 0.7)
    }

    /// A level 0...1 as an FF_RUMBLE magnitude: level × 65535, rounded.
    public static func magnitude(_ level: Double) -> UInt16 { UInt16((min(max(level, 0), 1) * 65535).rounded()) }
}
