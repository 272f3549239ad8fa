import Foundation

/// What the header of a WAV or FLAC file says: format, rate, channels, sample size and length.
///
/// Read from the header alone (no decoding), so `hapsync info` can report an `AudioCustom`
/// event's length and the pattern's duration. Decoding for playback is the audio layer's job.
public struct AudioFileInfo: Sendable, Equatable {
    /// The container format.
    public enum Format: String, Sendable {
        /// RIFF/WAVE.
        case wav = "WAV"
        /// Native FLAC.
        case flac = "FLAC"
    }

    /// The container format.
    public var format: Format
    /// Frames per second.
    public var sampleRate: Int
    /// Channel count.
    public var channels: Int
    /// Bits per sample as stored (16, 24, 32...).
    public var bitsPerSample: Int
    /// Whether samples are IEEE floats (WAV format 3).
    public var isFloat: Bool
    /// Length in frames.
    public var frames: Int

    /// Length in seconds.
    public var duration: Double { sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0 }

    /// Why a header could not be read.
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// Reads the header of a WAV or FLAC file (which must be a regular file: see `RegularFile`).
    public init(contentsOf url: URL) throws(ReadError) {
        let handle: FileHandle
        do { handle = try RegularFile.open(url.path) } catch { throw ReadError(description: error.description) }
        // Headers and chunk tables sit at the start; 1 MiB covers every sane layout.
        let head = [UInt8]((try? handle.read(upToCount: 1 << 20)) ?? Data())
        let total = (try? handle.seekToEnd()).map { Int($0) } ?? head.count
        try self.init(header: head, fileSize: total)
    }

    /// Reads a header from the first bytes of a file.
    public init(header b: [UInt8], fileSize: Int) throws(ReadError) {
        func u16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
        if b.count >= 12, b[0..<4].elementsEqual("RIFF".utf8), b[8..<12].elementsEqual("WAVE".utf8) {
            var i = 12
            var fmt: (tag: Int, channels: Int, rate: Int, align: Int, bits: Int)?
            while i + 8 <= b.count {
                let id = String(decoding: b[i..<(i + 4)], as: UTF8.self)
                let size = u32(i + 4)
                let body = i + 8
                if id == "fmt ", body + 16 <= b.count {
                    var tag = u16(body)
                    if tag == 0xFFFE, size >= 40, body + 26 <= b.count { tag = u16(body + 24) }  // WAVE_FORMAT_EXTENSIBLE sub-format
                    fmt = (tag, u16(body + 2), u32(body + 4), u16(body + 12), u16(body + 14))
                } else if id == "data" {
                    guard let f = fmt else { throw ReadError(description: "WAV data chunk comes before its fmt chunk") }
                    guard f.tag == 1 || f.tag == 3 else { throw ReadError(description: "WAV sample format \(f.tag) is neither PCM nor float") }
                    guard f.align > 0, f.rate > 0, f.channels > 0 else { throw ReadError(description: "WAV fmt chunk has zero rate, channels or block size") }
                    let bytes = min(size, max(0, fileSize - body))
                    self.init(format: .wav, sampleRate: f.rate, channels: f.channels, bitsPerSample: f.bits, isFloat: f.tag == 3, frames: bytes / f.align)
                    return
                }
                i = body + size + (size & 1)
            }
            throw ReadError(description: "WAV file has no data chunk in its first MiB")
        }
        if b.count >= 42, b[0..<4].elementsEqual("fLaC".utf8), b[4] & 0x7F == 0 {
            // STREAMINFO: 16+16 bits block sizes, 24+24 frame sizes, then 20 rate, 3 channels-1, 5 bps-1, 36 total samples.
            let s = 8 + 10
            let rate = Int(b[s]) << 12 | Int(b[s + 1]) << 4 | Int(b[s + 2]) >> 4
            let channels = Int((b[s + 2] >> 1) & 0x07) + 1
            let bits = (Int(b[s + 2] & 0x01) << 4 | Int(b[s + 3] >> 4)) + 1
            var total = Int(b[s + 3] & 0x0F)
            for k in 4..<8 { total = total << 8 | Int(b[s + k]) }
            self.init(format: .flac, sampleRate: rate, channels: channels, bitsPerSample: bits, isFloat: false, frames: total)
            return
        }
        throw ReadError(description: "not a WAV or FLAC file")
    }

    /// Makes a description directly.
    public init(format: Format, sampleRate: Int, channels: Int, bitsPerSample: Int, isFloat: Bool, frames: Int) {
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitsPerSample = bitsPerSample
        self.isFloat = isFloat
        self.frames = frames
    }
}
