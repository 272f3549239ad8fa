import Foundation
import HapSyncAHAP

/// A parameter's range and default: Core Haptics' `CHHapticParameterAttributes`.
public protocol CHHapticParameterAttributes {
    /// The smallest value.
    var minValue: Float { get }
    /// The largest value.
    var maxValue: Float { get }
    /// The value when none is given.
    var defaultValue: Float { get }
}

/// What the hardware can play: Core Haptics' `CHHapticDeviceCapability`.
public protocol CHHapticDeviceCapability {
    /// Whether haptics have an output (a rumble pad or a trace).
    var supportsHaptics: Bool { get }
    /// Whether audio has an output (a PulseAudio server answers).
    var supportsAudio: Bool { get }
    /// The range and default of an event parameter for an event type.
    func attributes(forEventParameter inParameter: CHHapticEvent.ParameterID, eventType type: CHHapticEvent.EventType) throws -> CHHapticParameterAttributes
    /// The range and default of a dynamic parameter.
    func attributes(forDynamicParameter inParameter: CHHapticDynamicParameter.ID) throws -> CHHapticParameterAttributes
}

struct ParameterAttributes: CHHapticParameterAttributes {
    let minValue: Float, maxValue: Float, defaultValue: Float
}

/// The capabilities of the environment's outputs; ranges and defaults are the AHAP reader's.
struct HardwareCapability: CHHapticDeviceCapability {
    let supportsHaptics: Bool
    let supportsAudio: Bool

    func attributes(forEventParameter inParameter: CHHapticEvent.ParameterID, eventType type: CHHapticEvent.EventType) throws -> CHHapticParameterAttributes {
        guard let id = AHAPEventParameterID(rawValue: inParameter.rawValue), let t = AHAPEventType(rawValue: type.rawValue) else {
            throw CHHapticError(.invalidParameterType, "\(inParameter.rawValue) for \(type.rawValue) is not an event parameter")
        }
        guard id.applies(to: t) else {
            throw CHHapticError(.invalidParameterType, "\(inParameter.rawValue) does not apply to \(type.rawValue) events")
        }
        return ParameterAttributes(minValue: Float(id.range.lowerBound), maxValue: Float(id.range.upperBound), defaultValue: Float(id.defaultValue))
    }

    func attributes(forDynamicParameter inParameter: CHHapticDynamicParameter.ID) throws -> CHHapticParameterAttributes {
        let id = try inParameter.ahap()
        return ParameterAttributes(minValue: Float(id.range.lowerBound), maxValue: Float(id.range.upperBound), defaultValue: Float(id.defaultValue))
    }
}
