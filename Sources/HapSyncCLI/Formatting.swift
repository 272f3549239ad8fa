import HapSyncAHAP
import HapSyncCore

/// "1 error", "2 warnings".
func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

/// Seconds with millisecond precision, locale-independent. Never traps: beyond a billion seconds
/// (where milliseconds no longer matter) or for a value that is not finite, the number as it is.
func seconds(_ x: Double) -> String {
    guard x.isFinite, abs(x) < 1e9 else { return AHAPWriter.formatNumber(x) + " s" }
    let ms = (x * 1000).rounded()
    let whole = Int(saturating: ms) / 1000
    let frac = Int(saturating: abs(ms)) % 1000
    let fracText = String(frac)
    return "\(ms < 0 && whole == 0 ? "-" : "")\(whole).\(String(repeating: "0", count: 3 - fracText.count))\(fracText) s"
}

/// A number for machine output and help: microsecond resolution, no trailing ".0", locale-independent.
func number(_ x: Double) -> String { AHAPWriter.formatRounded(x) }

/// Findings as JSON objects, for `--json` output.
func diagnosticsJSON(_ diagnostics: [AHAPDiagnostic]) -> JSONValue {
    .array(diagnostics.map { d in
        var m: [(String, JSONValue)] = [("severity", .string(d.severity.rawValue)), ("code", .string(d.code.rawValue)),
                                        ("path", .string(d.path.description))]
        if let l = d.line { m.append(("line", .integer(l))) }
        if let c = d.column { m.append(("column", .integer(c))) }
        m.append(("message", .string(d.message)))
        return .object(m)
    })
}
