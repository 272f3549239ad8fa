import Foundation

/// Core Haptics' error: what every throwing call of this module throws, with Apple's codes and raw
/// values, and a message naming what was wrong (the JSON path of a bad pattern entry, say).
public struct CHHapticError: Error, CustomStringConvertible, Sendable {
    /// Core Haptics' error codes, with Apple's raw values.
    public enum Code: Int, Sendable {
        /// Playback was asked for while the engine was not running.
        case engineNotRunning = -4805
        /// The operation is not permitted.
        case operationNotPermitted = -4806
        /// The engine timed out while starting.
        case engineStartTimeout = -4808
        /// The hardware or the configuration does not support it.
        case notSupported = -4809
        /// The haptic or audio server failed to start.
        case serverInitFailed = -4810
        /// The server was interrupted.
        case serverInterrupted = -4811
        /// The player is no longer valid.
        case invalidPatternPlayer = -4812
        /// The pattern's data is invalid.
        case invalidPatternData = -4813
        /// The pattern dictionary is invalid or misses a required field.
        case invalidPatternDictionary = -4814
        /// The audio session is invalid.
        case invalidAudioSession = -4815
        /// An engine parameter is invalid.
        case invalidEngineParameter = -4816
        /// A parameter's type is unknown or invalid.
        case invalidParameterType = -4820
        /// An event's type is unknown or invalid.
        case invalidEventType = -4821
        /// An event's time is invalid.
        case invalidEventTime = -4822
        /// An event's duration is invalid.
        case invalidEventDuration = -4823
        /// An audio resource reference is invalid.
        case invalidAudioResource = -4824
        /// A resource is not available.
        case resourceNotAvailable = -4825
        /// An event misses a required field.
        case badEventEntry = -4830
        /// A parameter misses a required field.
        case badParameterEntry = -4831
        /// A time is invalid.
        case invalidTime = -4840
        /// A file (an audio resource, a pattern) was not found.
        case fileNotFound = -4851
        /// Not enough power.
        case insufficientPower = -4897
        /// A failure no other code describes; the error's description says what happened.
        case unknownError = -4898
        /// Memory ran out.
        case memoryError = -4899
    }

    /// The domain Apple's errors carry.
    public static let errorDomain = "com.apple.CoreHaptics"

    /// Which error.
    public let code: Code
    /// What was wrong, in words.
    public let message: String

    /// Makes an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Apple's name for the code type (`CHHapticErrorCode` in Objective-C).
    public var errorCode: Int { code.rawValue }
    /// The message, as `NSError` would give it.
    public var localizedDescription: String { message }
    /// "CHHapticError(invalidPatternData, -4813): message".
    public var description: String { "CHHapticError(\(code), \(code.rawValue)): \(message)" }

    /// The codes as static members, as Swift imports Apple's: `CHHapticError.engineNotRunning`.
    public static let engineNotRunning = Code.engineNotRunning
    /// See `Code.invalidPatternData`.
    public static let invalidPatternData = Code.invalidPatternData
    /// See `Code.invalidPatternDictionary`.
    public static let invalidPatternDictionary = Code.invalidPatternDictionary
    /// See `Code.fileNotFound`.
    public static let fileNotFound = Code.fileNotFound
    /// See `Code.invalidAudioResource`.
    public static let invalidAudioResource = Code.invalidAudioResource
    /// See `Code.notSupported`.
    public static let notSupported = Code.notSupported
}

/// Objective-C's name for the codes.
public typealias CHHapticErrorCode = CHHapticError.Code

/// Matches a thrown error against a code, as `catch CHHapticError.engineNotRunning` does on Apple's
/// platforms.
public func ~= (code: CHHapticError.Code, error: any Error) -> Bool {
    (error as? CHHapticError)?.code == code
}
