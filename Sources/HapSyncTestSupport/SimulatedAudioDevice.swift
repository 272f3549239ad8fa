import Foundation
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import Synchronization

/// An audio device that exists only in time, for manual-clock tests and simulations: a 48 kHz sink
/// whose clock runs `ppm` fast against the engine's manual clock, reporting when frames are heard
/// (with optional PulseAudio-like jitter) when `observe()` is called, and keeping the scheduler's
/// messages for inspection. Frame f is
/// truly heard at `origin + f × nsPerFrame`, nsPerFrame = (1e9 / 48000) / (1 + ppm·1e-6), later by
/// every underrun gap before it (`stallWriter`, `resumeWriter`), or, on a sink that skips what
/// is written late (`delaysLateWrites` false, as pipewire-pulse), never when the writer's
/// stall left it behind.
public final class SimulatedAudioDevice: AudioDevice, @unchecked Sendable {
    /// "simulated".
    public let name = "simulated"
    /// 48 kHz.
    public let sampleRate = 48_000.0
    /// Fitted from the simulated observations, as the real output's is.
    public let clock = AudioClock(sampleRate: 48_000)
    /// The scheduler's messages; `observe()` moves them to `received`.
    public let messages = SPSCRing<AudioMessage>(capacity: 1024)
    /// Set by the engine; call it to simulate the server going away.
    public var onServerLost: (@Sendable (String) -> Void)?
    /// Set by the engine.
    public var liveParameters: LiveParameters?
    /// The engine's audio mute.
    public var isMuted = false
    /// Underruns the writer's stalls made.
    public var underruns: Int { gaps.count + skipped.count }
    /// The gaps underruns left: frames from `frame` on are heard `delay` ns later.
    private var gaps: [(frame: Int64, delay: Double)] = []
    /// While the writer is stalled: the first frame it has not written.
    private var stalledAt: Int64?
    /// Whether frames written after the sink ran dry are heard late by the gap (PulseAudio) or
    /// skipped, the sink's timeline running on (pipewire-pulse): `PulseConnection.Server`'s rule.
    public let delaysLateWrites: Bool
    /// The frames a stall made the sink skip (`delaysLateWrites` false).
    public private(set) var skipped: [Range<Int64>] = []
    /// Whether a late frame is the writer's delay (`delaysLateWrites`), as the real outputs say.
    public var writesAhead: Bool { delaysLateWrites }
    /// What `canConnect()` answers (a test flips it to simulate the server coming back).
    public let serverUp = Atomic<Bool>(true)
    /// Whether the (simulated) server answers.
    public func canConnect() -> Bool { serverUp.load(ordering: .acquiring) }
    /// Every message the scheduler sent, in order (moved here by `observe()` and `drainMessages()`).
    public private(set) var received: [AudioMessage] = []
    /// Times `open()` was called.
    public private(set) var opens = 0
    private let time: ManualClock
    private let origin: Double
    /// True nanoseconds per frame.
    public let nsPerFrame: Double
    private let jitter: Double
    private var random = SeededRandom(seed: 0x9E37_79B9_7F4A_7C15)

    /// A sink `ppm` fast whose frame 0 is heard at the clock's current time; observations are off
    /// by up to ±`jitter` ns (uniform); `delaysLateWrites` false: a sink that skips what a stalled
    /// writer left it without rather than playing it late.
    public init(time: ManualClock, ppm: Double = 0, jitter: Double = 0, delaysLateWrites: Bool = true) {
        self.time = time
        self.delaysLateWrites = delaysLateWrites
        origin = Double(time.now())
        nsPerFrame = 1e9 / 48_000 / (1 + ppm * 1e-6)
        self.jitter = jitter
    }

    /// When frame `f` is truly heard (ns).
    public func truth(_ f: Int64) -> Double {
        origin + Double(f) * nsPerFrame + gaps.reduce(0) { $1.frame <= f ? $0 + $1.delay : $0 }
    }

    /// Whether frame `f` is heard at all (not skipped).
    public func isHeard(_ f: Int64) -> Bool { !skipped.contains { $0.contains(f) } }

    /// The frame heard now: the last one written while a stalled writer has let the sink run dry
    /// (on a sink that skips, the one its running timeline has reached, silence or not).
    public var frameNow: Int64 {
        let now = Double(time.now())
        if delaysLateWrites, let stalledAt, now >= truth(stalledAt) { return stalledAt - 1 }
        var late = 0.0
        for gap in gaps {
            let dry = origin + Double(gap.frame) * nsPerFrame + late
            if now < dry { break }
            if now < dry + gap.delay { return gap.frame - 1 }
            late += gap.delay
        }
        return Int64((now - origin - late) / nsPerFrame)
    }

    /// 20 ms of buffered output ahead of what is heard; while the writer is stalled, where it stopped.
    public var nextWritableFrame: Int64 { stalledAt ?? frameNow + 960 }

    /// Starves the writer from now until `resumeWriter()`, as a busy process does an audio thread
    /// without real-time rights: nothing more is written meanwhile, and once the 20 ms buffered
    /// have played, the sink runs dry. A test makes no `observe()` meanwhile (the thread that
    /// reports timing is the one stalled).
    public func stallWriter() {
        if stalledAt == nil { stalledAt = nextWritableFrame }
    }

    /// The writer comes back: if the sink ran dry, every frame from the first unwritten one on is
    /// heard late by the gap (an underrun), and the writer tells the clock what it writes, as
    /// the real outputs' renderer does; on a sink that skips, the frames its timeline passed
    /// meanwhile are never heard and the rest are heard where they always were.
    public func resumeWriter() {
        guard let stopped = stalledAt else { return }
        stalledAt = nil
        let late = Double(time.now()) - truth(stopped)
        guard delaysLateWrites else {
            if late > 0 { skipped.append(stopped..<(frameNow + 1)) }
            return
        }
        if late > 0 { gaps.append((stopped, late)) }
        clock.noteWrite(frame: stopped, at: time.now())
    }

    /// Reports the frame heard now with jitter, as the output's timing callback does every 10 ms.
    public func observe() {
        let u = random.signedUnit()
        let f = frameNow
        clock.observe(frame: f, heardAt: UInt64(truth(f) + u * jitter))
        drainMessages()
    }

    /// Moves the scheduler's messages to `received`.
    public func drainMessages() {
        while let m = messages.pop() { received.append(m) }
    }

    /// Feeds the settling observations, advancing the clock 10 ms per observation.
    public func open() throws {
        opens += 1
        for _ in 0..<AudioClock.settlingObservations { observe(); time.advance(nanoseconds: 10_000_000) }
    }
    /// Nothing to close.
    public func close() {}
    /// Sources are not rendered.
    public func setSource(slot: Int, _ source: Unmanaged<PlayerAudio>?) {}
    /// No samples: the device only times voices.
    public func load(_ timeline: PatternTimeline, files: [String: URL]) throws -> PlayerAudio {
        PlayerAudio(timeline: timeline, samples: timeline.voices.map { _ in nil })
    }
}

