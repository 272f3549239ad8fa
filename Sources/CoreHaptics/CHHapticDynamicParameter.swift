import Foundation
import HapSyncAHAP

/// A value that changes an event parameter of a pattern, or of a playing player, from a time on:
/// Core Haptics' `CHHapticDynamicParameter`.
public final class CHHapticDynamicParameter {
    /// The controls: Core Haptics' `CHHapticDynamicParameter.ID`, raw values as in AHAP files.
    public struct ID: RawRepresentable, Hashable, Sendable {
        /// The AHAP name ("HapticIntensityControl").
        public let rawValue: String
        /// Makes an ID from its AHAP name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Scales haptic intensity.
        public static let hapticIntensityControl = ID(rawValue: AHAPDynamicParameterID.hapticIntensityControl.rawValue)
        /// Shifts haptic sharpness.
        public static let hapticSharpnessControl = ID(rawValue: AHAPDynamicParameterID.hapticSharpnessControl.rawValue)
        /// Scales haptic attack time.
        public static let hapticAttackTimeControl = ID(rawValue: AHAPDynamicParameterID.hapticAttackTimeControl.rawValue)
        /// Scales haptic decay time.
        public static let hapticDecayTimeControl = ID(rawValue: AHAPDynamicParameterID.hapticDecayTimeControl.rawValue)
        /// Scales haptic release time.
        public static let hapticReleaseTimeControl = ID(rawValue: AHAPDynamicParameterID.hapticReleaseTimeControl.rawValue)
        /// Scales audio volume.
        public static let audioVolumeControl = ID(rawValue: AHAPDynamicParameterID.audioVolumeControl.rawValue)
        /// Shifts audio pan.
        public static let audioPanControl = ID(rawValue: AHAPDynamicParameterID.audioPanControl.rawValue)
        /// Shifts audio pitch.
        public static let audioPitchControl = ID(rawValue: AHAPDynamicParameterID.audioPitchControl.rawValue)
        /// Shifts audio brightness.
        public static let audioBrightnessControl = ID(rawValue: AHAPDynamicParameterID.audioBrightnessControl.rawValue)
        /// Scales audio attack time.
        public static let audioAttackTimeControl = ID(rawValue: AHAPDynamicParameterID.audioAttackTimeControl.rawValue)
        /// Scales audio decay time.
        public static let audioDecayTimeControl = ID(rawValue: AHAPDynamicParameterID.audioDecayTimeControl.rawValue)
        /// Scales audio release time.
        public static let audioReleaseTimeControl = ID(rawValue: AHAPDynamicParameterID.audioReleaseTimeControl.rawValue)
    }

    /// Which control.
    public let parameterID: ID
    /// Its value.
    public var value: Float
    /// When it takes effect: seconds from the pattern's start (in a pattern) or from when it is
    /// sent (to a player).
    public var relativeTime: TimeInterval

    /// Makes a dynamic parameter.
    public init(parameterID: ID, value: Float, relativeTime: TimeInterval) {
        self.parameterID = parameterID
        self.value = value
        self.relativeTime = relativeTime
    }
}

/// A control's value ramping linearly between points: Core Haptics' `CHHapticParameterCurve`.
public final class CHHapticParameterCurve {
    /// One point of a curve: Core Haptics' `CHHapticParameterCurve.ControlPoint`.
    public final class ControlPoint {
        /// Seconds from the curve's start.
        public var relativeTime: TimeInterval
        /// The value there.
        public var value: Float

        /// Makes a point.
        public init(relativeTime: TimeInterval, value: Float) {
            self.relativeTime = relativeTime
            self.value = value
        }
    }

    /// Which control.
    public let parameterID: CHHapticDynamicParameter.ID
    /// When the curve starts: seconds from the pattern's start (in a pattern) or from when it is
    /// scheduled (on a player).
    public var relativeTime: TimeInterval
    /// Its points (at most 16, as in Core Haptics).
    public let controlPoints: [ControlPoint]

    /// Makes a curve.
    public init(parameterID: CHHapticDynamicParameter.ID, controlPoints: [ControlPoint], relativeTime: TimeInterval) {
        self.parameterID = parameterID
        self.controlPoints = controlPoints
        self.relativeTime = relativeTime
    }
}

// MARK: - To the pattern's types (one conversion, used for live sends)

extension CHHapticDynamicParameter.ID {
    /// The AHAP parameter ID; an ID that is not one throws `.invalidParameterType`.
    func ahap() throws -> AHAPDynamicParameterID {
        guard let id = AHAPDynamicParameterID(rawValue: rawValue) else {
            throw CHHapticError(.invalidParameterType, "\(rawValue) is not a dynamic parameter")
        }
        return id
    }
}

extension CHHapticDynamicParameter {
    /// This parameter as the pattern's type (`relativeTime` is its `time`).
    func ahap() throws -> AHAPDynamicParameter {
        AHAPDynamicParameter(try parameterID.ahap(), Double(value), time: relativeTime)
    }
}

extension CHHapticParameterCurve {
    /// This curve as the pattern's type (`relativeTime` is its `time`).
    func ahap() throws -> AHAPParameterCurve {
        AHAPParameterCurve(try parameterID.ahap(), time: relativeTime,
                           controlPoints: controlPoints.map { AHAPControlPoint(time: $0.relativeTime, value: Double($0.value)) })
    }
}
