import Foundation

/// Converts values shaped like a property list (strings, numbers, Booleans, `NSNull`, arrays and
/// dictionaries, Swift's or Foundation's, as Core Haptics' pattern dictionaries and
/// `JSONSerialization` hold them) into the `JSONValue`s the reader reads, and back.
///
/// A value is held to the bounds the reader puts on a file (`AHAPLimits`), checked while
/// converting, so that no value, however made, costs more than a file may:
/// - nesting: a value deeper than `maxNestingDepth` levels (the top level is level 0) is an
///   error, as in a file, and the conversion recurses no deeper than that: arrays nested 6,000
///   deep, or an `NSMutableArray` that contains itself, are an error, not a stack overflow;
/// - size: the value's AHAP text would be at least `maxFileBytes` long. Values share storage (an
///   array holding the same dictionary twice, 64 levels deep, is 2^64 values), so without this a
///   small value could convert into an unbounded one, or a 16 MB string shared by every event
///   be read 100,000 times.
///
/// Foundation's collections are read without bridging them to Swift's: on Linux, casting an
/// `NSArray` to `[Any]` (or reading one of its elements) bridges every array and dictionary in
/// it at once, recursively, which never ends for an array that contains itself.
public struct PropertyListConverter: Sendable {
    /// The bounds; `maxNestingDepth` and `maxFileBytes` apply.
    public var limits: AHAPLimits
    /// The string a value or key of the caller's own types stands for (Core Haptics passes its
    /// event types, parameter IDs and keys), or nil for anything else.
    public var stringValue: @Sendable (Any) -> String?

    /// Makes a converter; by default only strings are strings.
    public init(limits: AHAPLimits = .default, stringValue: @escaping @Sendable (Any) -> String? = { _ in nil }) {
        self.limits = limits
        self.stringValue = stringValue
    }

    /// Why a value does not convert, and where in it.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The key path of the value concerned (`Pattern[0].Event.Time`).
        public var path: AHAPPath
        /// What is wrong with it.
        public var message: String
        /// `limitExceeded` for nesting and size, `wrongType` for a value or key of another kind.
        public var code: AHAPDiagnostic.Code

        /// `Pattern[0].Event.Time: a Date is not ...`.
        public var description: String { "\(path): \(message)" }
    }

    /// The JSON value of `value`. Dictionaries' members are sorted by key (a Swift dictionary has
    /// no order, and the same dictionary should read the same way).
    public func json(_ value: Any) throws(Failure) -> JSONValue {
        var conversion = Conversion(converter: self)
        return try conversion.convert(value, depth: 0)
    }

    /// A JSON value as a property list: objects as `[String: Any]`, arrays as `[Any]`, numbers as
    /// `Double`, `null` as `NSNull`.
    public static func propertyList(_ json: JSONValue) -> Any {
        switch json.kind {
        case .object(let members):
            var out: [String: Any] = [:]
            for m in members { out[m.key] = propertyList(m.value) }
            return out
        case .array(let items): return items.map(propertyList)
        case .string(let s): return s
        case .number(let n): return n.value
        case .bool(let b): return b
        case .null: return NSNull()
        }
    }
}

// MARK: - One conversion

extension PropertyListConverter {
    /// The state of one `json(_:)` call: where it is, the Foundation collections it is inside,
    /// and how long the AHAP text of what it has converted would be, at least.
    private struct Conversion {
        let converter: PropertyListConverter
        var path: [AHAPPath.Component] = []
        /// The `NSArray`s and `NSDictionary`s being converted and the length of the path to
        /// each, outermost first (at most `maxNestingDepth`): meeting one again is a value that
        /// contains itself.
        var open: [(id: ObjectIdentifier, pathLength: Int)] = []
        /// The fewest bytes the AHAP text converted so far can take: a string's UTF-8 and its
        /// quotes, a key's and its colon, one byte a number, `[]` or `{}` and a comma between
        /// elements.
        var textBytes = 0

        init(converter: PropertyListConverter) { self.converter = converter }

        private func failure(_ code: AHAPDiagnostic.Code, _ message: String) -> Failure {
            Failure(path: AHAPPath(components: path), message: message, code: code)
        }

        /// Counts `bytes` more of text; throws once the text would be over the file limit.
        private mutating func count(_ bytes: Int) throws(Failure) {
            textBytes += bytes
            let limit = converter.limits.maxFileBytes
            guard textBytes <= limit else {
                throw failure(.limitExceeded, "the pattern would be over \(limit) bytes as AHAP text, the limit on a file")
            }
        }

        mutating func convert(_ value: Any, depth: Int) throws(Failure) -> JSONValue {
            let maxDepth = converter.limits.maxNestingDepth
            guard depth < maxDepth else { throw failure(.limitExceeded, "nesting deeper than \(maxDepth) levels") }
            // Foundation's types by their metatypes, first: casting a Swift array or dictionary to
            // a class (even `is NSNull`) bridges it, and everything in it, to Foundation's, and
            // casting Foundation's collections to Swift's bridges them back.
            if type(of: value) is NSNull.Type {
                try count(4)
                return JSONValue(.null)
            }
            if type(of: value) is NSArray.Type, let array = value as? NSArray {
                return try convert(array, depth: depth)
            }
            if type(of: value) is NSDictionary.Type, let dictionary = value as? NSDictionary {
                return try convert(dictionary, depth: depth)
            }
            if type(of: value) is NSNumber.Type, let n = value as? NSNumber {
                // Foundation's true and false are NSNumbers too, but each is one shared object;
                // `n as? Bool` would also take the number 1 for true.
                if n === Self.foundationTrue || n === Self.foundationFalse {
                    try count(n.boolValue ? 4 : 5)
                    return .bool(n.boolValue)
                }
                try count(1)
                return .number(n.doubleValue)
            }
            switch value {
            case let items as [Any]:
                return try convert(items, depth: depth)
            case let dictionary as [AnyHashable: Any]:
                var members: [(String, Any)] = []
                members.reserveCapacity(dictionary.count)
                for (k, v) in dictionary { members.append((try key(k.base), v)) }
                return try object(members, depth: depth)
            case let s as String:
                try count(s.utf8.count + 2)
                return .string(s)
            case let b as Bool:
                try count(b ? 4 : 5)
                return .bool(b)
            case let i as Int:
                try count(1)
                return .integer(i)
            // Float's shortest decimal form: 0.3 stays 0.3, not 0.30000001192092896.
            case let f as Float:
                try count(1)
                return .number(Double("\(f)") ?? Double(f))
            case let d as Double:
                try count(1)
                return .number(d)
            // Other widths (Int32, UInt8, CGFloat, ...), as they bridge to NSNumber, without
            // casting to NSNumber (a class: casting a collection to it bridges the collection).
            case let i as any BinaryInteger:
                try count(1)
                return .number(Double(i))
            case let f as any BinaryFloatingPoint:
                try count(1)
                return .number(Double(f))
            default:
                if let s = converter.stringValue(value) {
                    try count(s.utf8.count + 2)
                    return .string(s)
                }
                throw failure(.wrongType, "a \(type(of: value)) is not a string, number, Boolean, array or dictionary")
            }
        }

        private static let foundationTrue = NSNumber(value: true)
        private static let foundationFalse = NSNumber(value: false)

        private mutating func convert(_ items: [Any], depth: Int) throws(Failure) -> JSONValue {
            try count(2 + max(items.count - 1, 0))
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                path.append(.index(i))
                out.append(try convert(item, depth: depth + 1))
                path.removeLast()
            }
            return .array(out)
        }

        /// An `NSArray`'s elements as stored, read through its mirror: `object(at:)` would
        /// bridge an element that is an array, and every array inside it. A subclass that keeps
        /// its own storage has no such mirror, and is read through `object(at:)`.
        private mutating func convert(_ array: NSArray, depth: Int) throws(Failure) -> JSONValue {
            try enter(array, "array")
            defer { open.removeLast() }
            let stored = Mirror(reflecting: array).children.map(\.value)
            guard stored.count == array.count else { return try convert((0..<array.count).map { array.object(at: $0) }, depth: depth) }
            try count(2 + max(stored.count - 1, 0))
            var out: [JSONValue] = []
            out.reserveCapacity(stored.count)
            for (i, element) in stored.enumerated() {
                path.append(.index(i))
                // A collection is converted as stored; anything else as `object(at:)` gives it
                // (unboxed: a Swift value is stored in a box).
                out.append(try convert(Self.isCollection(element) ? element : array.object(at: i), depth: depth + 1))
                path.removeLast()
            }
            return .array(out)
        }

        /// An `NSDictionary`'s keys and values as stored: `allKeys` and `allValues` list them in
        /// the same order, unbridged (Foundation's own `encode(with:)` pairs them the same way).
        private mutating func convert(_ dictionary: NSDictionary, depth: Int) throws(Failure) -> JSONValue {
            try enter(dictionary, "dictionary")
            defer { open.removeLast() }
            var members: [(String, Any)] = []
            members.reserveCapacity(dictionary.count)
            for (k, v) in zip(dictionary.allKeys, dictionary.allValues) {
                members.append((try key(k), Self.isCollection(v) ? v : dictionary.object(forKey: k) ?? v))
            }
            return try object(members, depth: depth)
        }

        private static func isCollection(_ value: Any) -> Bool {
            type(of: value) is NSArray.Type || type(of: value) is NSDictionary.Type
        }

        /// Notes that a Foundation collection is being converted; throws if it already is (it
        /// contains itself), naming where it was first met.
        private mutating func enter(_ collection: AnyObject, _ what: String) throws(Failure) {
            let id = ObjectIdentifier(collection)
            if let outer = open.first(where: { $0.id == id }) {
                let first = AHAPPath(components: Array(path.prefix(outer.pathLength)))
                throw failure(.limitExceeded, "this \(what) is the one at \(first), which contains itself")
            }
            open.append((id, path.count))
        }

        /// A dictionary's key as a string: a string, or one of the caller's types.
        private func key(_ k: Any) throws(Failure) -> String {
            if !Self.isCollection(k) {
                if let s = k as? String { return s }
                if let s = converter.stringValue(k) { return s }
            }
            throw failure(.wrongType, "a key of type \(type(of: k)) is not a string")
        }

        private mutating func object(_ members: [(String, Any)], depth: Int) throws(Failure) -> JSONValue {
            let sorted = members.sorted { $0.0 < $1.0 }
            try count(2 + max(sorted.count - 1, 0))
            var out: [JSONMember] = []
            out.reserveCapacity(sorted.count)
            for (i, (k, v)) in sorted.enumerated() {
                path.append(.key(k))
                if i > 0, sorted[i - 1].0 == k {
                    throw failure(.wrongType, "the key \(AHAPQuote.quoted(k)) is given twice (as a String and as another type of key)")
                }
                try count(k.utf8.count + 3)
                out.append(JSONMember(key: k, value: try convert(v, depth: depth + 1)))
                path.removeLast()
            }
            return JSONValue(.object(out))
        }
    }
}
