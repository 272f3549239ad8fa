import Foundation

/// The bytes of an audio file as header readers see them: fetched on demand by offset (so a table
/// at the end of a file, like an M4A's `moov` box, costs one read, not the whole file), each fetch
/// bounded, every offset and size checked against the file's size before it is used.
struct AudioHeaderBytes {
    /// The file's size in bytes (what sizes in headers are checked against).
    let size: Int
    /// Up to `count` bytes from `offset` (fewer at the end of what is available).
    private let fetch: (_ offset: Int, _ count: Int) -> [UInt8]

    /// The most one header structure may take (16 MiB: an M4A `moov` box of a ten-minute AAC file
    /// is about 250 KB).
    static let maxStructureBytes = 16 << 20

    init(size: Int, fetch: @escaping (_ offset: Int, _ count: Int) -> [UInt8]) {
        self.size = max(0, size)
        self.fetch = fetch
    }

    /// Exactly `count` bytes from `offset` as a cursor, or an error saying where the file ends
    /// (`what` names the structure, e.g. "WAV fmt chunk").
    func read(_ offset: Int, _ count: Int, _ what: String) throws(AudioFileInfo.ReadError) -> ByteCursor {
        guard offset >= 0, count >= 0 else { throw AudioFileInfo.ReadError(description: "\(what) has a negative offset or size") }
        guard count <= Self.maxStructureBytes else {
            throw AudioFileInfo.ReadError(description: "\(what) is \(count) bytes; HapSync reads header structures up to \(Self.maxStructureBytes >> 20) MiB")
        }
        guard offset <= size, count <= size - offset else { throw AudioFileInfo.ReadError(description: "the file ends inside its \(what) (at byte \(size))") }
        let bytes = fetch(offset, count)
        guard bytes.count == count else { throw AudioFileInfo.ReadError(description: "the file ends inside its \(what) (at byte \(offset + bytes.count))") }
        return ByteCursor(bytes, what)
    }

    /// Up to `count` bytes from `offset` (fewer near the end), never more than the structure limit.
    func readAvailable(_ offset: Int, _ count: Int) -> [UInt8] {
        guard offset >= 0, offset < size else { return [] }
        return fetch(offset, min(count, size - offset, Self.maxStructureBytes))
    }
}

/// Reads big- and little-endian fields from bytes in order; reading past the end throws (naming
/// the structure) instead of trapping, so any bytes at all are safe to parse.
struct ByteCursor {
    let bytes: [UInt8]
    let what: String
    /// Index of the next byte to read.
    var position = 0

    init(_ bytes: [UInt8], _ what: String) {
        self.bytes = bytes
        self.what = what
    }

    var remaining: Int { bytes.count - position }

    /// The next `n` bytes.
    mutating func take(_ n: Int) throws(AudioFileInfo.ReadError) -> ArraySlice<UInt8> {
        guard n >= 0, n <= remaining else { throw AudioFileInfo.ReadError(description: "\(what) is truncated") }
        defer { position += n }
        return bytes[position..<(position + n)]
    }

    mutating func skip(_ n: Int) throws(AudioFileInfo.ReadError) { _ = try take(n) }

    mutating func u8() throws(AudioFileInfo.ReadError) -> Int { Int(try take(1).first!) }

    /// An unsigned big-endian integer of `n` ≤ 7 bytes (8-byte fields go through `be64`).
    mutating func be(_ n: Int) throws(AudioFileInfo.ReadError) -> Int { try take(n).reduce(0) { $0 << 8 | Int($1) } }

    /// An unsigned little-endian integer of `n` ≤ 7 bytes.
    mutating func le(_ n: Int) throws(AudioFileInfo.ReadError) -> Int { try take(n).reversed().reduce(0) { $0 << 8 | Int($1) } }

    mutating func be16() throws(AudioFileInfo.ReadError) -> Int { try be(2) }
    mutating func be32() throws(AudioFileInfo.ReadError) -> Int { try be(4) }
    mutating func le16() throws(AudioFileInfo.ReadError) -> Int { try le(2) }
    mutating func le32() throws(AudioFileInfo.ReadError) -> Int { try le(4) }

    /// A big-endian 64-bit field as raw bits.
    mutating func be64() throws(AudioFileInfo.ReadError) -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }

    /// A big-endian signed 64-bit field, or nil when it does not fit a non-negative Int.
    mutating func be64Count() throws(AudioFileInfo.ReadError) -> Int? {
        let v = Int64(bitPattern: try be64())
        return v >= 0 ? Int(v) : nil
    }

    /// A four-character code as text (bytes outside ASCII become '?').
    mutating func fourCC() throws(AudioFileInfo.ReadError) -> String {
        String(try take(4).map { $0 >= 0x20 && $0 < 0x7F ? Character(Unicode.Scalar($0)) : "?" })
    }
}
