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
        let i = min(max(intensity, 0), 1), s = min(max(sharpness, 0), 1)
        guard i >= 0.001 else { return (0, 0) }
        let level = 0.10 + 0.90 * pow(i, 0.7)
        let strong = level * cos(s * Double.pi / 2), weak = level * sin(s * Double.pi / 2)
        return (UInt16((strong * 65535).rounded()), UInt16((weak * 65535).rounded()))
    }
}
