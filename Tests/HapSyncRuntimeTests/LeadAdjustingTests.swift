import HapSyncAHAP
import HapSyncTestSupport
import Synchronization
import Testing
@testable import HapSyncRuntime

/// A backend that asks for more lead while playing (as a waveform output whose sink renders
/// further ahead than its stream asked): the scheduler releases every command from then on that
/// much earlier before its sound, and the engine says how far ahead it now releases.
@Suite("extra lead asked for while playing")
struct LeadAdjustingTests {
    /// Records what it is given, and asks for `extra` more lead.
    final class LeadAskingBackend: HapticBackend, HapticLeadAdjusting, @unchecked Sendable {
        let recorder = RecordingHapticBackend(reserving: 256)
        let extra = Atomic<UInt64>(0)
        var extraLead: UInt64 { extra.load(ordering: .relaxed) }
        var name: String { "lead-asking" }
        var device: String { "test" }
        var motors: Int { 1 }
        func open() throws { try recorder.open() }
        func apply(_ command: OutputCommand, appliedAt: UInt64) throws { try recorder.apply(command, appliedAt: appliedAt) }
        func stopAll() throws { recorder.stopAll() }
        func close() throws { recorder.close() }
    }

    @Test func commandsGoOutEarlierByTheExtraFromWhenItIsAsked() throws {
        let clock = ManualClock()
        let audio = SimulatedAudioDevice(time: clock)
        let backend = LeadAskingBackend()
        let configured: UInt64 = 35_000_000
        let engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, audio: audio,
                                                           hapticLatency: configured))
        try engine.start()
        var b = AHAPPatternBuilder().audioContinuous(at: 0, duration: 1)
        for i in 0..<10 { b = b.transient(at: Double(i) * 0.1, intensity: 0.5) }
        let player = try engine.makePlayer(with: try b.build())
        defer { withExtendedLifetime(player) {} }
        let t0 = engine.currentTime + 0.2
        try player.start(atTime: t0)
        #expect(engine.effectiveHapticLatency == configured)
        let askAt = ns(t0 + 0.45), extra: UInt64 = 20_000_000
        var nextObservation = clock.now()
        let end = ns(t0 + 1.2)
        while clock.now() < end {
            let now = clock.now()
            if now >= askAt, backend.extraLead == 0 { backend.extra.store(extra, ordering: .relaxed) }
            if now >= nextObservation {
                audio.observe()
                nextObservation = now + 10_000_000
            }
            let next = engine.pump()
            clock.set(nanoseconds: min(max(next, now + 1), end, max(nextObservation, now + 1), now < askAt ? askAt : end))
        }
        engine.pump()
        #expect(engine.effectiveHapticLatency == configured + extra)
        let taps = backend.recorder.entries.filter { $0.command.kind == .transient }
        #expect(taps.count == 10)
        for tap in taps {
            // How far ahead of its sound, as the simulated sink truly hears it, each went out.
            let heard = audio.truth(tap.command.frame)
            let ahead = heard - Double(tap.command.released)
            if tap.command.released < askAt {
                #expect(abs(ahead - Double(configured)) <= 1_000_000, "tap at \(tap.command.patternTime): \(ahead / 1e6) ms ahead before the ask")
            } else if heard - Double(askAt) >= Double(configured + extra) {
                #expect(abs(ahead - Double(configured + extra)) <= 1_000_000, "tap at \(tap.command.patternTime): \(ahead / 1e6) ms ahead after it")
            } else {
                // Due between the two leads when the ask came: out at once, as early as it still can.
                #expect(tap.command.released - askAt <= 1_000_000, "tap at \(tap.command.patternTime): released \((tap.command.released - askAt) / 1_000_000) ms after the ask")
            }
        }
        #expect(taps.contains { $0.command.released >= askAt } && taps.contains { $0.command.released < askAt })
    }

    /// A player without audio has its deadlines from its start, which was moved back by the lead
    /// of its start: a lead raised later changes neither when its commands go out nor the lead
    /// they carry (a waveform output places them by it), so each is felt where it was meant.
    @Test func aPlayerWithoutAudioKeepsTheLeadItStartedWith() throws {
        let clock = ManualClock()
        let backend = LeadAskingBackend()
        let configured: UInt64 = 35_000_000
        let engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, hapticLatency: configured))
        try engine.start()
        var b = AHAPPatternBuilder()
        for i in 0..<6 { b = b.transient(at: Double(i) * 0.1, intensity: 0.5) }
        let player = try engine.makePlayer(with: try b.build())
        defer { withExtendedLifetime(player) {} }
        let t0 = engine.currentTime + 0.2
        try player.start(atTime: t0)
        let extra: UInt64 = 20_000_000
        let end = ns(t0 + 0.8)
        while clock.now() < end {
            let now = clock.now()
            if now >= ns(t0 + 0.25) { backend.extra.store(extra, ordering: .relaxed) }
            clock.set(nanoseconds: min(max(engine.pump(), now + 1), end))
        }
        engine.pump()
        let taps = backend.recorder.entries.filter { $0.command.kind == .transient }
        #expect(taps.count == 6)
        for tap in taps {
            let felt = tap.command.scheduled + configured + tap.command.extraLead
            #expect(felt == ns(t0 + tap.command.patternTime), "tap at \(tap.command.patternTime) meant for \(felt), not its time")
            #expect(tap.command.extraLead == 0)
        }
        #expect(engine.effectiveHapticLatency == configured + extra)
    }
}
