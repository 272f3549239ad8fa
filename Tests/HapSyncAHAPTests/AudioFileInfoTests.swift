import Foundation
import HapSyncAHAP
import HapSyncTestSupport
import Testing

/// The header reader knows every format HapSync plays, says why it does not play the others,
/// never opens what is not a regular file, and survives any bytes.
@Suite("Audio file headers")
struct AudioFileInfoTests {
    static let audio = packageRoot.appendingPathComponent("Assets/audio")

    /// The same 0.1 s tone (4,410 frames at 44.1 kHz, mono) in every container Core Haptics
    /// plays (Assets/README.md says how each was made): each header gives its length without the
    /// encoder's priming and padding, as a decoder plays it.
    @Test(arguments: [("tone-44k1-mono-16.wav", "WAV"), ("tone-44k1-mono-16.aiff", "AIFF"), ("tone-44k1-mono-16.caf", "CAF"),
                      ("tone-44k1-mono-16-alac.caf", "CAF"), ("tone-44k1-mono-16-alac.m4a", "M4A"),
                      ("tone-44k1-mono-aac.m4a", "M4A"), ("tone-44k1-mono.mp3", "MP3")])
    func everyFormatCoreHapticsPlays(_ name: String, _ format: String) throws {
        let info = try AudioFileInfo(contentsOf: Self.audio.appendingPathComponent(name))
        #expect(info.format.rawValue == format && info.sampleRate == 44_100 && info.channels == 1 && info.frames == 4_410)
    }

    @Test(arguments: [
        ("tone-44k1-mono-16.wav", AudioFileInfo.Format.wav, AudioFileInfo.Encoding.pcm, 16),
        ("tone-44k1-mono-16.aiff", .aiff, .pcm, 16),
        ("tone-44k1-mono-16.caf", .caf, .pcm, 16),
        ("tone-44k1-mono-16-alac.caf", .caf, .alac, 16),
        ("tone-44k1-mono-16-alac.m4a", .mp4, .alac, 16),
        ("tone-44k1-mono-aac.m4a", .mp4, .aac, 0),
        ("tone-44k1-mono.mp3", .mp3, .mp3, 0),
    ])
    func encodingsAndSampleSizes(_ name: String, _ format: AudioFileInfo.Format, _ encoding: AudioFileInfo.Encoding, _ bits: Int) throws {
        let info = try AudioFileInfo(contentsOf: Self.audio.appendingPathComponent(name))
        #expect(info == AudioFileInfo(format: format, encoding: encoding, sampleRate: 44_100, channels: 1, bitsPerSample: bits, frames: 4_410))
    }

    @Test func descriptionsNameTheContainerAndEncoding() throws {
        #expect(try AudioFileInfo(contentsOf: Self.audio.appendingPathComponent("tone-44k1-mono-aac.m4a")).formatDescription == "M4A, AAC")
        #expect(try AudioFileInfo(contentsOf: Self.audio.appendingPathComponent("tone-44k1-mono-16-alac.caf")).formatDescription == "CAF, 16-bit ALAC")
        #expect(try AudioFileInfo(contentsOf: Self.audio.appendingPathComponent("tone-44k1-mono-16.wav")).formatDescription == "WAV, 16-bit PCM")
        #expect(try AudioFileInfo(contentsOf: Self.audio.appendingPathComponent("hum-48k-stereo-16.flac")).formatDescription == "FLAC, 16-bit")
    }

    /// An M4A written without `-movflags faststart` keeps its `moov` box after the audio: the
    /// header bytes alone do not hold it, the file does.
    @Test func anM4AsTrackHeadersAtTheEndAreFound() throws {
        let url = Self.audio.appendingPathComponent("tone-44k1-mono-aac.m4a")
        let bytes = [UInt8](try Data(contentsOf: url))
        let moov = try #require((0..<(bytes.count - 8)).first { bytes[$0 + 4..<$0 + 8].elementsEqual(Array("moov".utf8)) })
        #expect(moov > bytes.count / 2, "the fixture's moov box is at its end")
        #expect(throws: AudioFileInfo.ReadError.self) { try AudioFileInfo(header: Array(bytes.prefix(64)), fileSize: bytes.count) }
        #expect(try AudioFileInfo(header: bytes, fileSize: bytes.count).frames == 4_410)
    }

    /// An Ogg page, and a FLAC STREAMINFO whose total sample count is 0 (unknown).
    static let ogg: [UInt8] = Array("OggS".utf8) + [UInt8](repeating: 0, count: 60)
    static let flacOfUnknownLength: [UInt8] = {
        var b: [UInt8] = Array("fLaC".utf8) + [0x80, 0, 0, 34]                 // last block, STREAMINFO, 34 bytes
        b += [0x10, 0x00, 0x10, 0x00, 0, 0, 0, 0, 0, 0]                         // block and frame sizes
        b += [0x0A, 0xC4, 0x42, 0xF0, 0, 0, 0, 0]                               // 44100 Hz, 2 channels, 16 bits, 0 samples
        return b + [UInt8](repeating: 0, count: 16)                             // MD5
    }()

    /// What nothing here plays is refused with the reason and the list of what plays.
    @Test(arguments: [
        (ogg, "an Ogg file"),
        (flacOfUnknownLength, "does not state its length"),
        (Array("not audio at all".utf8), "not an audio format HapSync knows"),
    ])
    func unplayableFilesSayWhy(_ bytes: [UInt8], _ words: String) {
        #expect {
            try AudioFileInfo(header: bytes, fileSize: bytes.count)
        } throws: { error in
            let text = "\(error)"
            return text.contains(words) && (words == "does not state its length" || text.contains("HapSync plays WAV, AIFF/AIFC and CAF"))
        }
    }

    @Test func aWavOfAnotherEncodingIsNamed() {
        // IMA ADPCM (0x11), which Core Haptics' WAV reader takes but HapSync's does not.
        var b: [UInt8] = Array("RIFF".utf8) + le32(4 + 24 + 8 + 256) + Array("WAVE".utf8)
        b += Array("fmt ".utf8) + le32(16) + le16(0x11) + le16(1) + le32(44_100) + le32(22_000) + le16(256) + le16(4)
        b += Array("data".utf8) + le32(256) + Array(repeating: 0, count: 256)
        #expect {
            try AudioFileInfo(header: b, fileSize: b.count)
        } throws: { error in
            "\(error)" == "WAV sample format 0x11 is not one HapSync plays (WAV must hold PCM, float, A-law or µ-law)"
        }
    }

    /// A FIFO (which a blocking open waits on forever) and a device node are refused, by kind,
    /// without blocking.
    @Test func aFIFOOrDeviceIsNoAudioFile() throws {
        let dirFolder = try TemporaryDirectory()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let fifo = dir.appendingPathComponent("x.wav")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let path = fifo.path
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 20)
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        #expect {
            try AudioFileInfo(contentsOf: fifo)
        } throws: { error in
            "\(error)" == "\(fifo.path) is a FIFO (named pipe), not a regular file; refusing to read it"
        }
        #expect {
            try AudioFileInfo(contentsOf: URL(fileURLWithPath: "/dev/zero"))
        } throws: { error in
            "\(error)" == "/dev/zero is a character device, not a regular file; refusing to read it"
        }
    }

    @Test func aDirectoryIsNotOpened() throws {
        let dirFolder = try TemporaryDirectory()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        #expect(throws: RegularFile.Failure.notRegular(path: dir.path, kind: "a directory")) { try RegularFile.open(dir.path) }
        #expect(RegularFile.kind(of: dir.appendingPathComponent("nothing").path) == .failure(.cannotOpen(path: dir.appendingPathComponent("nothing").path, reason: "No such file or directory")))
    }

    /// Sizes and durations in headers are the file's word: absurd ones give a length (saturated)
    /// or an error, never an arithmetic trap. An MP3 without a Xing header is measured from the
    /// file's size, here the largest there is.
    @Test func absurdSizesNeverTrap() throws {
        let mp3 = [UInt8](try Data(contentsOf: Self.audio.appendingPathComponent("tone-44k1-mono.mp3")))
        // The first frame with its Info tag blanked: a constant bit rate stream measured by size.
        var cbr = mp3
        let tag = try #require((0..<(cbr.count - 4)).first { cbr[$0..<$0 + 4].elementsEqual(Array("Info".utf8)) })
        cbr.replaceSubrange(tag..<tag + 4, with: [0, 0, 0, 0])
        let info = try AudioFileInfo(header: cbr, fileSize: Int.max)
        #expect(info.format == .mp3 && info.frames > 0)
    }

    @Test func frameCountsAreCheckedConversions() {
        #expect(AudioFileInfo.frameCount(0.25, rate: 44_100) == 11_025)
        #expect(AudioFileInfo.frameCount(0.1, rate: 3, rounding: .up) == 1)
        #expect(AudioFileInfo.frameCount(1e300, rate: 48_000) == Int.max)
        #expect(AudioFileInfo.frameCount(.infinity, rate: 48_000) == Int.max)
        #expect(AudioFileInfo.frameCount(-1, rate: 48_000) == 0)
        #expect(AudioFileInfo.frameCount(.nan, rate: 48_000) == 0)
    }

    /// Every prefix of each fixture's first 600 bytes, and each of its first 512 bytes set to 0x00,
    /// 0xFF or inverted, reads or fails with an error: nothing traps.
    @Test func damagedHeadersNeverTrap() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.audio.path).sorted()
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: Self.audio.appendingPathComponent(name)))
            for cut in 0..<min(bytes.count, 600) {
                _ = try? AudioFileInfo(header: Array(bytes.prefix(cut)), fileSize: bytes.count)
            }
            for i in 0..<min(bytes.count, 512) {
                for change in [{ (_: UInt8) in UInt8(0) }, { _ in 0xFF }, { ~$0 }] {
                    var damaged = bytes
                    damaged[i] = change(bytes[i])
                    if let info = try? AudioFileInfo(header: damaged, fileSize: damaged.count) {
                        #expect(info.sampleRate > 0 && info.channels > 0 && info.frames >= 0)
                    }
                }
            }
        }
    }

    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
}
