/// An option declared once, with its help line, value type, range and default: parsing,
/// validation and help all read this declaration (swift-argument-parser's model, without macros).
///
/// `Value` is what a command reads back from `ParsedArguments`: `Bool` for a flag, the value
/// itself for an option with a default or a required one, an optional for one without a default,
/// an array for a repeatable one.
///
/// ```swift
/// static let latency = Option<Double>("latency-ms", "N", .decimal("milliseconds", .from(1, to: 2000)), default: 20,
///                                     help: "target latency of the audio stream")
/// ```
public struct Option<Value: Sendable>: AnyOption {
    /// What parsing and help read.
    public let declaration: OptionDeclaration
    let read: @Sendable ([any Sendable]) -> Value

    /// A flag: `--name`, no value.
    public init(flag name: String, help: String) where Value == Bool {
        declaration = OptionDeclaration(name: name, help: help)
        read = { !$0.isEmpty }
    }

    /// An option with one value and a default (shown in help).
    public init(_ name: String, _ valueName: String? = nil, _ parser: ValueParser<Value>, default value: Value, help: String) {
        declaration = OptionDeclaration(name: name, help: help, parser: parser, valueName: valueName, defaultText: parser.show(value))
        read = { $0.last as? Value ?? value }
    }

    /// An option with one value that the command must be given.
    public init(required name: String, _ valueName: String? = nil, _ parser: ValueParser<Value>, help: String) {
        declaration = OptionDeclaration(name: name, help: help, parser: parser, valueName: valueName, isRequired: true)
        read = { values in
            guard let value = values.last as? Value else { preconditionFailure("--\(name) is required; parsing checks that it was given") }
            return value
        }
    }

    /// An option with one value or none (nil).
    public init<Wrapped>(_ name: String, _ valueName: String? = nil, _ parser: ValueParser<Wrapped>, help: String) where Value == Wrapped? {
        declaration = OptionDeclaration(name: name, help: help, parser: parser, valueName: valueName)
        read = { $0.last as? Wrapped }
    }

    /// An option that may be given several times; its values in order.
    public init<Element>(repeatable name: String, _ valueName: String? = nil, _ parser: ValueParser<Element>, help: String) where Value == [Element] {
        declaration = OptionDeclaration(name: name, help: help, parser: parser, valueName: valueName, isRepeatable: true)
        read = { $0.compactMap { $0 as? Element } }
    }
}

/// Any option, whatever its value type: what option groups hold.
public protocol AnyOption: Sendable {
    /// What parsing and help read.
    var declaration: OptionDeclaration { get }
}

/// An option's declaration without its value type: name, help, placeholder, range, default and
/// how its text is checked and converted.
public struct OptionDeclaration: Sendable {
    /// The long name without dashes, kebab-case (`latency-ms`).
    public let name: String
    /// What it does, for the help line (the range and default are added to it).
    public let help: String
    /// The value's placeholder in help (`N`, `PATH`); nil for a flag.
    public let valueName: String?
    /// The default as help shows it, if there is one.
    public let defaultText: String?
    /// Whether the command must be given it.
    public let isRequired: Bool
    /// Whether it may be given more than once.
    public let isRepeatable: Bool
    /// What a bad value is told it should be.
    let expectation: String
    /// The accepted range, for help.
    let rangeText: String?
    /// The words it accepts when they are a fixed set (its parser's), for completions and the
    /// reference; nil for a flag and any other value.
    let choices: [String]?
    /// Its text to its value, nil when not accepted; nil for a flag.
    let convert: (@Sendable (String) -> (any Sendable)?)?

    init(name: String, help: String) {
        self.name = name
        self.help = help
        valueName = nil
        defaultText = nil
        isRequired = false
        isRepeatable = false
        expectation = ""
        rangeText = nil
        choices = nil
        convert = nil
    }

    init<T>(name: String, help: String, parser: ValueParser<T>, valueName: String?, defaultText: String? = nil,
            isRequired: Bool = false, isRepeatable: Bool = false) {
        self.name = name
        self.help = help
        self.valueName = valueName ?? parser.placeholder ?? "VALUE"
        self.defaultText = defaultText
        self.isRequired = isRequired
        self.isRepeatable = isRepeatable
        expectation = parser.expectation
        choices = parser.choices
        rangeText = parser.rangeText
        convert = { parser.convert($0) }
    }

    /// Whether it takes a value (`--name VALUE`) or is a flag.
    public var takesValue: Bool { convert != nil }

    /// `--name VALUE`, or `--name` for a flag.
    public var synopsis: String { "--" + name + (valueName.map { " " + $0 } ?? "") }

    /// The range and default as help shows them after the text: "(1 to 2000; default 20)".
    var helpNotes: String? {
        let notes = [rangeText, defaultText.map { "default \($0)" }].compactMap { $0 }
        return notes.isEmpty ? nil : "(" + notes.joined(separator: "; ") + ")"
    }
}
