import Foundation
import HapSyncAudioOutput
import HapSyncRuntime

/// The reference documents of `hapsync`, all read from the one command table
/// (`HapSyncCLI.commands`): the Markdown reference docs/cli.md (here), the manual page
/// (`ManualPage`) and the shell completions (`ShellCompletions`). What the table does not hold
/// and every document says the same way lives here once: the description, the exit statuses
/// and the environment variables.
///
/// Nothing here is written by hand per command: a command added to the table appears in every
/// document with its synopsis, about text and options.
enum CLIReference {
    /// What hapsync is in one line: the manual page's NAME, docs/cli.md's first sentence.
    static let tagline = "Core Haptics' AHAP patterns on Linux"

    /// What hapsync does and how its command lines are spelled: the manual page's DESCRIPTION and
    /// docs/cli.md's introduction.
    static let description = """
        hapsync checks, describes, renders, draws and generates Apple Core Haptics AHAP
        patterns, and plays them on a real-time engine: on a rumble gamepad (evdev), on a
        voice-coil actuator driven as audio, or into a trace file, with the pattern's audio
        through PipeWire or PulseAudio in sync. It also installs HapSync's C API
        (libhapsync.so, hapsync.h, hapsync.hpp, hapsync.pc) under a prefix.

        Each command has its own options, all long and kebab-case, given as --opt value or
        --opt=value; -h or --help after any command prints its help, and -- ends the options.
        """

    // MARK: - Environment and exit statuses

    /// An environment variable HapSync reads, and what it does.
    struct EnvironmentVariable: Sendable {
        /// The variable's name (`HAPSYNC_AUDIO`).
        let name: String
        /// What it holds: its choices (`auto|pipewire|pulse|none`) or a placeholder (`PATH`).
        let value: String
        /// What it does and which front ends read it, in a sentence or two.
        let meaning: String
    }

    /// Every `HAPSYNC_*` variable the command line and the libraries (the C API, `import
    /// CoreHaptics`) read: the one list, which the manual page and docs/cli.md both print. A test
    /// finds every `"HAPSYNC_..."` string in Sources/ and requires it here, so a new variable cannot
    /// go undocumented.
    static let environment: [EnvironmentVariable] = [
        EnvironmentVariable(
            name: "HAPSYNC_AUDIO", value: AudioServerChoice.allCases.map(\.rawValue).joined(separator: "|"),
            meaning: "where audio events play when --audio is not given (play, feedback, serve), and for the C API and CoreHaptics "
                + "when their configuration does not say; default auto"),
        EnvironmentVariable(
            name: "HAPSYNC_HAPTICS", value: "on|off|OUTPUT",
            meaning: "on or off (also 1/0, true/false, yes/no): the accessibility switch; off turns haptics off while audio still plays "
                + "(--no-haptics wins). An OUTPUT (\(HapticOutputSpec.expectation)) is where the C API and CoreHaptics send haptics; "
                + "hapsync itself takes --haptics"),
        EnvironmentVariable(
            name: "HAPSYNC_INTENSITY_SCALE", value: "X",
            meaning: "scale every haptic intensity by X, \(PlaybackOptions.intensityScale.declaration.rangeText ?? "") (--intensity-scale wins)"),
        EnvironmentVariable(
            name: "HAPSYNC_RATE_LIMIT_MS", value: "N",
            meaning: "merge starts from one source closer than N milliseconds, \(PlaybackOptions.rateLimit.declaration.rangeText ?? "") "
                + "(--rate-limit-ms wins)"),
        EnvironmentVariable(
            name: "HAPSYNC_SINK", value: "NAME",
            meaning: "the audio sink of the C API and CoreHaptics: PulseAudio's sink name, or PipeWire's node.name or id (hapsync takes --sink)"),
        EnvironmentVariable(
            name: "HAPSYNC_TRACE", value: "PATH",
            meaning: "the C API and CoreHaptics also write every haptic command to a trace at PATH, as --haptics trace:PATH does "
                + "(an existing file is not replaced)"),
    ]

    /// Variables other programs define that HapSync honours as they do: said after the list.
    static let otherEnvironment = "PULSE_SERVER and PIPEWIRE_REMOTE choose the sound server, as for any PulseAudio or PipeWire client."

    /// An exit status and when a run ends with it.
    struct ExitStatus: Sendable {
        /// The status, or a rule for a family of them ("128 + N").
        let status: String
        /// When it happens.
        let meaning: String
    }

    /// The exit statuses of `hapsync`, from `CLIError.Status`: the manual page's EXIT STATUS and
    /// docs/cli.md's. Commands add their own detail in their help's footer.
    static let exitStatuses: [ExitStatus] = {
        let signals: [(CLIError.Status, String)] = [(.hangup, "SIGHUP"), (.interrupted, "SIGINT (Ctrl-C)"), (.quit, "SIGQUIT"),
                                                    (.terminated, "SIGTERM")]
        return [
            ExitStatus(status: "\(CLIError.Status.success.rawValue)", meaning: "success (also for --help and --version)"),
            ExitStatus(status: "\(CLIError.Status.failure.rawValue)",
                       meaning: "failure: a file has errors or cannot be read, playback failed, or output could not be written"),
            ExitStatus(status: "\(CLIError.Status.usage.rawValue)",
                       meaning: "usage error: an unknown command or option, a missing or bad value (EX_USAGE)"),
            ExitStatus(status: "\(CLIError.Status.brokenPipe.rawValue)",
                       meaning: "standard output or error went into a pipe nobody reads any more (128 + SIGPIPE); the run stopped quietly"),
            ExitStatus(status: "128 + N",
                       meaning: "play or feedback was stopped by signal N, after silencing the outputs and writing the trace: "
                           + signals.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ")),
        ]
    }()

    // MARK: - What the documents read from the table

    /// What an option's value, or a positional argument, is: how completions complete it and
    /// what the references say of it.
    enum ValueKind: Hashable, Sendable {
        /// No value: a flag.
        case flag
        /// One of a fixed set of words.
        case choices([String])
        /// A file (folders included, to reach it), of this extension when one is named.
        case file(extension: String?)
        /// A folder.
        case directory
        /// Anything else (a number, a name, an address): nothing to complete.
        case text

        /// What a placeholder names. One of its words (split at `|` and `.`) FILE, PATH or AUDIO
        /// (a sound file) is a file, narrowed by an extension written after it (`PATH.svg`,
        /// `FILE.ahap`); DIR alone is a folder; anything else is text.
        init(placeholder: String) {
            let words = placeholder.split(whereSeparator: { $0 == "|" || $0 == "." }).map(String.init)
            if let index = words.firstIndex(where: { ["FILE", "PATH", "AUDIO"].contains($0) }) {
                let next = index + 1 < words.count ? words[index + 1] : nil
                self = .file(extension: next.flatMap { $0.allSatisfy { $0.isLowercase || $0.isNumber } ? $0 : nil })
            } else if words.contains("DIR") {
                self = .directory
            } else {
                self = .text
            }
        }
    }

    /// One option as the documents list it: a declaration from the table, or `-h, --help`.
    struct OptionEntry: Sendable {
        /// The names as typed, short first (`-h`, `--help`; `--json`).
        let names: [String]
        /// The value's placeholder; nil for a flag.
        let valueName: String?
        /// The help text as the table has it (several lines when laid out by hand).
        let help: String
        /// The range and default as help shows them ("(1 to 2000; default 20)").
        let notes: String?
        /// Whether it may be given more than once.
        let isRepeatable: Bool
        /// Whether the command must be given it.
        let isRequired: Bool
        /// What its value is.
        let kind: ValueKind

        /// The entry of a declared option.
        init(_ option: OptionDeclaration) {
            names = ["--" + option.name]
            valueName = option.valueName
            help = option.help
            notes = option.helpNotes
            isRepeatable = option.isRepeatable
            isRequired = option.isRequired
            kind = option.valueKind
        }

        /// `-h, --help`, which every command takes and help lists last in its first group.
        static let help = OptionEntry(names: ["-h", "--help"], help: "show this help")

        private init(names: [String], help: String) {
            self.names = names
            self.help = help
            valueName = nil
            notes = nil
            isRepeatable = false
            isRequired = false
            kind = .flag
        }

        /// The long name without dashes (`help`, `json`).
        var longName: String { String(names.last!.drop { $0 == "-" }) }

        /// The choices when neither the placeholder (`--audio auto|pipewire|pulse|none`) nor the
        /// help text (`--style STYLE`'s "percussive: ...; ambient: ...") names them all already.
        var unlistedChoices: [String]? {
            guard case .choices(let choices) = kind, valueName != choices.joined(separator: "|") else { return nil }
            let words = Set(help.split { !($0.isLetter || $0.isNumber || $0 == "-") }.map(String.init))
            return choices.allSatisfy(words.contains) ? nil : choices
        }

        /// The help as one short description for completion menus: its first clause (up to a
        /// semicolon outside parentheses) of its first paragraph of prose, without a colon that introduced a list,
        /// then the range and default.
        var summary: String {
            var first = ""
            if case .prose(let lines) = CLIReference.blocks(help).first { first = lines.joined(separator: " ") }
            var depth = 0
            for (offset, c) in zip(first.indices, first) {
                depth += c == "(" ? 1 : c == ")" ? -1 : 0
                if depth == 0, c == ";" {
                    first = String(first[..<offset])
                    break
                }
            }
            if first.hasSuffix(":") { first.removeLast() }
            return [first, notes].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        }
    }

    /// A command's options by group as help shows them, `-h, --help` ending the first group; the
    /// title is nil for the first group's `OPTIONS`.
    static func optionGroups(_ command: Command) -> [(title: String?, entries: [OptionEntry])] {
        var groups = command.syntax.groups.map { (title: $0.title, entries: $0.options.map(OptionEntry.init)) }
        if groups.isEmpty { groups = [(nil, [])] }
        groups[0].entries.append(.help)
        return groups
    }

    /// A command's positional argument, if it takes any: its placeholder, what it is, and whether
    /// it takes several.
    static func positional(_ command: Command) -> (name: String, kind: ValueKind, several: Bool, optional: Bool)? {
        switch command.syntax.positionals {
        case .none: return nil
        case .one(let name): return (name, ValueKind(placeholder: name), false, false)
        case .optional(let name): return (name, ValueKind(placeholder: name), false, true)
        case .oneOrMore(let name): return (name, ValueKind(placeholder: name), true, false)
        case .any(let name): return (name, ValueKind(placeholder: name), true, true)
        }
    }

    /// A group title as a heading: the leading capitals of `ACCESSIBILITY (also from the
    /// environment; flags win)` in sentence case, the rest as written.
    static func heading(_ title: String?) -> String {
        guard let title else { return "Options" }
        let head = title.prefix { $0 != "(" }
        return head.prefix(1) + head.dropFirst().lowercased() + title.dropFirst(head.count)
    }

    // MARK: - Help text as blocks

    /// A piece of help text: prose wrapped by hand, or lines laid out by hand.
    enum TextBlock: Equatable, Sendable {
        /// Lines of prose, one paragraph: a document may wrap them anew.
        case prose([String])
        /// Lines indented in the table (an example, an aligned list), with their common indent
        /// removed: a document keeps them as they are.
        case literal([String])
    }

    /// `text` as the table writes help: paragraphs of prose separated by blank lines, and
    /// indented lines laid out by hand, kept as they are.
    static func blocks(_ text: String) -> [TextBlock] {
        var blocks: [TextBlock] = []
        var prose: [String] = [], literal: [String] = []
        func flush() {
            if !prose.isEmpty { blocks.append(.prose(prose)) }
            if !literal.isEmpty {
                let indent = literal.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
                blocks.append(.literal(literal.map { String($0.dropFirst(min(indent, $0.count))) }))
            }
            prose = []
            literal = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                flush()
            } else if line.hasPrefix(" ") {
                if !prose.isEmpty { flush() }
                literal.append(line)
            } else {
                if !literal.isEmpty { flush() }
                prose.append(trimmed)
            }
        }
        flush()
        return blocks
    }

    // MARK: - Markdown (docs/cli.md)

    /// Where the Markdown reference lives in the repository, from the package root.
    static let markdownPath = "docs/cli.md"

    /// The text of docs/cli.md: title, introduction, the command list, then each command's
    /// synopsis, about text, options (placeholder, help, range and default, choices) and notes,
    /// then the exit statuses and the environment. `CLIReferenceTests` keeps the file equal to it.
    static func markdown(commands: [Command] = HapSyncCLI.commands) -> String {
        var out = "# hapsync command-line reference\n\n"
        out += "<!-- Generated from the command table (Sources/HapSyncCLI) by CLIReference.markdown; do not edit.\n"
        out += "     Regenerate with: HAPSYNC_UPDATE_DOCS=1 swift test --filter CLIReferenceTests -->\n\n"
        out += "`hapsync`: \(Markdown.escape(tagline)).\n\n"
        out += Markdown.blocks(blocks(description))
        out += "The same table gives `hapsync --help`, each command's `--help`, the manual page (`man hapsync`) and the bash, zsh and fish "
            + "completions that `hapsync install --prefix DIR` puts under `DIR/share`.\n\n"
        out += "## Commands\n\n| Command | What it does |\n| --- | --- |\n"
        for command in commands {
            out += "| [`\(command.name)`](#hapsync-\(command.name)) | \(Markdown.cell(command.summary)) |\n"
        }
        out += "\nWithout a command: `hapsync --help` (or `-h`, or `hapsync help [COMMAND]`) prints help, `hapsync --version` the version.\n"
        for command in commands {
            out += "\n## hapsync \(command.name)\n\n```text\n"
            out += command.syntax.usageForms.joined(separator: "\n") + "\n```\n\n"
            out += Markdown.blocks(blocks(command.syntax.about))
            for group in optionGroups(command) {
                out += "### \(heading(group.title))\n\n"
                for entry in group.entries { out += Markdown.option(entry) }
                out += "\n"
            }
            if let footer = command.syntax.footer { out += Markdown.blocks(blocks(footer)) }
            // Each part ends with a blank line; the next heading follows it.
            out.removeLast()
        }
        out += "\n## Exit status\n\n| Status | Meaning |\n| --- | --- |\n"
        for status in exitStatuses { out += "| \(status.status) | \(Markdown.cell(status.meaning)) |\n" }
        out += "\n## Environment\n\n| Variable | Value | Meaning |\n| --- | --- | --- |\n"
        for variable in environment {
            out += "| `\(variable.name)` | `\(variable.value.replacingOccurrences(of: "|", with: "\\|"))` | \(Markdown.cell(variable.meaning)) |\n"
        }
        out += "\n" + Markdown.escape(otherEnvironment) + "\n"
        return out
    }

    /// Markdown's spelling of the table's text.
    private enum Markdown {
        /// Prose with what Markdown would read as markup escaped: `*`, backquotes, `<`,
        /// backslashes, an underscore not inside a word; and a line start that would open a block
        /// (`# `, `>`, `- `, `+ `, `1. `, `|`, a line of `=` or `-`) made plain by escaping its
        /// punctuation.
        static func escape(_ text: String) -> String {
            var out = ""
            let characters = Array(text)
            for (i, c) in characters.enumerated() {
                let inWord = i > 0 && i + 1 < characters.count && characters[i - 1].isLetterOrDigit && characters[i + 1].isLetterOrDigit
                if "\\`*<".contains(c) || (c == "_" && !inWord) { out.append("\\") }
                out.append(c)
            }
            let digits = out.prefix(while: \.isNumber)
            let afterDigits = out.dropFirst(digits.count)
            let marker = out.prefix { !$0.isWhitespace }
            if !digits.isEmpty, let p = afterDigits.first, ".)".contains(p), afterDigits.dropFirst().first?.isWhitespace ?? true {
                out.insert("\\", at: out.index(out.startIndex, offsetBy: digits.count))
            } else if let first = out.first,
                      first == ">" || first == "|" || (("-+".contains(first) && (marker.count == 1 || out.allSatisfy { $0 == first })))
                          || (first == "#" && marker.allSatisfy { $0 == "#" }) || (first == "=" && out.allSatisfy { $0 == "=" }) {
                out = "\\" + out
            }
            return out
        }

        /// Text for a table cell: escaped, with `|` escaped too.
        static func cell(_ text: String) -> String { escape(text).replacingOccurrences(of: "|", with: "\\|") }

        /// Blocks as paragraphs (lines kept) and fenced text blocks, `indent` before each line.
        static func blocks(_ blocks: [TextBlock], indent: String = "") -> String {
            blocks.map { block in
                switch block {
                case .prose(let lines): return lines.map { indent + escape($0) + "\n" }.joined()
                case .literal(let lines):
                    return indent + "```text\n" + lines.map { (indent + $0).trimmingTrailingSpaces + "\n" }.joined() + indent + "```\n"
                }
            }.joined(separator: "\n") + "\n"
        }

        /// A list item: `--name VALUE` (required, repeatable), the help, its range and default,
        /// the choices the placeholder does not show.
        static func option(_ entry: OptionEntry) -> String {
            var head = "- " + entry.names.map { "`\($0)" + (entry.valueName.map { " " + $0 } ?? "") + "`" }.joined(separator: ", ")
            let marks = [entry.isRequired ? "required" : nil, entry.isRepeatable ? "repeatable" : nil].compactMap { $0 }
            if !marks.isEmpty { head += " (" + marks.joined(separator: ", ") + ")" }
            var extra: [String] = []
            if let notes = entry.notes { extra.append(escape(notes)) }
            if let choices = entry.unlistedChoices { extra.append("one of " + choices.map { "`\($0)`" }.joined(separator: ", ")) }
            let tail = extra.joined(separator: "; ")
            var blocks = CLIReference.blocks(entry.help)
            guard case .prose(let first)? = blocks.first else { return head + (tail.isEmpty ? "" : ": " + tail) + "\n" }
            blocks.removeFirst()
            // The first paragraph follows the names; the range, default and choices end the item's prose.
            var lines = first.map(escape)
            if blocks.isEmpty, !tail.isEmpty { lines[lines.count - 1] += " " + tail }
            var out = head + ": " + lines.joined(separator: "\n  ") + "\n"
            if !blocks.isEmpty {
                out += "\n" + Self.blocks(blocks, indent: "  ")
                if !tail.isEmpty { out += "  " + tail + "\n" }
            }
            return out
        }
    }
}

extension CommandSyntax {
    /// The usage forms as `--help` shows them, each on one line: the hand-written ones, or the
    /// generated one (which help wraps; joined here).
    var usageForms: [String] {
        if let synopsis { return synopsis }
        let usage = help.components(separatedBy: "\n\n")[0]
        return [usage.dropFirst("USAGE: ".count).split(whereSeparator: \.isWhitespace).joined(separator: " ")]
    }
}

extension OptionDeclaration {
    /// What the option's value is: a flag's none, its choices, else what its placeholder names.
    var valueKind: CLIReference.ValueKind {
        guard takesValue else { return .flag }
        if let choices { return .choices(choices) }
        return CLIReference.ValueKind(placeholder: valueName ?? "")
    }
}

extension Character {
    /// Whether it is a letter or a digit (of any script): what an underscore between two of them
    /// sits inside a word for Markdown.
    fileprivate var isLetterOrDigit: Bool { isLetter || isNumber }
}

extension String {
    /// The string without spaces at its end.
    fileprivate var trimmingTrailingSpaces: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
