import Foundation

/// MPEG's formats: MP3 streams and MPEG-4 (M4A) files.
extension AudioFileInfo {
    // MARK: - MP3

    /// One MPEG audio layer III frame header.
    struct MPEGFrame: Equatable {
        /// 1 (MPEG-1), 2 (MPEG-2) or 25 (MPEG-2.5).
        var version: Int
        var sampleRate: Int
        var channels: Int
        /// Bytes in the frame, header included.
        var length: Int
        /// 1152 for MPEG-1, 576 for MPEG-2 and 2.5.
        var samplesPerFrame: Int
        /// Bytes of side information after the header (where a Xing/Info header starts).
        var sideInfo: Int
        var kbps: Int

        /// The frame header at `p`, nil when those bytes are not a layer III frame header.
        init?(_ b: [UInt8], at p: Int) {
            guard p >= 0, p + 4 <= b.count, b[p] == 0xFF, b[p + 1] & 0xE0 == 0xE0 else { return nil }
            let versionBits = Int(b[p + 1] >> 3 & 3), layerBits = Int(b[p + 1] >> 1 & 3)
            let bitrateIndex = Int(b[p + 2] >> 4), rateIndex = Int(b[p + 2] >> 2 & 3), padding = Int(b[p + 2] >> 1 & 1)
            guard versionBits != 1, layerBits == 1, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
            let mpeg1 = versionBits == 3
            version = mpeg1 ? 1 : versionBits == 2 ? 2 : 25
            sampleRate = [44_100, 48_000, 32_000][rateIndex] / (mpeg1 ? 1 : version == 2 ? 2 : 4)
            channels = b[p + 3] >> 6 == 3 ? 1 : 2
            kbps = (mpeg1 ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
                          : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160])[bitrateIndex]
            samplesPerFrame = mpeg1 ? 1152 : 576
            length = samplesPerFrame / 8 * kbps * 1000 / sampleRate + padding
            sideInfo = mpeg1 ? (channels == 1 ? 17 : 32) : (channels == 1 ? 9 : 17)
        }
    }

    /// How far after an ID3v2 tag the first frame is looked for.
    static let mp3SyncSearchBytes = 64 << 10

    /// An MP3 stream: its first layer III frame (at the start, or within 64 KiB after an ID3v2
    /// tag, confirmed by the frame after it), then its length from a Xing/Info header (less the
    /// LAME tag's encoder delay and padding), a VBRI header, or else the first frame's bit rate.
    /// Nil when the bytes do not look like MP3 at all.
    static func mp3(_ file: AudioHeaderBytes, _ head: [UInt8]) throws(ReadError) -> AudioFileInfo? {
        guard let start = try afterID3(file, head) else { return nil }
        let tagged = start > 0
        let window = file.readAvailable(start, (tagged ? mp3SyncSearchBytes : 0) + 8 << 10)
        var found: (at: Int, frame: MPEGFrame)?
        for p in 0...(tagged ? min(mp3SyncSearchBytes, max(0, window.count - 4)) : 0) {
            guard let frame = MPEGFrame(window, at: p) else { continue }
            let next = p + frame.length
            if let after = MPEGFrame(window, at: next), after.version == frame.version, after.sampleRate == frame.sampleRate {
                found = (p, frame)
            } else if start + next >= file.size - 128 {
                found = (p, frame)  // the only frame (before an ID3v1 tag, if any)
            }
            if found != nil { break }
        }
        guard let (p, frame) = found else {
            if tagged { throw ReadError(description: "MP3 file has no MPEG layer III frame within \(mp3SyncSearchBytes >> 10) KiB after its ID3 tag") }
            return nil
        }
        var frames: Int
        var tag = ByteCursor(Array(window.dropFirst(p + 4 + frame.sideInfo).prefix(200)), "MP3 Xing header")
        var vbri = ByteCursor(Array(window.dropFirst(p + 4 + 32).prefix(18)), "MP3 VBRI header")
        let tagID = (try? tag.fourCC()) ?? ""
        if tagID == "Xing" || tagID == "Info" {
            let flags = try tag.be32()
            guard flags & 1 != 0 else { throw ReadError(description: "MP3 \(tagID) header does not give its frame count") }
            let count = try tag.be32()
            try tag.skip((flags & 2 != 0 ? 4 : 0) + (flags & 4 != 0 ? 100 : 0) + (flags & 8 != 0 ? 4 : 0))
            frames = count * frame.samplesPerFrame
            // The LAME tag (also written by FFmpeg's "Lavc"/"Lavf"): 9 bytes of encoder name, then
            // at byte 21 the encoder delay and padding, 12 bits each.
            if tag.remaining >= 24, (try tag.take(4)).allSatisfy({ $0 >= 0x41 && $0 <= 0x7A }) {
                try tag.skip(17)
                let delayPadding = try tag.be(3)
                frames -= (delayPadding >> 12) + (delayPadding & 0xFFF)
            }
        } else if (try? vbri.fourCC()) == "VBRI" {
            try vbri.skip(10)
            frames = try vbri.be32() * frame.samplesPerFrame
        } else {
            var end = file.size
            if file.size >= start + 128, file.readAvailable(file.size - 128, 3).elementsEqual(Array("TAG".utf8)) { end -= 128 }
            let bytes = max(0, end - start - p)
            frames = frameCount(Double(bytes) * 8 / Double(frame.kbps * 1000), rate: Double(frame.sampleRate), rounding: .down)
        }
        return AudioFileInfo(format: .mp3, encoding: .mp3, sampleRate: frame.sampleRate, channels: frame.channels, bitsPerSample: 0, frames: max(0, frames))
    }

    // MARK: - MP4 / M4A

    /// An ISO base media file: the top-level boxes are walked to `moov` (wherever it is), and in it
    /// the first sound track's sample description (`mp4a` with its `esds`, `alac`, `.mp3`), its
    /// media header (time scale, duration) and edit list (priming left out, cut to the edit).
    static func mp4(_ file: AudioHeaderBytes) throws(ReadError) -> AudioFileInfo {
        var offset = 0, visited = 0
        while offset <= file.size - 8, visited < maxChunks {
            visited += 1
            var header = try file.read(offset, min(16, file.size - offset), "MP4 box header")
            let (type, headerSize, size) = try mp4BoxHeader(&header, available: file.size - offset)
            if type == "moov" {
                let moov = try file.read(offset + headerSize, size - headerSize, "MP4 moov box")
                return try mp4Movie(moov.bytes)
            }
            offset += size
        }
        throw ReadError(description: "M4A file has no moov box (its track headers)")
    }

    /// A box's type, header length and total size (a size of 0 runs to the end; 1 is a 64-bit size).
    static func mp4BoxHeader(_ c: inout ByteCursor, available: Int) throws(ReadError) -> (type: String, headerSize: Int, size: Int) {
        let small = try c.be32()
        let type = try c.fourCC()
        var size = small, headerSize = 8
        if small == 1 {
            guard let large = try c.be64Count() else { throw ReadError(description: "MP4 '\(type)' box has an impossible size") }
            size = large
            headerSize = 16
        } else if small == 0 {
            size = available
        }
        guard size >= headerSize, size <= available else { throw ReadError(description: "MP4 '\(type)' box size \(size) does not fit its container") }
        return (type, headerSize, size)
    }

    /// The children of a box body, by type (the first of each type), at most `maxChunks`.
    static func mp4Children(_ bytes: ArraySlice<UInt8>) throws(ReadError) -> [(type: String, body: ArraySlice<UInt8>)] {
        var children: [(String, ArraySlice<UInt8>)] = []
        var offset = bytes.startIndex
        while offset <= bytes.endIndex - 8, children.count < maxChunks {
            var c = ByteCursor(Array(bytes[offset..<min(bytes.endIndex, offset + 16)]), "MP4 box header")
            let (type, headerSize, size) = try mp4BoxHeader(&c, available: bytes.endIndex - offset)
            children.append((type, bytes[(offset + headerSize)..<(offset + size)]))
            offset += size
        }
        return children
    }

    static func child(_ type: String, of bytes: ArraySlice<UInt8>) throws(ReadError) -> ArraySlice<UInt8>? {
        try mp4Children(bytes).first { $0.type == type }?.body
    }

    /// A full box's version and the four bytes of version and flags skipped.
    static func fullBox(_ body: ArraySlice<UInt8>, _ what: String) throws(ReadError) -> (version: Int, cursor: ByteCursor) {
        var c = ByteCursor(Array(body), what)
        let version = try c.u8()
        try c.skip(3)
        return (version, c)
    }

    /// The first sound track of a `moov` box.
    static func mp4Movie(_ moov: [UInt8]) throws(ReadError) -> AudioFileInfo {
        let boxes = try mp4Children(moov[...])
        var movieScale = 0
        if let mvhd = boxes.first(where: { $0.type == "mvhd" })?.body {
            var (version, c) = try fullBox(mvhd, "MP4 mvhd box")
            try c.skip(version == 1 ? 16 : 8)
            movieScale = try c.be32()
        }
        for trak in boxes where trak.type == "trak" {
            guard let mdia = try child("mdia", of: trak.body), let hdlr = try child("hdlr", of: mdia) else { continue }
            var (_, h) = try fullBox(hdlr, "MP4 hdlr box")
            try h.skip(4)
            guard try h.fourCC() == "soun" else { continue }
            return try mp4Track(trak: trak.body, mdia: mdia, movieScale: movieScale)
        }
        throw ReadError(description: "M4A file has no sound track")
    }

    /// A sound track: encoding, channels and rate from its sample description, length from its
    /// media header and edit list.
    static func mp4Track(trak: ArraySlice<UInt8>, mdia: ArraySlice<UInt8>, movieScale: Int) throws(ReadError) -> AudioFileInfo {
        guard let mdhd = try child("mdhd", of: mdia) else { throw ReadError(description: "M4A sound track has no mdhd box") }
        var (version, m) = try fullBox(mdhd, "MP4 mdhd box")
        try m.skip(version == 1 ? 16 : 8)
        let mediaScale = try m.be32()
        let mediaDuration = version == 1 ? try m.be64Count() ?? 0 : try m.be32()
        guard mediaScale > 0 else { throw ReadError(description: "M4A sound track has a time scale of 0") }
        guard mediaDuration > 0 else { throw ReadError(description: "M4A sound track states no duration (a fragmented MP4?), so its length is unknown") }

        // Edit list: a single edit that starts at media time t and lasts d (movie time scale)
        // plays the media from t for d: priming before t is not heard, padding after is cut.
        var length = mediaDuration
        if let edts = try child("edts", of: trak), let elst = try child("elst", of: edts) {
            var (v, e) = try fullBox(elst, "MP4 elst box")
            if try e.be32() >= 1 {
                let segment = v == 1 ? try e.be64Count() ?? 0 : try e.be32()
                let mediaTime = v == 1 ? Int64(bitPattern: try e.be64()) : Int64(Int32(truncatingIfNeeded: try e.be32()))
                if mediaTime > 0, mediaTime < length { length -= Int(mediaTime) }
                if segment > 0, movieScale > 0 {
                    length = min(length, frameCount(Double(segment) / Double(movieScale), rate: Double(mediaScale)))
                }
            }
        }

        guard let minf = try child("minf", of: mdia), let stbl = try child("stbl", of: minf), let stsd = try child("stsd", of: stbl) else {
            throw ReadError(description: "M4A sound track has no sample description (stsd box)")
        }
        var (_, s) = try fullBox(stsd, "MP4 stsd box")
        guard try s.be32() >= 1 else { throw ReadError(description: "M4A sound track has an empty sample description") }
        var entryHeader = ByteCursor(Array(s.bytes[s.position...].prefix(16)), "MP4 sample entry")
        let (format, headerSize, size) = try mp4BoxHeader(&entryHeader, available: s.remaining)
        var entry = ByteCursor(Array(s.bytes[(s.position + headerSize)..<(s.position + size)]), "M4A '\(format)' sample entry")
        try entry.skip(8)  // reserved, data reference index
        let soundVersion = try entry.be16()
        try entry.skip(6)  // revision, vendor
        var channels = try entry.be16()
        var bits = try entry.be16()
        try entry.skip(4)  // compression ID, packet size
        var rate = try entry.be32() >> 16
        switch soundVersion {
        case 1: try entry.skip(16)
        case 2:
            try entry.skip(4)
            let rate64 = Double(bitPattern: try entry.be64())
            rate = rate64.isFinite && rate64 >= 1 && rate64 <= Double(maxSampleRate) ? Int(rate64.rounded()) : 0
            channels = try entry.be32()
            try entry.skip(4)
            bits = try entry.be32()
            try entry.skip(12)
        default: break
        }
        let extensions = entry.bytes[entry.position...]

        let encoding: Encoding
        switch format {
        case "mp4a":
            let (e, configured) = try mp4aEncoding(extensions)
            encoding = e
            channels = configured ?? channels
        case "alac": encoding = .alac
        case ".mp3": encoding = .mp3
        default:
            throw ReadError(description: "M4A audio encoded as '\(format)' is not one HapSync plays (M4A must hold AAC, ALAC or MP3)")
        }
        let frames = frameCount(Double(length) / Double(mediaScale), rate: Double(rate), rounding: .toNearestOrAwayFromZero)
        return AudioFileInfo(format: .mp4, encoding: encoding, sampleRate: rate, channels: channels,
                             bitsPerSample: encoding.isLossy ? 0 : bits, frames: frames)
    }

    /// What an `mp4a` sample entry holds, from its `esds` box (directly or inside QuickTime's
    /// `wave` box): AAC (MPEG-4 audio object types Main, LC, SSR, LTP, SBR, PS; MPEG-2 AAC) or MP3,
    /// and for AAC the channel count its configuration gives (the sample entry's own count is
    /// often a fixed 2).
    static func mp4aEncoding(_ extensions: ArraySlice<UInt8>) throws(ReadError) -> (Encoding, channels: Int?) {
        var esds = try child("esds", of: extensions)
        if esds == nil, let wave = try child("wave", of: extensions) { esds = try child("esds", of: wave) }
        guard let esds else { throw ReadError(description: "M4A mp4a sample entry has no esds box to say how it is encoded") }
        var (_, c) = try fullBox(esds, "MP4 esds box")
        // Descriptors: a tag byte, a length in 1...4 bytes of 7 bits; ES (3) holds DecoderConfig (4)
        // holds DecoderSpecificInfo (5).
        func descriptor(_ c: inout ByteCursor) throws(ReadError) -> (tag: Int, length: Int) {
            let tag = try c.u8()
            var length = 0
            for _ in 0..<4 {
                let b = try c.u8()
                length = length << 7 | (b & 0x7F)
                if b & 0x80 == 0 { break }
            }
            return (tag, length)
        }
        guard try descriptor(&c).tag == 3 else { throw ReadError(description: "M4A esds box does not start with an ES descriptor") }
        try c.skip(2)
        let flags = try c.u8()
        if flags & 0x80 != 0 { try c.skip(2) }
        if flags & 0x40 != 0 { try c.skip(try c.u8()) }
        if flags & 0x20 != 0 { try c.skip(2) }
        guard try descriptor(&c).tag == 4 else { throw ReadError(description: "M4A esds box has no decoder configuration") }
        let objectType = try c.u8()
        switch objectType {
        case 0x66, 0x67, 0x68: return (.aac, nil)  // MPEG-2 AAC Main, LC, SSR
        case 0x69, 0x6B: return (.mp3, nil)
        case 0x40: break
        default:
            throw ReadError(description: "M4A audio of MPEG-4 object type 0x\(String(objectType, radix: 16, uppercase: true)) is not one HapSync plays (M4A must hold AAC, ALAC or MP3)")
        }
        try c.skip(12)  // stream type, buffer size, bit rates
        guard try descriptor(&c).tag == 5 else { throw ReadError(description: "M4A esds box has no AAC configuration") }
        // AudioSpecificConfig, a bit string: object type (5 bits, 31 = 6 more + 32), rate index
        // (4 bits, 15 = a 24-bit rate), channel configuration (4 bits).
        var bits = 0, bitCount = 0
        func read(_ n: Int) throws(ReadError) -> Int {
            while bitCount < n {
                bits = bits << 8 | (try c.u8())
                bitCount += 8
            }
            bitCount -= n
            return bits >> bitCount & (1 << n - 1)
        }
        var audioObjectType = try read(5)
        if audioObjectType == 31 { audioObjectType = 32 + (try read(6)) }
        guard [1, 2, 3, 4, 5, 29].contains(audioObjectType) else {
            throw ReadError(description: "M4A audio of MPEG-4 audio object type \(audioObjectType) is not one HapSync plays (AAC Main, LC, SSR, LTP, HE-AAC and HE-AACv2 are)")
        }
        if try read(4) == 15 { _ = try read(24) }
        let configuration = try read(4)
        return (.aac, [1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 8, 11: 7, 12: 8, 14: 8][configuration])
    }
}
