import Foundation
import HapSyncAudioOutput
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// How long the audio output takes to start and what a started engine holds in memory, each on a
/// private PulseAudio server of the test's own, started just before (its null sink idle, as a
/// headless server's is when `hapsync play` starts). Measured and printed; the bounds sit far
/// from today's figures and far from the old ones (open 1.6-2.0 s, 394 MB resident).
@Suite("Audio start-up and memory", .serialized)
struct StartupTests {
    /// An idle PulseAudio null sink has rendered up to 2 s ahead; before the output restarted such
    /// a sink, a new stream was first heard, and `open` returned, only after that.
    @Test func anIdleNullSinkDoesNotHoldTheStreamBack() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let audio = PulseAudioOutput(configuration: .init(server: "unix:\(server.socket)"))
        let began = MonotonicClock.nanoseconds()
        try audio.open()
        defer { audio.close() }
        let opened = Double(MonotonicClock.nanoseconds() - began) / 1e9
        // How far ahead of now the next frame written will be heard: the stream's buffer.
        let heard = try #require(audio.clock.time(ofFrame: audio.nextWritableFrame))
        let ahead = Double(Int64(bitPattern: heard &- MonotonicClock.nanoseconds())) / 1e6
        print("start-up: PulseAudioOutput.open on an idle null sink took \(String(format: "%.3f", opened)) s; the next frame written is heard in \(String(format: "%.1f", ahead)) ms")
        #expect(opened < 1, "open took \(opened) s")
        #expect(ahead < 100, "the next frame written is heard in \(ahead) ms")
    }

    /// A started engine with audio and `lockMemory` (mlockall) holds what it uses, not every page
    /// it has mapped (libpulse's shared memory pools are 64 MiB each). Run in a child process (this
    /// test binary, filtered to `memoryHeldByAStartedEngine`), since mlockall is for the whole process.
    @Test func lockingMemoryHoldsWhatIsUsedNotEveryMappedPool() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["--testing-library", "swift-testing", "--filter", "memoryHeldByAStartedEngine"]
        child.environment = ProcessInfo.processInfo.environment.merging([Self.childServer: "unix:\(server.socket)"]) { $1 }
        let out = Pipe()
        child.standardOutput = out
        child.standardError = FileHandle.nullDevice
        try child.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if child.isRunning { child.terminate() } }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // Before waiting: Foundation reaps children with a blocking waitpid on each it started, so
        // it would wait for the server before it saw the child end.
        server.kill()
        child.waitUntilExit()
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("memory:") }, "the child reported nothing:\n\(text)")
        print(line)
        let fields = Dictionary(uniqueKeysWithValues: line.split(separator: " ").compactMap { field -> (String, Int)? in
            let kv = field.split(separator: "=")
            return kv.count == 2 ? (String(kv[0]), Int(kv[1]) ?? -1) : nil
        })
        let grew = try #require(fields["grew-kB"])
        let locked = try #require(fields["locked"])
        #expect(locked == 1, "mlockall was refused")
        #expect(grew < 64 * 1024, "starting the engine made the process \(grew) kB larger")
    }

    static let childServer = "HAPSYNC_MEMORY_CHILD_SERVER"

    /// The child of `lockingMemoryHoldsWhatIsUsedNotEveryMappedPool`: starts an engine with audio
    /// on the server it is given, memory locked, and prints how much larger that made the process.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[StartupTests.childServer] != nil))
    func memoryHeldByAStartedEngine() throws {
        func kB(_ key: String) -> Int {
            let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix(key + ":") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        let audio = PulseAudioOutput(configuration: .init(server: ProcessInfo.processInfo.environment[Self.childServer]))
        let engine = try HapticEngine(configuration: .init(backend: RecordingHapticBackend(), lockMemory: true, audio: audio))
        let before = kB("VmRSS")
        try engine.start()
        defer { engine.stop() }
        let after = kB("VmRSS")
        print("memory: rss-before-kB=\(before) rss-after-kB=\(after) grew-kB=\(after - before) locked=\(engine.realtimeStatus.memoryLocked == true ? 1 : 0)")
    }
}
