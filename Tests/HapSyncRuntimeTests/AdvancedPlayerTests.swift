import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncTestSupport
import Synchronization
import Testing
@testable import HapSyncRuntime

/// A command as the tests compare it: when it was due, what it was, the pattern time it came from.
struct Due: Equatable, CustomStringConvertible {
    var at: UInt64
    var kind: OutputCommand.Kind
    var intensity: Float
    var patternTime: Double
    var description: String { "\(kind) \(intensity) @\(Double(at) / 1e9) (p \(patternTime))" }
}

/// The levels and taps a rig applied, as `Due`s (scheduled time).
func outputs(_ rig: ManualRig) -> [Due] {
    rig.commands.filter { $0.kind == .transient || $0.kind == .level }
        .map { Due(at: $0.scheduled, kind: $0.kind, intensity: $0.intensity, patternTime: $0.patternTime) }
}

/// The render's commands moved onto engine time by `place` (nil drops a command).
func expected(_ timeline: PatternTimeline, _ place: (Double) -> Double?) -> [Due] {
    timeline.commands.compactMap { c in
        place(c.time).map { Due(at: ns($0), kind: c.kind == .transient ? .transient : .level, intensity: Float(c.intensity), patternTime: c.time) }
    }
}

/// A test pattern: taps at 0.1, 0.2, 0.3, 0.4 and a continuous 0...0.5 whose intensity steps
/// 0.8 → 0.4 at 0.25 (a Parameter entry), so its command stream has levels at 0, 0.001 (attack
/// end), 0.25, 0.5 (release) and taps in between.
func advancedPattern(withTone: Bool = false) throws -> AHAPPattern {
    var b = AHAPPatternBuilder()
    if withTone { b = b.audioContinuous(at: 0, duration: 0.5) }
    return try b
        .continuous(at: 0, duration: 0.5, intensity: 0.8, sharpness: 0.5, attack: 0, release: 0)
        .parameter(.hapticIntensityControl, 0.5, at: 0.25)
        .transient(at: 0.1, intensity: 0.6).transient(at: 0.2, intensity: 0.7).transient(at: 0.3, intensity: 0.8).transient(at: 0.4, intensity: 0.9)
        .build()
}

@Suite("Advanced player (manual clock, checked against the render)")
struct AdvancedPlayerTests {
    @Test func playsAsRenderedWithoutAnyChange() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        try player.start(atTime: 1.0)
        rig.run(until: 3)
        #expect(outputs(rig) == expected(player.timeline) { 1.0 + $0 })
    }

    @Test func pauseAndResumeShiftTheRestByThePause() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        let ended = Locked<[HapticPatternPlayer.Completion]>([])
        player.completionHandler = { c in ended.withLock { $0.append(c) } }
        try player.start(atTime: 1.0)
        try player.pause(atTime: 1.25)
        rig.run(until: 1.9)
        #expect(ended.withLock { $0 }.isEmpty, "a pause is not an ending")
        try player.resume(atTime: 2.0)
        rig.run(until: 4)
        let tl = player.timeline
        // Before the pause: as rendered from 1.0. The pause at 1.25 silences (level 0). The resume
        // at 2.0 restores the level in force at 0.25 (the last level command before it) and plays
        // the rest 0.75 s later than it would have: at 2.0 + (t − 0.25).
        let lastLevelBefore = try #require(tl.commands.last { $0.kind == .level && $0.time < 0.25 })
        var want = expected(tl) { $0 < 0.25 ? 1.0 + $0 : nil }
        want.append(Due(at: ns(1.25), kind: .level, intensity: 0, patternTime: 0.25))
        want.append(Due(at: ns(2.0), kind: .level, intensity: Float(lastLevelBefore.intensity), patternTime: 0.25))
        want += expected(tl) { $0 >= 0.25 ? 1.75 + $0 : nil }
        #expect(outputs(rig) == want)
        #expect(ended.withLock { $0 } == [.finished])
    }

    @Test func seekJumpsWhilePlayingAndSetsTheResumePointWhilePaused() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        try player.start(atTime: 1.0)
        rig.run(until: 1.15)
        try player.seek(toOffset: 0.35)
        rig.run(until: 3)
        let tl = player.timeline
        // Up to 1.15 as rendered; at 1.15 the level in force at 0.35 (no stop in between: a seek is
        // not an ending); then t ≥ 0.35 at 1.15 + (t − 0.35).
        let levelAt035 = try #require(tl.commands.last { $0.kind == .level && $0.time < 0.35 })
        var want = expected(tl) { $0 <= 0.15 ? 1.0 + $0 : nil }
        want.append(Due(at: ns(1.15), kind: .level, intensity: Float(levelAt035.intensity), patternTime: 0.35))
        want += expected(tl) { $0 >= 0.35 ? 0.8 + $0 : nil }
        // The restart silences the old run's level first (a level 0 at 1.15 before the new level).
        let got = outputs(rig).filter { !($0.kind == .level && $0.intensity == 0 && $0.at == ns(1.15)) }
        #expect(got == want)

        // Paused, a seek only moves the resume point.
        let rig2 = try ManualRig()
        let p2 = try rig2.engine.makeAdvancedPlayer(with: try advancedPattern())
        try p2.start(atTime: 1.0)
        try p2.pause(atTime: 1.05)
        rig2.run(until: 1.5)
        try p2.seek(toOffset: 0.3)
        rig2.run(until: 2.0)
        let before = rig2.commands.count
        try p2.resume(atTime: 2.0)
        rig2.run(until: 4)
        let resumed = Array(outputs(rig2).dropFirst(before))
        let levelAt03 = try #require(p2.timeline.commands.last { $0.kind == .level && $0.time < 0.3 })
        #expect(resumed.first == Due(at: ns(2.0), kind: .level, intensity: Float(levelAt03.intensity), patternTime: 0.3))
        #expect(Array(resumed.dropFirst()) == expected(p2.timeline) { $0 >= 0.3 ? 1.7 + $0 : nil })
    }

    @Test func loopRepeatsUpToTheLoopEnd() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        player.loopEnabled = true
        player.loopEnd = 0.25
        try player.start(atTime: 1.0)
        rig.run(until: 1.9)
        try player.stop(atTime: 1.9)
        rig.run(until: 3)
        let tl = player.timeline
        // Passes k = 0, 1, 2 (and the start of 3) of the commands before 0.25, at 1.0 + 0.25k + t;
        // at each wrap the level drops to 0 and the pass's own level commands set it again.
        var want: [Due] = []
        for k in 0..<4 {
            let start = 1.0 + 0.25 * Double(k)
            if k > 0 { want.append(Due(at: ns(start), kind: .level, intensity: 0, patternTime: 0.25)) }
            want += expected(tl) { t in t < 0.25 && start + t < 1.9 ? start + t : nil }
        }
        want.append(Due(at: ns(1.9), kind: .level, intensity: 0, patternTime: 0.15))
        let got = outputs(rig)
        #expect(got.count == want.count)
        #expect(got.map(\.at) == want.map(\.at))
        #expect(got.map(\.kind) == want.map(\.kind))
        #expect(got.map(\.intensity) == want.map(\.intensity))
    }

    @Test func playbackRateScalesTimesAndKeepsThePlaceWhenChanged() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        let ended = Locked<UInt64?>(nil)
        let clock = rig.clock
        player.completionHandler = { _ in ended.withLock { $0 = clock.now() } }
        player.playbackRate = 2
        try player.start(atTime: 1.0)
        rig.run(until: 2)
        #expect(outputs(rig) == expected(player.timeline) { 1.0 + $0 / 2 })
        #expect(ended.withLock { $0 } == ns(1.0 + player.timeline.end / 2), "it ends at 1.0 + end / 2")

        // Changing the rate while playing: at 1.1 at rate 1 it has reached 0.1; at rate 0.5 the rest
        // comes at 1.1 + (t − 0.1) × 2, with nothing in between (no silence, no repeat).
        let rig2 = try ManualRig()
        let p2 = try rig2.engine.makeAdvancedPlayer(with: try advancedPattern())
        try p2.start(atTime: 1.0)
        rig2.run(until: 1.1)
        let before = outputs(rig2)
        p2.playbackRate = 0.5
        rig2.run(until: 3)
        let after = Array(outputs(rig2).dropFirst(before.count))
        #expect(before == expected(p2.timeline) { $0 <= 0.1 ? 1.0 + $0 : nil })
        #expect(after == expected(p2.timeline) { $0 > 0.1 ? 1.1 + ($0 - 0.1) * 2 : nil })
    }

    @Test func audioAndHapticsMoveTogether() throws {
        let clock = ManualClock()
        let audio = SimulatedAudioDevice(time: clock)
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, audio: audio))
        try engine.start()
        let pattern = try advancedPattern(withTone: true)
        let player = try engine.makeAdvancedPlayer(with: pattern)
        player.playbackRate = 2
        let t0 = engine.currentTime + 0.1
        try player.start(atTime: t0)
        engine.pump()
        audio.drainMessages()
        let start = try #require(audio.received.last { $0.kind == .start })
        #expect(start.rate == 2)
        // Pattern time 0 is heard at t0; every tap is released when its frame (at rate 2) is heard.
        #expect(abs(audio.truth(start.frame) - Double(ns(t0))) < 21_000)
        func step(to t: UInt64) {
            while clock.now() < t {
                let next = engine.pump()
                clock.set(nanoseconds: min(max(next, clock.now() + 1), t))
            }
            engine.pump()
        }
        step(to: ns(t0 + 0.15))
        try player.pause(atTime: HapticEngine.timeImmediate)
        engine.pump()
        audio.drainMessages()
        let stop = try #require(audio.received.last)
        #expect(stop.kind == .stop)
        // Paused at pattern time 0.3 (0.15 s at rate 2): the audio stops at that frame.
        #expect(abs(Double(stop.frame - start.frame) - 0.15 * 48_000) <= 1)
        step(to: ns(t0 + 1))
        // Resumed 100 ms ahead (an immediate resume waits for the output latency, as a start does).
        try player.resume(atTime: t0 + 1.1)
        engine.pump()
        audio.drainMessages()
        let resumed = try #require(audio.received.last { $0.kind == .start })
        // The resume puts pattern time 0.3 at t0 + 1.1: the voices start part-way (from the resume
        // frame), and pattern time 0 lies 0.15 s of output before it.
        #expect(abs(audio.truth(resumed.from) - Double(ns(t0 + 1.1))) < 21_000)
        #expect(abs(Double(resumed.from - resumed.frame) - 0.15 * 48_000) <= 1)
        let before = backend.entries.count
        step(to: ns(t0 + 2))
        let taps = backend.entries.dropFirst(before).filter { $0.command.kind == .transient }
        #expect(taps.map(\.command.patternTime) == [0.3, 0.4])
        for tap in taps {
            let heard = audio.truth(resumed.frame + FrameTiming.frames(tap.command.patternTime, rate: 2, sampleRate: 48_000))
            #expect(abs(Double(tap.command.scheduled) - heard) < 21_000, "tap at \(tap.command.patternTime) goes with its audio frame")
        }
    }

    @Test func loopsRestartTheAudioOnTheSameFrameAsTheHaptics() throws {
        let clock = ManualClock()
        let audio = SimulatedAudioDevice(time: clock)
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, audio: audio))
        try engine.start()
        let player = try engine.makeAdvancedPlayer(with: try advancedPattern(withTone: true))
        player.loopEnabled = true
        player.loopEnd = 0.25
        try player.start(atTime: engine.currentTime + 0.1)
        func step(to t: UInt64) {
            while clock.now() < t {
                let next = engine.pump()
                clock.set(nanoseconds: min(max(next, clock.now() + 1), t))
            }
            engine.pump()
        }
        let t0 = clock.now()
        step(to: t0 + ns(0.3))
        audio.drainMessages()
        #expect(audio.received.filter { $0.kind == .start }.count == 2,
                "the second pass's audio start went out before its wrap at 0.35 s, while its frames are unwritten")
        step(to: t0 + ns(1.0))
        audio.drainMessages()
        let starts = audio.received.filter { $0.kind == .start }
        #expect(starts.count == 5, "the first pass, three wraps in 0.9 s and the next pass's, each sent 0.15 s ahead")
        for (a, b) in zip(starts, starts.dropFirst()) {
            #expect(b.frame - a.frame == 12_000, "each pass starts 0.25 s × 48 kHz after the one before")
            #expect(b.from == b.frame, "a wrap starts the voices from their beginning")
        }
        // Each pass's first tap (pattern time 0.1) is released when its frame is heard.
        let taps = backend.entries.filter { $0.command.kind == .transient && $0.command.patternTime == 0.1 }
        #expect(taps.count == 4)
        for (tap, start) in zip(taps, starts) {
            #expect(abs(Double(tap.command.scheduled) - audio.truth(start.frame + 4_800)) < 21_000)
        }
    }
}
