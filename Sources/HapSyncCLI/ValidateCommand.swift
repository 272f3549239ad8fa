import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime

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
            Errors are what cannot be given a meaning, and audio that 'hapsync play' would
            refuse to decode: more than \(AudioDecodingBudget.limitBytes >> 20) MiB a pattern of stereo float at \(Int(AudioDecodingBudget.assumedOutputRate)) Hz
            (the rate play uses unless its sound server runs at another), counting only what
            the voices can reach.
            """,
        groups: [OptionGroup([CommonOptions.json, strict, CommonOptions.resources])], positionals: .oneOrMore("FILE"),
        footer: "Exit status: 0 when no file has errors, 1 otherwise, 64 usage error.", run: run)

    /// One file's findings, warnings raised to errors under `--strict`.
    struct Findings {
        let file: String
        let diagnostics: [AHAPDiagnostic]
        /// Findings over the limit, counted and not listed.
        let omitted: AHAPOmittedFindings
        let errorCount: Int
        let warningCount: Int

        /// The check's findings, and its audio's decoding-limit error (`audioOverLimit`: what
        /// `play` would refuse) as one more, counted as omitted when the list is full.
        init(_ check: PlayablePattern.Check, strict: Bool) {
            file = check.name
            var listed = check.diagnostics, omittedErrors = check.omitted.errors
            if let overLimit = check.audioOverLimit {
                if listed.count < AHAPLimits.default.maxFindings { listed.append(overLimit) } else { omittedErrors += 1 }
            }
            diagnostics = !strict ? listed : listed.map { d in
                guard d.severity == .warning else { return d }
                var e = d
                e.severity = .error
                e.message += " (an error under --strict)"
                return e
            }
            let all = AHAPOmittedFindings(errors: omittedErrors, warnings: check.omitted.warnings)
            omitted = !strict ? all : AHAPOmittedFindings(errors: all.total, warnings: 0)
            errorCount = diagnostics.filter { $0.severity == .error }.count + omitted.errors
            warningCount = diagnostics.filter { $0.severity == .warning }.count + omitted.warnings
        }

        /// The line saying how many findings were not listed, nil when all were.
        var omittedLine: String? {
            guard omitted.total > 0 else { return nil }
            return "\(file): \(plural(omitted.total, "more finding")) not listed (\(plural(omitted.errors, "error")), \(plural(omitted.warnings, "warning"))): at most \(AHAPLimits.default.maxFindings) are listed per file"
        }

        /// The file's entry of the `--json` document.
        var json: JSONValue {
            .object([("file", .string(file)), ("valid", .bool(errorCount == 0)),
                     ("errors", .integer(errorCount)), ("warnings", .integer(warningCount)),
                     ("diagnostics", diagnosticsJSON(diagnostics)), ("omitted", .integer(omitted.total))])
        }
    }

    /// Checks each file in turn and writes its findings as soon as they are known, so that memory
    /// holds one file's findings (at most `AHAPLimits.maxFindings`) at a time. `--json` writes one
    /// document piece by piece: `{"files": [...], "valid": ...}`. Once standard output cannot be
    /// written no further file is checked (`main` reports the failure).
    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let roots = parsed[CommonOptions.resources]
        let console = context.console
        let json = parsed[CommonOptions.json]
        var invalid = 0
        if json { console.out("{\n  \"files\": [") }
        for (i, file) in parsed.positional.enumerated() {
            // Standard output is gone (a closed pipe, a full disk): checking more files tells no one.
            if console.outputFailed { break }
            let f = Findings(PlayablePattern.Check(contentsOf: URL(fileURLWithPath: file), resources: roots), strict: parsed[strict])
            if f.errorCount > 0 { invalid += 1 }
            if json {
                console.out((i == 0 ? "\n    " : ",\n    ") + JSONWriter.string(f.json, nestedAt: 4))
                continue
            }
            var text = ""
            for d in f.diagnostics { text += d.description + "\n" }
            if let line = f.omittedLine { text += line + "\n" }
            if f.diagnostics.contains(where: { $0.code == .resourceNotFound }) {
                text += "\(f.file): note: --resources DIR adds a folder to search for audio files\n"
            }
            if f.errorCount > 0 {
                text += "\(f.file): invalid (\(plural(f.errorCount, "error")), \(plural(f.warningCount, "warning")))\n"
            } else {
                text += "\(f.file): valid" + (f.warningCount > 0 ? " (\(plural(f.warningCount, "warning")))" : "") + "\n"
            }
            console.out(text)
        }
        let files = parsed.positional.count
        if json {
            console.out("\n  ],\n  \"valid\": \(invalid == 0)\n}\n")
        } else if files > 1 {
            console.out("\(plural(files, "file")): \(files - invalid) valid, \(invalid) invalid\n")
        }
        if invalid > 0 { throw CLIError(.failure) }
    }
}
