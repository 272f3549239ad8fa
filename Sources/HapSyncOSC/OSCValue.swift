/// One OSC argument as the service reads and writes it (decoded and encoded by liblo).
public enum OSCValue: Sendable, Equatable, CustomStringConvertible {
    /// `i` (int32) or `h` (int64).
    case int(Int64)
    /// `f` (float32) or `d` (float64).
    case float(Double)
    /// `s` or `S`.
    case string(String)
    /// `T` or `F`.
    case bool(Bool)
    /// Any other type tag, kept only to name it in an error.
    case other(Character)

    /// The argument as the tests and error messages show it: `i:3`, `f:0.5`, `s:"x"`.
    public var description: String {
        switch self {
        case .int(let v): return "i:\(v)"
        case .float(let v): return "f:\(v)"
        case .string(let v): return "s:\"\(v)\""
        case .bool(let v): return v ? "T" : "F"
        case .other(let c): return "\(c):?"
        }
    }

    /// What kind of value it is, for errors ("an int").
    var kind: String {
        switch self {
        case .int: return "an int"
        case .float: return "a float"
        case .string: return "a string"
        case .bool: return "a boolean"
        case .other(let c): return "type '\(c)'"
        }
    }
}
