import Foundation
import HapSyncAudioOutput
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// The audio that haptics follow is rendered on real-time threads (issue 27): PulseAudio's
/// mainloop, which mixes and writes, runs at SCHED_FIFO two below the scheduler, so busy processes
/// at normal priority cannot starve it; the engine's status names every thread and its priority.
/// Each on a private PulseAudio server started just before.
@Suite("Real-time audio threads", .serialized)
struct RealtimeAudioThreadTests {
    /// Every thread the sources name ("hapsync…" given to a thread, a mainloop or a PipeWire
    /// thread loop, in Swift and C) fits the kernel's 15 characters: a longer name is refused
    /// (Foundation's `Thread.name`, `pthread_setname_np`) or cut (libpulse's mainloop), and
    /// `ps -L` or `top -H` would not show what the real-time line says. The names found must
    /// include the engine's, so that a pattern that stopped matching cannot pass.
    @Test func everyThreadNameFitsTheKernelsLimit() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardized
        let pattern = try Regex(#"(?:\.name = |setName\(|threadName: |[Tt]hreadName = |ThreadName: String \{ [^"]*|pw_thread_loop_new\()"(hapsync[^"]*)""#)
        var names: [String: String] = [:]
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where ["swift", "c"].contains(file.pathExtension) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: pattern) {
                if let name = match.output[1].substring { names[String(name)] = file.lastPathComponent }
            }
        }
        let expected = ["hapsync-sched", "hapsync-output", "hapsync-notify", "hapsync-audio", "hapsync-wave", "hapsync-capture", "hapsync-pw-loop"]
        #expect(expected.allSatisfy { names[$0] != nil } && names.count >= 18, "found \(names.keys.sorted())")
        #expect(names.filter { $0.key.utf8.count > 15 }.isEmpty, "too long: \(names.filter { $0.key.utf8.count > 15 })")
    }

    @Test func theMixingThreadRunsAtFIFOBelowTheScheduler() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let audio = PulseAudioOutput(configuration: .init(server: "unix:\(server.socket)"))
        let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), audio: audio))
        try engine.start()
        defer { engine.stop() }
        let status = engine.realtimeStatus
        let names = status.threads.map(\.name)
        #expect(names == ["hapsync-sched", "hapsync-output", PulseAudioOutput.threadName], "\(status)")
        let mixing = try #require(status.threads.last)
        #expect(mixing.priority == engine.configuration.deviceThreadPriority)
        #expect(mixing.priority < engine.configuration.outputThreadPriority)
        #expect("\(status)".contains(PulseAudioOutput.threadName), "the status names the mixing thread: \(status)")
        let seen = try #require(threadScheduling(named: PulseAudioOutput.threadName), "no thread named \(PulseAudioOutput.threadName)")
        if mixing.granted {
            #expect(seen.policy == 1 && seen.priority == Int(mixing.priority), "reported \(mixing), /proc says policy \(seen.policy) priority \(seen.priority)")
        } else {
            // Without the right to it the status says so, and the thread is what it says.
            #expect(seen.policy == 0, "reported \(mixing), /proc says policy \(seen.policy)")
        }
    }

    /// An engine with manual threading (tests, offline rendering) asks nothing of its outputs'
    /// threads: the mixing thread stays at normal priority. (Not checked in /proc: other suites'
    /// engines run threads of the same name in this process meanwhile.)
    @Test func aManualEngineLeavesTheMixingThreadAlone() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let audio = PulseAudioOutput(configuration: .init(server: "unix:\(server.socket)"))
        let clock = ManualClock(nanoseconds: MonotonicClock.nanoseconds())
        let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), clock: clock, threading: .manual, audio: audio))
        try engine.start()
        defer { engine.stop() }
        #expect(audio.threadPriority == nil)
        #expect(audio.realtimeThreads.isEmpty && engine.realtimeStatus.threads.isEmpty)
    }

    @Test func theStatusNamesEachThreadAndWhatItGot() {
        var status = RealtimeStatus(fifoPriority: 80, memoryLocked: true, timerSlack: 1000)
        status.threads = [RealtimeThread(name: "hapsync-sched", priority: 80), RealtimeThread(name: "hapsync-output", priority: 79),
                          RealtimeThread(name: "hapsync-audio", priority: 78, error: "Operation not permitted (errno 1)")]
        #expect(status.description == "SCHED_FIFO hapsync-sched 80, hapsync-output 79, SCHED_FIFO refused (Operation not permitted "
                + "(errno 1)) for hapsync-audio 78: normal priority, memory locked, timer slack 1000 ns")
        var refused = RealtimeStatus(fifoError: "Operation not permitted (errno 1)", timerSlack: 1000)
        refused.threads = [RealtimeThread(name: "hapsync-sched", priority: 80, error: refused.fifoError),
                           RealtimeThread(name: "hapsync-output", priority: 79, error: refused.fifoError)]
        #expect(refused.description == "SCHED_FIFO refused (Operation not permitted (errno 1)) for hapsync-sched 80, hapsync-output 79: "
                + "normal priority, expect wake-ups up to a few ms late, timer slack 1000 ns")
    }
}
