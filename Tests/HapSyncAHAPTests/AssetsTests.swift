import Foundation
import HapSyncAHAP
import Testing

/// Our own examples in Assets/: clean, round-tripping, and together covering every feature.
@Suite("Assets")
struct AssetsTests {
    static let assets = packageRoot.appendingPathComponent("Assets")
    static let files = ahapFiles(under: assets)

    @Test func thereAreExamples() {
        let names = Self.files.map { $0.path.replacingOccurrences(of: Self.assets.path + "/", with: "") }
        #expect(names.filter { !$0.hasPrefix("feedback/") } == ["clicks.ahap", "engine.ahap", "heartbeat.ahap", "rumble-steps.ahap", "taps.ahap"])
        #expect(names.filter { $0.hasPrefix("feedback/") }.count == 17, "the SensoryFeedback styles (hapsync feedback --export)")
    }

    @Test(arguments: files)
    func readsCleanlyAndRoundTrips(_ url: URL) throws {
        let report = AHAPReader().diagnose(contentsOf: url)
        #expect(report.diagnostics.isEmpty, "our own examples have no warnings: \(report.diagnostics.map(\.description))")
        let pattern = try #require(report.pattern)
        #expect(try AHAPReader().read(data: AHAPWriter.data(from: pattern)).pattern == pattern)
        let checked = AHAPResourceResolver(ahapFile: url, resources: []).check(pattern)
        #expect(checked.diagnostics.isEmpty, "every audio file is beside the examples: \(checked.diagnostics)")
    }

    @Test func togetherTheyCoverEveryFeature() throws {
        let patterns = try Self.files.map { try AHAPReader().read(contentsOf: $0).pattern }
        let events = patterns.flatMap(\.events)
        #expect(Set(events.map(\.type)) == Set(AHAPEventType.allCases))
        #expect(Set(events.flatMap { $0.parameters.map(\.id) }) == Set(AHAPEventParameterID.allCases))
        let dynamic = Set(patterns.flatMap { $0.parameters.map(\.id) + $0.curves.map(\.id) })
        #expect(dynamic == Set(AHAPDynamicParameterID.allCases))
        #expect(!patterns.flatMap(\.parameters).isEmpty, "Parameter entries")
        #expect(patterns.flatMap(\.curves).contains { $0.time > 0 }, "a curve starting after 0")
        #expect(events.contains { $0.loopEnabled && $0.duration != nil }, "a looped AudioCustom with EventDuration")
        #expect(events.contains { $0.type == .audioCustom && !$0.useVolumeEnvelope }, "the volume envelope turned off")
        #expect(events.contains { $0.value(.sustained) == 0 } && events.contains { $0.type.isContinuous && $0.value(.sustained) == 1 })
        let paths = Set(events.compactMap(\.waveformPath))
        #expect(paths.contains { $0.hasSuffix(".wav") } && paths.contains { $0.hasSuffix(".flac") })
    }

    /// Expected values are what the sox commands in Assets/README.md were asked to make.
    @Test(arguments: [
        ("tap-48k-mono-16.wav", AudioFileInfo(format: .wav, sampleRate: 48_000, channels: 1, bitsPerSample: 16, isFloat: false, frames: 2_880)),
        ("chime-44k1-stereo-24.wav", AudioFileInfo(format: .wav, sampleRate: 44_100, channels: 2, bitsPerSample: 24, isFloat: false, frames: 22_050)),
        ("hum-48k-stereo-16.flac", AudioFileInfo(format: .flac, sampleRate: 48_000, channels: 2, bitsPerSample: 16, isFloat: false, frames: 9_600)),
        ("thud-44k1-mono-24.flac", AudioFileInfo(format: .flac, sampleRate: 44_100, channels: 1, bitsPerSample: 24, isFloat: false, frames: 11_025)),
        ("click-48k-mono-16.wav", AudioFileInfo(format: .wav, sampleRate: 48_000, channels: 1, bitsPerSample: 16, isFloat: false, frames: 144)),
    ])
    func audioHeaders(_ name: String, _ expected: AudioFileInfo) throws {
        #expect(try AudioFileInfo(contentsOf: Self.assets.appendingPathComponent("audio").appendingPathComponent(name)) == expected)
    }

    @Test func extensibleFloatWavAndGarbage() throws {
        // A WAVE_FORMAT_EXTENSIBLE header (40-byte fmt) announcing 32-bit float stereo at 48 kHz, 100 frames.
        var b: [UInt8] = Array("RIFF".utf8) + le32(4 + 48 + 8 + 800) + Array("WAVE".utf8)
        b += Array("fmt ".utf8) + le32(40) + le16(0xFFFE) + le16(2) + le32(48_000) + le32(48_000 * 8) + le16(8) + le16(32)
        b += le16(22) + le16(32) + le32(3) + le16(3) + Array(repeating: 0, count: 14)
        b += Array("data".utf8) + le32(800) + Array(repeating: 0, count: 800)
        let info = try AudioFileInfo(header: b, fileSize: b.count)
        #expect(info == AudioFileInfo(format: .wav, sampleRate: 48_000, channels: 2, bitsPerSample: 32, isFloat: true, frames: 100))
        #expect(throws: AudioFileInfo.ReadError.self) { try AudioFileInfo(header: Array("not audio at all".utf8), fileSize: 16) }
    }

    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
}
