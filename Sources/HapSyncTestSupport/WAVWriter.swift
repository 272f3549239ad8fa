import Foundation

/// Writes WAV files for tests and benchmarks: 16-bit PCM (rounded, clipped to full scale) or
/// 32-bit IEEE float (format 3, with the `fact` chunk the specification asks of non-PCM files),
/// and sparse PCM files of silence that take no disk.
public enum WAVWriter {
    /// Sample formats.
    public enum Format: String, Sendable {
        /// 16-bit signed integers.
        case pcm16 = "16-bit"
        /// 32-bit IEEE floats.
        case float32 = "float"
    }

    /// Writes `samples` (`channels` interleaved: mono by default; a last partial frame is left
    /// out) at `sampleRate` Hz to `url`; throws Foundation's error when it cannot.
    public static func write(_ samples: [Float], sampleRate: Int, channels: Int = 1, format: Format, to url: URL) throws {
        let channels = max(1, channels)
        let samples = samples.prefix(samples.count / channels * channels)
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
        u16(channels)
        u32(sampleRate)
        u32(sampleRate * bytesPerSample * channels)
        u16(bytesPerSample * channels)
        u16(bytesPerSample * 8)
        if format == .float32 {
            u16(0)
            d.append(contentsOf: Array("fact".utf8))
            u32(4)
            u32(samples.count / channels)
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

    /// A PCM WAV of `seconds` of silence whose data is a hole in the file (sparse: it takes no
    /// disk), for files too long to decode.
    public static func writeSparse(to url: URL, rate: Int, channels: Int, bits: Int, seconds: Double) throws {
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(v >> (8 * $0) & 0xFF) } }
        let align = channels * bits / 8
        let bytes = Int(Double(rate) * seconds) * align
        var header = Array("RIFF".utf8) + le(36 + bytes, 4) + Array("WAVEfmt ".utf8) + le(16, 4)
        header += le(1, 2) + le(channels, 2) + le(rate, 4) + le(rate * align, 4) + le(align, 2) + le(bits, 2)
        header += Array("data".utf8) + le(bytes, 4)
        try Data(header).write(to: url)
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(header.count + bytes))
        try handle.close()
    }
}
