import CLo

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

    /// The `count` arguments liblo decoded (`types`, its type tags; `argv`, its argument
    /// pointers), for the service's handler and any client reading replies. T and F carry no data
    /// (liblo gives no pointer for them, nor for N and I). Each value is read at its own size:
    /// liblo packs the arguments end to end in a buffer of exactly their sizes, and reading a
    /// 4-byte `i` or `f` as the 8-byte `lo_arg` union read past the end of that buffer when it came
    /// last (issue 26, found by the `osc` fuzz target). Unknown tags become `.other`.
    public static func arguments(types: UnsafePointer<CChar>, argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?, count: Int) -> [OSCValue] {
        var args: [OSCValue] = []
        args.reserveCapacity(max(count, 0))
        for k in 0..<max(count, 0) {
            let tag = UInt8(bitPattern: types[k])
            if tag == UInt8(ascii: "T") || tag == UInt8(ascii: "F") {
                args.append(.bool(tag == UInt8(ascii: "T")))
                continue
            }
            guard let arg = argv?[k] else { args.append(.other(Character(UnicodeScalar(tag)))); continue }
            let raw = UnsafeRawPointer(arg)
            switch tag {
            case UInt8(ascii: "i"): args.append(.int(Int64(raw.loadUnaligned(as: Int32.self))))
            case UInt8(ascii: "h"): args.append(.int(raw.loadUnaligned(as: Int64.self)))
            case UInt8(ascii: "f"): args.append(.float(Double(raw.loadUnaligned(as: Float.self))))
            case UInt8(ascii: "d"): args.append(.float(raw.loadUnaligned(as: Double.self)))
            case UInt8(ascii: "s"), UInt8(ascii: "S"): args.append(.string(String(cString: raw.assumingMemoryBound(to: CChar.self))))
            default: args.append(.other(Character(UnicodeScalar(tag))))
            }
        }
        return args
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
