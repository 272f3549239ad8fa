import Foundation

/// Apple's containers: AIFF/AIFC and CAF.
extension AudioFileInfo {
    // MARK: - AIFF / AIFC

    /// AIFF or AIFC: the COMM chunk gives channels, frames, sample size, rate (an 80-bit float)
    /// and, in AIFC, the compression; the length is cut to what the SSND chunk holds.
    static func aiff(_ file: AudioHeaderBytes, compressed: Bool) throws(ReadError) -> AudioFileInfo {
        var offset = 12, visited = 0
        var comm: (channels: Int, frames: Int, bits: Int, rate: Int, encoding: Encoding)?
        var soundBytes: Int?
        while offset <= file.size - 8, visited < maxChunks, comm == nil || soundBytes == nil {
            visited += 1
            var header = try file.read(offset, 8, "AIFF chunk header")
            let id = try header.fourCC(), size = try header.be32()
            let body = offset + 8
            if id == "COMM" {
                var c = try file.read(body, compressed ? 22 : 18, "AIFF COMM chunk")
                let channels = try c.be16(), frames = try c.be32(), bits = try c.be16()
                let rate = try extended80(&c)
                var encoding: Encoding = .pcm
                if compressed {
                    switch try c.fourCC() {
                    case "NONE", "twos", "sowt", "raw ": encoding = .pcm
                    case "fl32", "FL32", "fl64", "FL64": encoding = .float
                    case "alaw", "ALAW": encoding = .aLaw
                    case "ulaw", "ULAW": encoding = .muLaw
                    case let other:
                        throw ReadError(description: "AIFC compression '\(other)' is not one HapSync plays (AIFC must hold PCM, float, A-law or µ-law)")
                    }
                }
                comm = (channels, frames, bits, rate, encoding)
            } else if id == "SSND" {
                soundBytes = max(0, min(size, file.size - body) - 8)
            }
            offset = body + size + (size & 1)
        }
        guard let comm else { throw ReadError(description: "AIFF file has no COMM chunk") }
        guard let soundBytes else { throw ReadError(description: "AIFF file has no SSND chunk") }
        let bytesPerSample = comm.encoding == .aLaw || comm.encoding == .muLaw ? 1 : (comm.bits + 7) / 8
        let frameBytes = max(1, comm.channels * bytesPerSample)
        let bits = comm.encoding == .aLaw || comm.encoding == .muLaw ? 8 : comm.bits
        return AudioFileInfo(format: .aiff, encoding: comm.encoding, sampleRate: comm.rate, channels: comm.channels,
                             bitsPerSample: bits, frames: min(comm.frames, soundBytes / frameBytes))
    }

    /// An 80-bit IEEE extended float (AIFF's sample rate), rounded to an integer; 0 when it is not
    /// a positive number below 2^31.
    static func extended80(_ c: inout ByteCursor) throws(ReadError) -> Int {
        let signAndExponent = try c.be16()
        let mantissa = try c.be64()
        let exponent = (signAndExponent & 0x7FFF) - 16383 - 63
        guard signAndExponent & 0x8000 == 0, mantissa != 0, exponent > -128, exponent < 0 else { return 0 }
        let value = Double(sign: .plus, exponent: exponent, significand: Double(mantissa))
        return value < Double(Int32.max) ? Int(value.rounded()) : 0
    }

    // MARK: - CAF

    /// CAF: the `desc` chunk gives the rate, encoding and packet shape; the length comes from the
    /// `data` chunk (PCM, A-law, µ-law) or the `pakt` chunk's valid frames (ALAC, AAC).
    static func caf(_ file: AudioHeaderBytes) throws(ReadError) -> AudioFileInfo {
        var version = try file.read(4, 4, "CAF file header")
        guard try version.be16() == 1 else { throw ReadError(description: "CAF file version is not 1") }
        var offset = 8, visited = 0
        var desc: (rate: Double, id: String, flags: Int, bytesPerPacket: Int, framesPerPacket: Int, channels: Int, bits: Int)?
        var dataBytes: Int?, validFrames: Int?, cookie: [UInt8] = []
        while offset <= file.size - 12, visited < maxChunks {
            visited += 1
            var header = try file.read(offset, 12, "CAF chunk header")
            let id = try header.fourCC()
            let declared = try header.be64Count()
            let body = offset + 12
            let size: Int
            if let declared, declared <= file.size - body {
                size = declared
            } else if id == "data" {
                size = file.size - body  // −1 (or too long): the data runs to the end of the file
            } else {
                throw ReadError(description: "CAF '\(id)' chunk is larger than the file")
            }
            switch id {
            case "desc":
                var d = try file.read(body, 32, "CAF desc chunk")
                let rate = Double(bitPattern: try d.be64())
                desc = (rate, try d.fourCC(), try d.be32(), try d.be32(), try d.be32(), try d.be32(), try d.be32())
            case "data":
                dataBytes = max(0, size - 4)  // after the 4-byte edit count
            case "kuki":
                cookie = try file.read(body, min(size, 256), "CAF kuki chunk").bytes
            case "pakt":
                var p = try file.read(body, 24, "CAF pakt chunk")
                _ = try p.be64()
                validFrames = try p.be64Count()
            default:
                break
            }
            offset = body + size
        }
        guard let desc else { throw ReadError(description: "CAF file has no desc chunk") }
        guard let dataBytes else { throw ReadError(description: "CAF file has no data chunk") }
        let rate = desc.rate.isFinite && desc.rate >= 1 && desc.rate <= Double(maxSampleRate) ? Int(desc.rate.rounded()) : 0
        let encoding: Encoding
        switch desc.id {
        case "lpcm": encoding = desc.flags & 1 != 0 ? .float : .pcm
        case "alaw": encoding = .aLaw
        case "ulaw": encoding = .muLaw
        case "alac": encoding = .alac
        case "aac ": encoding = .aac
        default:
            throw ReadError(description: "CAF audio encoded as '\(desc.id)' is not one HapSync plays (CAF must hold PCM, float, A-law, µ-law, ALAC or AAC)")
        }
        let frames: Int
        switch encoding {
        case .alac, .aac:
            guard let validFrames else { throw ReadError(description: "CAF file with \(encoding.rawValue) audio has no packet table (pakt chunk) to give its length") }
            frames = validFrames
        default:
            guard desc.bytesPerPacket > 0, desc.framesPerPacket == 1 else { throw ReadError(description: "CAF desc chunk has no fixed packet size for \(encoding.rawValue) audio") }
            frames = dataBytes / desc.bytesPerPacket
        }
        var bits = encoding.isLossy ? 0 : encoding == .aLaw || encoding == .muLaw ? 8 : desc.bits
        if encoding == .alac, bits == 0 { bits = alacBitDepth(flags: desc.flags, cookie: cookie) }
        return AudioFileInfo(format: .caf, encoding: encoding, sampleRate: rate, channels: desc.channels, bitsPerSample: bits, frames: frames)
    }

    /// An ALAC stream's source bit depth: from the format flags (1...4 = 16, 20, 24, 32 bits), else
    /// from the ALACSpecificConfig in the magic cookie (24 bytes, alone or after QuickTime's
    /// `frma` and `alac` atoms; its sixth byte is the depth); 0 when neither says.
    static func alacBitDepth(flags: Int, cookie: [UInt8]) -> Int {
        if let bits = [1: 16, 2: 20, 3: 24, 4: 32][flags] { return bits }
        let config: Int
        if cookie.count == 24 {
            config = 0
        } else if let atom = (0..<max(0, cookie.count - 35)).last(where: { cookie[$0 + 4..<$0 + 8].elementsEqual(Array("alac".utf8)) }) {
            config = atom + 12  // size, type, version and flags
        } else {
            return 0
        }
        return config + 5 < cookie.count ? Int(cookie[config + 5]) : 0
    }
}
