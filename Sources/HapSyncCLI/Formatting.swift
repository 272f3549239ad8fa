import AHAP

/// "1 error", "2 warnings".
func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

/// Seconds with millisecond precision, locale-independent.
func seconds(_ x: Double) -> String {
    let ms = (x * 1000).rounded()
    let whole = Int(ms) / 1000
    let frac = Int(abs(ms)) % 1000
    let fracText = String(frac)
    return "\(whole).\(String(repeating: "0", count: 3 - fracText.count))\(fracText) s"
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
