import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// Loading a playable pattern: what is read, found, measured and compiled, and what is said when
/// something is wrong. Expectations come from the files' contents, not from the loader's output.
@Suite("PlayablePattern")
struct PlayablePatternTests {
    static let assets = TestFiles.assets

    /// An AHAP file in a fresh folder, with other files beside it.
    func folder(_ ahap: String, files: [String: Data] = [:]) throws -> URL {
        let dir = try TemporaryDirectory.create("playable")
        for (name, data) in files { try data.write(to: dir.appendingPathComponent(name)) }
        let url = dir.appendingPathComponent("p.ahap")
        try Data(ahap.utf8).write(to: url)
        return url
    }

    @Test func loadsAFileWithItsAudioFromItsOwnFolder() throws {
        // heartbeat.ahap: four AudioCustom events on audio/thud-44k1-mono-24.flac (44.1 kHz), the
        // last at 1.08 s, without EventDuration: the pattern lasts until that thud ends, 1.33 s.
        let url = Self.assets.appendingPathComponent("heartbeat.ahap")
        let playable = try PlayablePattern(contentsOf: url)
        #expect(playable.name == url.path)
        #expect(playable.audio.count == 4)
        #expect(playable.audio.allSatisfy { $0.waveformPath == "audio/thud-44k1-mono-24.flac" && $0.info?.sampleRate == 44_100 && $0.problem == nil })
        #expect(playable.audioFiles.mapValues(\.path) == ["audio/thud-44k1-mono-24.flac": Self.assets.appendingPathComponent("audio/thud-44k1-mono-24.flac").path])
        #expect(abs(playable.timeline.duration - 1.33) < 1e-9)
        #expect(playable.timeline.voices.allSatisfy { $0.fileLength != nil && $0.end != nil })
        #expect(playable.diagnostics.allSatisfy { $0.severity == .warning })
        #expect(playable.audio[0].entryPath.description == "Pattern[\(playable.audio[0].entryIndex)].Event")
    }

    @Test func resourceRootsAreSearchedAfterTheFilesFolder() throws {
        // Implode.ahap names CoreHaptics/Ricochet/Implode.wav, which lies in StreamingAssets.
        let url = TestFiles.conformance.appendingPathComponent("SampleAHAPs/Ricochet/Implode.ahap")
        let alone = try PlayablePattern(contentsOf: url)
        let missing = try #require(alone.diagnostics.first { $0.code == .resourceNotFound })
        #expect(missing.severity == .warning && missing.path.description == "Pattern[3].Event.EventWaveformPath")
        #expect(missing.line != nil && missing.column != nil, "located in the file like the reader's findings")
        #expect(alone.audio.count == 1 && alone.audio[0].file == nil && alone.audio[0].problem?.contains("not found") == true)
        #expect(alone.audioFiles.isEmpty && alone.timeline.voices[0].end == nil, "length unknown: no EventDuration, no file")

        let found = try PlayablePattern(contentsOf: url, resources: [TestFiles.conformance.appendingPathComponent("StreamingAssets")])
        #expect(found.diagnostics.allSatisfy { $0.code != .resourceNotFound })
        #expect(found.audio[0].info?.sampleRate == 48_000)
        #expect(found.audioFiles["CoreHaptics/Ricochet/Implode.wav"]?.path.hasSuffix("StreamingAssets/CoreHaptics/Ricochet/Implode.wav") == true)
        #expect(found.timeline.voices[0].fileLength != nil)
    }

    @Test func errorsThrowWithEveryFindingLocated() throws {
        let url = try folder("""
            { "Version": 1.0, "Pattern": [
              { "Event": { "Time": -0.25, "EventType": "HapticTransient" } },
              { "Event": { "Time": 0.1, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "Value": 0.5 } ] } }
            ] }
            """)
        let check = PlayablePattern.Check(contentsOf: url)
        #expect(check.pattern == nil && check.audio.isEmpty)
        #expect(check.errors.map(\.code) == [.negativeTime] && check.warnings.map(\.code) == [.valueKeyAlias])
        #expect(check.errors[0].line == 2 && check.errors[0].column == 24)
        do {
            _ = try PlayablePattern(check)
            Issue.record("a pattern with errors is not playable")
        } catch {
            #expect(error.diagnostics == check.diagnostics, "errors and warnings alike")
            #expect(error.renderError == nil && error.errors.count == 1)
            #expect(error.description.hasPrefix("\(url.path) has 1 error\n\(url.path):2:24: error: Pattern[0].Event.Time"))
        }
    }

    @Test func anUnsafeWaveformPathIsAnErrorAndNoFileIsLookedUp() throws {
        let url = try folder("""
            { "Version": 1, "Pattern": [ { "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "../secret.wav" } } ] }
            """)
        let check = PlayablePattern.Check(contentsOf: url)
        #expect(check.pattern == nil && check.audio.isEmpty)
        #expect(check.errors.map(\.code) == [.unsafeWaveformPath] && check.errors[0].line == 1)
        #expect(throws: PlayablePattern.LoadError.self) { try PlayablePattern(check) }
    }

    @Test func aLinkOutOfTheRootsIsALocatedErrorOfTheResolver() throws {
        let outside = try folder("{}", files: ["secret.wav": Data("RIFF".utf8)]).deletingLastPathComponent().appendingPathComponent("secret.wav")
        let url = try folder("""
            { "Version": 1, "Pattern": [
              { "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "link.wav" } } ] }
            """)
        try FileManager.default.createSymbolicLink(at: url.deletingLastPathComponent().appendingPathComponent("link.wav"), withDestinationURL: outside)
        let check = PlayablePattern.Check(contentsOf: url)
        #expect(check.pattern == nil, "the reader found nothing wrong; the resolver did")
        #expect(check.errors.map(\.code) == [.resourceOutsideRoots])
        #expect(check.errors[0].line == 2 && check.errors[0].file == url.path)
        #expect(check.audio.count == 1 && check.audio[0].file == nil && check.audio[0].problem?.contains("symbolic link") == true)
        let error = #expect(throws: PlayablePattern.LoadError.self) { try PlayablePattern(check) }
        #expect(error?.errors == check.errors)
    }

    @Test func anUnreadableHeaderLeavesTheLengthUnknown() throws {
        let url = try folder("""
            { "Version": 1, "Pattern": [ { "Event": { "Time": 0.5, "EventType": "AudioCustom", "EventWaveformPath": "noise.wav" } },
                                         { "Event": { "Time": 0, "EventType": "HapticTransient" } } ] }
            """, files: ["noise.wav": Data("not a wave file".utf8)])
        let playable = try PlayablePattern(contentsOf: url)
        let noise = try #require(playable.audio.first)
        #expect(noise.file != nil && noise.info == nil && noise.problem != nil)
        #expect(playable.check.audioLengths.isEmpty)
        #expect(playable.audioFiles.count == 1, "resolved: a player may still try to decode it")
        #expect(playable.timeline.voices[0].end == nil)
        #expect(playable.timeline.duration == 0.5, "the voice starts at 0.5 s and its length is unknown")
    }

    @Test func aMissingFileIsOneLocatedError() {
        let check = PlayablePattern.Check(contentsOf: URL(fileURLWithPath: "/nonexistent/p.ahap"))
        #expect(check.errors.map(\.code) == [.fileUnreadable])
        #expect(check.errors[0].message == "no such file")
    }

    @Test func aPatternBuiltInCodeCompilesTheSameAsItsTimeline() throws {
        let pattern = try AHAPPatternBuilder()
            .transient(at: 0, intensity: 0.8, sharpness: 0.3)
            .continuous(at: 0.05, duration: 0.2, intensity: 0.6, sharpness: 0.4, release: 0.1)
            .build()
        let playable = try PlayablePattern(pattern: pattern, name: "built")
        #expect(playable.name == "built" && playable.pattern == pattern)
        #expect(playable.diagnostics.isEmpty && playable.audio.isEmpty && playable.audioFiles.isEmpty)
        #expect(playable.timeline.commands == (try PatternTimeline(pattern: pattern)).commands)
    }

    @Test func aPatternBuiltInCodeFindsItsAudioInTheResources() throws {
        let pattern = try AHAPPatternBuilder().audioCustom(at: 0, path: "audio/thud-44k1-mono-24.flac").build()
        let playable = try PlayablePattern(pattern: pattern, name: "built", resources: [Self.assets])
        #expect(playable.audio.count == 1 && playable.audio[0].info?.sampleRate == 44_100)
        let alone = try PlayablePattern(pattern: pattern, name: "built")
        #expect(alone.diagnostics.map(\.code) == [.resourceNotFound])
        #expect(alone.diagnostics[0].file == "built" && alone.diagnostics[0].line == nil, "no text to locate it in")
    }

    @Test func aPatternThatDoesNotCompileCarriesTheRenderError() throws {
        let pattern = try AHAPPatternBuilder().transient(at: 0).build()
        let error = #expect(throws: PlayablePattern.LoadError.self) {
            try PlayablePattern(pattern: pattern, name: "built", options: RenderOptions(controlRate: 0))
        }
        guard case .invalidOption? = error?.renderError else { Issue.record("a render error, not \(String(describing: error))"); return }
        #expect(error?.description.hasPrefix("built: control rate must be") == true)
    }
}
