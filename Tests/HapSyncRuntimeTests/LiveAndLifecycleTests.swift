import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncTestSupport
import Synchronization
import Testing
@testable import HapSyncRuntime

/// A constant continuous level (0.8 at sharpness 0.5, 1 ms attack) for 1 s and taps at 0.5, 0.7.
func steadyPattern() throws -> AHAPPattern {
    try AHAPPatternBuilder().continuous(at: 0, duration: 1, intensity: 0.8, sharpness: 0.5, attack: 0, release: 0)
        .transient(at: 0.5, intensity: 0.6, sharpness: 0.4).transient(at: 0.7, intensity: 1, sharpness: 0.4).build()
}

@Suite("Live parameters (manual clock)")
struct LiveParameterTests {
    @Test func sendParametersMultiplyIntensityAndAddSharpness() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try steadyPattern())
        try player.start(atTime: 1.0)
        rig.run(until: 1.2)
        let before = rig.commands.count
        // At 1.3: intensity × 0.5, sharpness + 0.3, for the level and for taps after it.
        try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5, time: 0.1),
                                   AHAPDynamicParameter(.hapticSharpnessControl, 0.3, time: 0.1)],
                                  atTime: 1.2)
        rig.run(until: 3)
        let after = Array(rig.commands.dropFirst(before))
        let level = try #require(after.first)
        #expect(level.kind == .level && level.scheduled == ns(1.3))
        #expect(abs(level.intensity - 0.4) < 1e-6 && abs(level.sharpness - 0.8) < 1e-6, "0.8 × 0.5, 0.5 + 0.3")
        let taps = after.filter { $0.kind == .transient }
        #expect(taps.map(\.scheduled) == [ns(1.5), ns(1.7)])
        #expect(taps.map(\.intensity) == [0.3, 0.5], "0.6 × 0.5 and 1 × 0.5")
        #expect(taps.allSatisfy { abs($0.sharpness - 0.7) < 1e-6 }, "0.4 + 0.3")
    }

    /// With a haptic latency, a parameter's time is when it is felt, as a start's time is (and the
    /// audio's controls): its level change goes out that latency before it, and a tap felt after
    /// it takes it while one felt just before it does not, though both are released before it.
    @Test func parametersAreTimedByWhenTheyAreFelt() throws {
        let rig = try ManualRig(hapticLatency: 30_000_000)
        let pattern = try AHAPPatternBuilder().continuous(at: 0, duration: 1, intensity: 0.8, sharpness: 0.5, attack: 0, release: 0)
            .transient(at: 0.29, intensity: 1, sharpness: 0.4).transient(at: 0.31, intensity: 1, sharpness: 0.4).build()
        let player = try rig.engine.makePlayer(with: pattern)
        try player.start(atTime: 2.0)
        try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5)], atTime: 2.3)
        rig.run(until: 3.5)
        let levels = rig.commands.filter { $0.kind == .level }
        #expect(levels.map(\.intensity) == [0.8, 0.4, 0])
        #expect(levels.count == 3 && levels[1].scheduled == ns(2.27), "the change released 30 ms before it is felt: \(levels.map(\.scheduled))")
        let taps = rig.commands.filter { $0.kind == .transient }
        #expect(taps.map(\.scheduled) == [ns(2.26), ns(2.28)])
        #expect(taps.map(\.intensity) == [1, 0.5], "felt at 2.29 (before the change) and 2.31 (after it)")
    }

    /// A start clears a player's controls, so a control sent right after it can come after the
    /// start's first level has gone out (the sender held up): that level then plays as written
    /// until the control arrives. Controls sent before a `resume` that begins the run are kept,
    /// and its first level already has them, however late the scheduler runs (what `hapsync live`
    /// does for its continuous layer).
    @Test(arguments: [false, true]) func controlsSentBeforeAResumeHoldFromItsFirstLevel(resume: Bool) throws {
        let rig = try ManualRig(hapticLatency: 30_000_000)
        let player = try rig.engine.makePlayer(with: try steadyPattern())
        let control = [AHAPDynamicParameter(.hapticIntensityControl, 0.25)]
        if resume {
            try player.sendParameters(control, atTime: HapticEngine.timeImmediate)
            try player.resume(atTime: 1.035)
        } else {
            try player.start(atTime: 1.035)
        }
        // The sender held up for 20 ms, past the first level's release (1.005).
        rig.run(until: 1.02)
        if !resume { try player.sendParameters(control, atTime: HapticEngine.timeImmediate) }
        rig.run(until: 1.2)
        let levels = rig.commands.filter { $0.kind == .level }.map { (Double($0.scheduled) / 1e9, $0.intensity) }
        if resume {
            #expect(levels.map(\.1) == [0.2], "0.8 × 0.25 from the first level: \(levels)")
        } else {
            #expect(levels.map(\.1) == [0.8, 0.2], "as written until the control came: \(levels)")
        }
    }

    @Test func curvesRampEveryMillisecondThenHold() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try steadyPattern())
        try player.start(atTime: 1.0)
        rig.run(until: 1.1)
        let before = rig.commands.count
        // Intensity control from 1 down to 0.5 over 1.2...1.3 s, then held.
        try player.scheduleParameterCurve(AHAPParameterCurve(.hapticIntensityControl, time: 0.1, controlPoints: [
            .init(time: 0, value: 1), .init(time: 0.1, value: 0.5)]), atTime: 1.1)
        rig.run(until: 1.45)
        let levels = rig.commands.dropFirst(before).filter { $0.kind == .level }
        #expect(levels.count >= 99 && levels.count <= 101, "one level per ms while the ramp runs (\(levels.count))")
        for l in levels {
            let t = (Double(l.scheduled) / 1e9 - 1.2) / 0.1
            let want = 0.8 * (1 - 0.5 * min(max(t, 0), 1))
            #expect(abs(Double(l.intensity) - want) < 1e-4, "at \(Double(l.scheduled) / 1e9): \(l.intensity) vs \(want)")
        }
        #expect(levels.last.map { abs($0.intensity - 0.4) < 1e-6 } == true)
        #expect(levels.allSatisfy { $0.scheduled <= ns(1.3) }, "nothing after the curve ends: it holds")
    }

    /// A run begun "now" (a resume; a seek is the same) with a 30 ms haptic latency while a curve
    /// runs: the curve's changes felt within that latency are already due for release. They go
    /// out as one level (the curve's value 30 ms on), not as thirty at once; the curve then goes
    /// on a level a millisecond.
    @Test func aRunBegunInsideTheLatencyCatchesACurveUpInOneLevel() throws {
        let rig = try ManualRig(hapticLatency: 30_000_000)
        let player = try rig.engine.makePlayer(with: try steadyPattern())
        try player.scheduleParameterCurve(AHAPParameterCurve(.hapticIntensityControl, controlPoints: [
            .init(time: 0, value: 1), .init(time: 1, value: 0.5)]), atTime: HapticEngine.timeImmediate)
        try player.resume(atTime: HapticEngine.timeImmediate)
        rig.at(1.0)
        let first = rig.commands.filter { $0.kind == .level }
        #expect(first.count == 2, "the pattern's level and one catch-up: \(first.map(\.intensity))")
        // The curve at 1.03 s: 1 − 0.5 × 0.03 = 0.985, × 0.8.
        #expect(first.last.map { abs(Double($0.intensity) - 0.8 * 0.985) < 1e-4 } == true, "\(first.map(\.intensity))")
        rig.run(until: 1.1)
        let levels = rig.commands.filter { $0.kind == .level }
        #expect(levels.count >= 95 && levels.count <= 105, "a level a millisecond after the catch-up: \(levels.count)")
    }

    @Test func badParametersAreNamed() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try steadyPattern())
        #expect(throws: HapticEngine.EngineError.invalidParameter("parameters[0]: HapticIntensityControl value 1.5 is outside 0.0...1.0")) {
            try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 1.5)], atTime: 0)
        }
        #expect(throws: HapticEngine.EngineError.self) {
            try player.sendParameters([AHAPDynamicParameter(.hapticAttackTimeControl, 0.5)], atTime: 0)
        }
        #expect(throws: HapticEngine.EngineError.invalidParameter("controlPoints[1]: time 0.1 goes back in time (the point before is at 0.2)")) {
            try player.scheduleParameterCurve(AHAPParameterCurve(.audioVolumeControl, controlPoints: [
                .init(time: 0.2, value: 1), .init(time: 0.1, value: 0.5)]), atTime: 0)
        }
    }

    @Test func muteSilencesAPlayerAndUnmuteRestoresIt() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try steadyPattern())
        try player.start(atTime: 1.0)
        rig.run(until: 1.2)
        player.isMuted = true
        rig.run(until: 1.6)
        player.isMuted = false
        rig.run(until: 3)
        let levels = rig.commands.filter { $0.kind == .level }.map { ($0.scheduled, $0.intensity) }
        #expect(levels.contains { $0 == (ns(1.2), 0) }, "muted at once")
        #expect(levels.contains { $0 == (ns(1.6), 0.8) }, "restored at once")
        #expect(rig.commands.filter { $0.kind == .transient }.map(\.scheduled) == [ns(1.7)], "the tap at 1.5 was muted")
    }

    @Test func theMixerAppliesLiveVolumeAndMute() throws {
        let live = LiveParameters(slots: 4)
        let mixer = AudioMixer(sampleRate: 1000, capacity: 4)
        mixer.live = live
        let timeline = try PatternTimeline(pattern: try AHAPPatternBuilder().audioContinuous(at: 0, duration: 1, volume: 1, attack: 0, release: 0).build())
        let audio = Unmanaged.passRetained(PlayerAudio(timeline: timeline, samples: [nil]))
        defer { audio.release() }
        mixer.start(slot: 1, audio: audio, startFrame: 0)
        // Block 0...99 heard at 0...99 ms (1 ms per frame); volume × 0.25 from 50 ms on.
        try live.send(slot: 1, .audioVolume, [.init(time: 50_000_000, value: 0.25, ramp: false)])
        var out = [Float](repeating: 0, count: 200)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 100, firstFrame: 0, blockTime: 0, nsPerFrame: 1_000_000) }
        let early = (20..<40).map { abs(out[2 * $0]) }.max()!, late = (70..<90).map { abs(out[2 * $0]) }.max()!
        #expect(abs(late / early - 0.25) < 0.03, "volume control multiplies: \(late / early)")
        live.setMuted(slot: 1, true)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 100, firstFrame: 100, blockTime: 100_000_000, nsPerFrame: 1_000_000) }
        #expect((16..<100).allSatisfy { out[2 * $0] == 0 }, "muted (after one 16-frame control ramp)")
    }

    @Test func theMixerAddsLivePan() throws {
        // Pan control adds: the tone at pan 0 plus a live +1 is hard right (left silent).
        let live = LiveParameters(slots: 2)
        let mixer = AudioMixer(sampleRate: 1000, capacity: 2)
        mixer.live = live
        let timeline = try PatternTimeline(pattern: try AHAPPatternBuilder().audioContinuous(at: 0, duration: 1, pan: 0, attack: 0, release: 0).build())
        let audio = Unmanaged.passRetained(PlayerAudio(timeline: timeline, samples: [nil]))
        defer { audio.release() }
        mixer.start(slot: 0, audio: audio, startFrame: 0)
        try live.send(slot: 0, .audioPan, [.init(time: 0, value: 1, ramp: false)])
        var out = [Float](repeating: 0, count: 200)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 100, firstFrame: 0, blockTime: 0, nsPerFrame: 1_000_000) }
        #expect((20..<100).allSatisfy { abs(out[2 * $0]) < 1e-6 }, "left silent")
        #expect((20..<100).map { abs(out[2 * $0 + 1]) }.max()! > 0.1, "right plays")
    }

    @Test func theMixerStartsVoicesPartWayAndScalesTimesByTheRate() throws {
        let samples = AudioSamples(left: (0..<1000).map { Float($0) / 1000 }, right: (0..<1000).map { Float($0) / 1000 })
        let timeline = try PatternTimeline(pattern: try AHAPPatternBuilder().audioCustom(at: 0.2, path: "ramp.wav", useVolumeEnvelope: false).build(),
                                           audioLength: { _ in 1.0 })
        let audio = Unmanaged.passRetained(PlayerAudio(timeline: timeline, samples: [samples]))
        defer { audio.release() }
        // Rate 2: the voice at pattern time 0.2 starts 0.1 s (100 frames) after pattern time 0; the
        // file itself plays at its own speed. Started from frame 150: 50 frames into the file.
        let mixer = AudioMixer(sampleRate: 1000, capacity: 4)
        mixer.start(slot: 0, audio: audio, startFrame: 0, from: 150, rate: 2)
        var out = [Float](repeating: 0, count: 400)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 200, firstFrame: 100) }
        #expect((0..<50).allSatisfy { out[2 * $0] == 0 }, "silent before the start frame")
        #expect(abs(out[2 * 50] - 0.05) < 1e-4 && abs(out[2 * 60] - 0.06) < 1e-4, "the file from its frame 50 on, at its own speed")
    }
}

@Suite("Engine lifecycle and policy (manual clock)")
struct LifecycleTests {
    @Test func idleTimeoutStopsAndTheNextStartRestarts() throws {
        let clock = ManualClock()
        let backend = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, idleTimeout: 5))
        let reasons = Locked<[HapticEngine.StoppedReason]>([])
        engine.stoppedHandler = { r in reasons.withLock { $0.append(r) } }
        try engine.start()
        let player = try engine.makePlayer(with: try steadyPattern())
        try player.start(atTime: 1.0)
        clock.set(nanoseconds: ns(3)); engine.pump()   // finished at 2.0
        clock.set(nanoseconds: ns(6.9)); engine.pump()
        #expect(engine.isRunning, "4.9 s idle: still running")
        clock.set(nanoseconds: ns(7.1)); engine.pump()
        #expect(!engine.isRunning && engine.isIdleStopped)
        #expect(reasons.withLock { $0 } == [.idleTimeout])
        #expect(backend.calls.closed == 1, "the device is released while idle")
        // Transparent restart on the next start.
        try player.start(atTime: 8.0)
        #expect(engine.isRunning)
        clock.set(nanoseconds: ns(8.6)); engine.pump()
        #expect(backend.entries.filter { $0.command.kind == .transient }.map(\.command.scheduled).last == ns(8.5))
    }

    @Test func notifyWhenPlayersFinishedCanStopTheEngine() throws {
        let rig = try ManualRig()
        let reasons = Locked<[HapticEngine.StoppedReason]>([])
        rig.engine.stoppedHandler = { r in reasons.withLock { $0.append(r) } }
        let player = try rig.engine.makePlayer(with: try steadyPattern())
        try player.start(atTime: 1.0)
        let called = Locked(0)
        rig.engine.notifyWhenPlayersFinished { _ in called.withLock { $0 += 1 }; return .stopEngine }
        rig.at(1.5)
        #expect(called.withLock { $0 } == 0, "a player is still playing")
        rig.at(2.5)
        #expect(called.withLock { $0 } == 1)
        #expect(!rig.engine.isRunning)
        #expect(reasons.withLock { $0 } == [.finished])
    }

    /// One-shots (`playPattern(from:)`, `play(_:)`) whose start throws are let go at once: their
    /// slot is free again (with one slot, the next player can be made).
    @Test func oneShotsThatCannotStartGiveTheirSlotBack() throws {
        let url = TestFiles.asset("heartbeat.ahap")
        let engine = try HapticEngine(configuration: .init(backend: RecordingHapticBackend(), clock: ManualClock(), threading: .manual,
                                                           maxPlayers: 1))
        #expect(throws: HapticEngine.EngineError.notRunning) { try engine.playPattern(from: url) }
        #expect(throws: Never.self, "playPattern's player was released") { _ = try engine.makePlayer(with: try steadyPattern()) }
        #expect(throws: HapticEngine.EngineError.notRunning) { try engine.play(.success) }
        #expect(throws: Never.self, "play's player was released") { _ = try engine.makePlayer(with: try steadyPattern()) }
    }

    @Test func engineMutesAndPolicyApplyToEverything() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makePlayer(with: try steadyPattern())
        try rig.engine.setPolicy(HapticPolicy(intensityScale: 0.5))
        try player.start(atTime: 1.0)
        rig.run(until: 1.6)
        let applied = rig.commands
        #expect(applied.first { $0.kind == .level && $0.intensity > 0 }?.intensity == 0.4, "0.8 × 0.5")
        #expect(applied.first { $0.kind == .transient }?.intensity == 0.3, "0.6 × 0.5")
        rig.engine.isMutedForHaptics = true
        rig.run(until: 3)
        let later = rig.commands.dropFirst(applied.count)
        #expect(later.first.map { $0.kind == .level && $0.intensity == 0 } == true, "muting drops the level at once")
        #expect(!later.contains { $0.kind == .transient }, "the tap at 1.7 was dropped")
        #expect(throws: HapticEngine.EngineError.self) { try rig.engine.setPolicy(HapticPolicy(intensityScale: 2)) }
        #expect(rig.engine.policy.intensityScale == 0.5)
    }

    @Test func perSourceRateLimitMerges() throws {
        let rig = try ManualRig()
        rig.at(1.0)
        #expect(try rig.engine.play(.selection, source: "slider"))
        rig.at(1.05)
        #expect(try rig.engine.play(.selection, source: "slider") == false, "50 ms later: merged")
        #expect(try rig.engine.play(.selection, source: "button"), "another source is not limited")
        rig.at(1.11)
        #expect(try rig.engine.play(.selection, source: "slider"), "110 ms after the first: plays")
        #expect(rig.engine.mergedStarts == 1)
    }

    @Test func policyFromTheEnvironmentNamesBadValues() throws {
        let p = try HapticPolicy().applying(environment: ["HAPSYNC_HAPTICS": "off", "HAPSYNC_INTENSITY_SCALE": "0.4", "HAPSYNC_RATE_LIMIT_MS": "250"])
        #expect(p == HapticPolicy(hapticsEnabled: false, intensityScale: 0.4, rateLimitInterval: 0.25))
        #expect(throws: HapticPolicy.Invalid(source: "HAPSYNC_INTENSITY_SCALE", value: "lots", expected: "a number from 0 to 1")) {
            try HapticPolicy().applying(environment: ["HAPSYNC_INTENSITY_SCALE": "lots"])
        }
        #expect(throws: HapticPolicy.Invalid(source: "HAPSYNC_HAPTICS", value: "maybe", expected: "on, off or an output (evdev:PATH, evdev:auto, trace:PATH, waveform:SINK[:rear|mono|left|right|all], waveform:auto or none)")) {
            try HapticPolicy().applying(environment: ["HAPSYNC_HAPTICS": "maybe"])
        }
    }

    @Test func capabilitiesAndModes() throws {
        let clock = ManualClock()
        let audio = SimulatedAudioDevice(time: clock)
        let engine = try HapticEngine(configuration: .init(backend: RecordingHapticBackend(), clock: clock, threading: .manual,
                                                           audio: audio, playsHapticsOnly: true))
        let caps = engine.capabilities
        #expect(caps.supportsHaptics && !caps.supportsAudio && caps.playsHapticsOnly)
        #expect(caps.hapticDevice == "recording" && caps.motors == 0 && caps.audioDevice == "simulated")
        try engine.start()
        let player = try engine.makePlayer(with: try advancedPattern(withTone: true))
        try player.start(atTime: HapticEngine.timeImmediate)
        engine.pump()
        audio.drainMessages()
        #expect(audio.received.isEmpty, "haptics only: no audio is started")

        let backend = RecordingHapticBackend()
        let audioOnly = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, playsAudioOnly: true))
        try audioOnly.start()
        let p2 = try audioOnly.makePlayer(with: try steadyPattern())
        try p2.start(atTime: HapticEngine.timeImmediate)
        clock.advance(seconds: 2)
        audioOnly.pump()
        #expect(!backend.entries.contains { $0.command.intensity > 0 }, "audio only: haptics silent")
        #expect(throws: HapticEngine.EngineError.self) {
            _ = try HapticEngine(configuration: .init(backend: backend, playsHapticsOnly: true, playsAudioOnly: true))
        }
    }

    @Test func audioServerComingBackResetsTheEngine() throws {
        let clock = ManualClock()
        let audio = SimulatedAudioDevice(time: clock)
        let engine = try HapticEngine(configuration: .init(backend: RecordingHapticBackend(), clock: clock, threading: .manual, audio: audio))
        let lost = Locked<[HapticEngine.StoppedReason]>([])
        let reset = DispatchSemaphore(value: 0)
        engine.stoppedHandler = { r in lost.withLock { $0.append(r) } }
        engine.resetHandler = { reset.signal() }
        try engine.start()
        #expect(audio.opens == 1)
        audio.serverUp.store(false, ordering: .releasing)
        audio.onServerLost?("Connection terminated")
        #expect(lost.withLock { $0 } == [.audioServerLost("Connection terminated")])
        audio.serverUp.store(true, ordering: .releasing)
        // The watcher checks once a second; this deadline only bounds a broken run.
        #expect(reset.wait(timeout: .now() + 30) == .success)
        #expect(audio.opens == 2, "the engine reopened the audio output")
        #expect(engine.isRunning)
    }
}
