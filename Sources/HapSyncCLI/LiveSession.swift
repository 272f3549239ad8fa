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
        /// Transients played (one dropped after a new distance, `droppedAfterFix`, no longer counts).
        var transients = 0
        /// Onsets the engine's rate limit merged into the transient before (nothing new played).
        var merged = 0
        /// Onsets under the profile's floor (nothing played).
        var belowFloor = 0
        /// Transients whose moment had passed when they were found (played at once, late).
        var late = 0
        /// Onsets lost because the ring to the session's thread was full.
        var dropped = 0
        /// Onsets found before the pass-through had fixed its distance (nothing to place them by),
        /// or in sound it skipped (a capture made anew: `LiveFeed.growCapture`, a server restart).
        var unplaced = 0
        /// Per transient: when its sound is heard minus when it reached the live sink's monitor
        /// (the audio's added delay), ns; with `--no-delay`: when it is felt minus when its
        /// sound is heard (the real sink's monitor time plus the sink's latency; how far the
        /// haptics lag the sound, 0 when found in time). The latest `Lags.kept` only.
        var lags = Lags()
        /// Changes of the continuous layer's level sent (`--style` other than transients).
        var levelChanges = 0
        /// Levels lost because the ring to the session's thread was full, or their send refused.
        var levelsLost = 0
        /// Times the pass-through's distance was fixed anew: the sound had fallen behind its
        /// capture (frames not there in time) or run more than a delay further behind it than
        /// asked (a stall, an underrun, or clocks further apart than the pass-through follows).
        var refixes = 0
        /// Transients placed by an earlier distance, their sound not yet rendered and their
        /// release at least `moveMargin` away when the distance was fixed anew, moved to where
        /// their sound now plays (the scheduler would leave one that went out meanwhile as it was).
        var moved = 0
        /// Transients dropped as `moved` would have moved them, because the new distance skips
        /// their sound (no longer counted in `transients`).
        var droppedAfterFix = 0

        /// Counts a transient asked of the engine: played (`started`; `late` when its moment had
        /// passed, `lag` its lag) or merged by the engine's rate limit into the one before, which
        /// counts as nothing played.
        mutating func add(started: Bool, late: Bool, lag: Double?) {
            guard started else {
                merged += 1
                return
            }
            transients += 1
            if late { self.late += 1 }
            if let lag { lags.append(lag) }
        }
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
    /// What is played: transients, a continuous layer, or both. Any thread; a change takes
    /// effect from the next onset and level on (the continuous layer made anew at its strength).
    var style: LiveStyle {
        get { styleNow.withLock { $0 } }
        set {
            styleNow.withLock { $0 = newValue }
            followsLevels.store(newValue.generation != nil, ordering: .relaxed)
        }
    }
    private let styleNow: Locked<LiveStyle>
    /// Whether the capture hands each hop's level on (a style with a continuous layer): what the
    /// capture thread reads, without a lock.
    private let followsLevels: Atomic<Bool>
    /// When the engine last refused the continuous layer's player (CLOCK_MONOTONIC ns; 0: never):
    /// it is not asked again for a second.
    private var continuousRefusedAt: UInt64 = 0
    /// The style the continuous layer's player was made for.
    private var continuousStyle: LiveStyle?
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

    /// Called on the session's thread when the output underran since the last 100 ms look (the
    /// feed grows its capture's fragment there); must not block. Set before the thread starts.
    var onUnderran: (@Sendable () -> Void)?

    /// Where each onset and what became of it is written (`hapsync live --onsets`); nil: nowhere.
    /// Set before the session's thread starts; written on it.
    var onsetLog: LiveOnsetLog?
    /// The capture's first frame with sound (a sample beyond ±0.0001), for the onset log; −1
    /// until one came.
    private let firstSound = Atomic<Int64>(-1)

    private let onsets = SPSCRing<LiveOnset>(capacity: 256)
    /// Each hop's felt level, for the continuous layer (filled only with one).
    private let levels = SPSCRing<StreamingLevel>(capacity: 1_024)
    private let levelsDropped = Atomic<Int>(0)
    /// Set by `restartLayer`: the session thread drops the continuous layer's player.
    private let layerStale = Atomic<Bool>(false)
    /// The continuous layer: its player (made at the first level placed), its followers, and
    /// what was sent last.
    private var continuous: HapticPatternPlayer?
    private var levelFollower: LevelFollower
    private var sharpnessFollower: SharpnessFollower
    private var sent = (intensity: -1.0, sharpness: -1.0)
    private let wake = DispatchSemaphore(value: 0)
    private let lost = Atomic<Int>(0)
    private let tally = Locked(Counts())
    private let profileNow: Locked<LiveProfile>
    /// Players still sounding, kept until their transient has played.
    private var sounding: [Sounding] = []

    /// A transient's player, kept until its transient has played; one placed by the
    /// pass-through's distance also keeps what placed it, to place it again when the distance is
    /// fixed anew before it is released.
    private struct Sounding {
        let player: HapticPatternPlayer
        var until: UInt64
        /// The onset, when placed by the pass-through's distance and started (else nil).
        let onset: LiveOnset?
        /// The output frame its sound was placed at (the onset's frame at the distance then).
        var outputFrame: Int64
        /// Where it is to be felt, CLOCK_MONOTONIC ns.
        var at: UInt64
        /// The pass-through's fix it was placed by (`PassThroughAudio.Fix.number`).
        var fix: Int
    }

    /// How long before its release a transient is still moved or dropped: the session's thread
    /// is not real-time, and the scheduler refuses a move that comes after the release (then
    /// the count would say moved for one that was not).
    static let moveMargin: UInt64 = 2_000_000

    /// What becomes of a transient placed for `placedAt` (CLOCK_MONOTONIC ns) at output frame
    /// `outputFrame` when the pass-through's distance is fixed anew: its sound now plays at
    /// output frame `newFrame`, heard at `newAt` (nil: the new distance skips it, never heard).
    /// One whose sound went out at the old distance (`outputFrame` before `renderedBefore`: it is
    /// heard where it was placed), or whose release (`lead` before it is felt) is less than
    /// `moveMargin` away, is left; else it moves when its frame changed (it is placed by frame),
    /// or is dropped. Pure.
    static func replacement(placedAt: UInt64, outputFrame: Int64, renderedBefore: Int64, newFrame: Int64, newAt: UInt64?, lead: UInt64,
                            now: UInt64) -> Replacement {
        guard outputFrame >= renderedBefore, placedAt > now &+ lead &+ moveMargin else { return .keep }
        guard let newAt else { return .drop }
        return newFrame == outputFrame ? .keep : .move(to: newAt)
    }

    /// What `replacement` decides.
    enum Replacement: Equatable {
        case keep
        case move(to: UInt64)
        case drop
    }

    init(engine: HapticEngine, detector: StreamingOnsetDetector, style: LiveStyle = .transients, profile: LiveProfile,
         passThrough: PassThroughAudio?, audio: SoundServerOutput?, frameBase: Int64 = 0) {
        self.engine = engine
        self.detector = detector
        styleNow = Locked(style)
        followsLevels = Atomic(style.generation != nil)
        let hop = Double(detector.hop) / detector.sampleRate
        levelFollower = LevelFollower(hop: hop)
        sharpnessFollower = SharpnessFollower(hop: hop)
        profileNow = Locked(profile)
        self.passThrough = passThrough
        self.audio = audio
        self.frameBase = frameBase
    }

    /// The counts so far. Any thread.
    var counts: Counts {
        var c = tally.withLock { $0 }
        c.dropped += lost.load(ordering: .relaxed)
        c.levelsLost += levelsDropped.load(ordering: .relaxed)
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
        // Before the chunk's onsets are handed on: the first one logged knows it.
        // A plain loop: the generic `firstIndex(where:)` allocates on every call in a debug build.
        if firstSound.load(ordering: .relaxed) < 0 {
            for i in 0..<samples.count where abs(samples[i]) > 1e-4 {
                firstSound.store(firstFrame &+ Int64(i / max(channels, 1)), ordering: .relaxed)
                break
            }
        }
        var found = false
        let followsLevels = followsLevels.load(ordering: .relaxed)
        detector.process(samples, channels: channels, firstFrame: firstFrame, report: { onset in
            if onsets.push(LiveOnset(frame: onset.frame, loudness: onset.loudness, centroid: onset.centroid, foundAt: now)) {
                found = true
            } else {
                lost.add(1, ordering: .relaxed)
            }
        }, levels: { level in
            guard followsLevels else { return }
            if levels.push(level) { found = true } else { levelsDropped.add(1, ordering: .relaxed) }
        })
        if found { wake.signal() }
        // When the chunk came (before the analysis' time): the pass-through reckons the capture from it.
        passThrough?.write(samples, channels: channels, firstFrame: firstFrame &+ frameBase, at: now)
    }

    /// A capture made anew (its thread another) hands chunks from here on: the rings it fills
    /// take a new producer. Between captures (the old one stopped, its thread joined; the next
    /// not started). Control side.
    func captureThreadChanged() {
        // The session's thread, their consumer, takes its role again at its next pop.
        onsets.resetOwnership()
        levels.resetOwnership()
    }

    /// Plays the onsets found until `shouldStop` says so (checked at least every 50 ms).
    func run(until shouldStop: () -> Bool) {
        // The pass-through and the output count over their whole life (a service's earlier runs too).
        var lateBlocks = passThrough?.lateBlocks ?? 0, lateChecks = 0, lastCheck: UInt64 = 0
        var underruns = audio?.underruns ?? 0
        while !shouldStop() {
            // While a transient waits for its release, a look every 2 ms: a distance fixed anew
            // (by this thread below, or by a capture made anew) moves it before it goes out.
            _ = wake.wait(timeout: .now() + .milliseconds(waitsForRelease ? 2 : 50))
            placeAgainAfterFix()
            while let onset = onsets.pop() { play(onset) }
            if layerStale.exchange(false, ordering: .acquiringAndReleasing) || (continuous != nil && continuousStyle != style) { endContinuous() }
            while let level = levels.pop() { follow(level) }
            let now = MonotonicClock.nanoseconds()
            sounding.removeAll { $0.until < now }
            // Every 100 ms: is the sound still `hold` behind its capture?
            if let passThrough, passThrough.offset != nil, now &- lastCheck >= 100_000_000 {
                lastCheck = now
                let late = passThrough.lateBlocks
                lateChecks = late > lateBlocks ? lateChecks + 1 : 0
                lateBlocks = late
                let underrunsNow = audio?.underruns ?? 0
                let underran = underrunsNow > underruns
                underruns = underrunsNow
                if underran { onUnderran?() }
                let behind = passThrough.playedFrames == .min ? nil : passThrough.capturedFrames - passThrough.playedFrames
                if Self.setsDistanceAnew(lateChecks: lateChecks, underran: underran, behind: behind, hold: passThrough.hold) {
                    passThrough.unfix()
                    tally.withLock { $0.refixes += 1 }
                    lateChecks = 0
                }
            }
        }
        while let onset = onsets.pop() { play(onset) }
        endContinuous()
    }

    /// Whether a transient placed by the pass-through's distance is still to be released.
    private var waitsForRelease: Bool {
        guard passThrough != nil, !sounding.isEmpty else { return false }
        let releaseBy = MonotonicClock.nanoseconds() &+ engine.effectiveHapticLatency
        return sounding.contains { $0.onset != nil && $0.at > releaseBy }
    }

    /// After the pass-through's distance was fixed anew (a stall, an underrun, a capture made
    /// anew), moves each transient placed by an earlier fix and not yet released to where its
    /// sound now plays, or drops it when the new distance skips its sound: else it would be felt
    /// off by the change (up to the delay, tens of ms), or without a sound.
    private func placeAgainAfterFix() {
        guard let passThrough, let fix = passThrough.fixInForce, sounding.contains(where: { $0.onset != nil && $0.fix != fix.number }) else { return }
        let lead = engine.effectiveHapticLatency
        for i in sounding.indices where sounding[i].fix != fix.number {
            sounding[i].fix = fix.number
            guard let onset = sounding[i].onset else { continue }
            let newAt = moment(ofFrame: onset.frame, in: fix)
            let frame = outputFrame(ofFrame: onset.frame, in: fix)
            let now = MonotonicClock.nanoseconds()
            switch Self.replacement(placedAt: sounding[i].at, outputFrame: sounding[i].outputFrame, renderedBefore: fix.renderedBefore,
                                    newFrame: frame, newAt: newAt, lead: lead, now: now) {
            case .keep:
                continue
            case .move(let at):
                guard (try? sounding[i].player.movePendingStart(toTime: at <= now ? HapticEngine.timeImmediate : Double(at) / 1e9,
                                                                outputFrame: frame)) != nil else { continue }
                sounding[i].at = max(at, now)
                sounding[i].outputFrame = frame
                sounding[i].until = max(at, now) &+ 200_000_000
                tally.withLock {
                    $0.moved += 1
                    if at <= now { $0.late += 1 }
                }
                log(onset, outcome: .moved, at: max(at, now))
            case .drop:
                guard (try? sounding[i].player.dropPendingStart()) != nil else { continue }
                tally.withLock {
                    $0.transients -= 1
                    $0.droppedAfterFix += 1
                }
                log(onset, outcome: .dropped, at: nil)
            }
        }
    }

    /// A line in the onset log for `onset` (a second one for its transient placed again): what
    /// became of it and when its transient was asked for.
    private func log(_ onset: LiveOnset, outcome: LiveOnsetLog.Outcome, at: UInt64?) {
        guard let onsetLog else { return }
        let first = firstSound.load(ordering: .relaxed)
        onsetLog.record(frame: onset.frame, firstSound: first < 0 ? nil : first, loudness: onset.loudness, centroid: onset.centroid,
                        outcome: outcome, transientAt: at)
    }

    /// Whether the sound played on is taken back to its hold behind the capture (the
    /// pass-through's distance fixed anew, `PassThroughAudio.unfix`), looked at every 100 ms:
    /// when blocks came too early for their capture three checks running (a stall, or clocks
    /// further apart than the pass-through's rate follows), when the output underran since the
    /// last check (each underrun's gap would otherwise add to the sound's delay for good: the
    /// sound skips the gap's worth instead), or when the sound fell more than twice the hold and
    /// 100 ms (at 48 kHz) behind its capture (`behind`, frames; nil before anything played).
    static func setsDistanceAnew(lateChecks: Int, underran: Bool, behind: Int64?, hold: Int64) -> Bool {
        lateChecks >= 3 || underran || (behind.map { $0 > 2 * hold + 4_800 } ?? false)
    }

    /// Has the session thread drop the continuous layer's player at its next pass (an engine
    /// that restarted stopped it): the next level makes one anew. Any thread.
    func restartLayer() { layerStale.store(true, ordering: .releasing) }

    /// Stops the continuous layer's player (the next level makes one anew if the style has one).
    private func endContinuous() {
        try? continuous?.stop(atTime: HapticEngine.timeImmediate)
        continuous = nil
        sent = (-1, -1)
    }

    /// When `onset` is to be felt, CLOCK_MONOTONIC ns: when the output plays its capture frame,
    /// or (nothing played on) when the real sink plays it, or now if that has passed. Nil when
    /// the pass-through has no distance yet.
    private func moment(ofFrame frame: Int64, now: UInt64) -> UInt64? {
        guard let passThrough else {
            guard let reached = monitorTime(frame), let ahead = sinkAhead() else { return now }
            return max(now, reached &+ ahead)
        }
        // A frame the pass-through skipped (an earlier capture's, after a capture made anew) is
        // never heard: no moment.
        guard let fix = passThrough.fixInForce else { return nil }
        return moment(ofFrame: frame, in: fix)
    }

    /// When capture frame `frame` (this session's numbering) plays at the distance `fix` set,
    /// CLOCK_MONOTONIC ns; nil when it is never heard there (before the capture in force began,
    /// or skipped by the fix) or the output has no clock.
    private func moment(ofFrame frame: Int64, in fix: PassThroughAudio.Fix) -> UInt64? {
        let framed = frame &+ frameBase
        guard let passThrough, let audio, framed >= max(passThrough.firstPlayableFrame ?? .max, fix.firstPlayed) else { return nil }
        return audio.clock.fit.time(ofFrame: outputFrame(ofFrame: frame, in: fix))
    }

    /// The output frame that plays capture frame `frame` (this session's numbering) at the
    /// distance `fix` set: where its transient is started and its sound plays.
    private func outputFrame(ofFrame frame: Int64, in fix: PassThroughAudio.Fix) -> Int64 { frame &+ frameBase &+ fix.offset }

    /// One hop's level into the continuous layer: followed (attack, release, sharpness held
    /// through silence), shaped by the profile, and sent to the layer's player for the moment the
    /// hop is heard when it changed enough to be felt.
    private func follow(_ level: StreamingLevel) {
        let felt = levelFollower.next(level.loudness)
        let sharpness = sharpnessFollower.next(centroid: level.centroid, level: felt) ?? 0
        let intensity = profile.continuousLevel(felt)
        guard abs(intensity - sent.intensity) >= 0.01 || abs(sharpness - sent.sharpness) >= 0.02 || (intensity == 0 && sent.intensity != 0) else { return }
        let now = MonotonicClock.nanoseconds()
        guard let at = moment(ofFrame: level.frame, now: now) else { return }
        let controls = [AHAPDynamicParameter(.hapticIntensityControl, intensity), AHAPDynamicParameter(.hapticSharpnessControl, sharpness)]
        do {
            if let continuous {
                try continuous.sendParameters(controls, atTime: at <= now ? HapticEngine.timeImmediate : Double(at) / 1e9)
            } else {
                // A new player's first level is released the engine's haptic latency before it
                // starts: it starts no earlier than that latency + 5 ms from now.
                guard startContinuous(at: max(at, now &+ engine.effectiveHapticLatency &+ 5_000_000), controls: controls, now: now) else { return }
            }
            sent = (intensity, sharpness)
            tally.withLock { $0.levelChanges += 1 }
        } catch {
            levelsDropped.add(1, ordering: .relaxed)
        }
    }

    /// Makes and starts the continuous layer's player: a continuous event as long as one may be,
    /// looped, at the style's strength, its first `controls` in force from its first level
    /// (`start` at CLOCK_MONOTONIC ns). They are sent before a `resume` begins the run: a start
    /// would clear them, and controls sent after it could come after its first level had gone
    /// out. False for transients alone, or if the engine refuses it: counted as a lost level, and
    /// not asked again for a second.
    private func startContinuous(at start: UInt64, controls: [AHAPDynamicParameter], now: UInt64) -> Bool {
        guard continuousRefusedAt == 0 || now &- continuousRefusedAt >= 1_000_000_000 else {
            levelsDropped.add(1, ordering: .relaxed)
            return false
        }
        let style = style
        guard let generation = style.generation else { return false }
        let pattern = AHAPPattern(entries: [.event(AHAPEvent(time: 0, type: .hapticContinuous, duration: AHAPEvent.maximumContinuousDuration, parameters: [
            AHAPEventParameter(.hapticIntensity, generation.continuousIntensity), AHAPEventParameter(.hapticSharpness, 0),
        ]))])
        do {
            let player = try engine.makePlayer(with: pattern)
            try player.setLoop(true, end: 0)
            try player.sendParameters(controls, atTime: HapticEngine.timeImmediate)
            try player.resume(atTime: Double(start) / 1e9)
            continuous = player
            continuousStyle = style
            continuousRefusedAt = 0
            return true
        } catch {
            continuousRefusedAt = max(now, 1)
            levelsDropped.add(1, ordering: .relaxed)
            return false
        }
    }

    private func play(_ onset: LiveOnset) {
        var outcome = LiveOnsetLog.Outcome.notPlayed, placed: UInt64?
        defer { log(onset, outcome: outcome, at: placed) }
        guard style.hasTransients else { return }
        let now = MonotonicClock.nanoseconds()
        guard let level = profile.level(loudness: onset.loudness) else {
            tally.withLock { $0.belowFloor += 1 }
            outcome = .belowFloor
            return
        }
        // Placed by the distance in force, which is kept with it (`placeAgainAfterFix`).
        let fix = passThrough?.fixInForce
        let placedAt = passThrough == nil ? moment(ofFrame: onset.frame, now: now) : fix.flatMap { moment(ofFrame: onset.frame, in: $0) }
        guard let at = placedAt else {
            tally.withLock { $0.unplaced += 1 }
            outcome = .unplaced
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
            let time = at <= now ? HapticEngine.timeImmediate : Double(at) / 1e9
            // Played on: started on the output frame its sound plays at, so a drive mixed into
            // that stream places it there whatever the clock's fit says meanwhile (exactly
            // natively, where the pass-through reads one frame for one frame; through PulseAudio's
            // protocol the read may lean a frame or two off it before the sound plays).
            let placedFrame = fix.map { outputFrame(ofFrame: onset.frame, in: $0) }
            let started = try player.start(atTime: time, outputFrame: placedFrame ?? -1)
            // Only a started one may be moved or dropped later (a merged start plays nothing).
            sounding.append(Sounding(player: player, until: max(at, now) + 200_000_000, onset: fix == nil || !started ? nil : onset,
                                     outputFrame: placedFrame ?? onset.frame &+ frameBase, at: max(at, now), fix: fix?.number ?? 0))
            tally.withLock { $0.add(started: started, late: passThrough != nil && at < now, lag: lag) }
            (outcome, placed) = !started ? (.merged, nil) : (at <= now ? .late : .transient, max(at, now))
        } catch {
            lost.add(1, ordering: .relaxed)
            outcome = .lost
        }
    }
}
