import Dispatch
import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncCore
import HapSyncGeneration
import HapSyncRuntime
import Synchronization

/// One onset found in the live capture, handed from the capture thread to the session's thread.
struct LiveOnset {
    /// The capture frame its sound starts at.
    var frame: Int64
    /// Felt loudness 0...1 (the detector's).
    var loudness: Double
    /// Spectral centroid after the onset, Hz.
    var centroid: Double
    /// When the capture that revealed it arrived, CLOCK_MONOTONIC ns.
    var foundAt: UInt64
}

/// What `hapsync live` does with its capture: every chunk goes to the pass-through (when the audio
/// is played on) and to the streaming onset detector, on the capture's thread; each onset is
/// handed through a lock-free ring to the session's own thread, which plays a transient at the
/// moment that onset is heard: with the audio played on, at the output frame that plays the
/// onset's capture frame (the engine's audio clock says when); without (`--no-delay`), at once.
///
/// The capture side (`captured`) does not lock or block; it allocates only what the detector
/// does (nothing after start). The session's thread makes a player per transient. `counts` and
/// `profile` may be read (and the profile set) from any thread.
final class LiveSession: @unchecked Sendable {
    /// What the summary reports, counted as the run goes.
    struct Counts {
        /// Transients played.
        var transients = 0
        /// Onsets under the profile's floor (nothing played).
        var belowFloor = 0
        /// Transients whose moment had passed when they were found (played at once, late).
        var late = 0
        /// Onsets lost because the ring to the session's thread was full.
        var dropped = 0
        /// Onsets found before the pass-through had fixed its distance (nothing to place them by).
        var unplaced = 0
        /// Per transient: when its sound is heard minus when it reached the live sink's monitor
        /// (the audio's added delay), ns; with `--no-delay`: when it is felt minus when its
        /// sound is heard (the real sink's monitor time plus the sink's latency; how far the
        /// haptics lag the sound, 0 when found in time). The latest `Lags.kept` only.
        var lags = Lags()
        /// Times the pass-through's distance was fixed anew: the sound had fallen behind its
        /// capture (frames not there in time) or run more than a delay further behind it than
        /// asked (the live and the real sink's clocks drifting apart, a stall).
        var refixes = 0
    }

    /// The latest lags, at most `kept` of them (a run may last days), and the largest of all.
    struct Lags {
        /// How many are kept for the percentiles.
        static let kept = 8_192
        private(set) var latest: [Double] = []
        private var next = 0
        /// How many were recorded in all.
        private(set) var count = 0
        /// The largest of all, ns (0 before the first).
        private(set) var max = 0.0

        mutating func append(_ lag: Double) {
            if latest.count < Self.kept { latest.append(lag) } else { latest[next] = lag }
            next = (next + 1) % Self.kept
            count += 1
            max = count == 1 ? lag : Swift.max(max, lag)
        }

        /// The nearest-rank percentile `p` of the kept lags, ms; nil when there are none.
        func percentileMs(_ p: Double) -> Double? { latest.map { $0 / 1e6 }.sorted().nearestRankPercentile(p) }
    }

    let engine: HapticEngine
    let detector: StreamingOnsetDetector
    /// The captured audio played on (nil with `--no-delay`).
    let passThrough: PassThroughAudio?
    /// The engine's audio output, whose clock places the played-on frames.
    let audio: SoundServerOutput?
    /// Added to a capture frame to number it in the pass-through (a service's later capture
    /// continues where the last one stopped).
    let frameBase: Int64
    /// When a capture frame reached the live sink's monitor, CLOCK_MONOTONIC ns (nil: not known yet).
    var monitorTime: (Int64) -> UInt64? = { _ in nil }
    /// How far ahead of its sound the captured sink renders into its monitor, ns (nil: not known
    /// yet): with `--no-delay`, a frame that reached the real sink's monitor is heard that much later.
    var sinkAhead: () -> UInt64? = { nil }

    private let onsets = SPSCRing<LiveOnset>(capacity: 256)
    private let wake = DispatchSemaphore(value: 0)
    private let lost = Atomic<Int>(0)
    private let tally = Locked(Counts())
    private let profileNow: Locked<LiveProfile>
    /// Players still sounding, kept until their transient has played.
    private var sounding: [(player: HapticPatternPlayer, until: UInt64)] = []

    init(engine: HapticEngine, detector: StreamingOnsetDetector, profile: LiveProfile, passThrough: PassThroughAudio?,
         audio: SoundServerOutput?, frameBase: Int64 = 0) {
        self.engine = engine
        self.detector = detector
        profileNow = Locked(profile)
        self.passThrough = passThrough
        self.audio = audio
        self.frameBase = frameBase
    }

    /// The counts so far. Any thread.
    var counts: Counts {
        var c = tally.withLock { $0 }
        c.dropped += lost.load(ordering: .relaxed)
        return c
    }

    /// How hits feel from the next onset on (gain, curve, floor). Any thread.
    var profile: LiveProfile {
        get { profileNow.withLock { $0 } }
        set { profileNow.withLock { $0 = newValue } }
    }

    /// A chunk of the capture: `channels` interleaved floats, the first at capture frame
    /// `firstFrame`. Capture thread; does not lock or block.
    /// The onsets a chunk reveals are handed on before the chunk reaches the pass-through: a
    /// frame the stream may play is never one whose onset is still to be found.
    func captured(_ samples: UnsafeBufferPointer<Float>, channels: Int, firstFrame: Int64) {
        let now = MonotonicClock.nanoseconds()
        var found = false
        detector.process(samples, channels: channels, firstFrame: firstFrame) { onset in
            if onsets.push(LiveOnset(frame: onset.frame, loudness: onset.loudness, centroid: onset.centroid, foundAt: now)) {
                found = true
            } else {
                lost.add(1, ordering: .relaxed)
            }
        }
        if found { wake.signal() }
        passThrough?.write(samples, channels: channels, firstFrame: firstFrame &+ frameBase)
    }

    /// Plays the onsets found until `shouldStop` says so (checked at least every 50 ms).
    func run(until shouldStop: () -> Bool) {
        var lateBlocks = 0, lateChecks = 0, lastCheck: UInt64 = 0
        while !shouldStop() {
            _ = wake.wait(timeout: .now() + .milliseconds(50))
            while let onset = onsets.pop() { play(onset) }
            let now = MonotonicClock.nanoseconds()
            sounding.removeAll { $0.until < now }
            // Every 100 ms: is the sound still `hold` behind its capture?
            if let passThrough, passThrough.offset != nil, now &- lastCheck >= 100_000_000 {
                lastCheck = now
                let late = passThrough.lateBlocks
                lateChecks = late > lateBlocks ? lateChecks + 1 : 0
                lateBlocks = late
                let behind = passThrough.capturedFrames - passThrough.playedFrames
                if lateChecks >= 3 || (passThrough.playedFrames != .min && behind > 2 * passThrough.hold + 4_800) {
                    passThrough.unfix()
                    tally.withLock { $0.refixes += 1 }
                    lateChecks = 0
                }
            }
        }
        while let onset = onsets.pop() { play(onset) }
    }

    /// When `onset` is to be felt, CLOCK_MONOTONIC ns: when the output plays its capture frame,
    /// or (nothing played on) when the real sink plays it, or now if that has passed. Nil when
    /// the pass-through has no distance yet.
    private func moment(of onset: LiveOnset, now: UInt64) -> UInt64? {
        guard let passThrough else {
            guard let reached = monitorTime(onset.frame), let ahead = sinkAhead() else { return now }
            return max(now, reached &+ ahead)
        }
        guard let offset = passThrough.offset, let audio else { return nil }
        return audio.clock.fit.time(ofFrame: onset.frame &+ frameBase &+ offset)
    }

    private func play(_ onset: LiveOnset) {
        let now = MonotonicClock.nanoseconds()
        guard let level = profile.level(loudness: onset.loudness) else {
            tally.withLock { $0.belowFloor += 1 }
            return
        }
        guard let at = moment(of: onset, now: now) else {
            tally.withLock { $0.unplaced += 1 }
            return
        }
        var lag: Double?
        if let reached = monitorTime(onset.frame) {
            // Played on: how much later the sound is heard than it reached the live sink. Followed
            // (--no-delay): how much later the haptic is felt than its sound is heard.
            let heard = Double(reached) + Double(sinkAhead() ?? 0)
            lag = passThrough == nil ? Double(at) - heard : Double(at) - Double(reached)
        }
        let sharpness = HapticGenerator.sharpness(centroid: onset.centroid)
        let pattern = AHAPPattern(entries: [.event(AHAPEvent(time: 0, type: .hapticTransient, parameters: [
            AHAPEventParameter(.hapticIntensity, level), AHAPEventParameter(.hapticSharpness, sharpness),
        ]))])
        do {
            let player = try engine.makePlayer(with: pattern)
            _ = try player.start(atTime: at <= now ? HapticEngine.timeImmediate : Double(at) / 1e9)
            sounding.append((player, max(at, now) + 200_000_000))
            tally.withLock {
                $0.transients += 1
                if passThrough != nil, at < now { $0.late += 1 }
                if let lag { $0.lags.append(lag) }
            }
        } catch {
            lost.add(1, ordering: .relaxed)
        }
    }
}
