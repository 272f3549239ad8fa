import HapSyncConcurrency
import HapSyncRuntime
import Synchronization

/// Captured audio played on by a playback stream at a fixed distance (`hapsync live`): a capture
/// thread writes frames by their capture index (`write`), the stream's audio thread adds them to
/// what it renders (`mix`). The distance is fixed by the first block rendered after the first
/// capture arrived: that block's last frame plays the capture frame `hold` frames behind the
/// newest one written, and from then on output frame o plays capture frame o − `offset`, so an
/// onset found at capture frame c sounds at output frame c + `offset`.
///
/// **Two clocks** (`followsDrift`). The capture runs on its sink's clock (a null sink: the
/// system's timer), the output on its device's crystal; they differ by up to a few hundred ppm,
/// so at one frame for one frame the sound would fall behind its capture for good (its lag
/// growing 6 ms a minute at 100 ppm) or run out of it (silence, then the distance fixed anew:
/// a skip). So the output reads the capture at a rate of its own, 1 + at most 2000 ppm: over its
/// first second after a fix it learns how far behind the capture it runs on average, and from
/// then on, when that average (over half a second) strays more than 0.25 ms from it, the rate
/// leans 100 ppm per 0.1 ms beyond that (a time constant of 1 s; a device 300 ppm off settles 0.55 ms from where
/// it began). Back inside the band it leans 20 ppm toward the nearer whole frame and then stays
/// at exactly 1, every frame played as captured; off 1, frames are read between captured ones
/// (Catmull-Rom, four frames) and `offset` follows (what a read between two frames adds to an
/// onset's place is under a frame). The rate is said in `rateErrorPPM`.
///
/// "Behind the capture" is taken in time, not from the newest frame written alone: capture
/// arrives in fragments and blocks are taken in quanta, so the newest frame a block sees saws
/// by a fragment, and where the fragment and the block are of one size (or one a multiple of the
/// other: PipeWire's graph cycle) the phase at which they meet slides with the clocks' drift
/// slowly enough to pass any average, and a crossing moves it by a whole fragment at once (a
/// rate that followed it would lean to its limit and pull the sound a fragment nearer, for
/// nothing). So each write notes when it came (`write`'s `at`), and a block reckons the
/// capture's position at its own time (`mix`'s `at`) as the newest frame written plus the
/// frames the stream's rate makes of the time since, at most one more arrival's worth (a
/// stalled capture is not assumed to go on; writes within 1 ms of each other are one arrival).
///
/// A capture frame that has not arrived when its output frame is rendered is played as silence
/// and counted (`lateFrames`, `lateBlocks`); one that arrives after is dropped. One that is no
/// longer held (the capture ran more than `capacity` frames ahead) is silence as well, counted
/// in `overwrittenFrames`. Nothing waits on anything: the two threads meet through the ring's
/// published write position only.
///
/// Stereo throughout: a mono capture is played on both channels, a capture of more channels
/// gives its first two (the live sink is stereo; the server downmixes what plays into it).
///
/// A pass-through may be dormant (`deactivate`): it plays nothing and does not keep its stream
/// awake, so a service can hold one in its stream from the start and turn it on and off
/// (`serve`'s `/hapsync/live`). A capture after `activate` continues the frame numbering
/// (`capturedFrames` is where it may start) and fixes the distance anew.
package final class PassThroughAudio: @unchecked Sendable {
    /// Capture frames held, a power of two.
    package let capacity: Int
    /// How many frames behind the newest capture frame the first block's last frame plays.
    package var hold: Int64 { holdFrames.load(ordering: .relaxed) }
    /// The first capture frame it may play: frames before it (an earlier capture's, before the
    /// last `activate`) play as silence. Nil before anything was captured. Any thread.
    package var firstPlayableFrame: Int64? {
        let first = firstWritten.load(ordering: .relaxed)
        return first == .max ? nil : max(first, activatedAt.load(ordering: .relaxed))
    }
    private let holdFrames: Atomic<Int64>
    private let mask: Int64
    /// Whether it plays (and keeps its stream from pausing for silence).
    private let active: Atomic<Bool>
    /// `written` when the distance was last forgotten: it is fixed again only from a capture
    /// written after that.
    private let unfixedAt = Atomic<Int64>(.min)
    /// `written` when it was last activated: frames before it belong to an earlier capture and
    /// play as silence (not as late).
    private let activatedAt = Atomic<Int64>(.min)
    private let storage: UnsafeMutablePointer<Float>
    /// The capture frame after the newest one written.
    private let written = Atomic<Int64>(0)
    /// The capture frame after the newest one being written: published before the slots are
    /// overwritten, so that a reader can tell, after its copy, which frames may have been torn.
    private let writing = Atomic<Int64>(0)
    /// Output frame − capture frame, once fixed (`Int64.min` until then).
    private let distance = Atomic<Int64>(.min)
    private let late = Atomic<Int>(0)
    private let lateBlockCount = Atomic<Int>(0)
    private let overwritten = Atomic<Int>(0)
    /// The first capture frame written: what came before it is not there (silence, not late).
    private let firstWritten = Atomic<Int64>(.max)
    /// The newest capture frame written with a sample above `quietLevel` (`Int64.min`: none yet).
    private let lastLoud = Atomic<Int64>(.min)
    /// The level under which a sample counts as quiet (`isQuiet`): −50 dBFS.
    package static let quietLevel: Float = 0.003_162
    /// When the capture's frame 0 would have been written, ns, reckoned from the latest write
    /// (its time less its end at the stream's rate; `Int64.min` before one), and the frames the
    /// latest arrival brought (writes within `arrivalSpan` of the one before are one arrival: a
    /// server's fragment may reach `write` in pieces): where a block reckons the capture to be
    /// (the type's summary). Stored before `written`; a reader may pair an older end with a newer
    /// write's time, which the reckoning's bounds absorb.
    private let writeEpoch = Atomic<Int64>(.min)
    private let lastWriteFrames = Atomic<Int>(0)
    /// The writer's own: when its latest write came, and the frames of the arrival it belongs to.
    private var lastWriteAt: UInt64 = 0, arrivalFrames = 0
    /// Writes closer together than this are one arrival, ns.
    static let arrivalSpan: UInt64 = 1_000_000

    /// Whether the output follows the capture's clock (see the type's summary); false: one frame
    /// for one frame always (a capture and an output run by one driver, PipeWire's node group:
    /// there is no drift to follow, and leaning on the arrivals' jitter would only move the sound
    /// off its frames). `activate` may change it. Any thread.
    package var followsDrift: Bool { followsDriftFlag.load(ordering: .relaxed) }
    private let followsDriftFlag: Atomic<Bool>
    /// The stream's rate, Hz, which sets the time constants below at each fix (`activate` may
    /// change it while dormant).
    private let streamRate: Atomic<Int>
    // The audio thread's own, from `streamRate` at the fix: the averaging span, the first second,
    // the dead band (0.25 ms), and the rate change per frame of distance beyond the band (100 ppm
    // per 0.1 ms).
    private var averagingFrames = 0.0, settlingFrames: Int64 = 0, deadbandFrames = 0.0
    private var gain = 0.0
    /// The dead band of the distance, frames, as the last fix set it from the stream's rate.
    /// The audio thread's own: read on the thread that mixes (a test, after a block).
    package var deadband: Double { deadbandFrames }
    /// The largest rate change, parts of one.
    package static let maxRateError = 0.002
    /// The lean back to whole frames inside the dead band, parts of one.
    static let returnLean = 20e-6
    // The audio thread's own (`mix`): where the next output frame reads, the rate, the averaged
    // distance and the one learned after the fix, the output frame expected next and the one
    // the distance was fixed at.
    private var position = 0.0
    private var rate = 1.0
    private var averageAhead = 0.0
    private var settlingSum = 0.0, settlingBlocks = 0.0
    private var targetAhead: Double?
    private var nextOutput: Int64 = 0
    private var fixedAt: Int64 = 0
    private let ratePPM = Atomic<Int64>(0)

    /// How much faster than one frame for one frame the output reads the capture now, ppm
    /// (negative: slower). Any thread.
    package var rateErrorPPM: Int { Int(ratePPM.load(ordering: .relaxed)) }

    /// A pass-through holding at least `capacityFrames` frames (rounded up to a power of two),
    /// whose first block plays `hold` frames behind the capture, for streams at about
    /// `sampleRate` (which sets its time constants). `active` false: dormant until `activate`.
    package init(capacityFrames: Int = 1 << 16, hold: Int, active: Bool = true, sampleRate: Double = 48_000, followsDrift: Bool = true) {
        followsDriftFlag = Atomic(followsDrift)
        streamRate = Atomic(Self.rateHz(sampleRate))
        var c = 1024
        while c < capacityFrames, c < 1 << 24 { c <<= 1 }
        capacity = c
        mask = Int64(c - 1)
        holdFrames = Atomic(Int64(min(max(hold, 0), c / 2)))
        self.active = Atomic(active)
        storage = .allocate(capacity: 2 * c)
        storage.initialize(repeating: 0, count: 2 * c)
    }

    deinit { storage.deallocate() }

    /// Output frame − capture frame: where capture frame c sounds in the stream (c + offset);
    /// nil until the first block after the first capture fixed it. Any thread.
    package var offset: Int64? {
        let d = distance.load(ordering: .acquiring)
        return d == .min ? nil : d
    }

    /// A distance and the fix that set it (`fixInForce`).
    package struct Fix: Equatable, Sendable {
        /// Which fix: 1 for the first, one more for each after (each `unfix` or `activate` is
        /// followed by one).
        package var number: Int
        /// Output frame − capture frame, as `offset` says (it follows the read between fixes).
        package var offset: Int64
        /// The capture frame the fix's first block began with: those before it are not played at
        /// this distance (a fix that jumped ahead skipped those not played before it).
        package var firstPlayed: Int64
        /// The output frame after the last block rendered at the distance before this fix
        /// (`Int64.min` for the first): an output frame before it went out at the old distance,
        /// and its capture frame is heard where the old distance placed it.
        package var renderedBefore: Int64

        /// A fix as `fixInForce` reads it.
        package init(number: Int, offset: Int64, firstPlayed: Int64, renderedBefore: Int64) {
            (self.number, self.offset, self.firstPlayed, self.renderedBefore) = (number, offset, firstPlayed, renderedBefore)
        }
    }

    /// The distance in force and the fix that set it; nil while no distance is in force, or
    /// when fixes kept coming during the read. Any thread; does not lock.
    package var fixInForce: Fix? {
        // A seqlock: odd while a fix is being written (a few tries: a fix takes a few stores).
        for _ in 0..<8 {
            let before = fixSequence.load(ordering: .acquiring)
            let d = distance.load(ordering: .acquiring)
            let first = fixedFrom.load(ordering: .relaxed)
            let rendered = renderedBeforeFix.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            guard before & 1 == 0, fixSequence.load(ordering: .relaxed) == before else { continue }
            return d == .min || before == 0 ? nil : Fix(number: before / 2, offset: d, firstPlayed: first, renderedBefore: rendered)
        }
        return nil
    }
    /// Twice the fixes so far, plus one while a fix is being written (`fixInForce`'s seqlock,
    /// written by the audio thread only).
    private let fixSequence = Atomic<Int>(0)
    private let fixedFrom = Atomic<Int64>(0)
    private let renderedBeforeFix = Atomic<Int64>(.min)
    /// Capture frames played as silence because they had not arrived in time.
    package var lateFrames: Int { late.load(ordering: .relaxed) }
    /// Blocks in which some capture frame had not arrived in time.
    package var lateBlocks: Int { lateBlockCount.load(ordering: .relaxed) }
    /// Capture frames lost because the capture ran more than `capacity` frames ahead.
    package var overwrittenFrames: Int { overwritten.load(ordering: .relaxed) }
    /// The capture frame after the newest one written.
    package var capturedFrames: Int64 { written.load(ordering: .acquiring) }

    /// Whether the newest `frames` capture frames written were all quiet (no sample above
    /// −50 dBFS, `quietLevel`), at least that many written since the first: a moment in which a
    /// shorter `rehold` skips nothing anyone hears. Any thread; does not allocate, lock or block.
    package func isQuiet(forFrames frames: Int64) -> Bool {
        let end = written.load(ordering: .acquiring), first = firstWritten.load(ordering: .relaxed)
        guard first != .max, end &- first >= frames else { return false }
        let loud = lastLoud.load(ordering: .relaxed)
        return loud == .min || end &- 1 &- loud >= frames
    }
    /// The capture frame after the last one the stream played (`Int64.min` before the first
    /// block): `capturedFrames` minus this is how far behind the capture the sound runs.
    package var playedFrames: Int64 { played.load(ordering: .relaxed) }
    private let played = Atomic<Int64>(.min)

    /// Forgets the distance: the next block fixes it again from the capture written by then (a
    /// stream starting anew, or one whose distance the clocks' drift or a stall has worn out).
    /// Any thread: the audio thread stores a distance only after it has read this one.
    package func unfix() {
        unfixedAt.store(written.load(ordering: .acquiring), ordering: .relaxed)
        distance.store(.min, ordering: .releasing)
    }

    /// Whether it plays and keeps its stream awake (not dormant). Any thread.
    package var isActive: Bool { active.load(ordering: .acquiring) }

    /// `sampleRate` as whole hertz within 8-192 kHz (the rate only sets time constants: one
    /// outside is held there, never a trap).
    private static func rateHz(_ sampleRate: Double) -> Int {
        sampleRate.isFinite ? Int(min(max(sampleRate, 8_000), 192_000).rounded()) : 48_000
    }

    /// Turns it on, `hold` frames behind the capture to come (clamped to half the capacity), for
    /// a stream at `sampleRate` Hz when given (a service's dormant pass-through learns its
    /// stream's rate here), following the capture's clock or not as `followsDrift` says when
    /// given (a service's learns whether its capture shares its stream's driver): the distance is
    /// fixed by the first block after that capture's first write, which continues at
    /// `capturedFrames`; what was captured before plays as silence. Any thread, while no capture
    /// writes (one capture stopped, the next not started).
    package func activate(hold: Int, sampleRate: Double? = nil, followsDrift: Bool? = nil) {
        if let sampleRate { streamRate.store(Self.rateHz(sampleRate), ordering: .relaxed) }
        if let followsDrift { followsDriftFlag.store(followsDrift, ordering: .relaxed) }
        holdFrames.store(Int64(min(max(hold, 0), capacity / 2)), ordering: .relaxed)
        activatedAt.store(written.load(ordering: .acquiring), ordering: .relaxed)
        unfix()
        active.store(true, ordering: .releasing)
    }

    /// Holds the sound `hold` frames behind the capture (clamped to half the capacity) from the
    /// next block on while the capture goes on (a live sink whose cycles grew in place: PipeWire
    /// natively): the distance is fixed anew from the next write, and what was played before is
    /// not played again (a longer hold plays silence for the difference, once; a shorter one
    /// skips it). Any thread.
    package func rehold(_ hold: Int) {
        holdFrames.store(Int64(min(max(hold, 0), capacity / 2)), ordering: .relaxed)
        let playedTo = played.load(ordering: .relaxed)
        if playedTo != .min, playedTo > activatedAt.load(ordering: .relaxed) { activatedAt.store(playedTo, ordering: .relaxed) }
        unfix()
    }

    /// Turns it off: it plays nothing and lets its stream pause for silence. Any thread.
    package func deactivate() {
        active.store(false, ordering: .releasing)
        unfix()
        ratePPM.store(0, ordering: .relaxed)
    }

    /// Writes `frames` frames of `channels` interleaved floats, the first at capture frame
    /// `firstFrame` (frames before it not yet written are silence: a hole in the capture), which
    /// arrived at `now` (CLOCK_MONOTONIC ns). Non-finite samples are written as 0. Capture
    /// thread (one writer); does not allocate, lock or block.
    package func write(_ samples: UnsafeBufferPointer<Float>, channels: Int, firstFrame: Int64, at now: UInt64 = MonotonicClock.nanoseconds()) {
        guard channels > 0, let base = samples.baseAddress else { return }
        let frames = samples.count / channels
        var next = written.load(ordering: .relaxed)
        if firstWritten.load(ordering: .relaxed) == .max {
            firstWritten.store(firstFrame, ordering: .relaxed)
            next = firstFrame
        }
        // Seqlock order: the end about to be written is published before any slot changes (the
        // hole's silence included).
        let end = firstFrame + Int64(frames)
        if end > writing.load(ordering: .relaxed) { writing.store(end, ordering: .relaxed) }
        atomicMemoryFence(ordering: .releasing)
        // A hole: silence up to the first frame (at most a ring's worth).
        if firstFrame > next {
            var f = max(next, firstFrame - Int64(capacity))
            while f < firstFrame {
                let slot = Int(f & mask) * 2
                storage[slot] = 0
                storage[slot + 1] = 0
                f += 1
            }
        }
        var skip = 0
        if frames > capacity { skip = frames - capacity }
        var loud = Int64.min
        for i in skip..<frames {
            let f = firstFrame + Int64(i)
            if f < next { continue }   // written already: the first copy stays
            let s = base + i * channels
            let l = s[0], r = channels > 1 ? s[1] : s[0]
            let slot = Int(f & mask) * 2
            let left: Float = l.isFinite ? l : 0, right: Float = r.isFinite ? r : 0
            storage[slot] = left
            storage[slot + 1] = right
            if max(abs(left), abs(right)) > Self.quietLevel { loud = f }
        }
        if loud != .min { lastLoud.store(loud, ordering: .relaxed) }
        if end > next {
            // Before `written` (releasing): a reader that sees the new end sees this time or a later one.
            let hz = Double(streamRate.load(ordering: .relaxed))
            arrivalFrames = now &- lastWriteAt < Self.arrivalSpan ? arrivalFrames + frames : frames
            lastWriteAt = now
            // The end as ns at the stream's rate, held where an Int64 holds it (a frame number
            // that far out is no capture's: its reckoning is off, nothing traps).
            let endNs = min(max(Double(end) * 1e9 / hz, -9e18), 9e18)
            writeEpoch.store(Int64(clamping: now) &- Int64(endNs), ordering: .relaxed)
            lastWriteFrames.store(arrivalFrames, ordering: .relaxed)
            written.store(end, ordering: .releasing)
        }
    }

    /// Adds the capture frames that output frames `firstFrame ..< firstFrame + frames` play to
    /// `out` (stereo interleaved), a block taken at `now` (CLOCK_MONOTONIC ns). The first call
    /// after a capture arrived fixes the distance; each call then leans the rate
    /// (`followsDrift`). Audio thread (one reader); does not allocate, lock or block.
    package func mix(into out: UnsafeMutablePointer<Float>, frames: Int, firstFrame: Int64, at now: UInt64 = MonotonicClock.nanoseconds()) {
        guard frames > 0, active.load(ordering: .acquiring) else { return }
        var d = distance.load(ordering: .acquiring)
        let w = written.load(ordering: .acquiring)
        if d == .min {
            guard w > firstWritten.load(ordering: .relaxed), w > unfixedAt.load(ordering: .relaxed) else { return }
            // The block's last frame plays the capture frame `hold` behind the newest.
            d = firstFrame + Int64(frames) - 1 - (w - 1 - hold)
            // The first fix has nothing rendered before it; a later one, what the blocks at the
            // last distance rendered (none render while no distance is in force).
            let first = fixSequence.add(1, ordering: .relaxed).newValue == 1
            atomicMemoryFence(ordering: .releasing)
            fixedFrom.store(firstFrame - d, ordering: .relaxed)
            renderedBeforeFix.store(first ? .min : nextOutput, ordering: .relaxed)
            distance.store(d, ordering: .releasing)
            fixSequence.add(1, ordering: .releasing)
            position = Double(firstFrame - d)
            nextOutput = firstFrame
            fixedAt = firstFrame
            rate = 1
            ratePPM.store(0, ordering: .relaxed)
            targetAhead = nil
            (settlingSum, settlingBlocks) = (0, 0)
            let hz = Double(streamRate.load(ordering: .relaxed))
            (averagingFrames, settlingFrames, deadbandFrames) = (0.5 * hz, Int64(hz), 0.00025 * hz)
            gain = 100e-6 / (0.0001 * hz)
        }
        // Output frames skipped or played again (the stream realigned its silence): the capture
        // read moves with them.
        if firstFrame != nextOutput { position += Double(firstFrame - nextOutput) * rate }
        let start = max(firstWritten.load(ordering: .relaxed), activatedAt.load(ordering: .relaxed))
        let oldest = w - Int64(capacity)
        var missing = 0, overrun = 0
        var lowest = Int64.max, highest = Int64.min
        for i in 0..<frames {
            let p = position + Double(i) * rate
            let k = Int64(p.rounded(.down))
            let t = Float(p - Double(k))
            if k < start { continue }   // before this capture began: silence, not late
            let last = t == 0 ? k : k + 2
            if last >= w {
                missing += 1
                continue
            }
            let first = t == 0 ? k : max(k - 1, start)
            if first < oldest {
                overrun += 1
                continue
            }
            lowest = min(lowest, first)
            highest = max(highest, last)
            let s1 = Int(k & mask) * 2
            guard t != 0 else {
                out[2 * i] += storage[s1]
                out[2 * i + 1] += storage[s1 + 1]
                continue
            }
            let s0 = Int(first & mask) * 2, s2 = Int((k + 1) & mask) * 2, s3 = Int((k + 2) & mask) * 2
            out[2 * i] += Self.catmullRom(storage[s0], storage[s1], storage[s2], storage[s3], t)
            out[2 * i + 1] += Self.catmullRom(storage[s0 + 1], storage[s1 + 1], storage[s2 + 1], storage[s3 + 1], t)
        }
        // Read after the copy (the copy's loads ordered before it): the slots of frames at or
        // below `writing` − capacity may have been overwritten meanwhile: torn, said, not hidden.
        atomicMemoryFence(ordering: .acquiring)
        let after = writing.load(ordering: .relaxed)
        if lowest <= highest {
            let torn = min(highest + 1, after - Int64(capacity)) - lowest
            if torn > 0 { overrun += Int(min(torn, Int64(frames))) }
        }
        if overrun > 0 { overwritten.add(overrun, ordering: .relaxed) }
        position += Double(frames) * rate
        nextOutput = firstFrame + Int64(frames)
        played.store(Int64(position.rounded(.up)), ordering: .relaxed)
        if missing > 0 {
            late.add(missing, ordering: .relaxed)
            lateBlockCount.add(1, ordering: .relaxed)
        }
        guard followsDrift else { return }
        // How far ahead the capture is of the next frame to play, the capture reckoned at this
        // block's time (the type's summary): its mean over the first second is the target, then
        // its running average is held to it; the rate leans when the average strays beyond the
        // dead band.
        let ahead = capturePosition(newest: w, at: now) - position
        if let target = targetAhead {
            averageAhead += (ahead - averageAhead) * min(1, Double(frames) / averagingFrames)
            let error = averageAhead - target
            if abs(error) > deadbandFrames {
                let beyond = error - (error > 0 ? deadbandFrames : -deadbandFrames)
                rate = 1 + min(max(beyond * gain, -Self.maxRateError), Self.maxRateError)
            } else {
                // Inside the band: back to whole frames (read between two, every frame would
                // lose a little of its highest frequencies), leaning 20 ppm toward the nearer
                // one and landing on it once a block's lean would reach it (a move of at most
                // 0.02 frame for a 1024-frame block).
                let whole = position.rounded()
                let toWhole = whole - position
                if abs(toWhole) <= Double(frames) * Self.returnLean {
                    position = whole
                    rate = 1
                } else {
                    rate = toWhole > 0 ? 1 + Self.returnLean : 1 - Self.returnLean
                }
            }
        } else {
            settlingSum += ahead
            settlingBlocks += 1
            if nextOutput - fixedAt >= settlingFrames {
                targetAhead = settlingSum / settlingBlocks
                averageAhead = settlingSum / settlingBlocks
            }
        }
        ratePPM.store(Int64(((rate - 1) * 1e6).rounded()), ordering: .relaxed)
        // `offset` follows the read; an `unfix` meanwhile wins (the next block fixes anew).
        let moved = nextOutput - Int64(position.rounded())
        if moved != d { _ = distance.compareExchange(expected: d, desired: moved, ordering: .releasing) }
    }

    /// Where the capture is at `now`: the frame after the newest written (`newest`) and the
    /// frames the stream's rate makes of the time since it was written, at most the latest
    /// arrival's count more (the type's summary). Audio thread; does not allocate, lock or block.
    private func capturePosition(newest: Int64, at now: UInt64) -> Double {
        let epoch = writeEpoch.load(ordering: .relaxed)
        guard epoch != .min else { return Double(newest) }
        let hz = Double(streamRate.load(ordering: .relaxed))
        let reckoned = Double(Int64(clamping: now) &- epoch) * hz / 1e9
        return min(max(reckoned, Double(newest)), Double(newest) + Double(lastWriteFrames.load(ordering: .relaxed)))
    }

    /// The value at `t` (0 ..< 1) between `y1` and `y2`, with `y0` before and `y3` after
    /// (Catmull-Rom). Does not allocate, lock or block.
    @inline(__always)
    package static func catmullRom(_ y0: Float, _ y1: Float, _ y2: Float, _ y3: Float, _ t: Float) -> Float {
        let a = -0.5 * y0 + 1.5 * y1 - 1.5 * y2 + 0.5 * y3
        let b = y0 - 2.5 * y1 + 2 * y2 - 0.5 * y3
        let c = -0.5 * y0 + 0.5 * y2
        return ((a * t + b) * t + c) * t + y1
    }
}
