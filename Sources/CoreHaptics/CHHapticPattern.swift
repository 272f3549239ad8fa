import Foundation
import HapSyncAHAP

/// Core Haptics' "play now" time for `start(atTime:)` and friends.
public let CHHapticTimeImmediate: TimeInterval = 0

/// A haptic and audio pattern: Core Haptics' `CHHapticPattern`. However it is made (events and
/// parameters, a dictionary, an AHAP file), it is read by HapSync's AHAP reader with the rules of
/// a file, so its errors name the entry and field (`Pattern[1].Event.Time: ...`).
public final class CHHapticPattern {
    /// The keys of a pattern dictionary: Core Haptics' `CHHapticPattern.Key`, raw values as in AHAP files.
    public struct Key: RawRepresentable, Hashable, Sendable {
        /// The AHAP name ("EventType").
        public let rawValue: String
        /// Makes a key from its AHAP name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// "Version".
        public static let version = Key(rawValue: "Version")
        /// "Pattern": the array of entries.
        public static let pattern = Key(rawValue: "Pattern")
        /// "Event".
        public static let event = Key(rawValue: "Event")
        /// "EventType".
        public static let eventType = Key(rawValue: "EventType")
        /// "Time".
        public static let time = Key(rawValue: "Time")
        /// "EventDuration".
        public static let eventDuration = Key(rawValue: "EventDuration")
        /// "EventWaveformPath".
        public static let eventWaveformPath = Key(rawValue: "EventWaveformPath")
        /// "EventParameters".
        public static let eventParameters = Key(rawValue: "EventParameters")
        /// "EventWaveformUseVolumeEnvelope".
        public static let eventWaveformUseVolumeEnvelope = Key(rawValue: "EventWaveformUseVolumeEnvelope")
        /// "EventWaveformLoopEnabled".
        public static let eventWaveformLoopEnabled = Key(rawValue: "EventWaveformLoopEnabled")
        /// "ParameterID".
        public static let parameterID = Key(rawValue: "ParameterID")
        /// "ParameterValue".
        public static let parameterValue = Key(rawValue: "ParameterValue")
        /// "Parameter": a dynamic parameter entry.
        public static let parameter = Key(rawValue: "Parameter")
        /// "ParameterCurve".
        public static let parameterCurve = Key(rawValue: "ParameterCurve")
        /// "ParameterCurveControlPoints".
        public static let parameterCurveControlPoints = Key(rawValue: "ParameterCurveControlPoints")
    }

    /// The pattern as HapSync's engine plays it.
    public let ahapPattern: AHAPPattern

    /// The pattern's length: its last event's end, in seconds (audio from a registered resource
    /// counts from the event's duration).
    public var duration: TimeInterval { ahapPattern.duration() }

    /// A pattern of events and dynamic parameters. Throws `CHHapticError` (`.invalidPatternData`)
    /// naming every entry that is wrong.
    public init(events: [CHHapticEvent], parameters: [CHHapticDynamicParameter]) throws {
        let entries = events.map(Self.entry) + parameters.map { p in
            JSONValue.object([("Parameter", .object([
                ("ParameterID", .string(p.parameterID.rawValue)),
                ("ParameterValue", Self.number(p.value)),
                ("Time", .number(p.relativeTime)),
            ]))])
        }
        ahapPattern = try Self.read(Self.document(entries), what: "the pattern's events and parameters", code: .invalidPatternData)
    }

    /// A pattern of events and parameter curves. Throws `CHHapticError` (`.invalidPatternData`)
    /// naming every entry that is wrong.
    public init(events: [CHHapticEvent], parameterCurves: [CHHapticParameterCurve]) throws {
        let entries = events.map(Self.entry) + parameterCurves.map { c in
            JSONValue.object([("ParameterCurve", .object([
                ("ParameterID", .string(c.parameterID.rawValue)),
                ("Time", .number(c.relativeTime)),
                ("ParameterCurveControlPoints", .array(c.controlPoints.map { p in
                    .object([("Time", .number(p.relativeTime)), ("ParameterValue", Self.number(p.value))])
                })),
            ]))])
        }
        ahapPattern = try Self.read(Self.document(entries), what: "the pattern's events and curves", code: .invalidPatternData)
    }

    /// A pattern from a dictionary shaped like an AHAP file (keys `CHHapticPattern.Key` or strings,
    /// values strings, numbers, the event and parameter types, arrays and dictionaries, Swift's or
    /// Foundation's). Throws `CHHapticError` (`.invalidPatternDictionary`) naming the key path of
    /// what is wrong: a value of another type, nesting deeper than a file may
    /// (`AHAPLimits.maxNestingDepth`), an `NSMutableArray` or `NSMutableDictionary` that contains
    /// itself, or more than a file may hold (`AHAPLimits.maxFileBytes` of AHAP text).
    public init(dictionary: [CHHapticPattern.Key: Any]) throws {
        let json = try PatternDictionary.json(dictionary)
        ahapPattern = try Self.read(json, what: "the pattern dictionary", code: .invalidPatternDictionary)
    }

    /// A pattern from an AHAP file. Throws `CHHapticError`: `.fileNotFound` (also for a URL that
    /// is not a file URL: nothing is fetched), or `.invalidPatternData` with every error and its line.
    public init(contentsOf url: URL) throws {
        try Self.requireFileURL(url)
        let missing = !FileManager.default.fileExists(atPath: url.path)
        ahapPattern = try Self.checked(AHAPReader().diagnose(contentsOf: url), what: url.path, code: missing ? .fileNotFound : .invalidPatternData)
    }

    /// A pattern from AHAP text (`CHHapticEngine.playPattern(from: Data)`). Throws `CHHapticError`
    /// (`.invalidPatternData`) with every error and its line.
    init(data: Data) throws {
        ahapPattern = try Self.checked(AHAPReader().diagnose(data: data, file: "AHAP data"), what: "AHAP data", code: .invalidPatternData)
    }

    /// The pattern as a dictionary (top-level keys `CHHapticPattern.Key`; nested dictionaries keyed
    /// by their AHAP names; numbers as `Double`).
    public func exportDictionary() throws -> [CHHapticPattern.Key: Any] {
        guard case .object(let members) = AHAPWriter.json(from: ahapPattern).kind else {
            throw CHHapticError(.unknownError, "the pattern did not write as a JSON object")
        }
        var out: [CHHapticPattern.Key: Any] = [:]
        for m in members { out[Key(rawValue: m.key)] = PatternDictionary.value(m.value) }
        return out
    }

    /// The file name a registered audio resource's events carry as their `EventWaveformPath`
    /// (the engine maps it back to the resource's file).
    public static func waveformPath(forResource id: CHHapticAudioResourceID) -> String { resourcePathPrefix + "\(id)" }

    /// What every registered resource's waveform path starts with.
    static let resourcePathPrefix = "CHHapticAudioResource-"

    // MARK: - Building and reading

    /// Throws `.fileNotFound` for a URL that is not a file URL (`http://host/x.ahap` names no
    /// file here; its path is not read as a local one).
    static func requireFileURL(_ url: URL) throws {
        guard url.isFileURL else {
            throw CHHapticError(.fileNotFound, "\(url.absoluteString) is not a file URL; only files are read (nothing is downloaded)")
        }
    }

    private static func number(_ value: Float) -> JSONValue {
        // Float's shortest decimal form: 0.3 stays 0.3, not 0.30000001192092896.
        .number(Double("\(value)") ?? Double(value))
    }

    private static func entry(_ e: CHHapticEvent) -> JSONValue {
        var event: [(String, JSONValue)] = [("Time", .number(e.relativeTime)), ("EventType", .string(e.type.rawValue))]
        if e.duration != 0 { event.append(("EventDuration", .number(e.duration))) }
        if let id = e.audioResourceID { event.append(("EventWaveformPath", .string(waveformPath(forResource: id)))) }
        if !e.eventParameters.isEmpty {
            event.append(("EventParameters", .array(e.eventParameters.map { p in
                .object([("ParameterID", .string(p.parameterID.rawValue)), ("ParameterValue", number(p.value))])
            })))
        }
        return .object([("Event", .object(event))])
    }

    private static func document(_ entries: [JSONValue]) -> JSONValue {
        .object([("Version", .number(1)), ("Pattern", .array(entries))])
    }

    /// Reads by the file rules: errors throw (each with its path); warnings (a value clamped, as
    /// Core Haptics clamps it) do not.
    private static func read(_ json: JSONValue, what: String, code: CHHapticError.Code) throws -> AHAPPattern {
        try checked(AHAPReader().diagnose(json: json), what: what, code: code)
    }

    /// The pattern a reader's report holds, or `code` with every error it found.
    private static func checked(_ report: AHAPReader.Report, what: String, code: CHHapticError.Code) throws -> AHAPPattern {
        let errors = report.diagnostics.filter { $0.severity == .error }
        guard errors.isEmpty, let pattern = report.pattern else { throw CHHapticError(code, describe(errors, in: what)) }
        return pattern
    }

    private static func describe(_ errors: [AHAPDiagnostic], in what: String) -> String {
        let listed = errors.prefix(10).map { "\($0.path): \($0.message)" }
        let more = errors.count > 10 ? "; and \(errors.count - 10) more" : ""
        return "\(what): " + listed.joined(separator: "; ") + more
    }
}
