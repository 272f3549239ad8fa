import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncHapticOutput
import HapSyncTestSupport
import Synchronization
import Testing
@testable import HapSyncRuntime

/// The engine on real threads and CLOCK_MONOTONIC. These tests check order and invariants of what
/// was played, never how long anything took (the machines are shared and noisy).
@Suite("Engine on real threads")
struct RealtimeEngineTests {
    @Test func playsTheRenderOneToOneAndCompletes() throws {
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: false))
        try engine.start()
        defer { engine.stop() }
        let pattern = try AHAPPatternBuilder()
            .transient(at: 0, intensity: 0.9, sharpness: 0.1)
            .continuous(at: 0.02, duration: 0.08, intensity: 0.6, sharpness: 0.4, attack: 0.3, release: 0.3)
            .transient(at: 0.05, intensity: 0.4)
            .build()
        let player = try engine.makePlayer(with: pattern)
        let finished = DispatchSemaphore(value: 0)
        player.completionHandler = { if $0 == .finished { finished.signal() } }
        try player.start(atTime: engine.currentTime + 0.05)
        #expect(finished.wait(timeout: .now() + 30) == .success, "completion handler called")
        let played = backend.entries
        let rendered = player.timeline.commands
        #expect(played.count == rendered.count)
        for (p, r) in zip(played, rendered) {
            #expect(p.command.patternTime == r.time && p.command.kind.rawValue == r.kind.rawValue)
            #expect(p.command.intensity == Float(r.intensity) && p.command.sharpness == Float(r.sharpness))
            #expect(p.command.released >= p.command.scheduled, "never released early")
            #expect(p.appliedAt >= p.command.released)
        }
        let scheduled = played.map(\.command.scheduled)
        #expect(scheduled == scheduled.sorted())
        #expect(engine.statistics.applied == rendered.count)
        #expect(engine.statistics.dispatchErrors.count == rendered.count)
        #expect(engine.realtimeStatus.fifoPriority != nil || engine.realtimeStatus.fifoError != nil, "the attempt is reported either way")
    }

    @Test func aTapWhoseFrameTheClockMovesEarlierIsNotHeldToItsOldDeadline() throws {
        // The scheduler sleeps toward a tap's deadline taken from the audio clock's line; the
        // line then moves the tap's frame 19.4 s earlier (a report, as after PipeWire's quantum
        // grew, magnified). The clock wakes the scheduler, which takes the new deadline: the tap
        // goes out about 0.6 s after the start. Checked as an order, not a duration: before the
        // old deadline less 10 s, which a scheduler left asleep could not reach.
        let device = SteeredAudioDevice()
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: false, audio: device))
        try engine.start()
        defer { engine.stop() }
        let pattern = try AHAPPatternBuilder().audioContinuous(at: 0, duration: 21).transient(at: 20).build()
        let player = try engine.makePlayer(with: pattern)
        try player.start(atTime: HapticEngine.timeImmediate)
        // Wait until the scheduler has the player (its start on the audio clock posted).
        let started = MonotonicClock.nanoseconds()
        while device.startFrame == nil, MonotonicClock.nanoseconds() - started < 10_000_000_000 {
            HelperThreadCalls.sleep(untilMonotonic: MonotonicClock.nanoseconds() + 1_000_000)
        }
        let zero = try #require(device.startFrame)
        let oldDeadline = try #require(device.clock.time(ofFrame: zero + 960_000))
        device.moveEarlier(by: 19_400_000_000)
        let moved = try #require(device.clock.time(ofFrame: zero + 960_000))
        #expect(oldDeadline - moved > 19_000_000_000)
        let transients = { backend.entries.filter { $0.command.kind == .transient } }
        while transients().isEmpty, MonotonicClock.nanoseconds() < oldDeadline + 5_000_000_000 {
            HelperThreadCalls.sleep(untilMonotonic: MonotonicClock.nanoseconds() + 5_000_000)
        }
        let tap = try #require(transients().first)
        #expect(tap.command.released >= moved, "never before the new deadline")
        #expect(tap.command.released < oldDeadline - 10_000_000_000, "not held to the old deadline")
    }

    @Test func aPlayersHandlerRunsAfterWhatItPlayedReachedTheBackend() throws {
        // A slow device (20 ms per command): the scheduler has long finished the player when the
        // output thread is still applying; the completion handler waits for the output.
        let backend = RecordingHapticBackend()
        backend.applyDelayMicroseconds.store(20_000, ordering: .relaxed)
        let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: false))
        try engine.start()
        defer { engine.stop() }
        let pattern = try AHAPPatternBuilder().transient(at: 0).transient(at: 0.001).transient(at: 0.002)
            .transient(at: 0.003).transient(at: 0.004).build()
        let player = try engine.makePlayer(with: pattern)
        let seen = Locked<Int?>(nil)
        let finished = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in
            seen.withLock { $0 = backend.entries.count }
            finished.signal()
        }
        try player.start(atTime: HapticEngine.timeImmediate)
        #expect(finished.wait(timeout: .now() + 30) == .success, "completion handler called")
        #expect(seen.withLock { $0 } == player.timeline.commands.count)
        #expect(player.timeline.commands.count == 5)
    }

    @Test func liveControlsFromAnotherThreadWhilePlaying() throws {
        // The control thread drives every live feature while the real-time threads play: live
        // parameters (read lock-free by the scheduler), mute, rate, pause/resume, seek and loop.
        // Checked: it ends, nothing is released early, and levels after the last send are scaled.
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: false))
        try engine.start()
        defer { engine.stop() }
        let pattern = try AHAPPatternBuilder().continuous(at: 0, duration: 0.6, intensity: 0.8, sharpness: 0.5, attack: 0, release: 0)
            .transient(at: 0.1).transient(at: 0.3).transient(at: 0.5).build()
        let player = try engine.makeAdvancedPlayer(with: pattern)
        let finished = DispatchSemaphore(value: 0)
        player.completionHandler = { if $0 == .finished { finished.signal() } }
        player.loopEnabled = true
        player.loopEnd = 0.2
        try player.start(atTime: HapticEngine.timeImmediate)
        for k in 0..<40 {
            let now = engine.currentTime
            switch k % 8 {
            case 0: try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, Double(k % 5) / 4)], atTime: now)
            case 1: try player.scheduleParameterCurve(AHAPParameterCurve(.hapticSharpnessControl, controlPoints: [
                    .init(time: 0, value: -0.5), .init(time: 0.02, value: 0.5)]), atTime: now)
            case 2: player.isMuted = true
            case 3: player.isMuted = false
            case 4: player.playbackRate = k % 16 == 4 ? 2 : 0.5
            case 5: try player.pause(atTime: now)
            case 6: try player.resume(atTime: now + 0.001)
            default: try player.seek(toOffset: 0.05)
            }
            Thread.sleep(forTimeInterval: 0.003)
        }
        player.loopEnabled = false
        player.playbackRate = 1
        try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5)], atTime: engine.currentTime)
        let sent = MonotonicClock.nanoseconds()
        try player.seek(toOffset: 0)
        #expect(finished.wait(timeout: .now() + 30) == .success, "it finished after the loop was turned off")
        let played = backend.entries
        #expect(played.allSatisfy { $0.command.released >= $0.command.scheduled && $0.appliedAt >= $0.command.released })
        let late = played.filter { $0.command.scheduled >= sent && $0.command.kind == .level && $0.command.intensity > 0 }
        #expect(!late.isEmpty && late.allSatisfy { abs($0.command.intensity - 0.4) < 1e-6 }, "0.8 × 0.5 after the last send")
    }

    @Test func idleShutdownAndTransparentRestartOnRealThreads() throws {
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: false, idleTimeout: 0.2))
        let idle = DispatchSemaphore(value: 0)
        engine.stoppedHandler = { if $0 == .idleTimeout { idle.signal() } }
        try engine.start()
        defer { engine.stop() }
        let player = try engine.makePlayer(with: try AHAPPatternBuilder().transient(at: 0).transient(at: 0.05).build())
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: HapticEngine.timeImmediate)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(idle.wait(timeout: .now() + 30) == .success, "stopped after 0.2 s with nothing playing")
        #expect(!engine.isRunning && engine.isIdleStopped)
        // The next start brings it back (the threads and the device) and plays.
        try player.start(atTime: HapticEngine.timeImmediate)
        #expect(engine.isRunning)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(backend.entries.filter { $0.command.kind == .transient }.count == 4)
        #expect(backend.calls.opened == 2 && backend.calls.closed == 1, "the device was released while idle and opened again")
    }

    @Test func playPatternFromAFileAndStopCleanly() throws {
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: false))
        try engine.start()
        let url = TestFiles.asset("taps.ahap")
        try engine.playPattern(from: url)
        // Stop while it may still be playing: everything is silenced and the backend closed.
        engine.stop()
        #expect(backend.calls.stops == 1 && backend.calls.closed == 1)
        #expect(!engine.isRunning)
        #expect(backend.entries.last?.command.kind == .stopAll)
    }

    @Test func traceIsWrittenFromTheRealRun() throws {
        let dirFolder = try TemporaryDirectory("trace")
        let dir = dirFolder.url
        defer { dirFolder.remove() }
        for name in ["t.jsonl", "t.json"] {
            let trace = TraceBackend(path: dir.appendingPathComponent(name).path)
            let engine = try HapticEngine(configuration: .init(backend: trace, lockMemory: false))
            try engine.start()
            let player = try engine.makePlayer(with: try AHAPPatternBuilder().transient(at: 0).transient(at: 0.01).build())
            let finished = DispatchSemaphore(value: 0)
            player.completionHandler = { _ in finished.signal() }
            try player.start(atTime: HapticEngine.timeImmediate)
            _ = finished.wait(timeout: .now() + 30)
            engine.stop()
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            if name.hasSuffix(".jsonl") {
                let lines = text.split(separator: "\n")
                #expect(lines.count == 3, "two taps and the stop")
                let first = try #require(try TraceRecord.parse(text).first?.command)
                #expect(first.kind == .transient && first.player == player.id)
                #expect(first.releasedNs >= first.scheduledNs && first.appliedNs >= first.releasedNs
                        && first.dispatchNs == Int64(first.releasedNs - first.scheduledNs))
            } else {
                let doc = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                let events = try #require(doc["traceEvents"] as? [[String: Any]])
                #expect(events.filter { $0["ph"] as? String == "i" && $0["name"] as? String == "transient" }.count == 2)
                #expect(events.filter { $0["ph"] as? String == "X" }.count == 3)
            }
        }
    }

    @Test func theBackendIsNeverEnteredFromTwoThreadsAtOnce() throws {
        // The scheduler applies what it releases when the output stage is free, and the output
        // thread gives the backend its own time (`service`): an evdev pad uploaded one effect
        // twice within 1 ms when the two overlapped. A backend that asks for service every
        // 100 µs and takes 200 µs per call, under 300 taps 1 ms apart, counts overlapping calls.
        let backend = ReentryCountingBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: false))
        try engine.start()
        defer { engine.stop() }
        var builder = AHAPPatternBuilder()
        for k in 0..<300 { builder = builder.transient(at: Double(k) * 0.001) }
        let player = try engine.makePlayer(with: try builder.build())
        let finished = DispatchSemaphore(value: 0)
        player.completionHandler = { if $0 == .finished { finished.signal() } }
        try player.start(atTime: HapticEngine.timeImmediate)
        #expect(finished.wait(timeout: .now() + 60) == .success, "completion handler called")
        #expect(backend.applied.load(ordering: .relaxed) == 300)
        #expect(backend.serviced.load(ordering: .relaxed) > 0, "the backend was serviced while playing")
        #expect(backend.overlaps.load(ordering: .relaxed) == 0, "apply and service overlapped")
    }
}

/// A backend that counts calls entered while another is still inside (spinning `busy` ns in
/// each), and asks to be serviced every 100 µs.
private final class ReentryCountingBackend: HapticBackend, @unchecked Sendable {
    let inside = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    let applied = Atomic<Int>(0)
    let serviced = Atomic<Int>(0)
    let busy: UInt64 = 200_000
    var name: String { "reentry" }
    var device: String { "reentry" }
    var motors: Int { 0 }
    var timingResolution: UInt64 { 0 }
    var health: OutputHealth { OutputHealth() }
    func open() throws {}
    func stopAll() throws {}
    func close() throws {}
    private func enter() {
        if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
        let until = Syscalls.monotonicNanoseconds() + busy
        while Syscalls.monotonicNanoseconds() < until {}
        inside.subtract(1, ordering: .sequentiallyConsistent)
    }
    func apply(_ command: OutputCommand, appliedAt: UInt64) throws {
        enter()
        if command.kind == .transient { applied.add(1, ordering: .relaxed) }
    }
    func service(now: UInt64) throws -> UInt64? {
        enter()
        serviced.add(1, ordering: .relaxed)
        return now + 100_000
    }
}

/// An audio device that exists only as a clock on CLOCK_MONOTONIC, for the real-threaded engine:
/// frame f is heard at `origin` + f / 48 kHz − the shift the test made (`moveEarlier`), reported
/// to the clock from the test's thread (the one observing thread), 20 ms of frames written ahead
/// of what is heard. It renders nothing; it keeps the frame its first start put pattern time 0 at.
private final class SteeredAudioDevice: AudioDevice, @unchecked Sendable {
    let name = "steered"
    let sampleRate = 48_000.0
    let clock = AudioClock(sampleRate: 48_000)
    let messages = SPSCRing<AudioMessage>(capacity: 64)
    var onServerLost: (@Sendable (String) -> Void)?
    var liveParameters: LiveParameters?
    var isMuted = false
    let underruns = 0
    var writesAhead: Bool { false }
    private let origin = MonotonicClock.nanoseconds()
    private let shift = Atomic<UInt64>(0)
    private let zero = Atomic<Int64>(-1)

    /// The frame heard now.
    private var frameNow: Int64 { Int64(Double(MonotonicClock.nanoseconds() + shift.load(ordering: .acquiring) - origin) * 48_000 / 1e9) }
    var nextWritableFrame: Int64 { frameNow + 960 }
    /// The frame of pattern time 0 of the first player started, once the scheduler sent it.
    var startFrame: Int64? {
        if zero.load(ordering: .acquiring) < 0, let m = messages.pop(), m.kind == .start { zero.store(m.frame, ordering: .releasing) }
        let z = zero.load(ordering: .acquiring)
        return z < 0 ? nil : z
    }
    /// Reports the frame heard now, as a sound server's timing does.
    func observe() {
        let f = frameNow
        clock.observe(frame: f, heardAt: origin + UInt64(Double(f) * 1e9 / 48_000) - shift.load(ordering: .acquiring))
    }
    /// Frames are heard `ns` earlier from now on, and a report says so.
    func moveEarlier(by ns: UInt64) {
        shift.add(ns, ordering: .releasing)
        observe()
    }
    func open() throws {
        for _ in 0..<AudioClock.settlingObservations {
            observe()
            HelperThreadCalls.sleep(untilMonotonic: MonotonicClock.nanoseconds() + 2_000_000)
        }
    }
    func close() {}
    func setSource(slot: Int, _ source: Unmanaged<PlayerAudio>?) {}
    func load(_ timeline: PatternTimeline, files: [String: URL]) throws -> PlayerAudio {
        PlayerAudio(timeline: timeline, samples: timeline.voices.map { _ in nil })
    }
    func canConnect() -> Bool { true }
}

