/// Values from a file as they are quoted in messages and printed in JSON paths: whole when short,
/// cut to their start when long, so that every finding has a bounded size.
///
/// A file may hold a 16 MB `ParameterID` or key; quoted whole, each finding that names it would
/// be 16 MB of text (a thousand warnings under one such key, 16 GB). Every value quoted in a
/// finding goes through here, and so does every key `AHAPPath` prints.
public enum AHAPQuote {
    /// Most Unicode scalars of a value shown (64); longer values show their first 64 and `…`.
    /// Every name AHAP defines is under 30.
    public static let maxScalars = 64

    /// `value` in double quotes; a value over `maxScalars` is cut, followed by `…` and its
    /// length: `"AAAA…" (16776552 bytes)`.
    public static func quoted(_ value: String) -> String {
        guard let start = excerpt(value) else { return "\"\(value)\"" }
        return "\"\(start)…\" (\(value.utf8.count) bytes)"
    }

    /// `value` as written (a number's literal, say); a value over `maxScalars` is cut, followed
    /// by `…` and its length: `11111… (16776552 bytes)`.
    public static func literal(_ value: String) -> String {
        guard let start = excerpt(value) else { return value }
        return "\(start)… (\(value.utf8.count) bytes)"
    }

    /// `value` for a JSON path: a value over `maxScalars` is cut and followed by `…`.
    public static func pathKey(_ value: String) -> String {
        guard let start = excerpt(value) else { return value }
        return start + "…"
    }

    /// The first `maxScalars` scalars when the value has more, nil when it has no more. Reads at
    /// most `maxScalars + 1` scalars, whatever the value's length.
    private static func excerpt(_ value: String) -> String? {
        let scalars = value.unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: maxScalars, limitedBy: scalars.endIndex),
              end != scalars.endIndex else { return nil }
        return String(scalars[..<end])
    }
}
