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
    /// The scheduling policy and real-time priority of this process's thread named `name`, read
    /// from /proc (fields 41 and 40 of its stat line; policy 1 is SCHED_FIFO), or nil if none.
    static func scheduling(ofThread name: String) -> (policy: Int, priority: Int)? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "pid (comm)" the fields start at 3: state is field 3.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 38, let priority = Int(fields[37]), let policy = Int(fields[38]) else { return nil }
            return (policy, priority)
        }
        return nil
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
        let seen = try #require(Self.scheduling(ofThread: PulseAudioOutput.threadName), "no thread named \(PulseAudioOutput.threadName)")
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
