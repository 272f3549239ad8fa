import Foundation

/// Writes mono WAV files: 16-bit PCM (rounded, clipped to full scale) or 32-bit IEEE float
/// (format 3, with the `fact` chunk the specification asks of non-PCM files).
enum WAVWriter {
    /// Sample formats.
    enum Format: String {
        /// 16-bit signed integers.
        case pcm16 = "16-bit"
        /// 32-bit IEEE floats.
        case float32 = "float"
    }

    /// Writes `samples` at `sampleRate` Hz to `url`; throws Foundation's error when it cannot.
    static func write(_ samples: [Float], sampleRate: Int, format: Format, to url: URL) throws {
        let bytesPerSample = format == .pcm16 ? 2 : 4
        let dataBytes = samples.count * bytesPerSample
        var d = Data()
        d.reserveCapacity(dataBytes + 58)
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { d.append(contentsOf: $0) } }
        let fmtBytes = format == .pcm16 ? 16 : 18
        let factBytes = format == .pcm16 ? 0 : 12
        d.append(contentsOf: Array("RIFF".utf8))
        u32(4 + 8 + fmtBytes + factBytes + 8 + dataBytes)
        d.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(fmtBytes)
        u16(format == .pcm16 ? 1 : 3)
        u16(1)
        u32(sampleRate)
        u32(sampleRate * bytesPerSample)
        u16(bytesPerSample)
        u16(bytesPerSample * 8)
        if format == .float32 {
            u16(0)
            d.append(contentsOf: Array("fact".utf8))
            u32(4)
            u32(samples.count)
        }
        d.append(contentsOf: Array("data".utf8))
        u32(dataBytes)
        switch format {
        case .pcm16:
            for s in samples {
                let v = Int16(max(-32_768, min(32_767, (Double(s) * 32_767).rounded())))
                withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) }
            }
        case .float32:
            for s in samples { withUnsafeBytes(of: s.bitPattern.littleEndian) { d.append(contentsOf: $0) } }
        }
        try d.write(to: url)
    }
}
