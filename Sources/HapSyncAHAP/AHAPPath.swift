/// A JSON path inside an AHAP document, printed as `Pattern[4].Event.EventParameters[0]`.
public struct AHAPPath: Sendable, Hashable, CustomStringConvertible {
    /// One step of a path.
    public enum Component: Sendable, Hashable {
        /// An object key.
        case key(String)
        /// An array index.
        case index(Int)
    }

    /// The steps from the document root.
    public var components: [Component]

    /// The document root.
    public static let root = AHAPPath(components: [])

    /// Makes a path from its steps.
    public init(components: [Component]) { self.components = components }

    /// Parses the printed form (`Pattern[4].Event.Time`, `(root)`); keys may not contain `.` or `[`.
    public init(_ text: String) {
        var comps: [Component] = []
        if text == "(root)" { self.components = comps; return }
        for part in text.split(separator: ".", omittingEmptySubsequences: true) {
            var rest = Substring(part)
            if let bracket = rest.firstIndex(of: "[") {
                if bracket > rest.startIndex { comps.append(.key(String(rest[..<bracket]))) }
                rest = rest[bracket...]
                while rest.first == "[", let close = rest.firstIndex(of: "]") {
                    if let i = Int(rest[rest.index(after: rest.startIndex)..<close]) { comps.append(.index(i)) }
                    rest = rest[rest.index(after: close)...]
                }
            } else {
                comps.append(.key(String(rest)))
            }
        }
        self.components = comps
    }

    /// The path one key deeper.
    public func key(_ k: String) -> AHAPPath { AHAPPath(components: components + [.key(k)]) }
    /// The path one index deeper.
    public func index(_ i: Int) -> AHAPPath { AHAPPath(components: components + [.index(i)]) }

    /// The printed form; the root prints as `(root)`. A key over `AHAPQuote.maxScalars` is cut
    /// to its start and `…` (`AHAPQuote.pathKey`), so that a finding under a 16 MB key does not
    /// print 16 MB; the components keep the whole key.
    public var description: String {
        if components.isEmpty { return "(root)" }
        var out = ""
        for c in components {
            switch c {
            case .key(let k): out += (out.isEmpty ? "" : ".") + AHAPQuote.pathKey(k)
            case .index(let i): out += "[\(i)]"
            }
        }
        return out
    }
}
