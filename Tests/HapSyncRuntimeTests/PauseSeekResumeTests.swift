import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncHapticOutput
import HapSyncTestSupport
import Testing
@testable import HapSyncRuntime

/// Calls made back to back, as iOS code writes them: each acts in the order it was sent and at the
/// time it names, whether or not the scheduler ran in between.
@Suite("Pause, seek and resume back to back")
struct PauseSeekResumeTests {
    /// `pause(atTime: timeImmediate)`, `seek(toOffset: 0.35)`, `resume(atTime: now + 0.05)` with no
    /// scheduling pass between them: the resume starts at 0.35, not where the pause stopped (0.2).
    @Test func pauseSeekResumeWithoutAPassBetween() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        let ended = Locked<[HapticPatternPlayer.Completion]>([])
        player.completionHandler = { c in ended.withLock { $0.append(c) } }
        try player.start(atTime: 1.0)
        rig.run(until: 1.2)
        let before = outputs(rig)
        try player.pause(atTime: HapticEngine.timeImmediate)
        try player.seek(toOffset: 0.35)
        try player.resume(atTime: rig.engine.currentTime + 0.05)
        rig.run(until: 3)
        let tl = player.timeline
        // Up to 1.2 as rendered; the pause silences at 1.2; at 1.25 the level in force at 0.35,
        // then t ≥ 0.35 at 1.25 + (t − 0.35).
        #expect(before == expected(tl) { $0 <= 0.2 ? 1.0 + $0 : nil })
        let levelAt035 = try #require(tl.commands.last { $0.kind == .level && $0.time < 0.35 })
        var want = [Due(at: ns(1.2), kind: .level, intensity: 0, patternTime: 0.2),
                    Due(at: ns(1.25), kind: .level, intensity: Float(levelAt035.intensity), patternTime: 0.35)]
        want += expected(tl) { $0 >= 0.35 ? 0.9 + $0 : nil }
        #expect(Array(outputs(rig).dropFirst(before.count)) == want)
        #expect(ended.withLock { $0 } == [.finished], "one run, paused and resumed")
    }

    /// Every run that began ends with one report, paused in between or not: a stop of a paused
    /// player, a fresh start of one and the engine's stop each report the paused run as stopped
    /// (before, none did: nothing could tell the run was over, and holders kept the player).
    @Test func aPausedRunEndsWithOneReport() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        let ended = Locked<[HapticPatternPlayer.Completion]>([])
        player.completionHandler = { c in ended.withLock { $0.append(c) } }
        try player.start(atTime: 1.0)
        try player.pause(atTime: 1.1)
        rig.run(until: 1.5)
        #expect(ended.withLock { $0 }.isEmpty, "a pause is not an end")
        try player.stop(atTime: HapticEngine.timeImmediate)
        rig.run(until: 1.6)
        #expect(ended.withLock { $0 } == [.stopped])
        try player.stop(atTime: HapticEngine.timeImmediate)
        rig.run(until: 1.7)
        #expect(ended.withLock { $0 } == [.stopped], "a second stop ends nothing")
        // Paused, then started afresh: the paused run ends, the new one plays to its end.
        try player.start(atTime: 2.0)
        try player.pause(atTime: 2.1)
        rig.run(until: 2.5)
        try player.start(atTime: 3.0)
        rig.run(until: 6)
        #expect(ended.withLock { $0 } == [.stopped, .stopped, .finished])
        // Paused when the engine stops.
        try player.start(atTime: 7.0)
        try player.pause(atTime: 7.1)
        rig.run(until: 7.5)
        rig.engine.stop()
        #expect(ended.withLock { $0 } == [.stopped, .stopped, .finished, .stopped])
    }

    /// Apple's order for a looping heartbeat: `start(atTime: CHHapticTimeImmediate)`, then a
    /// pause later, `seek`, a resume and a stop, all sent at once. The start has happened when the
    /// seek comes (its tap at 0 plays), the seek jumps to 0.1 and the loop (end 0.4) goes on from
    /// there. (The seek used to be applied before the start's first release: the tap was lost.)
    @Test func aSeekRightAfterAnImmediateStartKeepsWhatTheStartPlayed() throws {
        let rig = try ManualRig()
        let pattern = try AHAPPatternBuilder().transient(at: 0, intensity: 1, sharpness: 0.5)
            .continuous(at: 0.1, duration: 0.15, intensity: 0.5, sharpness: 0.5, attack: 0, release: 0).build()
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        player.loopEnabled = true
        player.loopEnd = 0.4
        rig.run(until: 1.0)
        try player.start(atTime: HapticEngine.timeImmediate)
        try player.pause(atTime: 1.5)
        try player.seek(toOffset: 0.1)
        try player.resume(atTime: 1.6)
        try player.stop(atTime: 2.2)
        rig.run(until: 4)
        let taps = outputs(rig).filter { $0.kind == .transient }.map(\.at)
        // 1.0: the start's tap; jump to 0.1; wrap at 1.3; pause at 1.5 (offset 0.2); resume at
        // 1.6 from 0.2; wrap at 1.8; the stop at 2.2 comes with the next wrap and wins.
        #expect(taps == [ns(1.0), ns(1.3), ns(1.8)])
        let levels = outputs(rig).filter { $0.kind == .level }
        // The continuous event's first level (pattern 0.101) comes 0.001 s after the jump.
        #expect(levels.first?.at == ns(1.001) && levels.first?.patternTime == 0.101, "the jump at once: \(levels)")
    }

    /// The same with a pause pending in the future: the seek acts now (the player is still
    /// playing), the pause comes at its time from the new place, and a resume asked for after the
    /// pause starts again from where it paused.
    @Test func seekWithAPausePendingInTheFuture() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        try player.start(atTime: 1.0)
        rig.run(until: 1.05)
        let before = outputs(rig)
        try player.pause(atTime: 1.15)          // pending: 0.1 s from now
        try player.seek(toOffset: 0.25)         // now (1.05): jump to 0.25
        try player.resume(atTime: 2.0)          // after the pause: from where it paused
        rig.run(until: 4)
        let tl = player.timeline
        // 1.05: jump to 0.25 (the old level silenced, the level in force at 0.25 set); 0.25...0.35
        // plays at 0.8 + t until the pause at 1.15 (offset 0.35); at 2.0 the level in force at
        // 0.35 and the rest at 1.65 + t.
        let levelAt025 = try #require(tl.commands.last { $0.kind == .level && $0.time < 0.25 })
        let levelAt035 = try #require(tl.commands.last { $0.kind == .level && $0.time < 0.35 })
        var want = [Due(at: ns(1.05), kind: .level, intensity: 0, patternTime: 0.05),
                    Due(at: ns(1.05), kind: .level, intensity: Float(levelAt025.intensity), patternTime: 0.25)]
        want += expected(tl) { $0 >= 0.25 && $0 < 0.35 ? 0.8 + $0 : nil }
        want.append(Due(at: ns(1.15), kind: .level, intensity: 0, patternTime: 0.35))
        want.append(Due(at: ns(2.0), kind: .level, intensity: Float(levelAt035.intensity), patternTime: 0.35))
        want += expected(tl) { $0 >= 0.35 ? 1.65 + $0 : nil }
        #expect(Array(outputs(rig).dropFirst(before.count)) == want)
    }

    /// A resume asked for a time before a pending pause finds the player playing: it changes
    /// nothing, and the pause still comes at its time.
    /// pause, resume and stop scheduled back to back (pause at 1.1, resume at 1.2, stop at 1.3): the
    /// stop used to be lost behind the pending pause, so a looping player never ended. It now ends
    /// the run the resume starts, at its time.
    @Test func aStopAfterAPendingPauseAndResumeIsKept() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        player.loopEnabled = true
        let ended = Locked<[HapticPatternPlayer.Completion]>([])
        player.completionHandler = { c in ended.withLock { $0.append(c) } }
        try player.start(atTime: 1.0)
        try player.pause(atTime: 1.1)
        try player.resume(atTime: 1.2)
        try player.stop(atTime: 1.3)
        rig.run(until: 5)
        #expect(ended.withLock { $0 } == [.stopped], "stopped at 1.3, once")
        #expect(outputs(rig).allSatisfy { $0.at <= ns(1.3) }, "nothing after the stop: \(outputs(rig).map(\.at))")
        #expect(outputs(rig).contains { $0.at > ns(1.2) }, "it played again after the resume")

        // A stop between the pause and the resume stops the paused player; the resume then plays
        // from the top.
        let again = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        let from = Locked<[HapticPatternPlayer.Completion]>([])
        again.completionHandler = { c in from.withLock { $0.append(c) } }
        try again.start(atTime: 6.0)
        try again.pause(atTime: 6.1)
        try again.resume(atTime: 6.3)
        try again.stop(atTime: 6.2)
        let before = outputs(rig).count
        rig.run(until: 9)
        let after = Array(outputs(rig).dropFirst(before))
        let resumed = after.filter { $0.at >= ns(6.3) }
        #expect(resumed.first?.patternTime == again.timeline.commands.first?.time, "from the top, not from 0.1: \(resumed.prefix(3))")
        // The stop ended the paused run (reported), the resume began a new one from the top.
        #expect(from.withLock { $0 } == [.stopped, .finished])
    }

    @Test func aResumeBeforeAPendingPauseChangesNothing() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        try player.start(atTime: 1.0)
        rig.run(until: 1.05)
        try player.pause(atTime: 1.3)
        try player.resume(atTime: 1.1)
        rig.run(until: 3)
        let tl = player.timeline
        var want = expected(tl) { $0 < 0.3 ? 1.0 + $0 : nil }
        want.append(Due(at: ns(1.3), kind: .level, intensity: 0, patternTime: 0.3))
        #expect(outputs(rig) == want)
    }

    /// A rate change while a pause is pending acts now, and the pause, still at its time, keeps
    /// the offset reached at the new rate.
    @Test func rateChangeWithAPausePending() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try advancedPattern())
        try player.start(atTime: 1.0)
        rig.run(until: 1.1)
        try player.pause(atTime: 1.15)
        player.playbackRate = 2                  // from 1.1 (offset 0.1), 2 pattern s per s
        rig.run(until: 1.5)
        try player.resume(atTime: 2.0)
        rig.run(until: 4)
        // Paused at 1.15 at offset 0.1 + 0.05 × 2 = 0.2; resumed at 2.0 from 0.2 at rate 2: the
        // level in force at 0.2, then every command from 0.2 on at 2.0 + (t − 0.2) / 2.
        let tl = player.timeline
        let levelAt02 = try #require(tl.commands.last { $0.kind == .level && $0.time < 0.2 })
        var want = [Due(at: ns(2.0), kind: .level, intensity: Float(levelAt02.intensity), patternTime: 0.2)]
        want += expected(tl) { $0 >= 0.2 ? 2.0 + ($0 - 0.2) / 2 : nil }
        #expect(outputs(rig).filter { $0.at >= ns(2.0) } == want)
        #expect(outputs(rig).contains(Due(at: ns(1.15), kind: .level, intensity: 0, patternTime: 0.2)), "paused at 0.2")
    }

    /// Real threads, calls back to back as iOS code makes them: start, pause now, seek to 0.25,
    /// resume 50 ms later. The taps after the resume are those from 0.25 on (0.3, 0.4), never a
    /// replay from the pause point (0.1, 0.2). Order, not timing, is checked.
    @Test func backToBackOnRealThreads() throws {
        for _ in 0..<5 {
            let backend = RecordingHapticBackend()
            let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: false))
            try engine.start()
            defer { engine.stop() }
            let player = try engine.makeAdvancedPlayer(with: try advancedPattern())
            let done = DispatchSemaphore(value: 0)
            player.completionHandler = { _ in done.signal() }
            try player.start(atTime: HapticEngine.timeImmediate)
            try player.pause(atTime: HapticEngine.timeImmediate)
            try player.seek(toOffset: 0.25)
            try player.resume(atTime: engine.currentTime + 0.05)
            #expect(done.wait(timeout: .now() + 10) == .success)
            let taps = backend.entries.map(\.command).filter { $0.kind == .transient }.map(\.patternTime)
            #expect(taps == [0.3, 0.4], "taps \(taps)")
        }
    }
}
