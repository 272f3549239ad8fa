/// Writes `JSONValue`s as text: deterministic, locale-independent, and readable.
///
/// Objects whose members are all scalars (an event parameter, a control point) go on one line;
/// everything else is indented by two spaces. Numbers with a source literal are written as that
/// literal (so metadata stays as given); numbers built in code are written canonically.
public enum JSONWriter {
    /// The text of a value; `pretty` false gives one line without spaces.
    public static func string(_ value: JSONValue, pretty: Bool = true) -> String {
        var out = ""
        write(value, into: &out, indent: 0, pretty: pretty)
        if pretty { out += "\n" }
        return out
    }

    /// The pretty text of a value that sits `indent` spaces deep inside a larger document being
    /// written piece by piece: its lines after the first are indented by `indent` more; no
    /// newline is added at the end.
    public static func string(_ value: JSONValue, nestedAt indent: Int) -> String {
        var out = ""
        write(value, into: &out, indent: indent, pretty: true)
        return out
    }

    private static func isFlat(_ value: JSONValue) -> Bool {
        switch value.kind {
        case .object(let m): return m.allSatisfy { isScalar($0.value) }
        case .array(let a): return a.allSatisfy(isScalar)
        default: return true
        }
    }

    private static func isScalar(_ value: JSONValue) -> Bool {
        switch value.kind {
        case .object, .array: return false
        default: return true
        }
    }

    private static func write(_ value: JSONValue, into out: inout String, indent: Int, pretty: Bool) {
        switch value.kind {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        // JSON has no NaN or infinity: a number built in code that is not finite is written null.
        case .number(let n): out += n.literal ?? (n.value.isFinite ? AHAPWriter.formatNumber(n.value) : "null")
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            if !pretty || isFlat(value) {
                out += "["
                for (i, item) in items.enumerated() {
                    if i > 0 { out += pretty ? ", " : "," }
                    write(item, into: &out, indent: indent, pretty: pretty)
                }
                out += "]"
                return
            }
            let pad = String(repeating: " ", count: indent + 2)
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += pad
                write(item, into: &out, indent: indent + 2, pretty: pretty)
                out += i + 1 < items.count ? ",\n" : "\n"
            }
            out += String(repeating: " ", count: indent) + "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            if !pretty || isFlat(value) {
                out += pretty ? "{ " : "{"
                for (i, m) in members.enumerated() {
                    if i > 0 { out += pretty ? ", " : "," }
                    writeString(m.key, into: &out)
                    out += pretty ? ": " : ":"
                    write(m.value, into: &out, indent: indent, pretty: pretty)
                }
                out += pretty ? " }" : "}"
                return
            }
            let pad = String(repeating: " ", count: indent + 2)
            out += "{\n"
            for (i, m) in members.enumerated() {
                out += pad
                writeString(m.key, into: &out)
                out += ": "
                write(m.value, into: &out, indent: indent + 2, pretty: pretty)
                out += i + 1 < members.count ? ",\n" : "\n"
            }
            out += String(repeating: " ", count: indent) + "}"
        }
    }

    private static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
