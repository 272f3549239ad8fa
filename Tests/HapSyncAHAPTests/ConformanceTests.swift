import Foundation
import HapSyncAHAP
import Testing

/// The 21 real AHAP files in ../shared/conformance, made for Core Haptics by others.
@Suite("Conformance corpus")
struct ConformanceTests {
    static let files = ahapFiles(under: conformanceRoot.appendingPathComponent("SampleAHAPs"))
    static let streamingAssets = conformanceRoot.appendingPathComponent("StreamingAssets")

    @Test func corpusIsPresent() {
        #expect(Self.files.count == 21, "expected the 21 AHAP files of ../shared/conformance next to the checkout, found \(Self.files.count) at \(conformanceRoot.path)")
    }

    @Test(arguments: files)
    func readsWithoutErrors(_ url: URL) throws {
        let report = AHAPReader().diagnose(contentsOf: url)
        #expect(report.errors.isEmpty, "\(report.errors.map(\.description))")
        let pattern = try #require(report.pattern)
        #expect(!pattern.entries.isEmpty)
        // Every finding in this corpus is one of the leniencies these files are known for.
        let expected: Set<AHAPDiagnostic.Code> = [.trailingComma, .clamped]
        #expect(report.warnings.allSatisfy { expected.contains($0.code) }, "\(report.warnings.map(\.description))")
    }

    @Test func sevenFilesHaveTrailingCommas() {
        let withCommas = Self.files.filter { url in
            AHAPReader().diagnose(contentsOf: url).warnings.contains { $0.code == .trailingComma }
        }
        #expect(withCommas.map(\.lastPathComponent) == ["Bounce.ahap", "Bouncing.ahap", "Close.ahap", "Jump.ahap", "Open.ahap", "Recharge.ahap", "Spin.ahap"])
    }

    @Test(arguments: files)
    func roundTrips(_ url: URL) throws {
        let original = try AHAPReader().read(contentsOf: url).pattern
        let text = AHAPWriter.string(from: original)
        let again = try AHAPReader().read(data: Data(text.utf8))
        #expect(again.pattern == original)
        #expect(again.warnings.isEmpty, "canonical output is strict JSON with in-range values: \(again.warnings)")
        #expect(AHAPWriter.string(from: again.pattern) == text, "writing is deterministic")
    }

    @Test(arguments: files)
    func audioResolvesWithStreamingAssets(_ url: URL) throws {
        let pattern = try AHAPReader().read(contentsOf: url).pattern
        let resolver = AHAPResourceResolver(ahapFile: url, resources: [Self.streamingAssets])
        let checked = resolver.check(pattern)
        #expect(checked.diagnostics.isEmpty, "\(checked.diagnostics.map(\.description))")
        for e in pattern.events where e.type == .audioCustom {
            let file = try #require(checked.resolved[e.waveformPath!])
            let info = try AudioFileInfo(contentsOf: file)
            #expect(info.format == .wav && info.sampleRate == 48_000 && info.channels == 1 && info.bitsPerSample == 24)
        }
    }

    @Test func knownFacts() throws {
        func read(_ name: String) throws -> AHAPPattern {
            try AHAPReader().read(contentsOf: Self.files.first { $0.lastPathComponent == name }!).pattern
        }
        // Recharge: a 16-point curve with near-equal step times 0.5 / 0.50001.
        let recharge = try read("Recharge.ahap")
        #expect(recharge.curves.first?.controlPoints.count == 16)
        #expect(recharge.curves.first?.controlPoints[5].time == 0.50001)
        // Implode: curves start at 0.2 s; their control points are relative to that.
        let implode = try read("Implode.ahap")
        #expect(implode.curves.map(\.time) == [0.2, 0.2])
        #expect(implode.duration() == 1.0)
        // Texture: many transients 10-30 ms apart.
        let texture = try read("Texture.ahap")
        let times = texture.events.filter { $0.type == .hapticTransient }.map(\.time).sorted()
        #expect(times.count > 100)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.filter { $0 > 0 }
        #expect(gaps.min()! >= 0.009)
    }
}
