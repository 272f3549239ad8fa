import Foundation

/// How an option's value is read from its text, and what it accepts: the one place a value's
/// type and range are stated. Parsing, the error for a bad value ("--latency-ms must be a number
/// of milliseconds from 1 to 2000, not '0'") and the range shown in help all come from it.
public struct ValueParser<Value: Sendable>: Sendable {
    /// What is accepted, as the error for a bad value says it ("a number from 0 to 1").
    public let expectation: String
    /// The accepted range for the option's help line ("from 1 to 2000"), if there is one.
    public let rangeText: String?
    /// The value's placeholder when the option declares none ("jsonl|csv" for a choice).
    public let placeholder: String?
    /// The words it accepts when they are a fixed set (`jsonl`, `csv`), for completions and the
    /// reference; nil for any other value.
    public let choices: [String]?
    let convert: @Sendable (String) -> Value?
    let show: @Sendable (Value) -> String

    /// Makes a parser: `convert` returns nil for text it does not accept; `show` writes a default
    /// value for help.
    public init(expectation: String, rangeText: String? = nil, placeholder: String? = nil, choices: [String]? = nil,
                convert: @escaping @Sendable (String) -> Value?, show: @escaping @Sendable (Value) -> String) {
        self.expectation = expectation
        self.rangeText = rangeText
        self.placeholder = placeholder
        self.choices = choices
        self.convert = convert
        self.show = show
    }
}

extension ValueParser where Value == Double {
    /// A finite decimal number in `range`; `unit` ("milliseconds", "Hz") names what it counts.
    public static func decimal(_ unit: String? = nil, _ range: NumberRange) -> Self {
        // "a number of seconds from 0 to 1", "a number of seconds above 0", "a number, 0 or more".
        let separator = range.includesLower && range.upper == nil ? ", " : " "
        return ValueParser(expectation: "a number" + (unit.map { " of \($0)" } ?? "") + separator + range.description,
                           rangeText: range.description,
                           convert: { text in Double(text).flatMap { $0.isFinite && range.contains($0) ? $0 : nil } },
                           show: { number($0) })
    }
}

extension ValueParser where Value == Int {
    /// A whole number in `range`; `unit` ("pixels") names what it counts.
    public static func integer(_ unit: String? = nil, _ range: ClosedRange<Int>) -> Self {
        let accepted = "from \(range.lowerBound) to \(range.upperBound)"
        return ValueParser(expectation: "a whole number" + (unit.map { " of \($0)" } ?? "") + " " + accepted, rangeText: accepted,
                           convert: { text in Int(text).flatMap { range.contains($0) ? $0 : nil } },
                           show: { String($0) })
    }
}

extension ValueParser where Value == String {
    /// Any text (a path, a sink name).
    public static var text: Self { ValueParser(expectation: "text", convert: { $0 }, show: { $0 }) }
}

extension ValueParser where Value == URL {
    /// A folder that exists.
    public static var folder: Self {
        ValueParser(expectation: "an existing folder", convert: { text in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
            return URL(fileURLWithPath: text, isDirectory: true)
        }, show: { $0.path })
    }
}

extension ValueParser where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of an enumeration's raw values ("jsonl or csv").
    public static var choice: Self {
        let names = Value.allCases.map(\.rawValue)
        return ValueParser(expectation: listing(names), placeholder: names.joined(separator: "|"), choices: names,
                           convert: { Value(rawValue: $0) }, show: { $0.rawValue })
    }
}

extension ValueParser where Value == String {
    /// One of `names` ("dualsense, shaker or generic").
    public static func oneOf(_ names: [String]) -> Self {
        ValueParser(expectation: listing(names), choices: names, convert: { names.contains($0) ? $0 : nil }, show: { $0 })
    }
}

/// Words as a sentence lists them: "a or b", "a, b or c".
private func listing(_ names: [String]) -> String {
    guard let last = names.last else { return "" }
    return names.count <= 2 ? names.joined(separator: " or ") : names.dropLast().joined(separator: ", ") + " or " + last
}

/// A range of numbers with a closed or open lower end and an optional upper end, written out the
/// same way for errors and help: "from 1 to 2000", "above 0", "0 or more".
public struct NumberRange: Sendable {
    /// The lower end.
    public let lower: Double
    /// Whether the lower end itself is accepted.
    public let includesLower: Bool
    /// The upper end (always accepted), or nil for none.
    public let upper: Double?

    /// From `lower` to `upper`, both accepted.
    public static func from(_ lower: Double, to upper: Double) -> Self { NumberRange(lower: lower, includesLower: true, upper: upper) }
    /// `lower` or more.
    public static func atLeast(_ lower: Double) -> Self { NumberRange(lower: lower, includesLower: true, upper: nil) }
    /// More than `lower`, up to `upper` when given.
    public static func above(_ lower: Double, upTo upper: Double? = nil) -> Self { NumberRange(lower: lower, includesLower: false, upper: upper) }

    /// Whether `x` lies in the range.
    public func contains(_ x: Double) -> Bool {
        (includesLower ? x >= lower : x > lower) && upper.map { x <= $0 } ?? true
    }

    /// The range as errors and help say it.
    public var description: String {
        switch (includesLower, upper) {
        case (true, let upper?): return "from \(number(lower)) to \(number(upper))"
        case (true, nil): return "\(number(lower)) or more"
        case (false, let upper?): return "above \(number(lower)) and up to \(number(upper))"
        case (false, nil): return "above \(number(lower))"
        }
    }
}
