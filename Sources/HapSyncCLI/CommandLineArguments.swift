/// A small argument parser in swift-argument-parser's conventions: `--opt value` and `--opt=value`,
/// `-h/--help`, `--` ends options, kebab-case long names.
struct CommandLineArguments {
    /// An option a command accepts.
    struct Option {
        var name: String
        var takesValue: Bool
        var repeatable: Bool = false
    }

    /// A usage error: exit status 64.
    struct UsageError: Error {
        var message: String
    }

    private(set) var flags: Set<String> = []
    private(set) var values: [String: [String]] = [:]
    private(set) var positional: [String] = []

    init(_ args: [String], options: [Option], command: String) throws(UsageError) {
        let all = options + [Option(name: "help", takesValue: false)]
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
            if arg == "-h" { flags.insert("help"); continue }
            guard arg.hasPrefix("--") else {
                throw UsageError(message: "unknown option '\(arg)' for '\(command)'")
            }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let option = all.first(where: { $0.name == name }) else {
                throw UsageError(message: "unknown option '--\(name)' for '\(command)'")
            }
            if option.takesValue {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard i < args.count else { throw UsageError(message: "option '--\(name)' needs a value") }
                    value = args[i]
                    i += 1
                }
                if values[name] != nil, !option.repeatable {
                    throw UsageError(message: "option '--\(name)' given more than once")
                }
                values[name, default: []].append(value)
            } else {
                guard inlineValue == nil else { throw UsageError(message: "option '--\(name)' takes no value") }
                flags.insert(name)
            }
        }
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }
    func all(_ name: String) -> [String] { values[name] ?? [] }
}
