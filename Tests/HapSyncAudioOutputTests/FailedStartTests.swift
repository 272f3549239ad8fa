import Foundation
import HapSyncHapticOutput
import HapSyncOutputs
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// A start whose audio cannot open (no server at the address given) leaves nothing behind and
/// explains itself in the library's own settings: the newcomer's retry must work as typed.
@Suite("A failed start")
struct FailedStartTests {
    /// No server answers here: a socket path in a folder that does not exist.
    static let noServer = ["HAPSYNC_AUDIO": "pulse", "PULSE_SERVER": "unix:/nonexistent-hapsync/native"]

    /// The trace made for the start is removed when the audio fails, so the same start can run
    /// again without replacing anything (before: a 0-byte file and "already exists" on the retry).
    @Test func aTraceMadeForAFailedStartIsRemoved() throws {
        let folder = try TemporaryDirectory("failed-start")
        let trace = folder.file("t.jsonl").path
        let outputs = try LibraryOutputs(environment: Self.noServer.merging(["HAPSYNC_HAPTICS": "trace:\(trace)"]) { $1 })
        let engine = try HapticEngine(configuration: .init(backend: outputs.backend, audio: outputs.audio))
        #expect(throws: HapticEngine.EngineError.self) { try engine.start() }
        #expect(!FileManager.default.fileExists(atPath: trace), "the failed start left \(trace) behind")
        // Same outputs again (the retry), then without audio: the trace is made afresh and written.
        #expect(throws: HapticEngine.EngineError.self) { try engine.start() }
        #expect(!FileManager.default.fileExists(atPath: trace))
        let again = try LibraryOutputs(environment: ["HAPSYNC_AUDIO": "none", "HAPSYNC_HAPTICS": "trace:\(trace)"])
        let quiet = try HapticEngine(configuration: .init(backend: again.backend, audio: again.audio))
        try quiet.start()
        #expect(quiet.stop() == nil)
        #expect(FileManager.default.fileExists(atPath: trace))
    }

    /// A file the user already had is never removed by a failed start, even one it writes into.
    @Test func aFileThatWasThereStays() throws {
        let folder = try TemporaryDirectory("failed-start-existing")
        let trace = folder.file("t.jsonl")
        try Data("{\"kept\":true}\n".utf8).write(to: trace)
        let backend = TraceBackend(path: trace.path, replacing: true)
        let outputs = try LibraryOutputs(environment: Self.noServer.merging(["HAPSYNC_HAPTICS": "none"]) { $1 })
        let engine = try HapticEngine(configuration: .init(backend: backend, audio: outputs.audio))
        #expect(throws: HapticEngine.EngineError.self) { try engine.start() }
        #expect(FileManager.default.fileExists(atPath: trace.path), "a --force trace over a file is not deleted by a failed start")
    }

    /// The library's way out is its own setting, never a CLI flag (before: "--audio none").
    @Test func theAudioErrorNamesTheLibrarysSetting() throws {
        let outputs = try LibraryOutputs(environment: Self.noServer.merging(["HAPSYNC_HAPTICS": "none"]) { $1 })
        let engine = try HapticEngine(configuration: .init(backend: outputs.backend, audio: outputs.audio))
        var message = ""
        do { try engine.start() } catch { message = outputs.explain(startFailure: error) }
        #expect(message.contains("HAPSYNC_AUDIO=none"), "\(message)")
        #expect(!message.contains("--"), "a library error names no CLI flag: \(message)")
        let config = try LibraryOutputs(environment: Self.noServer.merging(["HAPSYNC_HAPTICS": "none"]) { $1 },
                                        audio: .init("pulse", source: "audio"))
        let cEngine = try HapticEngine(configuration: .init(backend: config.backend, audio: config.audio))
        message = ""
        do { try cEngine.start() } catch { message = config.explain(startFailure: error) }
        #expect(message.contains("audio = \"none\""), "the C API's config names its own field: \(message)")
    }
}
