import Foundation

/// The manual page hapsync(1) in man(7) macros, generated from the command table: NAME, SYNOPSIS,
/// DESCRIPTION, OPTIONS, COMMANDS (each command's usage forms, about text, options with their
/// placeholders, help, ranges, defaults and choices, and its notes), EXIT STATUS, ENVIRONMENT,
/// FILES and SEE ALSO. `hapsync install` writes it to DIR/share/man/man1/hapsync.1.
///
/// Text is escaped for roff: a backslash as `\e`; every hyphen as `\-`, so options copy from the
/// page as typed; apostrophes and backquotes as `\(aq` and `\(ga`; characters beyond ASCII as
/// `\[uXXXX]`, which groff and mandoc read whatever encoding they assume; and a line that would
/// start with a dot gets `\&` first, so it is never read as a request.
enum ManualPage {
    /// The page's file name, in section 1.
    static let fileName = "hapsync.1"

    /// The page. `prefix` is where `hapsync install` put the files FILES lists (nil: written as
    /// PREFIX); `date` is the page's date for its title line (`2025-01-31`).
    static func roff(commands: [Command] = HapSyncCLI.commands, prefix: String? = nil, date: String) -> String {
        var out = ".\\\" hapsync(1), generated from hapsync's command table (Sources/HapSyncCLI) by ManualPage.roff; do not edit.\n"
        // The date unescaped: mandoc reads YYYY-MM-DD only as it is written.
        out += ".TH HAPSYNC 1 \(date) \(quoted("hapsync " + HapSyncCLI.version)) \"User Commands\"\n"
        // No hyphenation and no justification: an option or variable name is never split, and a
        // long one leaves no wide gaps (HY: groff's man macros set hyphenation again from it at
        // each paragraph).
        out += ".nr HY 0\n.nh\n.ad l\n"
        out += ".SH NAME\nhapsync \\- \(escape(CLIReference.tagline))\n"
        out += ".SH SYNOPSIS\n"
        out += "\\fBhapsync\\fR \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]\n.br\n"
        out += "\\fBhapsync\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR\n.br\n"
        out += "\\fBhapsync \\-\\-help\\fR | \\fB\\-\\-version\\fR\n"
        out += ".SH DESCRIPTION\n" + blocks(CLIReference.blocks(CLIReference.description)).dropFirst(".PP\n".count)
        out += ".PP\nThe commands:\n"
        for command in commands {
            out += ".TP\n\\fB\(escape(command.name))\\fR\n" + fill(escape(command.summary))
        }
        out += ".SH OPTIONS\n"
        out += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow help (also after a command: \\fBhapsync validate \\-\\-help\\fR)\n"
        out += ".TP\n\\fB\\-\\-version\\fR\nprint the version\n"
        out += ".SH COMMANDS\n"
        for command in commands { out += section(command) }
        out += ".SH \"EXIT STATUS\"\n"
        for status in CLIReference.exitStatuses { out += ".TP\n.B \(quoted(status.status))\n" + fill(escape(status.meaning)) }
        out += ".SH ENVIRONMENT\n"
        for variable in CLIReference.environment {
            out += ".TP\n\\fB\(escape(variable.name))\\fR=\\fI\(escape(variable.value))\\fR\n" + fill(escape(variable.meaning))
        }
        out += ".PP\n" + fill(escape(CLIReference.otherEnvironment))
        let root = prefix.map(escape) ?? "\\fIPREFIX\\fR"
        let pkgconfig = prefix.map { escape(ShellCompletions.shellQuoted($0 + "/lib/pkgconfig")) } ?? "\\fIPREFIX\\fR/lib/pkgconfig"
        out += ".SH FILES\n"
        let files: [(String, String)] = [
            ("bin/hapsync", "this program"),
            ("lib/libhapsync.so", "HapSync's C API, and the Swift runtime libraries it and hapsync need, beside it"),
            ("include/hapsync.h", "the C API's header (and include/hapsync.hpp, its C++ wrapper)"),
            ("lib/pkgconfig/hapsync.pc",
             "for pkg\\-config: \\fBcc game.c $(PKG_CONFIG_PATH=\(pkgconfig) pkg\\-config \\-\\-cflags \\-\\-libs hapsync) \\-o game\\fR"),
        ]
        for (path, meaning) in files { out += ".TP\n\(root)/\(escape(path))\n" + fill(meaning) }
        if prefix == nil { out += ".PP\n\\fIPREFIX\\fR is the folder given to \\fBhapsync install \\-\\-prefix\\fR.\n" }
        out += ".SH \"SEE ALSO\"\n\\fBpkg\\-config\\fR(1), \\fBman\\fR(1); \(escape(CLIReference.markdownPath)) in HapSync's source tree, "
            + "this reference in Markdown.\n"
        return out
    }

    /// One command: its usage forms, about text, option groups and notes.
    private static func section(_ command: Command) -> String {
        var out = ".SS \(quoted("hapsync " + command.name))\n"
        out += command.syntax.usageForms.map { fill(synopsis($0)) }.joined(separator: ".br\n")
        out += blocks(CLIReference.blocks(command.syntax.about))
        for group in CLIReference.optionGroups(command) {
            out += ".PP\n\\fB\(escape(CLIReference.heading(group.title))):\\fR\n"
            for entry in group.entries { out += option(entry) }
        }
        if let footer = command.syntax.footer { out += blocks(CLIReference.blocks(footer)) }
        return out
    }

    /// An option as a tagged paragraph: its names and placeholder in the tag, then its help, its
    /// range and default, and its choices when the placeholder does not show them.
    private static func option(_ entry: CLIReference.OptionEntry) -> String {
        let value = entry.valueName.map { " \\fI" + escape($0) + "\\fR" } ?? ""
        var tag = entry.names.map { "\\fB" + escape($0) + "\\fR" + value }.joined(separator: ", ")
        let marks = [entry.isRequired ? "required" : nil, entry.isRepeatable ? "repeatable" : nil].compactMap { $0 }
        if !marks.isEmpty { tag += " (" + marks.joined(separator: ", ") + ")" }
        var extra: [String] = []
        if let notes = entry.notes { extra.append(escape(notes)) }
        if let choices = entry.unlistedChoices { extra.append("one of " + choices.map { "\\fB" + escape($0) + "\\fR" }.joined(separator: ", ")) }
        var out = ".TP\n" + tag + "\n"
        let helpBlocks = CLIReference.blocks(entry.help)
        for (i, block) in helpBlocks.enumerated() {
            switch block {
            case .prose(let lines):
                if i > 0 { out += ".IP\n" }
                let last = i == helpBlocks.count - 1 && !extra.isEmpty
                out += fill(escape(lines.joined(separator: " ")) + (last ? " " + extra.joined(separator: "; ") : ""))
            case .literal(let lines):
                // Indented within the tagged paragraph: .RS to its indent, then 4 more.
                out += ".RS\n.RS 4\n.PP\n.nf\n" + lines.map { escape($0) + "\n" }.joined() + ".fi\n.RE\n.RE\n"
            }
        }
        if !extra.isEmpty, helpBlocks.last.map({ if case .literal = $0 { true } else { false } }) ?? true {
            out += (helpBlocks.isEmpty ? "" : ".IP\n") + fill(extra.joined(separator: "; "))
        }
        return out
    }

    /// Blocks of text as paragraphs: prose filled, hand-laid lines indented and kept as they are.
    private static func blocks(_ blocks: [CLIReference.TextBlock]) -> String {
        blocks.map { block in
            switch block {
            case .prose(let lines): return ".PP\n" + fill(escape(lines.joined(separator: " ")))
            case .literal(let lines): return ".PP\n.RS\n.nf\n" + lines.map { escape($0) + "\n" }.joined() + ".fi\n.RE\n"
            }
        }.joined()
    }

    /// Escaped text as lines of at most 80 bytes (roff fills them again), broken at spaces; a line
    /// that would start with a dot gets `\&` first.
    static func fill(_ text: String) -> String {
        var out = "", line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.utf8.count + 1 + word.utf8.count > 80 {
                out += line + "\n"
                line = ""
            }
            line += (line.isEmpty ? (word.hasPrefix(".") ? "\\&" : "") : " ") + word
        }
        return out + line + "\n"
    }

    /// A usage form with the program and command in bold, options in bold and placeholders (words
    /// in capitals: `FILE`, `PATH.svg`, `+MS`) in italics; brackets, bars and the rest roman.
    static func synopsis(_ form: String) -> String {
        var out = ""
        var token = ""
        var position = 0
        func flush() {
            guard !token.isEmpty else { return }
            let head = token.prefix { $0 != "." }.filter(\.isLetter)
            if position < 2 || token.hasPrefix("-") {
                out += "\\fB" + escape(token) + "\\fR"
            } else if !head.isEmpty && head.allSatisfy(\.isUppercase) {
                out += "\\fI" + escape(token) + "\\fR"
            } else {
                out += escape(token)
            }
            position += 1
            token = ""
        }
        for c in form {
            if " []|".contains(c) {
                flush()
                out += escape(String(c))
            } else {
                token.append(c)
            }
        }
        flush()
        return out
    }

    /// `text` escaped for a roff text line or a macro's argument (the rules in the type's summary).
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "'": out += "\\(aq"
            case "`": out += "\\(ga"
            case _ where !scalar.isASCII: out += "\\[u" + hex(scalar.value) + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out.hasPrefix(".") ? "\\&" + out : out
    }

    /// A macro argument in double quotes (a double quote inside is written `\(dq`).
    private static func quoted(_ text: String) -> String {
        "\"" + escape(text).replacingOccurrences(of: "\"", with: "\\(dq") + "\""
    }

    /// A code point as groff's `\[uXXXX]` wants it: upper-case hex, at least four digits.
    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// A date for the title line, `YYYY-MM-DD` in UTC, from seconds since 1970 (locale-independent).
    static func date(secondsSince1970 seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let pad = { (n: Int32, width: Int) in
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2)
    }
}
