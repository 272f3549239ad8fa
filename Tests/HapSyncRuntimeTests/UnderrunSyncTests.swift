import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncTestSupport
import Testing
@testable import HapSyncRuntime

@Suite("Sync through underruns (audio clock floor, manual clock, simulated sink)")
struct UnderrunSyncTests {
    /// A clock fitted to a nominal 48 kHz line through frame 0 at 1 s.
    private func fittedClock() -> AudioClock {
        let clock = AudioClock(sampleRate: 48_000)
        for i in 0..<40 { clock.observe(frame: Int64(i * 480), heardAt: 1_000_000_000 + UInt64(i) * 10_000_000) }
        return clock
    }

    /// Within 2 ns (the fitted slope's rounding).
    private func near(_ t: UInt64?, _ expected: UInt64) -> Bool {
        guard let t else { return false }
        return t > expected ? t - expected <= 2 : expected - t <= 2
    }

    @Test func aWriteTheLinePlacesInThePastGetsAFloorFromThatFrameOn() throws {
        let clock = fittedClock()
        // Frame 48_000 is heard at 2 s by the line; written at 1.98 s, on time: no floor.
        clock.noteWrite(frame: 48_000, at: 1_980_000_000)
        #expect(!clock.fit.hasFloor)
        // Written at 2.03 s: it cannot have been heard at 2 s. Late by 30 ms from that frame on.
        clock.noteWrite(frame: 48_000, at: 2_030_000_000)
        let fit = clock.fit
        #expect(fit.hasFloor)
        #expect(try #require(fit.time(ofFrame: 47_999)) < 2_000_000_000, "frames written before are heard as the line says")
        #expect(near(fit.time(ofFrame: 48_000), 2_030_000_000))
        #expect(near(fit.time(ofFrame: 48_480), 2_040_000_000))
        // The inverse: during the gap, the last frame before it; after it, the floor's frames.
        #expect(fit.frame(atTime: 1_990_000_000) == 47_520)
        #expect(fit.frame(atTime: 2_010_000_000) == 47_999)
        #expect(fit.frame(atTime: 2_040_000_000) == 48_480)
        // A later write, still covered by the floor, changes nothing.
        clock.noteWrite(frame: 48_960, at: 2_045_000_000)
        #expect(clock.fit.lateFrom == 48_000)
    }

    @Test func theFloorGoesOnceTheReportsCatchUpAfterPatienceAndAtReset() {
        let clock = fittedClock()
        clock.noteWrite(frame: 48_000, at: 2_030_000_000)
        // A report from before the gap leaves the floor.
        clock.observe(frame: 47_040, heardAt: 1_980_000_000)
        #expect(clock.fit.hasFloor)
        // A report that places the late frames (30 ms later: a step, the fit starts over).
        clock.observe(frame: 48_480, heardAt: 2_040_000_000)
        #expect(!clock.fit.hasFloor)
        #expect(near(clock.fit.time(ofFrame: 48_000), 2_030_000_000))

        let stale = fittedClock()
        stale.noteWrite(frame: 48_000, at: 2_030_000_000)
        // Reports that never learn the gap: the floor is kept for `floorPatience`, then dropped.
        stale.observe(frame: 48_960, heardAt: 2_020_000_000)
        #expect(stale.fit.hasFloor)
        stale.observe(frame: 48_000 + 48_000 * 3, heardAt: 2_030_000_000 + AudioClock.floorPatience + 1)
        #expect(!stale.fit.hasFloor)

        let reset = fittedClock()
        reset.noteWrite(frame: 48_000, at: 2_030_000_000)
        reset.reset(sampleRate: 48_000)
        #expect(!reset.fit.hasFloor)
    }

    @Test func beforeAnyObservationAWriteLeavesNoFloor() {
        let clock = AudioClock(sampleRate: 48_000)
        clock.noteWrite(frame: 0, at: 5_000_000_000)
        #expect(!clock.fit.hasFloor && clock.fit.time(ofFrame: 0) == nil)
    }

    /// A manual engine on a simulated sink playing 100 taps 10 ms apart over a 1 s tone, started
    /// 0.1 s from now (`t0`, engine seconds), on a sink that plays late writes late or skips
    /// them (`delaysLateWrites`); the caller keeps the player alive.
    private func tapsWithATone(delaysLateWrites: Bool = true) throws -> (ManualClock, SimulatedAudioDevice, RecordingHapticBackend, HapticEngine, HapticPatternPlayer, Double) {
        let clock = ManualClock()
        let audio = SimulatedAudioDevice(time: clock, delaysLateWrites: delaysLateWrites)
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, audio: audio))
        try engine.start()
        var b = AHAPPatternBuilder().audioContinuous(at: 0, duration: 1)
        for i in 0..<100 { b = b.transient(at: Double(i) * 0.01, intensity: 0.5) }
        let player = try engine.makePlayer(with: try b.build())
        let t0 = engine.currentTime + 0.1
        try player.start(atTime: t0)
        return (clock, audio, backend, engine, player, t0)
    }

    /// Runs the engine to 1.2 s after `t0`, the writer stalled 50 ms from 0.3 s, the timing
    /// reported every 10 ms except while it is stalled.
    private func stallTheWriter(clock: ManualClock, audio: SimulatedAudioDevice, engine: HapticEngine, t0: Double) {
        let stallAt = ns(t0 + 0.3), resumeAt = stallAt + 50_000_000
        var stalled = false, resumed = false
        var nextObservation = clock.now()
        let end = ns(t0 + 1.2)
        while clock.now() < end {
            let now = clock.now()
            if now >= stallAt, !stalled { audio.stallWriter(); stalled = true }
            if now >= resumeAt, !resumed { audio.resumeWriter(); resumed = true; nextObservation = now + 1_000_000 }
            // The thread that reports timing is the stalled one; back, it asks at once (PulseAudioOutput
            // asks after every write while its clock settles again), and the report comes 1 ms on.
            if now >= nextObservation, !stalled || resumed {
                audio.observe()
                nextObservation = now + 10_000_000
            }
            let next = engine.pump()
            var wake = min(max(next, now + 1), end)
            if !stalled { wake = min(wake, stallAt) } else if !resumed { wake = min(wake, resumeAt) }
            if !stalled || resumed { wake = min(wake, max(nextObservation, now + 1)) }
            clock.set(nanoseconds: wake)
        }
        engine.pump()
    }

    /// Taps every 10 ms with a tone; the writer stalls 50 ms at 0.3 s, so the sink runs dry after
    /// its 20 ms and 30 ms of sound is heard late. Every tap goes out with its frame as the
    /// simulated sink truly hears it: those whose frames were not written are held until they
    /// are, and then until the first report after the writer came back (1 ms on); none early by
    /// more than 1 ms, none late by more than that report and a poll.
    @Test func tapsInTheGapGoOutWithTheirLateSoundNeverEarly() throws {
        let (clock, audio, backend, engine, player, t0) = try tapsWithATone()
        defer { withExtendedLifetime(player) {} }
        stallTheWriter(clock: clock, audio: audio, engine: engine, t0: t0)
        #expect(audio.underruns == 1)
        let taps = backend.entries.filter { $0.command.kind == .transient }
        #expect(taps.count == 100)
        var late = 0
        for tap in taps {
            let heard = audio.truth(tap.command.frame)
            let offset = Double(tap.command.released) - heard
            #expect(offset >= -1_000_000, "tap at \(tap.command.patternTime) released \(offset / 1e6) ms from its frame heard")
            #expect(offset <= 1_250_000, "tap at \(tap.command.patternTime) released \(offset / 1e6) ms after its frame heard")
            if heard - Double(ns(t0 + tap.command.patternTime)) > 20_000_000 { late += 1 }
        }
        // Taps from the gap on are heard (and felt) 30 ms late.
        #expect(late >= 60)
    }

    /// The same stall on a sink that skips what it was not given in time (pipewire-pulse: its
    /// read index runs on through an underrun): the sound is never late, what the stall left
    /// behind is never heard, and every tap goes out where the line places its frame, none held
    /// for the writer. (Held as on PulseAudio, those after the gap went out up to 30 ms late.)
    @Test func onASinkThatSkipsLateWritesTapsStayOnTheLine() throws {
        let (clock, audio, backend, engine, player, t0) = try tapsWithATone(delaysLateWrites: false)
        defer { withExtendedLifetime(player) {} }
        stallTheWriter(clock: clock, audio: audio, engine: engine, t0: t0)
        #expect(audio.underruns == 1)
        let taps = backend.entries.filter { $0.command.kind == .transient }
        #expect(taps.count == 100)
        var unheard = 0
        for tap in taps {
            let offset = Double(tap.command.released) - audio.truth(tap.command.frame)
            #expect(abs(offset) <= 1_000_000, "tap at \(tap.command.patternTime) released \(offset / 1e6) ms from its frame's place")
            if !audio.isHeard(tap.command.frame) { unheard += 1 }
        }
        // The sink ran dry 20 ms into the 50 ms stall: about three taps' sound skipped.
        #expect((2...4).contains(unheard))
    }

    /// The writer never comes back (the server gone): haptics wait at most a quarter second from
    /// the moment the sink ran dry, then go on by the line, without their sound.
    @Test func aWriterThatNeverComesBackIsNotWaitedForPastPatience() throws {
        let (clock, audio, backend, engine, player, t0) = try tapsWithATone()
        defer { withExtendedLifetime(player) {} }
        let stallAt = ns(t0 + 0.3)
        let end = ns(t0 + 1.2)
        var stalled = false
        while clock.now() < end {
            if clock.now() >= stallAt, !stalled { audio.stallWriter(); stalled = true }
            let next = engine.pump()
            clock.set(nanoseconds: min(max(next, clock.now() + 1), stalled ? end : stallAt, end))
        }
        engine.pump()
        let taps = backend.entries.filter { $0.command.kind == .transient }
        #expect(taps.count == 100)
        // The line (no report since): tap i due at t0 + i × 10 ms; the sink ran dry 20 ms after the stall.
        let dry = Double(stallAt) + 20e6
        for tap in taps {
            let due = Double(ns(t0 + tap.command.patternTime))
            let released = Double(tap.command.released)
            if due < dry - 1e6 || due > dry + Double(Scheduler.underrunPatience) + 1e6 {
                #expect(abs(released - due) <= 1e6, "tap at \(tap.command.patternTime) released \((released - due) / 1e6) ms from the line")
            } else {
                #expect(released <= dry + Double(Scheduler.underrunPatience) + 1e6, "tap at \(tap.command.patternTime) held past patience")
            }
        }
    }
}
