import AHAP
import Foundation

/// `hapsync validate FILE...`: every error and warning with its file, line, column and JSON path.
enum ValidateCommand {
    static let help = """
        USAGE: hapsync validate [--json] [--strict] [--resources DIR]... FILE...

        Checks AHAP files as Core Haptics loads them and lists every finding as
          file:line:column: error|warning: JSON.path: message [code]
        Warnings are leniencies Core Haptics applies (trailing commas, "Value" for
        "ParameterValue", clamped values, defaults, ignored keys, audio files not found).
        Errors are what cannot be given a meaning.

        OPTIONS:
          --json              print one JSON document for machines
          --strict            treat warnings as errors
          --resources DIR     also look for audio files (EventWaveformPath) here;
                              repeatable, searched after the AHAP file's own folder
          -h, --help          show this help

        Exit status: 0 when no file has errors, 1 otherwise, 64 usage error.

        """

    static func run(_ args: [String], console: HapSyncCLI.Console) throws(CommandLineArguments.UsageError) -> Int32 {
        let parsed = try CommandLineArguments(args, options: [
            .init(name: "json", takesValue: false), .init(name: "strict", takesValue: false),
            .init(name: "resources", takesValue: true, repeatable: true),
        ], command: "hapsync validate")
        if parsed.has("help") { console.out(help); return HapSyncCLI.ExitCode.success }
        guard !parsed.positional.isEmpty else { throw .init(message: "validate needs at least one FILE") }
        let roots = try HapSyncCLI.resourceRoots(parsed.all("resources"))
        let checks = parsed.positional.map { FileCheck(file: $0, resources: roots, strict: parsed.has("strict")) }
        let invalid = checks.filter { $0.errorCount > 0 }.count

        if parsed.has("json") {
            let doc: JSONValue = .object([
                ("valid", .bool(invalid == 0)),
                ("files", .array(checks.map { c in
                    .object([("file", .string(c.file)), ("valid", .bool(c.errorCount == 0)),
                             ("errors", .integer(c.errorCount)), ("warnings", .integer(c.warningCount)),
                             ("diagnostics", c.diagnosticsJSON)])
                })),
            ])
            console.out(JSONWriter.string(doc))
        } else {
            for c in checks {
                for d in c.diagnostics { console.out(d.description + "\n") }
                if c.errorCount > 0 {
                    console.out("\(c.file): invalid (\(plural(c.errorCount, "error")), \(plural(c.warningCount, "warning")))\n")
                } else {
                    console.out("\(c.file): valid" + (c.warningCount > 0 ? " (\(plural(c.warningCount, "warning")))" : "") + "\n")
                }
            }
            if checks.count > 1 {
                console.out("\(plural(checks.count, "file")): \(checks.count - invalid) valid, \(invalid) invalid\n")
            }
        }
        return invalid == 0 ? HapSyncCLI.ExitCode.success : HapSyncCLI.ExitCode.failure
    }
}
