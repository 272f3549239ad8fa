import CHapSyncSystem
import Foundation
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncMeasurement
import HapSyncRuntime
import Synchronization

/// Starves the engine's audio thread, and it alone, for `stall` every `period`: the thread
/// (`hapsync-audio`, found by name in /proc/self/task) is pinned to CPU 0, where a SCHED_FIFO
/// thread one step above it (79: below the haptic scheduler's 80, the pipe sink reader and the
/// sound server's own threads run on the other core) spins for `stall`. What a user without
/// real-time rights sees when a busy process takes the audio thread's core: the stream underruns
/// and its audio is late by the gap.
final class AudioThreadStaller: @unchecked Sendable {
    let stall: Double, period: Double
    private let running = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let count = Atomic<Int>(0)
    /// Stalls made so far.
    var stalls: Int { count.load(ordering: .relaxed) }

    init(stall: Double, period: Double) { self.stall = stall; self.period = period }

    /// The thread ids named `name` in this process.
    static func threads(named name: String) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { tid in
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            return comm == name ? Int32(tid) : nil
        }
    }

    /// Pins the audio thread(s) to CPU 0 and starts stalling them; nil when there is none, or
    /// SCHED_FIFO or the pinning is refused (with why).
    func start() -> String? {
        let audio = Self.threads(named: "hapsync-audio")
        guard !audio.isEmpty else { return "no hapsync-audio thread" }
        for tid in audio where hapsync_pin_to_cpu(tid, 0) != 0 { return "cannot pin thread \(tid): \(String(cString: strerror(errno)))" }
        running.store(true, ordering: .releasing)
        let refusal = Locked<String?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            _ = hapsync_pin_to_cpu(0, 0)
            if case .failure(let e) = HelperThreadCalls.requestFIFO(priority: 79) { refusal.withLock { $0 = "\(e)" } }
            ready.signal()
            while running.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: period)
                guard running.load(ordering: .relaxed) else { break }
                let end = MonotonicClock.nanoseconds() + UInt64(stall * 1e9)
                while MonotonicClock.nanoseconds() < end {}
                count.add(1, ordering: .relaxed)
            }
            done.signal()
        }
        thread.name = "bench-stall"
        thread.start()
        ready.wait()
        if let why = refusal.withLock({ $0 }) { stop(); return "no SCHED_FIFO for the staller: \(why)" }
        return nil
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        done.wait()
    }
}

/// underrun: sync through underruns. Assets/clicks.ahap played to a pipe sink (its reader times
/// every read: no server timing used) while the audio thread is starved for `stall` every 1.1 s
/// (`AudioThreadStaller`), beside the same run without stalls; through PulseAudio's protocol and,
/// when a PipeWire server answers, natively. Each tap against its click as read from the pipe:
/// after an underrun the click is late by the gap, and the tap must follow it, never early by
/// more than 1 ms. Printed: the underruns, how far the stream's latency grew, and the earliest tap.
func underrunBenchmark(loops: Int, assets: URL, stall: Double = 0.030, label: String = "") throws -> [Distribution] {
    var result: [Distribution] = []
    for server in pipeSinkServers() {
        for stalling in [false, true] {
            let reader = PipeSinkReader(seconds: Double(loops) * 2.5 + 10)
            try reader.start()
            defer { reader.stop() }
            let rig = try AudioRig(sink: reader.sinkName, server: server)
            defer { rig.stop() }
            let staller = AudioThreadStaller(stall: stall, period: 1.1)
            var note = "no stalls (the baseline)"
            if stalling {
                if let why = staller.start() { print("underrun: \(why); the stalled run is left out"); continue }
            }
            let players = try playClicks(loops: loops, on: rig, assets: assets)
            staller.stop()
            if stalling { note = "\(staller.stalls) stalls of \(Int(stall * 1000)) ms" }
            note += label
            let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
            let pairList = rig.pairs(players: players, onsets: onsets)
            // HAPSYNC_BENCH_DEBUG: every pair, by the pipe and by the engine's own later reports (µs),
            // to tell a wrong line (both off) from a reader off near a gap (only the pipe's).
            if ProcessInfo.processInfo.environment["HAPSYNC_BENCH_DEBUG"] != nil {
                for p in pairList {
                    print(String(format: "  %.3f s  pipe %+.0f  engine %+.0f", p.elapsed, p.independent ?? .nan, p.byEngine ?? .nan))
                }
            }
            let offsets = pairList.compactMap(\.independent)
            let early = offsets.filter { $0 < -1000 }.count
            let sink = server == .pipewire ? "pipe sink, native PipeWire" : "pipe sink, \(rig.audio.serverDescription)"
            print("underrun: \(sink), \(note): \(offsets.count) pairs, \(rig.audio.underruns) underruns, latency \(Int(rig.audio.targetLatency * 1000)) ms grown to \(Int((rig.audio.currentLatency * 1000).rounded())) ms; earliest tap \(String(format: "%+.0f", offsets.min() ?? 0)) µs, \(early) early by more than 1 ms")
            result.append(Distribution(benchmark: "underrun", subject: "\(sink): haptic release − click read from the pipe, \(note)", values: offsets))
        }
    }
    return result
}

/// first-sound: `start(atTime: timeImmediate)` with audio → its first click read from a pipe sink
/// (the reader's time of the frame), less the click's 0.25 s place in Assets/clicks.ahap: what a
/// start costs before it is heard. `starts` starts 2.5 s apart on an engine idle for 1 s first;
/// through PulseAudio's protocol and, when a PipeWire server answers, natively (where the target
/// is one graph quantum + 3 ms). Each also from a paused stream: starts 5 s apart, each after the
/// stream paused for want of sound (`IdlePause`, 2 s), so that each first waits for the stream to
/// run again (`willPlay`). Milliseconds.
func firstSoundBenchmark(starts: Int, assets: URL) throws -> [Distribution] {
    let (pattern, files) = try clicksPattern(assets: assets)
    var result: [Distribution] = []
    for run in PipeSinkRun.all() {
        let (server, spacing) = (run.server, run.spacing)
        let reader = PipeSinkReader(seconds: Double(starts) * spacing + 10)
        try reader.start()
        defer { reader.stop() }
        let rig = try AudioRig(sink: reader.sinkName, server: server)
        defer { rig.stop() }
        Thread.sleep(forTimeInterval: run.settle)
        var asked: [UInt64] = []
        var paused = 0
        for _ in 0..<starts {
            let player = try rig.engine.makePlayer(with: pattern, audioFiles: files)
            if rig.audio.isPaused { paused += 1 }
            asked.append(MonotonicClock.nanoseconds())
            try player.start(atTime: HapticEngine.timeImmediate)
            Thread.sleep(forTimeInterval: spacing)
        }
        let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
        let delays: [Double] = asked.compactMap { t in
            let expected = t + 250_000_000
            guard let heard = onsets.first(where: { $0 > t && $0 < expected + 200_000_000 }) else { return nil }
            return Double(Int64(bitPattern: heard &- expected)) / 1e6
        }
        var sink = server == .pipewire ? "pipe sink, native PipeWire" : "pipe sink, \(rig.audio.serverDescription)"
        if run.findsStreamPaused { sink += ", from a paused stream" }
        print("first-sound: \(sink): \(delays.count) of \(starts) starts heard; latency \(Int(rig.audio.currentLatency * 1000)) ms; \(rig.audio.underruns) underruns"
              + (run.findsStreamPaused ? "; the stream was paused at \(paused) of the starts" : ""))
        result.append(Distribution(benchmark: "first-sound", subject: "\(sink): start(atTime: immediate) → first click read, less its 0.25 s (ms)", values: delays))
    }
    return result
}
