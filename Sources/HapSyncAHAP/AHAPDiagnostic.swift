/// One finding about an AHAP file: an error (the file cannot be given a meaning there) or a
/// warning (a leniency HapSync applied, as Core Haptics would, that the author may want to fix).
///
/// Every diagnostic names where it is: the file, the JSON path and, when the value came from
/// text, the line and column.
public struct AHAPDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How serious a finding is.
    public enum Severity: String, Sendable, Equatable, Comparable {
        /// A leniency was applied; the file still has one meaning.
        case warning
        /// The file (or this part of it) cannot be given a meaning.
        case error

        /// Warnings sort before errors.
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .warning && rhs == .error }
    }

    /// What kind of finding this is; each code has one fixed default severity.
    public enum Code: String, Sendable, CaseIterable {
        // Errors
        /// The text is not well-formed JSON (beyond the leniencies below).
        case jsonSyntax = "json-syntax"
        /// The document is JSON but not an AHAP pattern (no top-level object with a `Pattern` array).
        case notAHAP = "not-ahap"
        /// A value has the wrong JSON type.
        case wrongType = "wrong-type"
        /// A key that has no default is missing.
        case missingKey = "missing-key"
        /// A number is NaN or infinite (e.g. `1e999`).
        case nonFiniteNumber = "non-finite-number"
        /// A `Time` is negative.
        case negativeTime = "negative-time"
        /// An `EventDuration` is negative.
        case negativeDuration = "negative-duration"
        /// `EventType` is not one of the four Core Haptics event types.
        case unknownEventType = "unknown-event-type"
        /// `ParameterID` names no Core Haptics parameter.
        case unknownParameterID = "unknown-parameter-id"
        /// A dynamic parameter ID inside `EventParameters`, or an event parameter ID in a
        /// `Parameter` / `ParameterCurve`.
        case wrongParameterKind = "wrong-parameter-kind"
        /// An `AudioCustom` event has no `EventWaveformPath`.
        case missingWaveformPath = "missing-waveform-path"
        /// An `EventWaveformPath` is empty, absolute or climbs out with `..`.
        case unsafeWaveformPath = "unsafe-waveform-path"
        /// An `EventWaveformPath` resolves (through a symbolic link) outside every resource root.
        case resourceOutsideRoots = "resource-outside-roots"
        /// A control point's `Time` is earlier than the one before it.
        case controlPointsOutOfOrder = "control-points-out-of-order"
        /// A `ParameterCurve` has no control points.
        case emptyCurve = "empty-curve"
        /// One pattern entry holds more than one of `Event`, `Parameter`, `ParameterCurve`.
        case ambiguousEntry = "ambiguous-entry"
        /// File size, entry count, curve points, nesting depth, or a time or duration is over the
        /// reader's limit (`AHAPLimits`).
        case limitExceeded = "limit-exceeded"
        /// The file could not be read at all.
        case fileUnreadable = "file-unreadable"

        // Warnings
        /// A comma before `]` or `}` (not JSON; common in real AHAP files).
        case trailingComma = "trailing-comma"
        /// A `//` or `/* */` comment (not JSON).
        case comment = "comment"
        /// `"Value"` written where the key is `"ParameterValue"`.
        case valueKeyAlias = "value-key-alias"
        /// A key Core Haptics does not know; it is ignored.
        case unknownKey = "unknown-key"
        /// The same key twice in one object; the last one is used.
        case duplicateKey = "duplicate-key"
        /// A value outside its documented range was clamped to the nearest bound.
        case clamped = "clamped"
        /// A missing entry took its default value.
        case defaulted = "defaulted"
        /// The same parameter twice in one event's `EventParameters`; the last one is used.
        case duplicateParameter = "duplicate-parameter"
        /// A parameter that does not act on this event type (e.g. `AudioVolume` on a haptic event).
        case inapplicableParameter = "inapplicable-parameter"
        /// A key that does not apply to this event type (e.g. `EventWaveformPath` on a haptic event).
        case inapplicableKey = "inapplicable-key"
        /// A pattern entry with none of `Event`, `Parameter`, `ParameterCurve`; it is ignored.
        case emptyEntry = "empty-entry"
        /// A continuous event without `EventDuration`.
        case missingDuration = "missing-duration"
        /// `EventWaveformLoopEnabled` without an `EventDuration` to loop for.
        case loopWithoutDuration = "loop-without-duration"
        /// A boolean written as the number 0 or 1.
        case numericBoolean = "numeric-boolean"
        /// An `EventWaveformPath` was not found under any resource root.
        case resourceNotFound = "resource-not-found"

        // Audio resources: special files and formats
        /// An `EventWaveformPath` names a FIFO, device, socket or other non-regular file (error).
        case resourceNotRegularFile = "resource-not-regular-file"
        /// An audio file's header cannot be read, or it is in a format or encoding nothing here
        /// plays (warning: Core Haptics would refuse it too, and `play` fails on it).
        case unplayableAudio = "unplayable-audio"

        /// The severity this code has unless `--strict` raises warnings to errors.
        public var defaultSeverity: Severity {
            switch self {
            case .jsonSyntax, .notAHAP, .wrongType, .missingKey, .nonFiniteNumber, .negativeTime,
                 .negativeDuration, .unknownEventType, .unknownParameterID, .wrongParameterKind,
                 .missingWaveformPath, .unsafeWaveformPath, .resourceOutsideRoots,
                 .controlPointsOutOfOrder, .emptyCurve, .ambiguousEntry, .limitExceeded, .fileUnreadable:
                return .error
            case .trailingComma, .comment, .valueKeyAlias, .unknownKey, .duplicateKey, .clamped,
                 .defaulted, .duplicateParameter, .inapplicableParameter, .inapplicableKey, .emptyEntry,
                 .missingDuration, .loopWithoutDuration, .numericBoolean, .resourceNotFound:
                return .warning
            case .resourceNotRegularFile: return .error
            case .unplayableAudio: return .warning
            }
        }
    }

    /// Error or warning.
    public var severity: Severity
    /// The kind of finding.
    public var code: Code
    /// The file it is in, as the user named it, if it came from a file.
    public var file: String?
    /// The JSON path of the value concerned.
    public var path: AHAPPath
    /// 1-based line, when the value came from text.
    public var line: Int?
    /// 1-based column (in characters), when the value came from text.
    public var column: Int?
    /// What is wrong and, where useful, how to fix it.
    public var message: String

    /// Makes a diagnostic with the code's default severity.
    public init(_ code: Code, path: AHAPPath, message: String, file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.severity = code.defaultSeverity
        self.code = code
        self.file = file
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    /// `file:line:column: severity: path: message [code]`, the form compilers use.
    public var description: String {
        var where_ = file ?? "<pattern>"
        if let line { where_ += ":\(line)" ; if let column { where_ += ":\(column)" } }
        return "\(where_): \(severity.rawValue): \(path): \(message) [\(code.rawValue)]"
    }
}

/// Thrown when an AHAP file has errors; holds every finding (errors and warnings).
public struct AHAPReadError: Error, Sendable, CustomStringConvertible {
    /// All findings, in source order, errors and warnings alike.
    public var diagnostics: [AHAPDiagnostic]

    /// Makes the error from its findings.
    public init(diagnostics: [AHAPDiagnostic]) { self.diagnostics = diagnostics }

    /// Only the errors.
    public var errors: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .error } }

    /// One finding per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
