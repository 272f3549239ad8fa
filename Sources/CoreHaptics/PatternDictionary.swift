import Foundation
import HapSyncAHAP

/// Converts between Core Haptics' pattern dictionaries (`[CHHapticPattern.Key: Any]`, nested
/// dictionaries and arrays of Swift or Foundation values) and the JSON values HapSync's reader
/// reads: AHAP's `PropertyListConverter`, with Core Haptics' own types read as the strings they
/// stand for, and its failures as `CHHapticError`.
enum PatternDictionary {
    /// The converter, with the reader's limits (`AHAPLimits.default`).
    static let converter = PropertyListConverter(limits: .default) { value in
        switch value {
        case let t as CHHapticEvent.EventType: return t.rawValue
        case let p as CHHapticEvent.ParameterID: return p.rawValue
        case let p as CHHapticDynamicParameter.ID: return p.rawValue
        case let k as CHHapticPattern.Key: return k.rawValue
        default: return nil
        }
    }

    /// The JSON value of a pattern dictionary; throws `.invalidPatternDictionary` naming the key
    /// path of a value that is not one (`Pattern[0].Event.Time: a Date is not a number, ...`), or
    /// of one nested deeper than the reader's limit, or that contains itself.
    static func json(_ dictionary: [CHHapticPattern.Key: Any]) throws(CHHapticError) -> JSONValue {
        do {
            return try converter.json(dictionary)
        } catch {
            throw CHHapticError(.invalidPatternDictionary, error.description)
        }
    }

    /// A JSON value as a dictionary value: objects as `[String: Any]`, numbers as `Double`.
    static func value(_ json: JSONValue) -> Any { PropertyListConverter.propertyList(json) }
}
