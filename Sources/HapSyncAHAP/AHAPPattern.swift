/// An AHAP pattern: what one `.ahap` file describes, independent of how it was written.
///
/// Values are as Core Haptics would use them: defaults filled where the file left an entry out,
/// out-of-range values clamped. Entries keep the order of the file.
public struct AHAPPattern: Sendable, Equatable {
    /// The `Version` number (1.0 for every pattern Core Haptics defines so far).
    public var version: Double
    /// The `Metadata` dictionary, kept exactly as given (nil when the file has none).
    public var metadata: JSONValue?
    /// The `Pattern` entries, in file order.
    public var entries: [AHAPEntry]

    /// Makes a pattern.
    public init(version: Double = 1.0, metadata: JSONValue? = nil, entries: [AHAPEntry] = []) {
        self.version = version
        self.metadata = metadata
        self.entries = entries
    }

    /// The events, in file order.
    public var events: [AHAPEvent] { entries.compactMap { if case .event(let e) = $0 { return e } else { return nil } } }
    /// The dynamic parameters (`Parameter` entries), in file order.
    public var parameters: [AHAPDynamicParameter] {
        entries.compactMap { if case .parameter(let p) = $0 { return p } else { return nil } }
    }
    /// The parameter curves, in file order.
    public var curves: [AHAPParameterCurve] {
        entries.compactMap { if case .curve(let c) = $0 { return c } else { return nil } }
    }

    /// The pattern's duration as Core Haptics defines it: the latest start time of an event or
    /// parameter plus that entry's duration where it has one.
    ///
    /// An event's duration is its `EventDuration`; an `AudioCustom` event without one lasts as long
    /// as its audio file, which `audioLength` reports (seconds, or nil when unknown: the event then
    /// counts with no length). Transient events count only their `EventDuration` (padding); a
    /// parameter counts at its time; a curve counts up to its last control point. Envelope release
    /// tails after `EventDuration` are not part of the duration.
    public func duration(audioLength: (String) -> Double? = { _ in nil }) -> Double {
        var end = 0.0
        for entry in entries {
            switch entry {
            case .event(let e):
                var length = e.duration ?? 0
                if e.duration == nil, e.type == .audioCustom, let path = e.waveformPath, let l = audioLength(path) {
                    length = l
                }
                end = max(end, e.time + length)
            case .parameter(let p):
                end = max(end, p.time)
            case .curve(let c):
                end = max(end, c.time + (c.controlPoints.last?.time ?? 0))
            }
        }
        return end
    }
}

/// One entry of a pattern's `Pattern` array.
public enum AHAPEntry: Sendable, Equatable {
    /// A haptic or audio event.
    case event(AHAPEvent)
    /// A dynamic parameter that steps at its time.
    case parameter(AHAPDynamicParameter)
    /// A dynamic parameter that follows a piecewise-linear curve.
    case curve(AHAPParameterCurve)
}

/// The four Core Haptics event types.
public enum AHAPEventType: String, Sendable, CaseIterable, Hashable {
    /// A short haptic tap of fixed length.
    case hapticTransient = "HapticTransient"
    /// A haptic of arbitrary length with an envelope.
    case hapticContinuous = "HapticContinuous"
    /// A synthesized audio tone of arbitrary length with an envelope.
    case audioContinuous = "AudioContinuous"
    /// An audio file (`EventWaveformPath`).
    case audioCustom = "AudioCustom"

    /// Haptic (as opposed to audio) event types.
    public var isHaptic: Bool { self == .hapticTransient || self == .hapticContinuous }
    /// Types whose `EventDuration` sets their length (Core Haptics caps it at 30 s).
    public var isContinuous: Bool { self == .hapticContinuous || self == .audioContinuous }
}

/// One `Event` entry.
public struct AHAPEvent: Sendable, Equatable {
    /// Start time in seconds from the pattern's start (≥ 0).
    public var time: Double
    /// The event type.
    public var type: AHAPEventType
    /// `EventDuration` in seconds, nil when the file gives none.
    public var duration: Double?
    /// `EventParameters` in file order, one per ID (the last one wins when a file repeats an ID).
    public var parameters: [AHAPEventParameter]
    /// `EventWaveformPath` of an `AudioCustom` event, relative to a resource root.
    public var waveformPath: String?
    /// `EventWaveformUseVolumeEnvelope` of an `AudioCustom` event (default true: short fades).
    public var useVolumeEnvelope: Bool
    /// `EventWaveformLoopEnabled` of an `AudioCustom` event (default false).
    public var loopEnabled: Bool

    /// The longest `EventDuration` Core Haptics accepts for continuous events, in seconds.
    public static let maximumContinuousDuration = 30.0

    /// Makes an event.
    public init(time: Double, type: AHAPEventType, duration: Double? = nil, parameters: [AHAPEventParameter] = [],
                waveformPath: String? = nil, useVolumeEnvelope: Bool = true, loopEnabled: Bool = false) {
        self.time = time
        self.type = type
        self.duration = duration
        self.parameters = parameters
        self.waveformPath = waveformPath
        self.useVolumeEnvelope = useVolumeEnvelope
        self.loopEnabled = loopEnabled
    }

    /// The value of a parameter: as given, or its default.
    public func value(_ id: AHAPEventParameterID) -> Double {
        parameters.last(where: { $0.id == id })?.value ?? id.defaultValue
    }
}

/// One entry of an event's `EventParameters`.
public struct AHAPEventParameter: Sendable, Equatable {
    /// Which parameter.
    public var id: AHAPEventParameterID
    /// Its value, within `id.range`.
    public var value: Double

    /// Makes an event parameter.
    public init(_ id: AHAPEventParameterID, _ value: Double) {
        self.id = id
        self.value = value
    }
}

/// One `Parameter` entry: a dynamic parameter that takes its value at `time`. The same type is
/// sent to a playing player (`HapticPatternPlayer.sendParameters`), like Core Haptics'
/// `CHHapticDynamicParameter`.
public struct AHAPDynamicParameter: Sendable, Equatable {
    /// Which dynamic parameter.
    public var id: AHAPDynamicParameterID
    /// Its value, within `id.range`.
    public var value: Double
    /// When it takes effect, seconds: from the pattern's start in a pattern, from the send time
    /// when sent to a player (Core Haptics' `relativeTime`).
    public var time: Double

    /// Makes a dynamic parameter.
    public init(_ id: AHAPDynamicParameterID, _ value: Double, time: Double = 0) {
        self.id = id
        self.value = value
        self.time = time
    }
}

/// One `ParameterCurve` entry: a dynamic parameter interpolated linearly between control points.
/// The same type is scheduled on a playing player (`HapticPatternPlayer.scheduleParameterCurve`),
/// like Core Haptics' `CHHapticParameterCurve`.
public struct AHAPParameterCurve: Sendable, Equatable {
    /// Which dynamic parameter.
    public var id: AHAPDynamicParameterID
    /// The curve's start, seconds: from the pattern's start in a pattern, from the scheduled time
    /// on a player (Core Haptics' `relativeTime`); control point times add to it.
    public var time: Double
    /// Control points, times non-decreasing and relative to `time`.
    public var controlPoints: [AHAPControlPoint]

    /// Makes a curve.
    public init(_ id: AHAPDynamicParameterID, time: Double = 0, controlPoints: [AHAPControlPoint]) {
        self.id = id
        self.time = time
        self.controlPoints = controlPoints
    }
}

/// One control point of a parameter curve.
public struct AHAPControlPoint: Sendable, Equatable {
    /// Time relative to the curve's `Time`, seconds.
    public var time: Double
    /// The value reached at that time, within the parameter's range.
    public var value: Double

    /// Makes a control point.
    public init(time: Double, value: Double) {
        self.time = time
        self.value = value
    }
}
