import AHAP
import Foundation

/// Everything `validate` and `info` learn about one AHAP file: the reader's findings, then
/// resolution of its audio files against the resource roots.
struct FileCheck {
    let file: String
    let pattern: AHAPPattern?
    let diagnostics: [AHAPDiagnostic]
    /// Resolved audio files by waveform path.
    let audio: [String: URL]

    init(file: String, resources: [URL], strict: Bool) {
        self.file = file
        let url = URL(fileURLWithPath: file)
        let report = AHAPReader().diagnose(contentsOf: url)
        var diagnostics = report.diagnostics
        var audio: [String: URL] = [:]
        if let pattern = report.pattern {
            let resolver = AHAPResourceResolver(ahapFile: url, resources: resources)
            let checked = resolver.check(pattern, file: file)
            audio = checked.resolved
            diagnostics += report.located(checked.diagnostics)
        }
        if strict {
            diagnostics = diagnostics.map { d in
                guard d.severity == .warning else { return d }
                var e = d
                e.severity = .error
                e.message += " (an error under --strict)"
                return e
            }
        }
        self.diagnostics = diagnostics
        self.audio = audio
        self.pattern = diagnostics.contains { $0.severity == .error } ? nil : report.pattern
    }

    var errorCount: Int { diagnostics.filter { $0.severity == .error }.count }
    var warningCount: Int { diagnostics.filter { $0.severity == .warning }.count }

    /// The findings as JSON objects for `--json`.
    var diagnosticsJSON: JSONValue {
        .array(diagnostics.map { d in
            var m: [(String, JSONValue)] = [("severity", .string(d.severity.rawValue)), ("code", .string(d.code.rawValue)),
                                            ("path", .string(d.path.description))]
            if let l = d.line { m.append(("line", .integer(l))) }
            if let c = d.column { m.append(("column", .integer(c))) }
            m.append(("message", .string(d.message)))
            return .object(m)
        })
    }
}

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
