/// A JSON value as read from an AHAP file or built in code, with where it stood in the source.
///
/// Objects keep their members in source order (AHAP `Metadata` is kept as given), and numbers keep
/// the literal text they were written with. Source offsets are informational and are not part of
/// equality: two values are equal when their content is.
public struct JSONValue: Sendable, Equatable {
    /// The content of a JSON value.
    public enum Kind: Sendable, Equatable {
        /// An object, members in source order.
        case object([JSONMember])
        /// An array.
        case array([JSONValue])
        /// A string.
        case string(String)
        /// A number.
        case number(JSONNumber)
        /// `true` or `false`.
        case bool(Bool)
        /// `null`.
        case null
    }

    /// The content.
    public var kind: Kind
    /// Byte offset of the value's first character in the source, or nil for values built in code.
    public var offset: Int?

    /// Makes a value with an optional source offset.
    public init(_ kind: Kind, offset: Int? = nil) {
        self.kind = kind
        self.offset = offset
    }

    /// Equality on content only; offsets are ignored.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.kind == rhs.kind }

    /// A short name of the value's type for error messages ("a string", "an array", ...).
    public var typeDescription: String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }

    /// The members if this is an object.
    public var objectMembers: [JSONMember]? {
        if case .object(let members) = kind { return members }
        return nil
    }

    /// Convenience: a string value built in code.
    public static func string(_ s: String) -> JSONValue { JSONValue(.string(s)) }
    /// Convenience: a number value built in code (written canonically).
    public static func number(_ d: Double) -> JSONValue { JSONValue(.number(JSONNumber(d))) }
    /// Convenience: an integer value built in code (written without a fraction).
    public static func integer(_ i: Int) -> JSONValue { JSONValue(.number(JSONNumber(Double(i), literal: String(i)))) }
    /// Convenience: a boolean value built in code.
    public static func bool(_ b: Bool) -> JSONValue { JSONValue(.bool(b)) }
    /// Convenience: an array value built in code.
    public static func array(_ a: [JSONValue]) -> JSONValue { JSONValue(.array(a)) }
    /// Convenience: an object value built in code, members in the given order.
    public static func object(_ m: [(String, JSONValue)]) -> JSONValue {
        JSONValue(.object(m.map { JSONMember(key: $0.0, value: $0.1) }))
    }
}

/// One `"key": value` member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    /// The member's name, unescaped (duplicates are kept in order; the reader reports them).
    public var key: String
    /// The member's value, with the offset it was read at.
    public var value: JSONValue
    /// Byte offset of the key in the source, or nil for members built in code.
    public var keyOffset: Int?

    /// Makes a member.
    public init(key: String, value: JSONValue, keyOffset: Int? = nil) {
        self.key = key
        self.value = value
        self.keyOffset = keyOffset
    }

    /// Equality on key and value; offsets are ignored.
    public static func == (lhs: JSONMember, rhs: JSONMember) -> Bool {
        lhs.key == rhs.key && lhs.value == rhs.value
    }
}

/// A JSON number: its value, and the literal it was written as (nil when built in code).
public struct JSONNumber: Sendable, Equatable {
    /// The numeric value (may be infinite when the literal overflows a Double).
    public var value: Double
    /// The literal as written in the source, kept so metadata round-trips exactly.
    public var literal: String?

    /// Makes a number, optionally with its source literal.
    public init(_ value: Double, literal: String? = nil) {
        self.value = value
        self.literal = literal
    }

    /// Equality on value only.
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool { lhs.value == rhs.value }
}
