import AHAP
import Foundation

/// Converts between Core Haptics' pattern dictionaries (`[CHHapticPattern.Key: Any]`, nested
/// dictionaries and arrays of Swift or Foundation values) and the JSON values HapSync's reader reads.
enum PatternDictionary {
    /// The JSON value of a dictionary value; throws `.invalidPatternDictionary` naming the key path
    /// of a value that is not one (`Pattern[0].Event.Time: a Date is not a number, string, ...`).
    static func json(_ value: Any, path: String) throws -> JSONValue {
        switch value {
        case let s as String: return .string(s)
        case let b as Bool: return .bool(b)
        case let t as CHHapticEvent.EventType: return .string(t.rawValue)
        case let p as CHHapticEvent.ParameterID: return .string(p.rawValue)
        case let p as CHHapticDynamicParameter.ID: return .string(p.rawValue)
        case let k as CHHapticPattern.Key: return .string(k.rawValue)
        case let i as Int: return .integer(i)
        case let f as Float: return .number(Double("\(f)") ?? Double(f))
        case let d as Double: return .number(d)
        case let n as NSNumber: return .number(n.doubleValue)
        case let a as [Any]:
            return .array(try a.enumerated().map { try json($0.element, path: "\(path)[\($0.offset)]") })
        case let d as [CHHapticPattern.Key: Any]:
            return try object(d.map { ($0.key.rawValue, $0.value) }, path: path)
        case let d as [String: Any]:
            return try object(d.map { ($0.key, $0.value) }, path: path)
        case let d as [AnyHashable: Any]:
            var members: [(String, Any)] = []
            for (k, v) in d {
                if let s = k.base as? String { members.append((s, v)) } else if let key = k.base as? CHHapticPattern.Key {
                    members.append((key.rawValue, v))
                } else {
                    throw CHHapticError(.invalidPatternDictionary, "\(location(path)): the key \(k) is not a string or CHHapticPattern.Key")
                }
            }
            return try object(members, path: path)
        default:
            throw CHHapticError(.invalidPatternDictionary,
                                "\(location(path)): a \(type(of: value)) is not a string, number, Boolean, array or dictionary")
        }
    }

    private static func object(_ members: [(String, Any)], path: String) throws -> JSONValue {
        // Sorted: a Swift dictionary has no order, and the same dictionary should read the same way.
        .object(try members.sorted { $0.0 < $1.0 }.map { ($0.0, try json($0.1, path: path.isEmpty ? $0.0 : "\(path).\($0.0)")) })
    }

    private static func location(_ path: String) -> String { path.isEmpty ? "(root)" : path }

    /// A JSON value as a dictionary value: objects as `[String: Any]`, numbers as `Double`.
    static func value(_ json: JSONValue) -> Any {
        switch json.kind {
        case .object(let members):
            var out: [String: Any] = [:]
            for m in members { out[m.key] = value(m.value) }
            return out
        case .array(let items): return items.map(value)
        case .string(let s): return s
        case .number(let n): return n.value
        case .bool(let b): return b
        case .null: return NSNull()
        }
    }
}
