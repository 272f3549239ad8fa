import AHAP
import Foundation
import HapSyncCore

/// `hapsync validate FILE...`: every error and warning with its file, line, column and JSON path.
enum ValidateCommand {
    static let strict = Option(flag: "strict", help: "treat warnings as errors")

    static let command = Command(
        name: "validate", summary: "check AHAP files and list every error and warning with its JSON path",
        about: """
            Checks AHAP files as Core Haptics loads them and lists every finding as
              file:line:column: error|warning: JSON.path: message [code]
            Warnings are leniencies Core Haptics applies (trailing commas, "Value" for
            "ParameterValue", clamped values, defaults, ignored keys, audio files not found).
            Errors are what cannot be given a meaning.
            """,
        groups: [OptionGroup([CommonOptions.json, strict, CommonOptions.resources])], positionals: .oneOrMore("FILE"),
        footer: "Exit status: 0 when no file has errors, 1 otherwise, 64 usage error.", run: run)

    /// One file's findings, warnings raised to errors under `--strict`.
    struct Findings {
        let file: String
        let diagnostics: [AHAPDiagnostic]

        init(_ check: PlayablePattern.Check, strict: Bool) {
            file = check.name
            diagnostics = !strict ? check.diagnostics : check.diagnostics.map { d in
                guard d.severity == .warning else { return d }
                var e = d
                e.severity = .error
                e.message += " (an error under --strict)"
                return e
            }
        }

        var errorCount: Int { diagnostics.filter { $0.severity == .error }.count }
        var warningCount: Int { diagnostics.filter { $0.severity == .warning }.count }
    }

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let roots = parsed[CommonOptions.resources]
        let files = parsed.positional.map { file in
            Findings(PlayablePattern.Check(contentsOf: URL(fileURLWithPath: file), resources: roots), strict: parsed[strict])
        }
        let invalid = files.filter { $0.errorCount > 0 }.count
        let console = context.console

        if parsed[CommonOptions.json] {
            let doc: JSONValue = .object([
                ("valid", .bool(invalid == 0)),
                ("files", .array(files.map { f in
                    .object([("file", .string(f.file)), ("valid", .bool(f.errorCount == 0)),
                             ("errors", .integer(f.errorCount)), ("warnings", .integer(f.warningCount)),
                             ("diagnostics", diagnosticsJSON(f.diagnostics))])
                })),
            ])
            console.out(JSONWriter.string(doc))
        } else {
            for f in files {
                for d in f.diagnostics { console.out(d.description + "\n") }
                if f.errorCount > 0 {
                    console.out("\(f.file): invalid (\(plural(f.errorCount, "error")), \(plural(f.warningCount, "warning")))\n")
                } else {
                    console.out("\(f.file): valid" + (f.warningCount > 0 ? " (\(plural(f.warningCount, "warning")))" : "") + "\n")
                }
            }
            if files.count > 1 {
                console.out("\(plural(files.count, "file")): \(files.count - invalid) valid, \(invalid) invalid\n")
            }
        }
        if invalid > 0 { throw CLIError(.failure) }
    }
}
