/// What a command accepts: its options (declared once, in groups), its positional arguments and
/// its help text. Parses in swift-argument-parser's conventions: kebab-case long options,
/// `--opt value` and `--opt=value`, `-h/--help` anywhere, `--` ends options, `-` is positional.
///
/// Every problem is a usage error (exit status 64) naming the option and, for a bad value, the
/// value and what is accepted, with the hint to see the command's help.
public struct CommandSyntax: Sendable {
    /// The command as typed, e.g. `hapsync play`.
    public let command: String
    /// The description under the usage lines.
    public let about: String
    /// The options, in help order; the first group's heading is `OPTIONS`.
    public let groups: [OptionGroup]
    /// The arguments that are not options.
    public let positionals: Positionals
    /// Usage lines written by hand, for a command with several forms; nil: generated.
    public let synopsis: [String]?
    /// Text after the options (exit statuses, notes).
    public let footer: String?

    /// Makes a syntax.
    public init(command: String, about: String, groups: [OptionGroup], positionals: Positionals,
                synopsis: [String]? = nil, footer: String? = nil) {
        self.command = command
        self.about = about
        self.groups = groups
        self.positionals = positionals
        self.synopsis = synopsis
        self.footer = footer
    }

    /// The last word of the command (`play`), as messages name it.
    var shortName: String { command.split(separator: " ").last.map(String.init) ?? command }

    private var options: [OptionDeclaration] { groups.flatMap(\.options) }

    /// A usage error with the hint to see this command's help.
    public func usageError(_ message: String) -> CLIError { .usage(message, hint: "see '\(command) --help'") }

    // MARK: - Parsing

    /// Parses `args` (after the command name). Throws a usage error, or `CLIError.help` when
    /// `-h`/`--help` is among the options.
    public func parse(_ args: [String]) throws(CLIError) -> ParsedArguments {
        var raw: [(option: OptionDeclaration, text: String?)] = []
        var positional: [String] = []
        var wantsHelp = false
        var i = 0
        var onlyPositional = false
        while i < args.count {
            let arg = args[i]
            i += 1
            if onlyPositional || !arg.hasPrefix("-") || arg == "-" {
                positional.append(arg)
                continue
            }
            if arg == "--" { onlyPositional = true; continue }
            if arg == "-h" || arg == "--help" { wantsHelp = true; continue }
            guard arg.hasPrefix("--") else { throw usageError("unknown option '\(arg)' for '\(command)'") }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw usageError("unknown option '--\(name)' for '\(command)'")
            }
            if !option.isRepeatable, raw.contains(where: { $0.option.name == name }) {
                throw usageError("option '--\(name)' given more than once")
            }
            if option.takesValue {
                if let inlineValue {
                    raw.append((option, inlineValue))
                } else {
                    guard i < args.count else { throw usageError("option '--\(name)' needs a value") }
                    raw.append((option, args[i]))
                    i += 1
                }
            } else {
                guard inlineValue == nil else { throw usageError("option '--\(name)' takes no value") }
                raw.append((option, nil))
            }
        }
        if wantsHelp { throw .help(help) }

        var values: [String: [any Sendable]] = [:]
        var given: [String] = []
        for (option, text) in raw {
            if values[option.name] == nil { given.append(option.name) }
            guard let text, let convert = option.convert else {
                values[option.name, default: []].append(true)
                continue
            }
            guard let value = convert(text) else { throw usageError("--\(option.name) must be \(option.expectation), not '\(text)'") }
            values[option.name, default: []].append(value)
        }
        let missing = options.filter { $0.isRequired && values[$0.name] == nil }
        if !missing.isEmpty {
            throw usageError("\(shortName) needs " + missing.map(\.synopsis).joined(separator: " and "))
        }
        try check(positional)
        return ParsedArguments(positional: positional, values: values, given: given)
    }

    private func check(_ positional: [String]) throws(CLIError) {
        switch positionals {
        case .none:
            if let first = positional.first { throw usageError("\(shortName) takes no arguments (got '\(first)')") }
        case .one(let name):
            if positional.isEmpty { throw usageError("\(shortName) needs a \(name)") }
            if positional.count > 1 { throw usageError("\(shortName) takes one \(name) (got \(positional.count))") }
        case .optional(let name):
            if positional.count > 1 { throw usageError("\(shortName) takes one \(name) (got \(positional.count))") }
        case .oneOrMore(let name):
            if positional.isEmpty { throw usageError("\(shortName) needs at least one \(name)") }
        case .any:
            break
        }
    }

    // MARK: - Help

    /// The help text: usage, description, each group of options with its range and default, footer.
    public var help: String {
        var out = usageLines.joined(separator: "\n") + "\n\n" + about + "\n"
        let helpOption = (synopsis: "-h, --help", help: "show this help", notes: String?.none)
        let lines = groups.map { $0.options.map { (synopsis: $0.synopsis, help: $0.help, notes: $0.helpNotes) } }
        let column = min(26, (lines.flatMap { $0 }.map(\.synopsis.count) + [helpOption.synopsis.count]).max()! + 4)
        for (g, group) in groups.enumerated() {
            out += "\n" + (group.title ?? "OPTIONS") + ":\n"
            for line in lines[g] + (g == 0 ? [helpOption] : []) {
                out += Self.optionLine(line.synopsis, line.help, notes: line.notes, column: column)
            }
        }
        if let footer { out += "\n" + footer + "\n" }
        return out
    }

    private var usageLines: [String] {
        if let synopsis {
            return synopsis.enumerated().map { ($0.offset == 0 ? "USAGE: " : "       ") + $0.element }
        }
        var words = options.map { o in
            o.isRequired ? o.synopsis : "[" + o.synopsis + "]" + (o.isRepeatable ? "..." : "")
        }
        switch positionals {
        case .none: break
        case .one(let name): words.append(name)
        case .optional(let name): words.append("[\(name)]")
        case .oneOrMore(let name): words.append("\(name)...")
        case .any(let name): words.append("[\(name)...]")
        }
        let first = "USAGE: \(command)"
        return Self.wrap(words, first: first, indent: first.count + 1, width: 110)
    }

    /// `  --name VALUE   help (notes)`, the help in a column (starting on the next line when the
    /// name is long); the notes (range, default) are never split.
    private static func optionLine(_ synopsis: String, _ help: String, notes: String?, column: Int) -> String {
        let head = "  " + synopsis
        // Help written on several lines is laid out by hand (aligned lists); one line is wrapped.
        var text = help.contains("\n") ? help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                                        : wrap(help.split(separator: " ").map(String.init), first: "", indent: 0, width: 96 - column)
        if let notes {
            let last = text.removeLast()
            text += wrap([last, notes], first: "", indent: 0, width: 96 - column)
        }
        let pad = String(repeating: " ", count: column)
        var out = head.count + 2 <= column ? head.padding(toLength: column, withPad: " ", startingAt: 0) + text[0] + "\n"
                                           : head + "\n" + pad + text[0] + "\n"
        for line in text.dropFirst() { out += pad + line + "\n" }
        return out
    }

    /// Words joined into lines of at most `width` characters; lines after the first start with `indent` spaces.
    private static func wrap(_ words: [String], first: String, indent: Int, width: Int) -> [String] {
        var lines: [String] = []
        var line = first
        for word in words {
            let fresh = line.isEmpty || line == String(repeating: " ", count: indent)
            if !fresh, line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent) + word
            } else {
                line += (fresh ? "" : " ") + word
            }
        }
        return lines + [line]
    }
}

/// Options under one heading in help.
public struct OptionGroup: Sendable {
    /// The heading; nil for `OPTIONS`.
    public let title: String?
    /// The options, in help order.
    public let options: [OptionDeclaration]

    /// Makes a group of options under a heading (nil: `OPTIONS`).
    public init(_ title: String?, _ options: [any AnyOption]) {
        self.title = title
        self.options = options.map(\.declaration)
    }

    /// Makes a group of options under `OPTIONS`.
    public init(_ options: [any AnyOption]) { self.init(nil, options) }
}

/// The arguments of a command that are not options; the name is their placeholder (`FILE`).
public enum Positionals: Sendable {
    /// The command takes no arguments besides its options.
    case none
    /// Exactly one.
    case one(String)
    /// One or none.
    case optional(String)
    /// At least one.
    case oneOrMore(String)
    /// Any number.
    case any(String)
}
