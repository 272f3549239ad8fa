/// Reads "JSON-like" AHAP text into `JSONValue`s, knowing where every value stood.
///
/// Strict JSON (RFC 8259) plus the leniencies real AHAP files need, each reported as a warning:
/// trailing commas before `]` / `}`, `//` and `/* */` comments, and duplicate keys (the last one
/// wins, as in Foundation's JSONSerialization). A UTF-8 byte order mark is skipped. Everything else
/// (single quotes, unquoted keys, `NaN`, hexadecimal, a decimal comma) is a syntax error that names
/// the line, column and JSON path. Nesting is limited so hostile input cannot exhaust the stack.
struct JSONParser {
    struct SyntaxError: Error {
        var offset: Int
        var path: AHAPPath
        var message: String
    }

    private let bytes: [UInt8]
    private var pos = 0
    private var path: [AHAPPath.Component] = []
    private let maxDepth: Int
    private let maxWarnings: Int
    /// Leniency warnings found so far, the first `maxWarnings` of them: code, path, byte offset,
    /// message.
    private(set) var warnings: [(AHAPDiagnostic.Code, AHAPPath, Int, String)] = []
    /// Leniency warnings found beyond `maxWarnings`, counted and not kept.
    private(set) var unrecordedWarnings = 0

    init(bytes: [UInt8], maxDepth: Int, maxWarnings: Int = .max) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.maxWarnings = maxWarnings
    }

    /// Records a leniency warning at the current path (one `key` deeper if given), or only counts
    /// it once `maxWarnings` are kept. The path and message are built only for a warning that is kept.
    private mutating func warn(_ code: AHAPDiagnostic.Code, key: String? = nil, _ offset: Int, _ message: @autoclosure () -> String) {
        guard warnings.count < maxWarnings else {
            unrecordedWarnings += 1
            return
        }
        warnings.append((code, key.map { currentPath.key($0) } ?? currentPath, offset, message()))
    }

    /// Parses one complete document; anything but whitespace and comments after it is an error.
    mutating func parseDocument() throws(SyntaxError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { pos = 3 }
        try skipTrivia()
        if pos >= bytes.count { throw fail("the file is empty; an AHAP file is a JSON object") }
        let value = try parseValue(depth: 0)
        try skipTrivia()
        if pos < bytes.count {
            throw fail("unexpected \(describeHere()) after the end of the top-level value")
        }
        return value
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws(SyntaxError) -> JSONValue {
        guard depth < maxDepth else {
            throw fail("nesting deeper than \(maxDepth) levels")
        }
        guard pos < bytes.count else { throw fail("unexpected end of file; expected a value") }
        let start = pos
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return JSONValue(.string(try parseString()), offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "t"): try expectWord("true"); return JSONValue(.bool(true), offset: start)
        case UInt8(ascii: "f"): try expectWord("false"); return JSONValue(.bool(false), offset: start)
        case UInt8(ascii: "n"): try expectWord("null"); return JSONValue(.null, offset: start)
        case UInt8(ascii: "'"):
            throw fail("strings use double quotes (\"), not single quotes")
        case UInt8(ascii: "."), UInt8(ascii: "+"):
            throw fail("invalid number: JSON numbers start with a digit or '-' (write 0.5, not .5 or +0.5)")
        case UInt8(ascii: "N"), UInt8(ascii: "I"):
            throw fail("NaN and Infinity are not numbers in AHAP; use a finite value")
        default:
            throw fail("expected a value, found \(describeHere())")
        }
    }

    private mutating func parseObject(depth: Int) throws(SyntaxError) -> JSONValue {
        let start = pos
        pos += 1
        var members: [JSONMember] = []
        var indexByKey: [String: Int] = [:]
        try skipTrivia()
        if peek(UInt8(ascii: "}")) { pos += 1; return JSONValue(.object([]), offset: start) }
        while true {
            try skipTrivia()
            guard pos < bytes.count else { throw fail("unexpected end of file inside an object; expected '}'") }
            if bytes[pos] == UInt8(ascii: "}") {
                // Only reachable after a comma: a trailing comma.
                warn(.trailingComma, pos, "trailing comma before '}' ignored (not JSON)")
                pos += 1
                return JSONValue(.object(members), offset: start)
            }
            guard bytes[pos] == UInt8(ascii: "\"") else {
                if bytes[pos] >= UInt8(ascii: "0") && bytes[pos] <= UInt8(ascii: "9"), lastWasNumberThenComma() {
                    throw fail("expected a key string, found a digit: was a decimal comma used? numbers use '.' (0.5, not 0,5)")
                }
                if bytes[pos] == UInt8(ascii: "'") { throw fail("keys use double quotes (\"), not single quotes") }
                throw fail("expected a key string in double quotes, found \(describeHere())")
            }
            let keyOffset = pos
            let key = try parseString()
            try skipTrivia()
            guard peek(UInt8(ascii: ":")) else { throw fail("expected ':' after key \(AHAPQuote.quoted(key)), found \(describeHere())") }
            pos += 1
            try skipTrivia()
            path.append(.key(key))
            let value = try parseValue(depth: depth + 1)
            path.removeLast()
            let member = JSONMember(key: key, value: value, keyOffset: keyOffset)
            // AHAP objects are small: search linearly, switching to a dictionary for large ones so
            // that a hostile file cannot make this quadratic.
            if members.count == 16 { for (i, m) in members.enumerated() { indexByKey[m.key] = i } }
            let earlierIndex = members.count < 16 ? members.firstIndex { $0.key == key } : indexByKey[key]
            if let earlier = earlierIndex {
                warn(.duplicateKey, key: key, keyOffset, "key \(AHAPQuote.quoted(key)) appears twice in this object; the last one is used")
                members[earlier] = member
            } else {
                if members.count >= 16 { indexByKey[key] = members.count }
                members.append(member)
            }
            try skipTrivia()
            guard pos < bytes.count else { throw fail("unexpected end of file inside an object; expected ',' or '}'") }
            if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
            if bytes[pos] == UInt8(ascii: "}") { pos += 1; return JSONValue(.object(members), offset: start) }
            throw fail("expected ',' or '}' after the value of \(AHAPQuote.quoted(key)), found \(describeHere())")
        }
    }

    private mutating func parseArray(depth: Int) throws(SyntaxError) -> JSONValue {
        let start = pos
        pos += 1
        var items: [JSONValue] = []
        try skipTrivia()
        if peek(UInt8(ascii: "]")) { pos += 1; return JSONValue(.array([]), offset: start) }
        while true {
            try skipTrivia()
            guard pos < bytes.count else { throw fail("unexpected end of file inside an array; expected ']'") }
            if bytes[pos] == UInt8(ascii: "]") {
                warn(.trailingComma, pos, "trailing comma before ']' ignored (not JSON)")
                pos += 1
                return JSONValue(.array(items), offset: start)
            }
            path.append(.index(items.count))
            items.append(try parseValue(depth: depth + 1))
            path.removeLast()
            try skipTrivia()
            guard pos < bytes.count else { throw fail("unexpected end of file inside an array; expected ',' or ']'") }
            if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
            if bytes[pos] == UInt8(ascii: "]") { pos += 1; return JSONValue(.array(items), offset: start) }
            throw fail("expected ',' or ']' after array element \(items.count - 1), found \(describeHere())")
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        let open = pos
        pos += 1
        // Fast path: no escapes before the closing quote; validate the bytes in place.
        var end = pos
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            if let s = bytes.withUnsafeBufferPointer({ String(validating: UnsafeBufferPointer(rebasing: $0[pos..<end]), as: UTF8.self) }) {
                pos = end + 1
                return s
            }
        }
        var out: [UInt8] = []
        while true {
            guard pos < bytes.count else {
                pos = open
                throw fail("string never closed (missing '\"')")
            }
            let b = bytes[pos]
            if b == UInt8(ascii: "\"") { pos += 1; break }
            if b < 0x20 {
                throw fail(b == 0x0A ? "line break inside a string (missing '\"'?)" : "control character inside a string; escape it")
            }
            if b == UInt8(ascii: "\\") {
                pos += 1
                guard pos < bytes.count else { throw fail("unfinished escape at end of file") }
                let e = bytes[pos]
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4(at: pos + 1)
                    pos += 4
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard pos + 2 < bytes.count, bytes[pos + 1] == UInt8(ascii: "\\"), bytes[pos + 2] == UInt8(ascii: "u") else {
                            throw fail("unpaired UTF-16 surrogate in \\u escape")
                        }
                        let low = try hex4(at: pos + 3)
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired UTF-16 surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        pos += 6
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired UTF-16 surrogate in \\u escape")
                    }
                    UTF8.encode(Unicode.Scalar(scalar)!) { out.append($0) }
                default:
                    throw fail("invalid escape '\\\(Character(Unicode.Scalar(e)))' in a string")
                }
                pos += 1
                continue
            }
            out.append(b)
            pos += 1
        }
        guard let s = String(validating: out, as: UTF8.self) else {
            pos = open
            throw fail("string is not valid UTF-8")
        }
        return s
    }

    private func hex4(at p: Int) throws(SyntaxError) -> UInt32 {
        guard p + 4 <= bytes.count else { throw SyntaxError(offset: p, path: currentPath, message: "incomplete \\u escape") }
        var v: UInt32 = 0
        for i in p..<(p + 4) {
            let b = bytes[i]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw SyntaxError(offset: i, path: currentPath, message: "invalid hex digit in \\u escape")
            }
            v = v * 16 + UInt32(d)
        }
        return v
    }

    private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
        let start = pos
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        if peek(UInt8(ascii: "-")) { pos += 1 }
        guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("invalid number: '-' must be followed by a digit") }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < bytes.count, isDigit(bytes[pos]) { throw fail("invalid number: leading zeros are not allowed") }
        } else {
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if peek(UInt8(ascii: ".")) {
            pos += 1
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("invalid number: a digit must follow '.'") }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("invalid number: a digit must follow the exponent") }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        let literal = String(decoding: bytes[start..<pos], as: UTF8.self)
        // Double(String) is locale-independent; overflow gives ±infinity, reported by the AHAP decoder.
        let value = Double(literal) ?? .nan
        return JSONValue(.number(JSONNumber(value, literal: literal)), offset: start)
    }

    // MARK: - Trivia and helpers

    private mutating func skipTrivia() throws(SyntaxError) {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D:
                pos += 1
            case UInt8(ascii: "/") where pos + 1 < bytes.count && bytes[pos + 1] == UInt8(ascii: "/"):
                warn(.comment, pos, "comment ignored (not JSON)")
                while pos < bytes.count, bytes[pos] != 0x0A { pos += 1 }
            case UInt8(ascii: "/") where pos + 1 < bytes.count && bytes[pos + 1] == UInt8(ascii: "*"):
                let open = pos
                warn(.comment, pos, "comment ignored (not JSON)")
                pos += 2
                while pos + 1 < bytes.count, !(bytes[pos] == UInt8(ascii: "*") && bytes[pos + 1] == UInt8(ascii: "/")) { pos += 1 }
                guard pos + 1 < bytes.count else {
                    pos = open
                    throw fail("comment never closed (missing '*/')")
                }
                pos += 2
            default:
                return
            }
        }
    }

    /// Whether the text just before the current position is `<digit>,` with optional spaces,
    /// the footprint of a locale's decimal comma.
    private func lastWasNumberThenComma() -> Bool {
        var i = pos - 1
        while i >= 0, bytes[i] == 0x20 || bytes[i] == 0x09 { i -= 1 }
        guard i >= 1, bytes[i] == UInt8(ascii: ",") else { return false }
        return bytes[i - 1] >= UInt8(ascii: "0") && bytes[i - 1] <= UInt8(ascii: "9")
    }

    private func peek(_ b: UInt8) -> Bool { pos < bytes.count && bytes[pos] == b }

    private mutating func expectWord(_ word: String) throws(SyntaxError) {
        let w = Array(word.utf8)
        guard pos + w.count <= bytes.count, Array(bytes[pos..<(pos + w.count)]) == w else {
            throw fail("expected a value, found \(describeHere())")
        }
        pos += w.count
    }

    private var currentPath: AHAPPath { AHAPPath(components: path) }

    private func describeHere() -> String {
        guard pos < bytes.count else { return "end of file" }
        var end = pos
        while end < bytes.count, end - pos < 12, bytes[end] != 0x0A { end += 1 }
        let snippet = String(decoding: bytes[pos..<max(end, pos + 1)], as: UTF8.self)
        return "'\(snippet)'"
    }

    private func fail(_ message: String) -> SyntaxError {
        SyntaxError(offset: pos, path: currentPath, message: message)
    }
}
