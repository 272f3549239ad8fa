import HapSyncCore
import HapSyncTestSupport
import Testing
@testable import HapSyncRuntime

/// A player without audio started on an output frame (`start(atTime:outputFrame:)`, what
/// `hapsync live` does for a transient whose sound it plays on): its commands carry their frames
/// and follow the audio clock, whatever time the caller reckoned for that frame.
@Suite("Players without audio started on an output frame")
struct OutputFrameStartTests {
    /// An engine on a simulated audio device, released 10 ms before what is felt.
    struct Rig {
        let clock = ManualClock()
        let audio: SimulatedAudioDevice
        let backend = RecordingHapticBackend()
        let engine: HapticEngine

        init(audio withAudio: Bool = true) throws {
            audio = SimulatedAudioDevice(time: clock)
            engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual,
                                                           audio: withAudio ? audio : nil, hapticLatency: 10_000_000))
            try engine.start()
        }

        /// Runs the scheduler until `t` (ns), as its thread would wake.
        func step(to t: UInt64) {
            while clock.now() < t {
                let next = engine.pump()
                clock.set(nanoseconds: min(max(next, clock.now() + 1), t))
            }
            engine.pump()
        }

        var taps: [OutputCommand] { backend.entries.map(\.command).filter { $0.kind == .transient } }
    }

    @Test func itsCommandsCarryTheirFramesAndAreReleasedWhenThoseAreHeard() throws {
        let rig = try Rig()
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0, intensity: 0.8).transient(at: 0.1, intensity: 0.5) })
        let frame = rig.audio.frameNow + 9_600
        // The caller's time is 30 ms off the frame's (a fit that moved since): the frame wins.
        try player.start(atTime: rig.audio.truth(frame) / 1e9 + 0.03, outputFrame: frame)
        rig.step(to: rig.clock.now() + ns(0.5))
        let taps = rig.taps
        #expect(taps.map(\.frame) == [frame, frame + 4_800], "pattern time 0 on the frame, 0.1 s 4800 frames later")
        for tap in taps {
            #expect(abs(Double(tap.scheduled) - (rig.audio.truth(tap.frame) - 10e6)) < 21_000, "released the latency before its frame is heard")
        }
        rig.audio.drainMessages()
        #expect(!rig.audio.received.contains { $0.kind == .start }, "no voices to start: the player has no audio")
    }

    @Test func aPendingStartMovesToAnotherFrame() throws {
        let rig = try Rig()
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0, intensity: 0.8) })
        let frame = rig.audio.frameNow + 9_600
        try player.start(atTime: rig.audio.truth(frame) / 1e9, outputFrame: frame)
        rig.step(to: rig.clock.now() + ns(0.05))
        // Its sound now plays 240 frames later (the pass-through's distance fixed anew).
        try player.movePendingStart(toTime: rig.audio.truth(frame + 240) / 1e9, outputFrame: frame + 240)
        rig.step(to: rig.clock.now() + ns(0.5))
        #expect(rig.taps.map(\.frame) == [frame + 240], "once, on the new frame")
    }

    @Test func withoutAudioItStartsByTime() throws {
        let rig = try Rig(audio: false)
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0, intensity: 0.8) })
        try player.start(atTime: 2.0, outputFrame: 96_000)
        rig.step(to: ns(2.5))
        #expect(rig.taps.map(\.frame) == [-1])
        #expect(rig.taps.map(\.scheduled) == [ns(2.0) - 10_000_000])
    }

    @Test func aTimedPendingStartMovedToAFrameFollowsIt() throws {
        let rig = try Rig()
        let player = try rig.engine.makePlayer(with: try pattern { $0.transient(at: 0, intensity: 0.8) })
        let frame = rig.audio.frameNow + 9_600
        try player.start(atTime: rig.audio.truth(frame) / 1e9 + 0.05)
        rig.step(to: rig.clock.now() + ns(0.05))
        try player.movePendingStart(toTime: rig.audio.truth(frame) / 1e9, outputFrame: frame)
        rig.step(to: rig.clock.now() + ns(0.5))
        #expect(rig.taps.map(\.frame) == [frame])
    }

    @Test func loopsAndRateChangesStartNoVoicesAndANewRunByResumeIsByTime() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: try pattern { $0.transient(at: 0, intensity: 0.8).transient(at: 0.05, intensity: 0.5) })
        player.loopEnabled = true
        player.loopEnd = 0.1
        let frame = rig.audio.frameNow + 4_800
        try player.start(atTime: rig.audio.truth(frame) / 1e9, outputFrame: frame)
        rig.step(to: rig.clock.now() + ns(0.35))
        player.playbackRate = 2
        rig.step(to: rig.clock.now() + ns(0.2))
        try player.stop(atTime: HapticEngine.timeImmediate)
        rig.step(to: rig.clock.now() + ns(0.1))
        let looped = rig.taps
        #expect(looped.count >= 6 && looped.allSatisfy { $0.frame >= frame }, "each pass on the audio clock, with its frames: \(looped.map(\.frame))")
        rig.audio.drainMessages()
        #expect(rig.audio.received.isEmpty, "no voices started or stopped for a player without audio: \(rig.audio.received)")
        // A resume that begins a new run (the last one stopped) is by time, as a plain start is.
        player.loopEnabled = false
        try player.resume(atTime: rig.engine.currentTime + 0.1)
        rig.step(to: rig.clock.now() + ns(0.3))
        #expect(rig.taps.dropFirst(looped.count).map(\.frame) == [-1, -1])
    }
}
