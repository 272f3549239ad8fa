import Foundation

/// Writes patterns as canonical AHAP: stable key order, numbers independent of locale, and text
/// that `AHAPReader` reads back to an equal pattern.
///
/// Key order: `Version`, `Metadata` (as given), `Pattern`; in an event `Time`, `EventType`,
/// `EventDuration`, `EventWaveformPath`, `EventWaveformUseVolumeEnvelope`,
/// `EventWaveformLoopEnabled`, `EventParameters`; in parameters `Time`, `ParameterID`,
/// `ParameterValue`; in curves `Time`, `ParameterID`, `ParameterCurveControlPoints`. Optional keys
/// are written only when they have a value. Numbers use the shortest text that reads back to the
/// same Double (Swift's `description`, which never depends on the locale: 0.5 is never "0,5").
public enum AHAPWriter {
    /// The canonical AHAP text of a pattern.
    public static func string(from pattern: AHAPPattern) -> String {
        JSONWriter.string(json(from: pattern))
    }

    /// The canonical AHAP text as UTF-8 data.
    public static func data(from pattern: AHAPPattern) -> Data {
        Data(string(from: pattern).utf8)
    }

    /// The canonical JSON tree of a pattern (what `string(from:)` writes).
    public static func json(from pattern: AHAPPattern) -> JSONValue {
        var top: [(String, JSONValue)] = [("Version", .number(pattern.version))]
        if let metadata = pattern.metadata { top.append(("Metadata", metadata)) }
        top.append(("Pattern", .array(pattern.entries.map(json(from:)))))
        return .object(top)
    }

    private static func json(from entry: AHAPEntry) -> JSONValue {
        switch entry {
        case .event(let e):
            var m: [(String, JSONValue)] = [("Time", .number(e.time)), ("EventType", .string(e.type.rawValue))]
            if let d = e.duration { m.append(("EventDuration", .number(d))) }
            if e.type == .audioCustom {
                if let p = e.waveformPath { m.append(("EventWaveformPath", .string(p))) }
                m.append(("EventWaveformUseVolumeEnvelope", .bool(e.useVolumeEnvelope)))
                m.append(("EventWaveformLoopEnabled", .bool(e.loopEnabled)))
            }
            if !e.parameters.isEmpty {
                m.append(("EventParameters", .array(e.parameters.map {
                    .object([("ParameterID", .string($0.id.rawValue)), ("ParameterValue", .number($0.value))])
                })))
            }
            return .object([("Event", .object(m))])
        case .parameter(let p):
            return .object([("Parameter", .object([
                ("Time", .number(p.time)), ("ParameterID", .string(p.id.rawValue)), ("ParameterValue", .number(p.value)),
            ]))])
        case .curve(let c):
            return .object([("ParameterCurve", .object([
                ("Time", .number(c.time)), ("ParameterID", .string(c.id.rawValue)),
                ("ParameterCurveControlPoints", .array(c.controlPoints.map {
                    .object([("Time", .number($0.time)), ("ParameterValue", .number($0.value))])
                })),
            ]))])
        }
    }

    /// A measured value as JSON text, rounded to 6 decimals (microseconds when the unit is seconds):
    /// whole numbers without a fraction, never locale-dependent. For traces and renders, where
    /// exact binary digits would only be noise.
    /// JSON has no NaN or infinity: a value that is not finite is written `null`. Never traps.
    public static func formatRounded(_ x: Double) -> String {
        guard x.isFinite else { return "null" }
        // Beyond 1e9 a Double has no digits below the microsecond left to round (and x × 1e6
        // could overflow to infinity).
        guard abs(x) < 1e9 else { return formatNumber(x) }
        let r = (x * 1e6).rounded() / 1e6
        return r == r.rounded() ? String(Int(r)) : formatNumber(r)
    }

    /// A Double as JSON text: shortest round-trip form, `-0` written as `0.0`, never locale-dependent.
    public static func formatNumber(_ x: Double) -> String {
        if x == 0 { return "0.0" }
        guard x.isFinite else { return x.isNaN ? "NaN" : (x > 0 ? "Infinity" : "-Infinity") }
        return x.description
    }
}
