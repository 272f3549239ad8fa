import Foundation

/// What the header of an audio file says: container, encoding, rate, channels, sample size and
/// length, read without decoding. It is also the one rule for which audio HapSync plays: a file
/// whose header reads is one the audio layer decodes, and a `ReadError` says why a file is not
/// (`validate` warns with it, `info` shows it, playback refuses with it).
///
/// HapSync plays what Core Haptics plays (`playableFormats`): WAV (PCM, float, A-law, µ-law),
/// AIFF and AIFC (the same), CAF (PCM, A-law, µ-law, ALAC, AAC), FLAC, MP3 (MPEG-1/2/2.5 layer
/// III) and M4A/MP4 (AAC, ALAC, MP3). Lengths are the playable frames: an MP3's encoder delay and
/// padding (LAME/Info tag) and an M4A's priming (edit list) are left out, as decoders leave them
/// out. An MP3 without a Xing/Info/VBRI header is measured from its first frame's bit rate (exact
/// for constant bit rate files, an estimate otherwise).
///
/// Reading is bounded: each header structure read is at most 16 MiB, chunk and box walks visit at
/// most 512 entries, and any bytes at all (a fuzzer's) give a value or a `ReadError`, never a trap.
public struct AudioFileInfo: Sendable, Equatable {
    /// The container format.
    public enum Format: String, Sendable, CaseIterable {
        /// RIFF/WAVE.
        case wav = "WAV"
        /// AIFF or AIFC.
        case aiff = "AIFF"
        /// Apple Core Audio Format.
        case caf = "CAF"
        /// Native FLAC.
        case flac = "FLAC"
        /// An MPEG audio stream (layer III), optionally after an ID3v2 tag.
        case mp3 = "MP3"
        /// An MPEG-4 (ISO base media) file: `.m4a`, `.mp4`.
        case mp4 = "M4A"
    }

    /// How the samples are stored.
    public enum Encoding: String, Sendable, CaseIterable {
        /// Linear PCM integers.
        case pcm = "PCM"
        /// IEEE floats.
        case float = "float"
        /// G.711 A-law.
        case aLaw = "A-law"
        /// G.711 µ-law.
        case muLaw = "µ-law"
        /// FLAC.
        case flac = "FLAC"
        /// MPEG-1/2 layer III.
        case mp3 = "MP3"
        /// MPEG-4 / MPEG-2 AAC (LC, Main, LTP, HE).
        case aac = "AAC"
        /// Apple Lossless.
        case alac = "ALAC"

        /// Whether the encoding is lossy (it then has no sample size: `bitsPerSample` is 0).
        public var isLossy: Bool { self == .mp3 || self == .aac }
    }

    /// The formats and encodings HapSync plays, for messages.
    public static let playableFormats = "WAV, AIFF/AIFC and CAF (PCM, float, A-law, µ-law; CAF also ALAC and AAC), FLAC, MP3, and M4A (AAC, ALAC, MP3)"
    /// Highest sample rate accepted, Hz.
    public static let maxSampleRate = 768_000
    /// Most channels accepted.
    public static let maxChannels = 255

    /// The container format.
    public var format: Format
    /// How the samples are stored.
    public var encoding: Encoding
    /// Frames per second.
    public var sampleRate: Int
    /// Channel count.
    public var channels: Int
    /// Bits per sample as stored (16, 24, 32...); 0 for lossy encodings.
    public var bitsPerSample: Int
    /// Whether samples are IEEE floats.
    public var isFloat: Bool
    /// Length in frames.
    public var frames: Int

    /// Length in seconds.
    public var duration: Double { sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0 }

    /// Frames in `seconds` at `rate` frames a second, rounded as asked; 0 for a negative or NaN
    /// result, `Int.max` for one too large to count. The one checked conversion from a time to a
    /// frame count for headers and decoding (values come from files, so any may be absurd).
    public static func frameCount(_ seconds: Double, rate: Double, rounding: FloatingPointRoundingRule = .up) -> Int {
        let frames = (seconds * rate).rounded(rounding)
        guard frames > 0 else { return 0 }  // also NaN
        return frames < Double(Int.max) ? Int(frames) : Int.max
    }

    /// "WAV, 16-bit PCM", "M4A, AAC", "CAF, 16-bit ALAC": the container and how it stores samples.
    public var formatDescription: String {
        if encoding.isLossy { return "\(format.rawValue), \(encoding.rawValue)" }
        let kind = encoding == .flac && format == .flac ? "" : " \(encoding.rawValue)"
        return "\(format.rawValue), \(bitsPerSample)-bit\(kind)"
    }

    /// Why a header could not be read, or why HapSync does not play the file.
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// Reads the header of a file (which must be a regular file: see `RegularFile`).
    public init(contentsOf url: URL) throws(ReadError) {
        let handle: FileHandle
        do { handle = try RegularFile.open(url.path) } catch { throw ReadError(description: error.description) }
        try self.init(reading: handle)
    }

    /// Reads the header of an open file, from its start; the handle's offset is left wherever
    /// reading ended.
    public init(reading handle: FileHandle) throws(ReadError) {
        let size = (try? handle.seekToEnd()).map { Int(clamping: $0) } ?? 0
        try self.init(AudioHeaderBytes(size: size) { offset, count in
            guard (try? handle.seek(toOffset: UInt64(offset))) != nil else { return [] }
            return [UInt8]((try? handle.read(upToCount: count)) ?? Data())
        })
    }

    /// Reads a header from the first bytes of a file of `fileSize` bytes (a structure beyond the
    /// bytes given, like an M4A's `moov` box at its end, is reported as missing).
    public init(header b: [UInt8], fileSize: Int) throws(ReadError) {
        try self.init(AudioHeaderBytes(size: fileSize) { offset, count in
            offset < b.count ? Array(b[offset..<min(b.count, offset + count)]) : []
        })
    }

    /// Makes a description directly (the encoding follows from the format and `isFloat`: FLAC,
    /// MP3, else float or PCM).
    public init(format: Format, sampleRate: Int, channels: Int, bitsPerSample: Int, isFloat: Bool, frames: Int) {
        let encoding: Encoding = format == .flac ? .flac : format == .mp3 ? .mp3 : isFloat ? .float : .pcm
        self.init(format: format, encoding: encoding, sampleRate: sampleRate, channels: channels, bitsPerSample: bitsPerSample, frames: frames)
    }

    /// Makes a description directly.
    public init(format: Format, encoding: Encoding, sampleRate: Int, channels: Int, bitsPerSample: Int, frames: Int) {
        self.format = format
        self.encoding = encoding
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitsPerSample = bitsPerSample
        self.isFloat = encoding == .float
        self.frames = frames
    }

    /// Most chunks or boxes visited at one level of a header.
    static let maxChunks = 512

    /// Recognizes the container from its first bytes and reads it.
    init(_ file: AudioHeaderBytes) throws(ReadError) {
        let head = file.readAvailable(0, 12)
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let t = Array(text.utf8)
            return head.count >= offset + t.count && head[offset..<(offset + t.count)].elementsEqual(t)
        }
        let parsed: AudioFileInfo
        if starts("RIFF"), starts("WAVE", at: 8) {
            parsed = try Self.wav(file)
        } else if starts("FORM"), starts("AIFF", at: 8) || starts("AIFC", at: 8) {
            parsed = try Self.aiff(file, compressed: starts("AIFC", at: 8))
        } else if starts("caff") {
            parsed = try Self.caf(file)
        } else if starts("ftyp", at: 4) {
            parsed = try Self.mp4(file)
        } else if let start = try Self.afterID3(file, head), file.readAvailable(start, 4).elementsEqual(Array("fLaC".utf8)) {
            parsed = try Self.flac(file, at: start)
        } else if let mp3 = try Self.mp3(file, head) {
            parsed = mp3
        } else if starts("OggS") {
            throw ReadError(description: "an Ogg file (Vorbis, Opus or FLAC in Ogg), which Core Haptics does not play; HapSync plays \(Self.playableFormats)")
        } else if starts("RF64") || starts("RIFX") {
            throw ReadError(description: "a \(String(decoding: head.prefix(4), as: UTF8.self)) WAV variant, which HapSync does not play; HapSync plays \(Self.playableFormats)")
        } else {
            throw ReadError(description: "not an audio format HapSync knows; HapSync plays \(Self.playableFormats)")
        }
        try parsed.validate()
        self = parsed
    }

    /// The shape checks every container shares.
    func validate() throws(ReadError) {
        guard sampleRate >= 1, sampleRate <= Self.maxSampleRate else {
            throw ReadError(description: "\(format.rawValue) header gives a sample rate of \(sampleRate) Hz; HapSync plays 1 to \(Self.maxSampleRate) Hz")
        }
        guard channels >= 1, channels <= Self.maxChannels else {
            throw ReadError(description: "\(format.rawValue) header gives \(channels) channels; HapSync plays 1 to \(Self.maxChannels)")
        }
        guard frames >= 0 else { throw ReadError(description: "\(format.rawValue) header gives a negative length") }
    }

    // MARK: - WAV

    /// RIFF/WAVE: walks the chunks to `fmt ` and `data`; the length is what the data chunk holds
    /// (cut to the file's end).
    static func wav(_ file: AudioHeaderBytes) throws(ReadError) -> AudioFileInfo {
        var offset = 12
        var fmt: (encoding: Encoding, channels: Int, rate: Int, align: Int, bits: Int)?
        var visited = 0
        while offset <= file.size - 8, visited < maxChunks {
            visited += 1
            var header = try file.read(offset, 8, "WAV chunk header")
            let id = try header.fourCC(), size = try header.le32()
            let body = offset + 8
            if id == "fmt " {
                var f = try file.read(body, min(size, 40), "WAV fmt chunk")
                var tag = try f.le16()
                let channels = try f.le16(), rate = try f.le32()
                try f.skip(4)
                let align = try f.le16(), bits = try f.le16()
                if tag == 0xFFFE, size >= 40 {  // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts with the tag
                    try f.skip(8)
                    tag = try f.le16()
                }
                let encoding: Encoding
                switch tag {
                case 1: encoding = .pcm
                case 3: encoding = .float
                case 6: encoding = .aLaw
                case 7: encoding = .muLaw
                default:
                    throw ReadError(description: "WAV sample format 0x\(String(tag, radix: 16, uppercase: true)) is not one HapSync plays (WAV must hold PCM, float, A-law or µ-law)")
                }
                fmt = (encoding, channels, rate, align, bits)
            } else if id == "data" {
                guard let f = fmt else { throw ReadError(description: "WAV data chunk comes before its fmt chunk") }
                guard f.align > 0, f.rate > 0, f.channels > 0 else { throw ReadError(description: "WAV fmt chunk has zero rate, channels or block size") }
                let bytes = min(size, file.size - body)
                return AudioFileInfo(format: .wav, encoding: f.encoding, sampleRate: f.rate, channels: f.channels, bitsPerSample: f.bits, frames: bytes / f.align)
            }
            offset = body + size + (size & 1)
        }
        throw ReadError(description: "WAV file has no data chunk")
    }

    // MARK: - FLAC

    /// Native FLAC: the STREAMINFO block, which must come first.
    static func flac(_ file: AudioHeaderBytes, at start: Int) throws(ReadError) -> AudioFileInfo {
        var c = try file.read(start + 4, 4 + 18, "FLAC STREAMINFO block")
        guard try c.u8() & 0x7F == 0 else { throw ReadError(description: "FLAC file does not start with its STREAMINFO block") }
        try c.skip(3 + 10)  // block length; min/max block size (2 + 2) and frame size (3 + 3)
        // 20 bits rate, 3 bits channels − 1, 5 bits bits per sample − 1, 36 bits total samples.
        let packed = try c.be64()
        let rate = Int(packed >> 44), channels = Int(packed >> 41 & 0x7) + 1, bits = Int(packed >> 36 & 0x1F) + 1
        let total = Int(packed & 0xF_FFFF_FFFF)
        guard total > 0 else { throw ReadError(description: "FLAC file does not state its length (STREAMINFO total samples is 0)") }
        return AudioFileInfo(format: .flac, encoding: .flac, sampleRate: rate, channels: channels, bitsPerSample: bits, frames: total)
    }

    /// Where the audio starts after an ID3v2 tag (0 without one), nil when the tag's size is
    /// impossible.
    static func afterID3(_ file: AudioHeaderBytes, _ head: [UInt8]) throws(ReadError) -> Int? {
        guard head.count >= 10, head[0..<3].elementsEqual(Array("ID3".utf8)) else { return 0 }
        guard head[6..<10].allSatisfy({ $0 < 0x80 }) else { return nil }
        let size = head[6..<10].reduce(0) { $0 << 7 | Int($1) } + 10 + (head[5] & 0x10 != 0 ? 10 : 0)
        return size < file.size ? size : nil
    }
}
