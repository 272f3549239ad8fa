/// A command line parsed against a `CommandSyntax`: every value already converted and checked.
public struct ParsedArguments: Sendable {
    /// The arguments that are not options, in order.
    public let positional: [String]
    /// Converted values by option name, in the order given (a flag holds one `true` per use).
    let values: [String: [any Sendable]]
    /// The options given, by name, in the order first given.
    public let given: [String]

    /// The option's value: what was given, else its default (nil, false or empty when it has none).
    public subscript<Value>(option: Option<Value>) -> Value {
        option.read(values[option.declaration.name] ?? [])
    }

    /// Whether the option was given on the command line.
    public func isGiven(_ option: any AnyOption) -> Bool { values[option.declaration.name] != nil }
}
