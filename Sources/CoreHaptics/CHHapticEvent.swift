import Foundation
import HapSyncAHAP

/// An audio resource registered with an engine (`registerAudioResource`), referred to by events.
public typealias CHHapticAudioResourceID = Int

/// A key of `registerAudioResource(_:options:)`'s options: Core Haptics' `CHHapticAudioResourceKey`.
public typealias CHHapticAudioResourceKey = String

/// Option key, Bool (default false): the resource's file repeats for its event's duration.
public let CHHapticAudioResourceKeyLoopEnabled: CHHapticAudioResourceKey = "CHHapticAudioResourceKeyLoopEnabled"

/// Option key, Bool (default true): the resource fades in and out (5 ms) so it never clicks.
public let CHHapticAudioResourceKeyUseVolumeEnvelope: CHHapticAudioResourceKey = "CHHapticAudioResourceKeyUseVolumeEnvelope"

/// One haptic or audio event of a pattern: Core Haptics' `CHHapticEvent`.
public final class CHHapticEvent {
    /// The kinds of event: Core Haptics' `CHHapticEvent.EventType`, raw values as in AHAP files.
    public struct EventType: RawRepresentable, Hashable, Sendable {
        /// The AHAP name ("HapticTransient").
        public let rawValue: String
        /// Makes a type from its AHAP name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A short tap.
        public static let hapticTransient = EventType(rawValue: AHAPEventType.hapticTransient.rawValue)
        /// A sustained vibration with an envelope.
        public static let hapticContinuous = EventType(rawValue: AHAPEventType.hapticContinuous.rawValue)
        /// A synthesized tone.
        public static let audioContinuous = EventType(rawValue: AHAPEventType.audioContinuous.rawValue)
        /// A sound file (a registered audio resource).
        public static let audioCustom = EventType(rawValue: AHAPEventType.audioCustom.rawValue)
    }

    /// An event's parameters: Core Haptics' `CHHapticEvent.ParameterID`, raw values as in AHAP files.
    public struct ParameterID: RawRepresentable, Hashable, Sendable {
        /// The AHAP name ("HapticIntensity").
        public let rawValue: String
        /// Makes an ID from its AHAP name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Strength, 0...1.
        public static let hapticIntensity = ParameterID(rawValue: AHAPEventParameterID.hapticIntensity.rawValue)
        /// Feel, 0 (round) ... 1 (crisp).
        public static let hapticSharpness = ParameterID(rawValue: AHAPEventParameterID.hapticSharpness.rawValue)
        /// Envelope attack time.
        public static let attackTime = ParameterID(rawValue: AHAPEventParameterID.attackTime.rawValue)
        /// Envelope decay time.
        public static let decayTime = ParameterID(rawValue: AHAPEventParameterID.decayTime.rawValue)
        /// Envelope release time.
        public static let releaseTime = ParameterID(rawValue: AHAPEventParameterID.releaseTime.rawValue)
        /// Whether a continuous event sustains for its duration.
        public static let sustained = ParameterID(rawValue: AHAPEventParameterID.sustained.rawValue)
        /// Audio volume, 0...1.
        public static let audioVolume = ParameterID(rawValue: AHAPEventParameterID.audioVolume.rawValue)
        /// Audio pitch, -1...1.
        public static let audioPitch = ParameterID(rawValue: AHAPEventParameterID.audioPitch.rawValue)
        /// Audio pan, -1...1.
        public static let audioPan = ParameterID(rawValue: AHAPEventParameterID.audioPan.rawValue)
        /// Audio brightness, 0...1.
        public static let audioBrightness = ParameterID(rawValue: AHAPEventParameterID.audioBrightness.rawValue)
    }

    /// The event's type.
    public let type: EventType
    /// Its parameters.
    public let eventParameters: [CHHapticEventParameter]
    /// When it starts, seconds from the pattern's start.
    public var relativeTime: TimeInterval
    /// How long it lasts (continuous and audio events; 0 for a transient or "as long as its file").
    public var duration: TimeInterval
    /// The registered audio resource it plays (`audioCustom` events made from an ID).
    public let audioResourceID: CHHapticAudioResourceID?

    /// An event of `eventType` at `relativeTime`.
    public init(eventType type: EventType, parameters: [CHHapticEventParameter], relativeTime: TimeInterval) {
        self.type = type
        self.eventParameters = parameters
        self.relativeTime = relativeTime
        self.duration = 0
        self.audioResourceID = nil
    }

    /// An event of `eventType` at `relativeTime` lasting `duration`.
    public init(eventType type: EventType, parameters: [CHHapticEventParameter], relativeTime: TimeInterval, duration: TimeInterval) {
        self.type = type
        self.eventParameters = parameters
        self.relativeTime = relativeTime
        self.duration = duration
        self.audioResourceID = nil
    }

    /// An `audioCustom` event playing a registered audio resource.
    public init(audioResourceID resourceID: CHHapticAudioResourceID, parameters: [CHHapticEventParameter], relativeTime: TimeInterval) {
        self.type = .audioCustom
        self.eventParameters = parameters
        self.relativeTime = relativeTime
        self.duration = 0
        self.audioResourceID = resourceID
    }

    /// An `audioCustom` event playing a registered audio resource for `duration`.
    public init(audioResourceID resourceID: CHHapticAudioResourceID, parameters: [CHHapticEventParameter], relativeTime: TimeInterval,
                duration: TimeInterval) {
        self.type = .audioCustom
        self.eventParameters = parameters
        self.relativeTime = relativeTime
        self.duration = duration
        self.audioResourceID = resourceID
    }
}

/// One parameter of an event: Core Haptics' `CHHapticEventParameter`.
public final class CHHapticEventParameter {
    /// Which parameter.
    public let parameterID: CHHapticEvent.ParameterID
    /// Its value.
    public var value: Float

    /// Makes a parameter.
    public init(parameterID: CHHapticEvent.ParameterID, value: Float) {
        self.parameterID = parameterID
        self.value = value
    }
}
