import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncTestSupport
import Testing
@testable import HapSyncRuntime

/// Settings at and past their bounds (issue 26: a loop end of 2e10 s spun the scheduler; a loop of
/// 1 ms at rate 100 wrapped 100,000 times a second; parameter sends beyond 64 were dropped).
@Suite("Bounded settings: loops, rates, live parameters")
struct BoundedSettingsTests {
    /// A pattern with a tap at 0 and at 0.05, lasting 0.1 s.
    func taps() throws -> AHAPPattern {
        try AHAPPatternBuilder().transient(at: 0, intensity: 1).transient(at: 0.05, intensity: 0.5)
            .continuous(at: 0, duration: 0.1, intensity: 0.2, attack: 0, release: 0).build()
    }

    @Test func aLoopEndPastOneDayIsRefusedByTheCallAndClampedByTheProperty() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try taps())
        #expect(throws: HapticEngine.EngineError.self) { try player.setLoop(true, end: 2e10) }
        do {
            try player.setLoop(true, end: 2e10)
        } catch {
            #expect(error.description.contains("20000000000") && error.description.contains("86400"), "\(error)")
        }
        #expect(player.loopEnd == 0, "a refused call changes nothing")
        for bad in [Double.nan, -1, .infinity] {
            #expect(throws: HapticEngine.EngineError.self) { try player.setLoop(true, end: bad) }
        }
        player.loopEnd = 2e10
        #expect(player.loopEnd == HapticPatternPlayer.loopEnds.upperBound)
        player.loopEnd = .infinity
        #expect(player.loopEnd == HapticPatternPlayer.loopEnds.upperBound)
        player.loopEnd = .nan
        #expect(player.loopEnd == 0)
    }

    /// A counted loop (`hapsync play --loop N` is one): N passes back to back, each starting where
    /// the last ended, then the run finishes at the end of the last, as a finish, not a stop. The
    /// count includes a first pass that starts part-way in; a negative count is refused.
    @Test func aCountedLoopPlaysItsPassesAndFinishes() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try taps())
        let ended = Locked<[HapticPatternPlayer.Completion]>([])
        player.completionHandler = { c in ended.withLock { $0.append(c) } }
        #expect(throws: HapticEngine.EngineError.self) { try player.setLoop(true, end: 0, passes: -1) }
        try player.setLoop(true, end: 0, passes: 3)
        try player.start(atTime: 1.0)
        rig.run(until: 2.0)
        let played = rig.commands.filter { $0.kind == .transient }
        let pass = player.timeline.end   // the pattern's length, a pass
        let want = (0..<3).flatMap { k in [0, 0.05].map { ManualRig.nanoseconds(1.0 + Double(k) * pass + $0) } }
        #expect(played.count == want.count && zip(played, want).allSatisfy { abs(Int64(bitPattern: $0.scheduled &- $1)) <= 2 },
                "3 passes of \(pass) s: \(played.map(\.scheduled)) against \(want)")
        #expect(ended.withLock { $0 } == [.finished], "the last pass ends the run as a finish")
        #expect(!player.isPlaying)
        let levels = rig.commands.filter { $0.kind == .level }
        #expect(levels.last?.intensity == 0 && levels.last.map { $0.scheduled <= ManualRig.nanoseconds(1.0 + 3 * pass) } == true, "silent at its end")
        // Started again, the same player plays its whole count again (the count re-arms per run).
        let sofar = rig.commands.count
        try player.start(atTime: 2.0)
        rig.run(until: 2.9)
        #expect(rig.commands.dropFirst(sofar).filter { $0.kind == .transient }.count == 6, "3 passes again")
        #expect(ended.withLock { $0 } == [.finished, .finished])

        // From 0.06 s in: the part-way first pass counts as one.
        let second = try rig.engine.makeAdvancedPlayer(with: try taps())
        try second.setLoop(true, end: 0, passes: 2)
        try second.seek(toOffset: 0.06)
        let before = rig.commands.count
        try second.resume(atTime: 3.0)
        rig.run(until: 4.0)
        let later = rig.commands.dropFirst(before).filter { $0.kind == .transient }
        #expect(later.map(\.patternTime) == [0, 0.05], "the rest of pass 1 has no tap; pass 2 has both: \(later.map(\.patternTime))")
        #expect(!second.isPlaying)
    }

    /// The scheduler itself takes a loop end of 2e10 s (a message no front end sends any more)
    /// without spinning: each pass finishes and the loop waits for its far end.
    @Test func theSchedulerNeverSpinsOnAHugeLoopEnd() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try taps())
        try player.start(atTime: 1.0)
        rig.engine.sendPlayer(.setLoop, slot: 0, id: player.id, value: 2e10, flag: true)
        let engine = rig.engine, clock = rig.clock
        let passes = finishes(within: 20) { () -> Int in
            var n = 0
            for t in stride(from: 1.0, through: 3.0, by: 0.01) {
                clock.set(nanoseconds: ManualRig.nanoseconds(t))
                engine.pump()
                n += 1
            }
            return n
        }
        #expect(passes == 201, "a pass never returned (the scheduler spun)")
        let taps = rig.commands.filter { $0.kind == .transient }
        #expect(taps.count == 2, "one pass of the pattern so far, the next one a day away: \(taps.count) taps")
        #expect(player.isPlaying)
    }

    @Test func aLoopShorterThanTenMillisecondsOfClockIsRefusedByTheCalls() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try taps())
        try player.setPlaybackRate(100)
        #expect(throws: HapticEngine.EngineError.self) { try player.setLoop(true, end: 0.001) }
        #expect(throws: HapticEngine.EngineError.self, "0.5 s at rate 100 lasts 5 ms") { try player.setLoop(true, end: 0.5) }
        try player.setLoop(true, end: 1)  // 10 ms a pass
        #expect(player.loopEnabled && player.loopEnd == 1)
    }

    @Test func aRateThatWouldMakeTheLoopTooShortIsRefused() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try taps())
        try player.setLoop(true, end: 0.05)
        try player.setPlaybackRate(5)  // 10 ms a pass: allowed
        #expect(throws: HapticEngine.EngineError.self) { try player.setPlaybackRate(6) }
        #expect(player.playbackRate == 5, "a refused call changes nothing")
        #expect(throws: HapticEngine.EngineError.self) { try player.setPlaybackRate(200) }
        #expect(throws: HapticEngine.EngineError.self) { try player.setPlaybackRate(.nan) }
        try player.setLoop(false, end: 0.05)
        try player.setPlaybackRate(100)  // no loop: any rate in range
    }

    /// Through the properties (which cannot throw), a loop of 1 ms at rate 100 wraps every 10 ms
    /// of the clock, not every 10 µs: 100 passes a second, each with the pattern's first tap.
    @Test func theSchedulerWrapsNoFasterThanTheMinimumPeriod() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try taps())
        player.playbackRate = 100
        player.loopEnd = 0.001
        player.loopEnabled = true
        try player.start(atTime: 1.0)
        rig.run(until: 2.0)
        try player.stop(atTime: 2.0)
        rig.run(until: 2.1)
        // rate × 10 ms = 1 s of pattern a pass: the whole 0.1 s pattern (taps at 0 and 0.05,
        // 0 and 0.5 ms on the clock), then nothing until the wrap 10 ms after the pass began;
        // 100 passes from 1.0, and the first tap of the pass the wrap at 2.0 began (the stop at
        // 2.0 was sent after the clock had reached it).
        let taps = rig.commands.filter { $0.kind == .transient }.map(\.scheduled)
        var want: [UInt64] = [ns(2.0)]
        for k in (0..<100).reversed() { want.insert(contentsOf: [ns(1.0) + 10_000_000 * UInt64(k), ns(1.0) + 10_000_000 * UInt64(k) + 500_000], at: 0) }
        #expect(taps == want, "\(taps.count) taps in 1 s")
    }

    /// 100 parameter sends 50 ms apart, all sent before the first applies: every one applies at
    /// its time (64 were kept before, the oldest dropped).
    @Test func everyScheduledParameterApplies() throws {
        let rig = try ManualRig()
        let pattern = try AHAPPatternBuilder().continuous(at: 0, duration: 10, intensity: 1, sharpness: 0.5, attack: 0, release: 0).build()
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        try player.start(atTime: 1.0)
        rig.run(until: 1.001)
        let values = (0..<100).map { Double($0 % 10 + 1) / 10 }
        for (k, v) in values.enumerated() {
            try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, v)], atTime: 1.1 + 0.05 * Double(k))
        }
        rig.run(until: 7)
        let levels = rig.commands.filter { $0.kind == .level }
        for (k, v) in values.enumerated() {
            let t = ManualRig.nanoseconds(1.1 + 0.05 * Double(k))
            let atT = levels.last { $0.scheduled <= t + 1_000_000 }
            #expect(atT.map { abs(Double($0.intensity) - v) < 1e-6 } == true, "send \(k) (\(v) at \(Double(t) / 1e9) s): \(String(describing: atT))")
        }
    }

    /// Past the bound, the send that would exceed it is refused with an error naming it, and
    /// nothing sent before is lost; once breakpoints have passed, there is room again.
    @Test func aSendBeyondTheBoundIsRefusedNamingIt() throws {
        let rig = try ManualRig()
        let pattern = try AHAPPatternBuilder().continuous(at: 0, duration: 30, intensity: 1, attack: 0, release: 0).build()
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        try player.start(atTime: 1.0)
        let capacity = LiveParameters.capacity
        for k in 0..<capacity {
            try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5)], atTime: 2 + 0.01 * Double(k))
        }
        do {
            try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5)], atTime: 2 + 0.01 * Double(capacity))
            Issue.record("send \(capacity + 1) was accepted")
        } catch {
            #expect("\(error)".contains("\(capacity)") && "\(error)".contains("HapticIntensityControl"), "\(error)")
        }
        #expect(rig.engine.live.points(slot: 0, .hapticIntensity).count == capacity, "nothing sent before is lost")
        // Another control has room of its own.
        try player.sendParameters([AHAPDynamicParameter(.hapticSharpnessControl, 0.1)], atTime: 2)
        // 5 s later every breakpoint but the one in force has passed by more than `settledAge`.
        rig.run(until: 2 + 0.01 * Double(capacity) + 2)
        try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.25)], atTime: rig.engine.currentTime + 1)
        #expect(rig.engine.live.points(slot: 0, .hapticIntensity).count == 2)
    }

    /// A control sent "now" over and over (a game's intensity every frame): each send replaces
    /// what had passed, so no bound is reached however many are sent within a second.
    @Test func sendsForNowNeverReachTheBound() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try taps())
        try player.start(atTime: 1.0)
        for k in 0..<2000 {
            rig.clock.set(nanoseconds: ns(1.0) + UInt64(k) * 100_000)
            try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, Double(k % 10) / 10)], atTime: HapticEngine.timeImmediate)
        }
        #expect(rig.engine.live.points(slot: 0, .hapticIntensity).count <= LiveParameters.capacity)
    }

    @Test func relativeTimesPastOneDayAreRefused() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try taps())
        #expect(throws: HapticEngine.EngineError.self) {
            try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5, time: 1e300)], atTime: 0)
        }
        #expect(throws: HapticEngine.EngineError.self) {
            try player.scheduleParameterCurve(AHAPParameterCurve(.hapticIntensityControl, time: 1e10, controlPoints: [AHAPControlPoint(time: 0, value: 1)]), atTime: 0)
        }
        #expect(throws: HapticEngine.EngineError.self) { try player.seek(toOffset: 1e300) }
    }
}
