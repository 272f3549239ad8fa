import Foundation
import HapSyncAHAP
import HapSyncTestSupport
import Testing

@Suite("Resource resolution")
struct ResolverTests {
    /// root1/ahap/x.ahap, root1/ahap/here.wav, root2/sounds/there.wav, outside/secret.wav,
    /// root2/sounds/link.wav -> outside/secret.wav, root2/inner -> root2/sounds (a link that stays inside).
    func makeTree() throws -> (base: URL, ahapFile: URL, resources: URL) {
        let base = try TemporaryDirectory.create("resolver")
        let fm = FileManager.default
        for d in ["root1/ahap", "root2/sounds", "outside"] {
            try fm.createDirectory(at: base.appendingPathComponent(d), withIntermediateDirectories: true)
        }
        for f in ["root1/ahap/here.wav", "root2/sounds/there.wav", "outside/secret.wav", "root2/sounds/both.wav", "root1/ahap/both.wav"] {
            try Self.tinyWAV.write(to: base.appendingPathComponent(f))
        }
        try fm.createSymbolicLink(atPath: base.appendingPathComponent("root2/sounds/link.wav").path,
                                  withDestinationPath: base.appendingPathComponent("outside/secret.wav").path)
        try fm.createSymbolicLink(atPath: base.appendingPathComponent("root2/inner").path, withDestinationPath: "sounds")
        return (base, base.appendingPathComponent("root1/ahap/x.ahap"), base.appendingPathComponent("root2"))
    }

    /// A playable WAV: 8 kHz, mono, 8-bit, 4 frames.
    static let tinyWAV: Data = {
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(v >> (8 * $0) & 0xFF) } }
        let fmt = le(1, 2) + le(1, 2) + le(8_000, 4) + le(8_000, 4) + le(1, 2) + le(8, 2)
        let body = Array("WAVEfmt ".utf8) + le(16, 4) + fmt + Array("data".utf8) + le(4, 4) + [128, 160, 128, 96]
        return Data(Array("RIFF".utf8) + le(body.count, 4) + body)
    }()

    @Test func searchesTheAHAPFolderThenEachRoot() throws {
        let t = try makeTree()
        defer { try? FileManager.default.removeItem(at: t.base) }
        let r = AHAPResourceResolver(ahapFile: t.ahapFile, resources: [t.resources])
        #expect(try r.resolve("here.wav").get().lastPathComponent == "here.wav")
        #expect(try r.resolve("sounds/there.wav").get().path.hasSuffix("root2/sounds/there.wav"))
        #expect(try r.resolve("both.wav").get().path.hasSuffix("root1/ahap/both.wav"), "the AHAP file's own folder comes first")
        #expect(try r.resolve("inner/there.wav").get().path.hasSuffix("root2/sounds/there.wav"), "a link that stays inside its root is fine")
    }

    @Test func symlinkOutOfTheRootsIsAnError() throws {
        let t = try makeTree()
        defer { try? FileManager.default.removeItem(at: t.base) }
        let r = AHAPResourceResolver(ahapFile: t.ahapFile, resources: [t.resources])
        guard case .failure(let f) = r.resolve("sounds/link.wav") else { Issue.record("a link out must not resolve"); return }
        #expect(f.code == .resourceOutsideRoots)
        #expect(f.description.contains("is a symbolic link to") && f.description.contains("outside/secret.wav") && f.description.contains("refusing to read it"))
    }

    @Test func unsafePathsAreRefusedWithoutTouchingTheDisk() {
        let r = AHAPResourceResolver(roots: [URL(fileURLWithPath: "/")])
        for (path, words) in [("/etc/passwd", "is absolute"), ("../x.wav", "'..'"), ("a/../../x.wav", "'..'"), ("", "is empty"), ("~/x.wav", "is absolute")] {
            guard case .failure(let f) = r.resolve(path) else { Issue.record("\(path) must not resolve"); continue }
            #expect(f.code == .unsafeWaveformPath)
            #expect(f.description.contains(words), "\(f.description)")
        }
    }

    @Test func notFoundListsTheRootsSearched() throws {
        let t = try makeTree()
        defer { try? FileManager.default.removeItem(at: t.base) }
        let r = AHAPResourceResolver(ahapFile: t.ahapFile, resources: [t.resources])
        guard case .failure(let f) = r.resolve("missing.wav") else { Issue.record("must not resolve"); return }
        #expect(f.code == .resourceNotFound)
        #expect(f.description.contains(t.base.appendingPathComponent("root1/ahap").path) && f.description.contains(t.resources.path))
        // A library's finding names no CLI flag; validate and play add `--resources DIR` themselves.
        #expect(f.description.contains("resource folders") && !f.description.contains("--"))
    }

    @Test func checkReportsEventPaths() throws {
        let t = try makeTree()
        defer { try? FileManager.default.removeItem(at: t.base) }
        let pattern = try AHAPPatternBuilder()
            .transient(at: 0)
            .audioCustom(at: 0, path: "here.wav")
            .audioCustom(at: 0.1, path: "nowhere.wav")
            .audioCustom(at: 0.2, path: "sounds/link.wav")
            .build()
        let checked = AHAPResourceResolver(ahapFile: t.ahapFile, resources: [t.resources]).check(pattern, file: "x.ahap")
        #expect(checked.resolved.keys.sorted() == ["here.wav"])
        #expect(checked.diagnostics.map(\.code) == [.resourceNotFound, .resourceOutsideRoots])
        #expect(checked.diagnostics.map(\.path.description) == ["Pattern[2].Event.EventWaveformPath", "Pattern[3].Event.EventWaveformPath"])
        #expect(checked.diagnostics.map(\.severity) == [.warning, .error])
    }

    /// A FIFO would hang whoever opens it for reading, and a device node is no audio file: both are
    /// refused by kind, from `stat` alone.
    @Test func specialFilesAreRefusedWithoutOpeningThem() throws {
        let t = try makeTree()
        defer { try? FileManager.default.removeItem(at: t.base) }
        let fifo = t.base.appendingPathComponent("root1/ahap/pipe.wav")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let r = AHAPResourceResolver(ahapFile: t.ahapFile, resources: [t.resources])
        guard case .failure(let f) = r.resolve("pipe.wav") else { Issue.record("a FIFO must not resolve"); return }
        #expect(f.code.rawValue == "resource-not-regular-file" && f.code.defaultSeverity == .error)
        #expect(f.description == "\"pipe.wav\" is a FIFO (named pipe) (\(fifo.resolvingSymlinksInPath().path)), not a regular file; refusing to read it")

        // A device node needs the right to make one (root); elsewhere that half is skipped.
        let device = t.base.appendingPathComponent("root2/sounds/null.wav")
        if mknod(device.path, S_IFCHR | 0o600, dev_t(1 << 8 | 3)) == 0 {  // 1:3, as /dev/null
            guard case .failure(let d) = r.resolve("sounds/null.wav") else { Issue.record("a device must not resolve"); return }
            #expect(d.description.contains("is a character device"))
        }

        let pattern = try AHAPPatternBuilder().audioCustom(at: 0, path: "here.wav").audioCustom(at: 0.5, path: "pipe.wav").build()
        let checked = r.check(pattern, file: "x.ahap")
        #expect(checked.resolved.keys.sorted() == ["here.wav"])
        #expect(checked.diagnostics.map(\.code.rawValue) == ["resource-not-regular-file"])
        #expect(checked.diagnostics.map(\.path.description) == ["Pattern[1].Event.EventWaveformPath"])
    }

    /// A resolved file that is not audio HapSync plays is a warning naming the file and the reason
    /// (once per event that uses it; its header is read once). Every format Core Haptics plays is
    /// clean.
    @Test func unplayableAudioIsAWarningNamingTheFileAndTheReason() throws {
        let t = try makeTree()
        defer { try? FileManager.default.removeItem(at: t.base) }
        let folder = t.base.appendingPathComponent("root1/ahap")
        try Data("OggS".utf8 + [UInt8](repeating: 0, count: 60)).write(to: folder.appendingPathComponent("song.ogg"))
        let audio = packageRoot.appendingPathComponent("Assets/audio")
        let playable = ["tone-44k1-mono-aac.m4a", "tone-44k1-mono.mp3", "tone-44k1-mono-16.aiff", "tone-44k1-mono-16-alac.caf"]
        for name in playable {
            try FileManager.default.copyItem(at: audio.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        var builder = AHAPPatternBuilder().audioCustom(at: 0, path: "song.ogg").audioCustom(at: 1, path: "song.ogg")
        for (i, name) in playable.enumerated() { builder = builder.audioCustom(at: 2 + Double(i), path: name) }
        let checked = AHAPResourceResolver(ahapFile: t.ahapFile, resources: []).check(try builder.build(), file: "x.ahap")
        #expect(checked.resolved.count == 5, "an unplayable file still resolves (info shows where)")
        #expect(checked.diagnostics.map(\.code.rawValue) == ["unplayable-audio", "unplayable-audio"])
        #expect(checked.diagnostics.map(\.severity) == [.warning, .warning])
        #expect(checked.diagnostics.map(\.path.description) == ["Pattern[0].Event.EventWaveformPath", "Pattern[1].Event.EventWaveformPath"])
        let ogg = folder.appendingPathComponent("song.ogg").resolvingSymlinksInPath().path
        #expect(checked.diagnostics.first?.message == "\"song.ogg\" (\(ogg)) cannot be played: an Ogg file (Vorbis, Opus or FLAC in Ogg), which Core Haptics does not play; HapSync plays WAV, AIFF/AIFC and CAF (PCM, float, A-law, µ-law; CAF also ALAC and AAC), FLAC, MP3, and M4A (AAC, ALAC, MP3)")
    }
}
