import Foundation
import Glibc
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncTestSupport
import Testing

let assets = TestFiles.asset("audio")

/// A PCM WAV of `seconds` of silence that takes no disk (`WAVWriter.writeSparse`).
func sparseWAV(_ url: URL, rate: Int, channels: Int, bits: Int, seconds: Double) throws {
    try WAVWriter.writeSparse(to: url, rate: rate, channels: channels, bits: bits, seconds: seconds)
}

@Suite("Decoding")
struct DecoderTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory

    init() throws {
        scratch = try TemporaryDirectory("dec")
    }

    /// Lengths at 48 kHz: the files' frames × 48000 / their rate (Assets/README.md says how they were made).
    @Test(arguments: [("tap-48k-mono-16.wav", 2_880), ("hum-48k-stereo-16.flac", 9_600),
                      ("chime-44k1-stereo-24.wav", 24_000), ("thud-44k1-mono-24.flac", 12_000)])
    func decodesAndConvertsToTheOutputRate(_ name: String, _ frames: Int) throws {
        let s = try AudioFileDecoder.decode(assets.appendingPathComponent(name), sampleRate: 48_000)
        #expect(abs(s.frames - frames) <= 2, "\(name): \(s.frames) frames")
        #expect(s.left.contains { $0 != 0 })
        let peak = max(s.left.map(abs).max()!, s.right.map(abs).max()!)
        #expect(peak > 0.05 && peak < 1.05)
        if name.contains("mono") { #expect(s.left == s.right, "mono is duplicated to both channels") }
    }

    @Test func stereoKeepsItsChannels() throws {
        // The chime was made with the 880 Hz tone 0.7 left / 0.3 right and 1320 Hz the other way round.
        let s = try AudioFileDecoder.decode(assets.appendingPathComponent("chime-44k1-stereo-24.wav"), sampleRate: 44_100)
        #expect(s.frames == 22_050, "no conversion at the file's own rate")
        #expect(s.left != s.right)
    }

    /// The same 0.1 s tone in every format Core Haptics plays decodes to the WAV's samples: the
    /// lossless ones to the same 16-bit values, AAC and MP3 to the same waveform within their
    /// coding error (at most 10 % of the tone's RMS; 64 kbit/s MP3 is at 5 %), all 4,410 frames long with encoder priming
    /// and padding left out, and at 48 kHz to 4,800 frames.
    @Test(arguments: ["tone-44k1-mono-16.aiff", "tone-44k1-mono-16.caf", "tone-44k1-mono-16-alac.caf",
                      "tone-44k1-mono-16-alac.m4a", "tone-44k1-mono-aac.m4a", "tone-44k1-mono.mp3"])
    func everyFormatDecodesToTheSameTone(_ name: String) throws {
        let reference = try AudioFileDecoder.decode(assets.appendingPathComponent("tone-44k1-mono-16.wav"), sampleRate: 44_100)
        let s = try AudioFileDecoder.decode(assets.appendingPathComponent(name), sampleRate: 44_100)
        #expect(s.frames == 4_410)
        #expect(s.left == s.right)
        let rms = (reference.left.map { $0 * $0 }.reduce(0, +) / Float(reference.frames)).squareRoot()
        let error = (zip(s.left, reference.left).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Float(reference.frames)).squareRoot()
        if name.contains("aac") || name.hasSuffix(".mp3") {
            #expect(error < 0.1 * rms, "\(name): error \(error) against RMS \(rms)")
        } else {
            #expect(error < 1e-6, "\(name) is lossless")
        }
        #expect(abs(try AudioFileDecoder.decode(assets.appendingPathComponent(name), sampleRate: 48_000).frames - 4_800) <= 1)
    }

    /// Damaged files (every 13th byte inverted, one at a time) decode or fail with a LoadError
    /// naming the file: the libraries' errors come back through our wrappers, nothing traps,
    /// hangs or returns more than the (damaged) header's length.
    @Test(arguments: ["tone-44k1-mono-aac.m4a", "tone-44k1-mono-16-alac.caf", "tone-44k1-mono.mp3", "tone-44k1-mono-16.aiff"])
    func damagedFilesDecodeOrFailNamingTheFile(_ name: String) throws {
        let dir = scratch.url
        let bytes = [UInt8](try Data(contentsOf: assets.appendingPathComponent(name)))
        let url = dir.appendingPathComponent(name)
        for i in stride(from: 0, to: bytes.count, by: 13) {
            var damaged = bytes
            damaged[i] = ~damaged[i]
            try Data(damaged).write(to: url)
            do {
                let s = try AudioFileDecoder.decode(url, sampleRate: 44_100)
                let header = try AudioFileInfo(contentsOf: url)
                #expect(s.frames <= Int((header.duration * 44_100).rounded(.up)) + 1, "byte \(i): \(s.frames) frames")
            } catch {
                #expect("\(error)".contains(url.path), "byte \(i): \(error)")
            }
        }
    }

    @Test func badFilesAreNamed() throws {
        let dir = scratch.url
        let junk = dir.appendingPathComponent("junk.wav")
        try Data("RIFF....WAVEnot really".utf8).write(to: junk)
        #expect {
            _ = try AudioFileDecoder.decode(junk, sampleRate: 48_000)
        } throws: { error in
            "\(error)".hasPrefix("cannot play audio file \(junk.path): ")
        }
        let ogg = dir.appendingPathComponent("song.ogg")
        try Data("OggS".utf8 + [UInt8](repeating: 0, count: 60)).write(to: ogg)
        #expect {
            _ = try AudioFileDecoder.decode(ogg, sampleRate: 48_000)
        } throws: { error in
            "\(error)" == "cannot play audio file \(ogg.path): an Ogg file (Vorbis, Opus or FLAC in Ogg), which Core Haptics does not play; HapSync plays WAV, AIFF/AIFC and CAF (PCM, float, A-law, µ-law; CAF also ALAC and AAC), FLAC, MP3, and M4A (AAC, ALAC, MP3)"
        }
        let missing = dir.appendingPathComponent("missing.flac")
        #expect(throws: AudioFileDecoder.LoadError.self) { _ = try AudioFileDecoder.decode(missing, sampleRate: 48_000) }
    }

    /// A device node is no audio file: refused by kind, before it is opened (`RegularFile`, whose
    /// FIFO case the header tests cover).
    @Test func aDeviceIsRefusedByKind() {
        #expect {
            _ = try AudioFileDecoder.decode(URL(fileURLWithPath: "/dev/zero"), sampleRate: 48_000)
        } throws: { error in
            "\(error)" == "cannot read audio file /dev/zero: it is a character device, not a regular file"
        }
    }
}
