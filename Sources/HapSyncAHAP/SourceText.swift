/// UTF-8 source text with a table of checkpoints, turning byte offsets into 1-based line and column.
///
/// Every `checkpointSpacing` bytes the table holds the line and column there, so a lookup starts
/// at the checkpoint at or before the offset and reads fewer than `checkpointSpacing` bytes: O(1)
/// per finding whatever the length of the line (a minified file is one line of megabytes). The
/// table costs 16 bytes per 64 of text and one pass to build.
struct SourceText: Sendable {
    let bytes: [UInt8]
    /// Bytes between checkpoints.
    static let checkpointSpacing = 64
    /// Line and column (both 1-based) at byte offset `i × checkpointSpacing`, for every such
    /// offset up to and including `bytes.count`.
    private let checkpoints: [(line: Int, column: Int)]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        let spacing = Self.checkpointSpacing
        var checkpoints: [(line: Int, column: Int)] = []
        checkpoints.reserveCapacity(bytes.count / spacing + 1)
        var line = 1, column = 1
        bytes.withUnsafeBufferPointer { buffer in
            for i in 0..<buffer.count {
                if i % spacing == 0 { checkpoints.append((line, column)) }
                Self.step(buffer[i], &line, &column)
            }
        }
        if bytes.count % spacing == 0 { checkpoints.append((line, column)) }
        self.checkpoints = checkpoints
    }

    /// Moves line and column past one byte: a newline starts the next line; a byte that begins
    /// a UTF-8 character counts one column, continuation bytes none.
    @inline(__always) private static func step(_ byte: UInt8, _ line: inout Int, _ column: inout Int) {
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    /// Line and column (both 1-based; the column counts characters, not bytes) of a byte offset,
    /// clamped to the text. Reads fewer than `checkpointSpacing` bytes.
    func lineColumn(of offset: Int) -> (line: Int, column: Int) {
        let clamped = max(0, min(offset, bytes.count))
        let spacing = Self.checkpointSpacing
        var (line, column) = checkpoints[clamped / spacing]
        var i = clamped / spacing * spacing
        while i < clamped {
            Self.step(bytes[i], &line, &column)
            i += 1
        }
        return (line, column)
    }
}
