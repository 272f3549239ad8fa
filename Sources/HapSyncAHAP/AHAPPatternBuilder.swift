/// Builds patterns in code, without JSON, and checks them with the same rules as files.
///
/// ```swift
/// let pattern = try AHAPPatternBuilder()
///     .transient(at: 0, intensity: 0.8, sharpness: 0.3)
///     .continuous(at: 0.05, duration: 0.4, intensity: 1, sharpness: 0.2, release: 0.3)
///     .curve(.hapticIntensityControl, at: 0.05, points: [(0, 1), (0.4, 0.2)])
///     .build()
/// ```
/// Each method returns a new builder, so builders can be kept and extended; the `add...`
/// methods add in place instead (each entry added costs the same however many there are, where a
/// chained call copies the entries: the way to add thousands one by one). Parameters left nil
/// are not written and take their defaults. `build()` is strict: a value that a file reader would
/// clamp or default (with a warning) is an error here, since code should say exactly what it means.
public struct AHAPPatternBuilder: Sendable {
    private var pattern: AHAPPattern

    /// Starts an empty pattern.
    public init(version: Double = 1.0) { pattern = AHAPPattern(version: version) }

    /// Adds a `Metadata` string entry (e.g. "Project", "Created", "Description").
    public func metadata(_ key: String, _ value: String) -> AHAPPatternBuilder {
        var b = self
        var members = b.pattern.metadata?.objectMembers ?? []
        members.removeAll { $0.key == key }
        members.append(JSONMember(key: key, value: .string(value)))
        b.pattern.metadata = JSONValue(.object(members))
        return b
    }

    /// Entries added so far (events, parameters and curves).
    public var entryCount: Int { pattern.entries.count }

    /// Adds any entry in place.
    public mutating func add(_ entry: AHAPEntry) { pattern.entries.append(entry) }

    /// Adds any event.
    public func event(_ event: AHAPEvent) -> AHAPPatternBuilder {
        var b = self
        b.add(.event(event))
        return b
    }

    /// Adds a `HapticTransient` (a tap); `duration` only pads the pattern.
    public func transient(at time: Double, intensity: Double? = nil, sharpness: Double? = nil, duration: Double? = nil) -> AHAPPatternBuilder {
        var b = self
        b.addTransient(at: time, intensity: intensity, sharpness: sharpness, duration: duration)
        return b
    }

    /// `transient`, in place.
    public mutating func addTransient(at time: Double, intensity: Double? = nil, sharpness: Double? = nil, duration: Double? = nil) {
        add(.event(AHAPEvent(time: time, type: .hapticTransient, duration: duration,
                             parameters: Self.params([(.hapticIntensity, intensity), (.hapticSharpness, sharpness)]))))
    }

    /// Adds a `HapticContinuous` with its envelope parameters.
    public func continuous(at time: Double, duration: Double, intensity: Double? = nil, sharpness: Double? = nil,
                           attack: Double? = nil, decay: Double? = nil, release: Double? = nil, sustained: Bool? = nil) -> AHAPPatternBuilder {
        var b = self
        b.addContinuous(at: time, duration: duration, intensity: intensity, sharpness: sharpness, attack: attack, decay: decay,
                        release: release, sustained: sustained)
        return b
    }

    /// `continuous`, in place.
    public mutating func addContinuous(at time: Double, duration: Double, intensity: Double? = nil, sharpness: Double? = nil,
                                       attack: Double? = nil, decay: Double? = nil, release: Double? = nil, sustained: Bool? = nil) {
        add(.event(AHAPEvent(time: time, type: .hapticContinuous, duration: duration, parameters: Self.params([
            (.hapticIntensity, intensity), (.hapticSharpness, sharpness), (.attackTime, attack), (.decayTime, decay),
            (.releaseTime, release), (.sustained, sustained.map { $0 ? 1 : 0 }),
        ]))))
    }

    /// Adds an `AudioContinuous` (a synthesized tone) with its envelope and audio parameters.
    public func audioContinuous(at time: Double, duration: Double, volume: Double? = nil, pan: Double? = nil, pitch: Double? = nil,
                                brightness: Double? = nil, attack: Double? = nil, decay: Double? = nil, release: Double? = nil,
                                sustained: Bool? = nil) -> AHAPPatternBuilder {
        event(AHAPEvent(time: time, type: .audioContinuous, duration: duration, parameters: Self.params([
            (.audioVolume, volume), (.audioPan, pan), (.audioPitch, pitch), (.audioBrightness, brightness),
            (.attackTime, attack), (.decayTime, decay), (.releaseTime, release), (.sustained, sustained.map { $0 ? 1 : 0 }),
        ])))
    }

    /// Adds an `AudioCustom` event playing `path` (relative to a resource root).
    public func audioCustom(at time: Double, path: String, duration: Double? = nil, volume: Double? = nil, pan: Double? = nil,
                            pitch: Double? = nil, brightness: Double? = nil, loop: Bool = false, useVolumeEnvelope: Bool = true) -> AHAPPatternBuilder {
        event(AHAPEvent(time: time, type: .audioCustom, duration: duration, parameters: Self.params([
            (.audioVolume, volume), (.audioPan, pan), (.audioPitch, pitch), (.audioBrightness, brightness),
        ]), waveformPath: path, useVolumeEnvelope: useVolumeEnvelope, loopEnabled: loop))
    }

    /// Adds a `Parameter` entry: a dynamic parameter stepping to `value` at `time`.
    public func parameter(_ id: AHAPDynamicParameterID, _ value: Double, at time: Double) -> AHAPPatternBuilder {
        var b = self
        b.addParameter(id, value, at: time)
        return b
    }

    /// `parameter`, in place.
    public mutating func addParameter(_ id: AHAPDynamicParameterID, _ value: Double, at time: Double) {
        add(.parameter(AHAPDynamicParameter(id, value, time: time)))
    }

    /// Adds a `ParameterCurve` starting at `time`; point times are relative to it.
    public func curve(_ id: AHAPDynamicParameterID, at time: Double, points: [(time: Double, value: Double)]) -> AHAPPatternBuilder {
        var b = self
        b.addCurve(id, at: time, points: points)
        return b
    }

    /// `curve`, in place.
    public mutating func addCurve(_ id: AHAPDynamicParameterID, at time: Double, points: [(time: Double, value: Double)]) {
        add(.curve(AHAPParameterCurve(id, time: time, controlPoints: points.map { AHAPControlPoint(time: $0.time, value: $0.value) })))
    }

    /// Checks the pattern with the file reader's rules and returns it; any finding, warning or
    /// error, is thrown with its JSON path (`Pattern[2].Event.EventParameters[0]`).
    public func build() throws(AHAPReadError) -> AHAPPattern {
        try pattern.validated()
    }

    private static func params(_ list: [(AHAPEventParameterID, Double?)]) -> [AHAPEventParameter] {
        list.compactMap { id, v in v.map { AHAPEventParameter(id, $0) } }
    }
}

extension AHAPPattern {
    /// What the file reader's rules find in a pattern made in code (by the builder or entry by
    /// entry), each as an error: code should say exactly what it means, so what a file may get
    /// away with (a value clamped, a default taken) is an error here. Empty when it is valid.
    public func findings() -> [AHAPDiagnostic] {
        AHAPReader().diagnose(json: AHAPWriter.json(from: self)).diagnostics.map(Self.asError)
    }

    /// The pattern, checked by `findings()`; throws every finding with its JSON path.
    public func validated() throws(AHAPReadError) -> AHAPPattern {
        let found = findings()
        guard found.isEmpty else { throw AHAPReadError(diagnostics: found) }
        return self
    }

    /// A reader's leniency as an error: the same code, path and reason, without what the reader
    /// would have done about it (nothing was clamped: nothing was read).
    private static func asError(_ diagnostic: AHAPDiagnostic) -> AHAPDiagnostic {
        var d = diagnostic
        d.severity = .error
        if d.code == .clamped, let cut = d.message.range(of: "; clamped to ") {
            d.message = String(d.message[..<cut.lowerBound])
        }
        return d
    }
}
