import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncTestSupport
import Synchronization
import Testing
@testable import HapSyncRuntime

/// Scheduling logic, driven by a manual clock: exact order and times, no wall clock.
@Suite("Scheduler with a manual clock")
struct SchedulerTests {
    @Test func releasesEachCommandAtItsDeadline() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0.1, intensity: 0.5).transient(at: 0.25, intensity: 1) })
        try player.start(atTime: 2.0)
        rig.at(1.5)
        #expect(rig.commands.isEmpty, "nothing before the start")
        rig.at(2.0999)
        #expect(rig.commands.isEmpty)
        rig.at(2.1)
        #expect(rig.commands == [OutputCommand(scheduled: ns(2.1), released: ns(2.1), player: player.id, kind: .transient, intensity: 0.5, sharpness: 0.5, patternTime: 0.1)])
        rig.at(2.3)
        #expect(rig.commands.map(\.scheduled) == [ns(2.1), ns(2.25)])
        #expect(rig.commands.map(\.released) == [ns(2.1), ns(2.3)], "released when the scheduler ran: 50 ms late")
        #expect(rig.backend.entries.map(\.appliedAt) == [ns(2.1), ns(2.3)])
    }

    @Test func lateCommandsGoOutInDeadlineOrderAcrossPlayers() throws {
        let rig = try ManualRig()
        let a = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0.0).transient(at: 0.3) })
        let b = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0.1).transient(at: 0.2) })
        try a.start(atTime: 1.0)
        try b.start(atTime: 1.0)
        rig.at(5.0)
        #expect(rig.commands.map(\.scheduled) == [ns(1.0), ns(1.1), ns(1.2), ns(1.3)])
        #expect(rig.commands.map(\.player) == [a.id, b.id, b.id, a.id])
        #expect(rig.engine.statistics.dispatchErrors == [ns(4.0), ns(3.9), ns(3.8), ns(3.7)].map { Int64($0) })
    }

    @Test func immediateStartReleasesTimeZeroAtOnce() throws {
        let rig = try ManualRig()
        rig.at(3.0)
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0, intensity: 0.7) })
        try player.start(atTime: HapticEngine.timeImmediate)
        rig.engine.pump()
        #expect(rig.commands.map(\.scheduled) == [ns(3.0)])
        #expect(rig.commands.map(\.released) == [ns(3.0)])
    }

    @Test func playersMixByTheRenderingRule() throws {
        let rig = try ManualRig()
        // Two constant continuous events (1 ms attack): A 0.6 at sharpness 0.2, B 0.7 at sharpness 0.8.
        let a = try rig.engine.makePlayer(with: try pattern { $0.continuous(at: 0, duration: 1, intensity: 0.6, sharpness: 0.2) })
        let b = try rig.engine.makePlayer(with: try pattern { $0.continuous(at: 0, duration: 1, intensity: 0.7, sharpness: 0.8).transient(at: 0.5, intensity: 0.3) })
        try a.start(atTime: 1.0)
        try b.start(atTime: 1.2)
        rig.at(1.1)
        #expect(rig.commands.last?.intensity == 0.6 && rig.commands.last?.sharpness == 0.2)
        rig.at(1.3)
        // Mixed: 0.6 + 0.7 = 1.3 → 1; sharpness (0.12 + 0.56) / 1.3.
        let mixed = try #require(rig.commands.last)
        #expect(mixed.kind == .level && mixed.intensity == 1 && abs(mixed.sharpness - 0.68 / 1.3) < 1e-6 && mixed.player == b.id)
        rig.at(1.7)
        let tap = try #require(rig.commands.last)
        #expect(tap.kind == .transient && tap.intensity == 0.3, "taps pass through unmixed")
        rig.at(2.1)
        // A has released (its end at 2.001): only B is left.
        let afterA = try #require(rig.commands.last(where: { $0.kind == .level }))
        #expect(abs(afterA.intensity - 0.7) < 1e-6 && abs(afterA.sharpness - 0.8) < 1e-6)
    }

    @Test func stopAtATimeSilencesAndReportsStopped() throws {
        let rig = try ManualRig()
        let done = Locked<[HapticPatternPlayer.Completion]>([])
        let player = try rig.engine.makePlayer(with: try pattern { $0.continuous(at: 0, duration: 2, intensity: 0.5).transient(at: 1.5) })
        player.completionHandler = { c in done.withLock { $0.append(c) } }
        try player.start(atTime: 1.0)
        try player.stop(atTime: 2.0)
        rig.at(3.0)
        let levels = rig.commands.filter { $0.kind == .level }
        #expect(levels.map(\.scheduled) == [ns(1.001), ns(2.0)], "up at 1 ms, silenced at the stop")
        #expect(levels.last?.intensity == 0)
        #expect(!rig.commands.contains { $0.kind == .transient }, "the tap after the stop never plays")
        #expect(done.withLock { $0 } == [.stopped])
    }

    @Test func finishesAtTheEndOfItsTimeline() throws {
        let rig = try ManualRig()
        let done = Locked<[HapticPatternPlayer.Completion]>([])
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0.2) })
        player.completionHandler = { c in done.withLock { $0.append(c) } }
        try player.start(atTime: 1.0)
        rig.at(1.2)
        #expect(done.withLock { $0 }.isEmpty, "the tap lasts 25 ms: not finished yet")
        rig.at(1.225)
        #expect(done.withLock { $0 } == [.finished])
        // A finished player can be started again.
        try player.start(atTime: 2.0)
        rig.at(2.3)
        #expect(rig.commands.map(\.scheduled) == [ns(1.2), ns(2.2)])
        #expect(done.withLock { $0 } == [.finished, .finished])
    }

    @Test func aPendingStartMovesOrIsDroppedUntilItReleasesSomething() throws {
        // Released 10 ms before it is felt.
        let rig = try ManualRig(hapticLatency: 10_000_000)
        let done = Locked<[HapticPatternPlayer.Completion]>([])
        let tap = try pattern { $0.transient(at: 0, intensity: 0.8) }
        let moved = try rig.engine.makePlayer(with: tap)
        let dropped = try rig.engine.makePlayer(with: tap)
        dropped.completionHandler = { c in done.withLock { $0.append(c) } }
        try moved.start(atTime: 2.0)
        try dropped.start(atTime: 2.0)
        rig.at(1.95)
        try moved.movePendingStart(toTime: 2.02)
        try dropped.dropPendingStart()
        rig.run(until: 2.5)
        // A command's scheduled time is its release deadline: 10 ms before it is felt.
        #expect(rig.commands.map(\.scheduled) == [ns(2.01)], "the moved tap once, for its new time; the dropped one never")
        #expect(rig.commands.map(\.released) == [ns(2.01)])
        #expect(done.withLock { $0 } == [.stopped], "a dropped run ends as stopped")

        // Once its tap has gone out (at 3.99), a move or a drop changes nothing: never twice.
        let late = try rig.engine.makePlayer(with: tap)
        try late.start(atTime: 4.0)
        rig.at(3.995)
        try late.movePendingStart(toTime: 4.02)
        rig.run(until: 4.1)
        try late.dropPendingStart()
        rig.run(until: 4.2)
        #expect(rig.commands.map(\.scheduled) == [ns(2.01), ns(3.99)])
    }

    @Test func aLoopingRunIsNeverMoved() throws {
        // A pass that wrapped starts at its first command again: it would look as if nothing
        // had gone out.
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0) })
        try player.setLoop(true, end: 0.1)
        try player.start(atTime: 2.0)
        rig.at(1.95)
        try player.movePendingStart(toTime: 2.02)
        rig.run(until: 2.15)
        try player.stop(atTime: HapticEngine.timeImmediate)
        rig.run(until: 2.3)
        #expect(rig.commands.filter { $0.kind == .transient }.map(\.scheduled) == [ns(2.0), ns(2.1)])
    }

    @Test func aMoveDueAtTheSamePassAsTheReleaseMovesIt() throws {
        // The message comes before the scheduler's pass has released the tap: it has not gone
        // out, so moving it plays it once, at the new time.
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0) })
        try player.start(atTime: 2.0)
        rig.clock.set(nanoseconds: ns(2.0))
        try player.movePendingStart(toTime: 2.05)
        rig.run(until: 2.2)
        #expect(rig.commands.map(\.scheduled) == [ns(2.05)])
    }

    @Test func restartWhilePlayingStopsTheFirstRun() throws {
        let rig = try ManualRig()
        let done = Locked<[HapticPatternPlayer.Completion]>([])
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0.1).transient(at: 0.5) })
        player.completionHandler = { c in done.withLock { $0.append(c) } }
        try player.start(atTime: 1.0)
        rig.at(1.2)
        try player.start(atTime: 1.3)
        rig.at(2.0)
        #expect(rig.commands.map(\.scheduled) == [ns(1.1), ns(1.4), ns(1.8)])
        #expect(done.withLock { $0 } == [.stopped, .finished])
    }

    @Test func playersReleaseTheirSlots() throws {
        let rig = try ManualRig(maxPlayers: 2)
        let p = try pattern { $0.transient(at: 0) }
        var a: HapticPatternPlayer? = try rig.engine.makePlayer(with: p)
        let b = try rig.engine.makePlayer(with: p)
        #expect(throws: HapticEngine.EngineError.tooManyPlayers(limit: 2)) { try rig.engine.makePlayer(with: p) }
        try a?.start(atTime: 5)
        a = nil
        rig.engine.pump()
        let c = try rig.engine.makePlayer(with: p)
        #expect(c.id != b.id)
        rig.at(6)
        #expect(rig.commands.isEmpty, "the released player's pending start was cancelled")
    }

    @Test func engineStopSilencesEverything() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try pattern { $0.continuous(at: 0, duration: 5, intensity: 1) })
        try player.start(atTime: 1.0)
        rig.at(1.5)
        rig.engine.stop()
        #expect(rig.commands.last?.kind == .stopAll)
        #expect(rig.backend.calls.stops == 1 && rig.backend.calls.closed == 1)
        #expect(throws: HapticEngine.EngineError.notRunning) { try player.start(atTime: 0) }
    }

    @Test func backendFailureResetsOrStops() throws {
        let rig = try ManualRig()
        let resets = Locked(0)
        let stops = Locked<[HapticEngine.StoppedReason]>([])
        rig.engine.resetHandler = { resets.withLock { $0 += 1 } }
        rig.engine.stoppedHandler = { r in stops.withLock { $0.append(r) } }
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0.1).transient(at: 0.2) })
        try player.start(atTime: 1.0)
        rig.backend.failures.store(1, ordering: .relaxed)
        rig.at(1.1)
        #expect(resets.withLock { $0 } == 1, "closed, reopened and carried on")
        #expect(rig.commands.count == 1)
        rig.backend.failures.store(5, ordering: .relaxed)
        rig.at(1.2)
        #expect(stops.withLock { $0 }.count == 1)
        if case .systemError(let why) = stops.withLock({ $0 }).first { #expect(why.contains("failed")) } else { Issue.record("expected systemError") }
        #expect(!rig.engine.isRunning)
    }

    @Test func commandsMatchTheRenderOneToOne() throws {
        // Pump exactly at every deadline: the applied stream is the offline render, to the nanosecond.
        let url = TestFiles.asset("engine.ahap")
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try AHAPReader().read(contentsOf: url).pattern)
        let start = 10.0
        try player.start(atTime: start)
        for c in player.timeline.commands { rig.clock.set(nanoseconds: max(rig.clock.now(), ns(start) &+ Scheduler.span(c.time, rate: 1))); rig.engine.pump() }
        rig.at(start + player.timeline.end + 0.01)
        let played = rig.commands
        let rendered = player.timeline.commands
        #expect(played.count == rendered.count)
        for (p, r) in zip(played, rendered) {
            #expect(p.patternTime == r.time && p.kind.rawValue == r.kind.rawValue && p.intensity == Float(r.intensity) && p.sharpness == Float(r.sharpness))
            #expect(p.released == p.scheduled)
        }
    }

    @Test func configurationIsChecked() {
        #expect(throws: HapticEngine.EngineError.self) {
            try HapticEngine(configuration: .init(backend: NullHapticBackend(), clock: ManualClock(), threading: .realtime))
        }
        #expect(throws: HapticEngine.EngineError.self) {
            try HapticEngine(configuration: .init(backend: NullHapticBackend(), outputCapacity: 1000))
        }
    }

    @Test func openFailureIsReported() throws {
        let backend = RecordingHapticBackend()
        backend.refuseOpen.store(true, ordering: .relaxed)
        let engine = try HapticEngine(configuration: .init(backend: backend, clock: ManualClock(), threading: .manual))
        #expect(throws: HapticEngine.EngineError.self) { try engine.start() }
        #expect(!engine.isRunning)
    }
}

@Suite("Adaptive spin margin")
struct WakeLatenessTests {
    @Test func tracksTheNinetyNinthPercentileAndShrugsOffStalls() {
        // Wake-ups late by 0...249 µs evenly (p99 ≈ 247 µs), with a 7 ms stall every 500 samples.
        var w = HapticEngine.WakeLateness()
        var random = SeededRandom(seed: 1)
        for i in 0..<20_000 {
            let x = random.next()
            w.add(i % 500 == 499 ? 7_000_000 : (x >> 33) % 250_000)
        }
        #expect(abs(w.p99 - 247_500) < 15_000, "\(w.p99)")
        #expect(w.margin == UInt64(w.p99 + 30_000))
    }
}
