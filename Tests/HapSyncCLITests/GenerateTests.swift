import Foundation
import HapSyncCLI
import HapSyncTestSupport
import Testing

/// `hapsync generate`: what a designer runs on a sound file, and what the output then passes.
@Suite("hapsync generate")
struct GenerateTests {
    /// A fresh folder with a copy of a bundled sound in it.
    static func folder(with asset: String) throws -> (dir: URL, audio: URL) {
        let dir = try TemporaryDirectory.create("gen")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sounds"), withIntermediateDirectories: true)
        let audio = dir.appendingPathComponent("sounds/\(asset)")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Assets/audio/\(asset)"), to: audio)
        return (dir, audio)
    }

    @Test func theOutputWithItsAudioValidatesStrictlyAndPlaysItsSound() throws {
        let (dir, audio) = try Self.folder(with: "chime-44k1-stereo-24.wav")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("chime.ahap").path
        let r = hapsync("generate", "--include-audio", "--style", "percussive", "--max-curve-points", "8", "--out", out, audio.path)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.contains("written to \(out)") && r.out.isEmpty, "\(r.err)")
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.contains("\"EventWaveformPath\": \"sounds/chime-44k1-stereo-24.wav\""), "named relative to the output's folder")
        let strict = hapsync("validate", "--strict", out)
        #expect(strict.status == 0, "\(strict.out) \(strict.err)")
        // What it plays: the sound as a voice, and the haptics the render gives.
        let render = hapsync("render", out)
        #expect(render.status == 0 && render.out.contains("\"type\":\"voice\"") && render.out.contains("chime-44k1-stereo-24.wav"))
        #expect(render.out.contains("\"type\":\"transient\"") && render.out.contains("\"type\":\"level\""))
        // The same sound and options give the same file.
        let again = dir.appendingPathComponent("again.ahap").path
        #expect(hapsync("generate", "--include-audio", "--style", "percussive", "--max-curve-points", "8", "--out", again, audio.path).status == 0)
        #expect(try String(contentsOfFile: again, encoding: .utf8) == text, "deterministic")
    }

    @Test func audioOutsideTheOutputsFolderIsNamedByItsFileWithANote() throws {
        let (dir, audio) = try Self.folder(with: "thud-44k1-mono-24.flac")
        defer { try? FileManager.default.removeItem(at: dir) }
        let other = dir.appendingPathComponent("patterns")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let elsewhere = other.appendingPathComponent("thud.ahap").path
        let r = hapsync("generate", "--include-audio", "--out", elsewhere, audio.path)
        #expect(r.status == 0)
        #expect(r.err.contains("note: \(audio.path) is not inside") && r.err.contains("--resources \(audio.deletingLastPathComponent().path)"), "\(r.err)")
        #expect(hapsync("validate", "--strict", "--resources", audio.deletingLastPathComponent().path, elsewhere).status == 0)
    }

    @Test func toStandardOutputAndNeverOverAFileWithoutForce() throws {
        let (dir, audio) = try Self.folder(with: "tap-48k-mono-16.wav")
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = hapsync("generate", audio.path)
        #expect(r.status == 0 && r.out.hasPrefix("{") && r.out.contains("HapticTransient"))
        let mine = dir.appendingPathComponent("mine.ahap")
        try Data("mine".utf8).write(to: mine)
        let refused = hapsync("generate", "--out", mine.path, audio.path)
        #expect(refused.status == 1 && refused.err.contains("already exists") && refused.err.contains("--force"))
        #expect(try String(contentsOf: mine, encoding: .utf8) == "mine")
        #expect(hapsync("generate", "--force", "--out", mine.path, audio.path).status == 0)
        #expect(try String(contentsOf: mine, encoding: .utf8).contains("HapticTransient"))
    }

    @Test func theAmbientStyleWritesNoTransients() throws {
        let r = hapsync("generate", "--style", "ambient", packageRoot.appendingPathComponent("Assets/audio/hum-48k-stereo-16.flac").path)
        #expect(r.status == 0 && !r.out.contains("HapticTransient") && r.out.contains("HapticIntensityControl"), "\(r.out.prefix(400))")
    }

    @Test func badInputIsAClearError() throws {
        let notAudio = try temporaryFile("notes.wav", "not a sound")
        let r = hapsync("generate", notAudio.path)
        #expect(r.status == 1 && r.err.contains(notAudio.path), "\(r.err)")
        let missing = hapsync("generate", "/nonexistent/song.wav")
        #expect(missing.status == 1 && missing.err.contains("/nonexistent/song.wav"), "\(missing.err)")
        let wav = packageRoot.appendingPathComponent("Assets/audio/tap-48k-mono-16.wav").path
        for args in [["--sensitivity", "2"], ["--max-curve-points", "1"], ["--style", "loud"]] {
            let bad = hapsync(["generate"] + args + [wav])
            #expect(bad.status == 64 && bad.err.contains(args[0]) && bad.err.contains(args[1]), "\(bad.err)")
        }
    }

    @Test func theSoundItselfIsNeverTheOutputAndTheOutputIsCheckedFirst() throws {
        let (dir, audio) = try Self.folder(with: "tap-48k-mono-16.wav")
        defer { try? FileManager.default.removeItem(at: dir) }
        let before = try Data(contentsOf: audio)
        let r = hapsync("generate", "--force", "--include-audio", "--out", audio.path, audio.path)
        #expect(r.status == 1 && r.err.contains("is AUDIO itself"), "\(r.err)")
        // Through a link to it, too.
        let link = dir.appendingPathComponent("link.wav")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: audio)
        #expect(hapsync("generate", "--force", "--out", link.path, audio.path).status == 1)
        #expect(try Data(contentsOf: audio) == before, "the sound is untouched")
        // A directory as --out is refused before any decoding (the sound here is no audio at all).
        let junk = try temporaryFile("junk.wav", "not a sound")
        let dirOut = hapsync("generate", "--out", dir.path, junk.path)
        #expect(dirOut.status == 1 && dirOut.err.contains("directory") && !dirOut.err.contains("junk.wav"), "\(dirOut.err)")
    }

    /// A link to a sound elsewhere is named as the resource resolver will find it: by the file it
    /// names, with the note giving that file's folder (naming the link would be refused, since
    /// resources never lead outside their folder).
    @Test func aLinkToASoundElsewhereNamesTheSoundItself() throws {
        let (dir, audio) = try Self.folder(with: "thud-44k1-mono-24.flac")
        defer { try? FileManager.default.removeItem(at: dir) }
        let patterns = dir.appendingPathComponent("patterns")
        try FileManager.default.createDirectory(at: patterns, withIntermediateDirectories: true)
        let link = patterns.appendingPathComponent("link.flac")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: audio)
        let out = patterns.appendingPathComponent("thud.ahap").path
        let r = hapsync("generate", "--include-audio", "--out", out, link.path)
        let folder = audio.deletingLastPathComponent().resolvingSymlinksInPath().path
        #expect(r.status == 0 && r.err.contains("(a link to ") && r.err.contains("--resources \(folder)"), "\(r.err)")
        #expect(try String(contentsOfFile: out, encoding: .utf8).contains("\"EventWaveformPath\": \"thud-44k1-mono-24.flac\""))
        #expect(hapsync("validate", "--strict", "--resources", folder, out).status == 0)
    }
}
