import HapSyncConcurrency
import HapSyncCore

/// Where the audio device's frames are heard on CLOCK_MONOTONIC: frame f is heard at
/// t(f) = t0 + (f − f0) × nsPerFrame.
///
/// The audio output feeds it observations (a frame and the monotonic time it was heard, from the
/// server's timing info). It fits a line through the last 64 observations by least squares,
/// drops observations more than 1 ms off the line (jitter, the smoothed-time spikes PulseAudio 16
/// shows after a pause) and fits again, so a sink whose clock runs fast or slow, or that started
/// late, is followed continuously. The slope is kept within ±2000 ppm of nominal; with fewer than
/// 8 observations the nominal rate is used.
///
/// The published mapping is slewed, as NTP slews a clock: each observation may move the time of the
/// newest frame by at most 25 µs (2500 ppm at one observation per 10 ms: far faster than any real
/// drift, far slower than timing jitter), so deadlines derived from it stay smooth and in order.
/// A disagreement over 5 ms (a stream that started late or was restarted) is taken in one step and
/// restarts the fit from that observation; for the first 32 observations after a (re)start the
/// fit is published as it is, so it settles quickly.
///
/// **Underruns.** A frame cannot be heard before it is written. When the thread that writes the
/// audio was starved and the device ran dry, a server that delays late writes (PulseAudio; not
/// pipewire-pulse, which skips them and keeps its timeline: `AudioDevice.writesAhead` is false
/// there) plays the frames it gets next from where it stopped, late by the gap, and the line
/// learns it only from the next timing report. The writer tells the clock what it writes
/// (`noteWrite`): frames the line places before the moment
/// they are written get a floor, "frame F and those after it are heard no earlier than T + their
/// distance from F", published with the line. It is a lower bound only (the server may hold the
/// frames longer, as a pipe sink's queue does): the scheduler holds their haptics until the first
/// report taken after T (`Fit.observedAt`) places them, then they go out late with their sound.
/// The floor goes once the line places F no earlier than T (the reports caught up), after
/// `floorPatience`, and at `reset`.
///
/// **A step the output sees coming.** An output that knows its device will hear frames from F on
/// earlier or later than the line by a fixed amount, before any report shows it (PipeWire before
/// 0.3.68: a timer-driven graph's first cycle after a quantum change comes an old quantum after
/// the change), says so (`expectStep`): frames from F on are placed that much off the line at
/// once, published with it (`Fit.stepFrom`). The first observation of a frame from F on settles
/// it: nearer the stepped place than the line, the step came, and the line and the observations
/// it was fitted through move by what that observation says; else it did not, and the line
/// alone stands.
///
/// **Frames that move earlier.** A reader that sleeps until a deadline it took from the line (the
/// engine's scheduler) would not see a later publication place that frame earlier (a jump, a
/// step expected or withdrawn, a floor gone) until it woke at the old deadline, late by the
/// move. Publications that move the frames still to come more than 0.5 ms earlier (at once or
/// over a slew) post `earlierWake` (the scheduler's wake), so a sleeper waiting on it takes the
/// new deadline then (the scheduler's last millisecond before a deadline is an uninterrupted
/// sleep).
///
/// Threads: one observing thread (the audio output's) calls `observe`, `restart`, `noteWrite` and
/// `expectStep`; `reset` is
/// called while nothing observes (the output opening). The fit is published through a `SeqLock`:
/// the real-time scheduler reads it through a snapshot of its own (`snapshot()`, `refresh`), which
/// never waits for the observing thread; other threads read `fit` (and the conveniences built on
/// it). A clock is one object for its device's whole life, so a reader's snapshot stays valid
/// across the device's restarts.
public final class AudioClock: @unchecked Sendable {
    /// One published state of the clock: a line from frames to CLOCK_MONOTONIC ns. Plain numbers
    /// (a `SeqLock` value).
    public struct Fit: BitwiseCopyable, Sendable, Equatable {
        /// The device's nominal frames per second.
        public var sampleRate: Double
        /// A frame on the line.
        public var f0: Int64 = 0
        /// When `f0` is heard, CLOCK_MONOTONIC ns.
        public var t0: UInt64 = 0
        /// Nanoseconds per frame.
        public var slope: Double
        /// Observations in the fit (0: nothing observed yet, no mapping).
        public var observations: Int = 0
        /// The first frame of a late write (`noteWrite`): from it on, frames are heard no earlier
        /// than `lateAt` + their distance from it. `Int64.max`: no floor.
        public var lateFrom: Int64 = .max
        /// When `lateFrom` was written, CLOCK_MONOTONIC ns: the earliest it can be heard.
        public var lateAt: UInt64 = 0
        /// When the newest observation's frame was heard, CLOCK_MONOTONIC ns (0: none yet): one
        /// later than `lateAt` was taken after the late write, and places its frames.
        public var observedAt: UInt64 = 0
        /// The first frame of a step the output expects (`expectStep`): from it on, frames are
        /// heard `stepBy` ns off the line. `Int64.max`: none.
        public var stepFrom: Int64 = .max
        /// How far frames from `stepFrom` on are heard off the line, ns (negative: earlier).
        public var stepBy: Double = 0
        /// Expected steps so far that the next observation found nearer where they put the frames
        /// than the line, and within 5 ms of it (they came), since the clock was made.
        public var stepsCame = 0
        /// Expected steps so far that did not come (the next observation on the line, or far
        /// from both), or that a restart dropped, since the clock was made.
        public var stepsWithdrawn = 0

        /// The nominal line of a device at `sampleRate`, before any observation.
        public init(sampleRate: Double) {
            self.sampleRate = sampleRate
            slope = 1e9 / sampleRate
        }

        /// Whether the line comes from observations (else there is no mapping yet).
        public var isFitted: Bool { observations > 0 }

        /// When `frame` is (or was) heard, CLOCK_MONOTONIC ns: by the line (moved by an expected
        /// step from `stepFrom` on), and no earlier than a late write's floor; nil before the
        /// first observation. Does not allocate, lock or block.
        @inline(__always)
        public func time(ofFrame frame: Int64) -> UInt64? {
            guard isFitted else { return nil }
            var t = lineTime(frame)
            if frame >= stepFrom { t += stepBy }
            if frame >= lateFrom { t = max(t, Double(lateAt) + Double(frame - lateFrom) * slope) }
            return t <= 0 ? 0 : UInt64(t)
        }

        /// The frame heard at `time` (the inverse of `time(ofFrame:)`: during a floor's gap, or an
        /// expected step's later one, the last frame before it; where an earlier step places two
        /// frames at once, the later); nil before the first observation. Does not allocate, lock
        /// or block.
        @inline(__always)
        public func frame(atTime time: UInt64) -> Int64? {
            guard isFitted else { return nil }
            var byLine = f0 + Int64(((Double(time) - Double(t0)) / slope).rounded())
            if stepFrom != .max {
                let stepped = f0 + Int64(((Double(time) - Double(t0) - stepBy) / slope).rounded())
                byLine = stepped >= stepFrom ? stepped : min(byLine, stepFrom - 1)
            }
            guard byLine >= lateFrom else { return byLine }
            let byFloor = lateFrom + Int64(((Double(time) - Double(lateAt)) / slope).rounded())
            return min(byLine, max(lateFrom - 1, byFloor))
        }

        /// Whether a late write's floor is in force.
        public var hasFloor: Bool { lateFrom != .max }

        /// Whether an expected step is in force (`expectStep`), not yet settled by an observation.
        public var hasStep: Bool { stepFrom != .max }

        /// The line alone at `frame`, ns (may be negative). Does not allocate, lock or block.
        @inline(__always)
        func lineTime(_ frame: Int64) -> Double { Double(t0) + Double(frame - f0) * slope }

        /// How fast the device runs against CLOCK_MONOTONIC, parts per million (positive: fast).
        public var rateErrorPPM: Double { (1e9 / sampleRate / slope - 1) * 1e6 }
    }

    let published: SeqLock<Fit>
    /// Posted from the observing thread when a publication moves the frames still to come more
    /// than `earlierWakeThreshold` earlier (`publish(after:)`): the engine's scheduler wake, so
    /// that a haptic whose deadline moved earlier is not held to the old one. Set while nothing
    /// observes (the engine, before it opens the output); nil: nobody to wake.
    var earlierWake: Syscalls.Semaphore?
    /// How far earlier the frames still to come must move for `earlierWake` to be posted, ns.
    static let earlierWakeThreshold = 500_000.0
    /// How far earlier the frames still to come have moved since `earlierWake` was last posted
    /// (moves later take it back, to 0 at least), ns. The observing thread's.
    private var unwokenMove = 0.0
    // The observing thread's state: the fit it last published and the observations.
    private var current: Fit
    private var frames = [Int64](repeating: 0, count: 64)
    private var times = [UInt64](repeating: 0, count: 64)
    private var count = 0
    private var next = 0

    /// `ns` as a monotonic time: clamped to 0...2^62 (a time the arithmetic made absurd is not a
    /// trap). Does not allocate, lock or block.
    @inline(__always)
    static func nanoseconds(_ ns: Double) -> UInt64 { ns.isFinite ? UInt64(min(max(ns, 0), 4.6e18)) : 0 }

    /// Largest move of the published mapping per observation, ns.
    static let maxSlew = 25_000.0
    /// Disagreements larger than this are taken at once, ns.
    public static let stepThreshold = 5_000_000.0
    /// Observations after a (re)start during which the fit is published without slewing.
    static let settling = 32
    /// How long a late write's floor is kept at most when the line does not catch up with it, ns:
    /// by then the fit holds only observations made after the write.
    static let floorPatience: UInt64 = 2_000_000_000
    /// Observations after which the fit has settled: from the next one on, it is slewed.
    public static var settlingObservations: Int { settling + 1 }
    /// Observations an output waits for at start by default before players may follow the clock:
    /// from eight on the slope is fitted, not nominal. The fit goes on settling meanwhile
    /// (published as it is, each observation placing the frames heard next), so what is played
    /// first is placed as well as the reports so far allow; an output whose every observation is
    /// exact (PipeWire's cycle timing) needs fewer.
    public static let readyObservations = 8

    /// Waits (polling every 2 ms, at most `timeout` seconds) until the fit has `observations`
    /// (default: `readyObservations`) or `running` turns false: an audio output's `open`, whose
    /// stream is starting. The caller tells from `isFitted` and its own state what came of it.
    /// Control side; blocks.
    public func waitUntilReady(observations: Int = AudioClock.readyObservations, timeout: Double = 5, while running: () -> Bool) {
        let giveUp = MonotonicClock.nanoseconds().addingSaturated(UInt64(nanosecondsOf: timeout))
        while self.observations < observations, MonotonicClock.nanoseconds() < giveUp, running() {
            Syscalls.sleep(untilMonotonic: MonotonicClock.nanoseconds() + 2_000_000)
        }
    }

    /// A clock for a device running at `sampleRate`.
    public init(sampleRate: Double) {
        current = Fit(sampleRate: sampleRate)
        published = SeqLock(current)
    }

    // MARK: - Readers on any thread

    /// The fit as published now (any thread; retries only while a publication overlaps it). A
    /// real-time thread reads through `snapshot()` and `refresh` instead.
    public var fit: Fit { published.read() }

    /// A snapshot of the fit for a real-time reader, taken on the control side.
    public func snapshot() -> SeqLock<Fit>.Snapshot { published.snapshot() }

    /// The device's nominal frames per second.
    public var sampleRate: Double { fit.sampleRate }

    /// Whether at least one observation has been published.
    public var isFitted: Bool { fit.isFitted }

    /// Nanoseconds per frame the fit found.
    public var nanosecondsPerFrame: Double { fit.slope }

    /// How fast the device runs against CLOCK_MONOTONIC, parts per million (positive: fast).
    public var rateErrorPPM: Double { fit.rateErrorPPM }

    /// Observations currently in the fit.
    public var observations: Int { fit.observations }

    /// When `frame` is (or was) heard, CLOCK_MONOTONIC ns; nil before the first observation.
    public func time(ofFrame frame: Int64) -> UInt64? { fit.time(ofFrame: frame) }

    /// The frame heard at `time`; nil before the first observation.
    public func frame(atTime time: UInt64) -> Int64? { fit.frame(atTime: time) }

    // MARK: - Real-time (scheduler thread)

    /// Brings a real-time reader's snapshot up to date (see `SeqLock.refresh`). Does not allocate,
    /// lock or block.
    @inline(__always)
    public func refresh(_ snapshot: inout SeqLock<Fit>.Snapshot) {
        // False only if the observing thread published through every attempt: the last complete
        // fit, at most one observation old, is as good a mapping.
        _ = published.refresh(&snapshot)
    }

    // MARK: - Observing thread

    /// Forgets everything and starts over for a device at `sampleRate` (the output opening again,
    /// possibly at another rate). Called while nothing observes.
    public func reset(sampleRate: Double) {
        count = 0
        next = 0
        let (came, withdrawn) = (current.stepsCame, current.stepsWithdrawn)
        current = Fit(sampleRate: sampleRate)
        (current.stepsCame, current.stepsWithdrawn) = (came, withdrawn)
        published.write(current)
    }

    /// Forgets the observations (the device reported an underrun: where frames are heard may have
    /// moved). The next observation is published as it is and the fit settles again from there;
    /// an expected step (`expectStep`) is dropped, counted withdrawn.
    /// Called from the observing thread only. Does not allocate, lock or block.
    public func restart() {
        count = 0
        next = 0
        // An expected step goes with the history it was expected against (withdrawn).
        if current.hasStep {
            let before = current
            (current.stepFrom, current.stepBy) = (.max, 0)
            current.stepsWithdrawn += 1
            publish(after: before)
        }
    }

    /// The output expects frames from `frame` on to be heard `ns` nanoseconds off the line
    /// (negative: earlier) before any report can show it: they are placed there at once, and the
    /// first observation of a frame from `frame` on settles it (see the type's notes). Nothing
    /// before the first observation, or for a step under 10 µs. Called from the observing thread.
    /// Does not allocate, lock or block.
    public func expectStep(fromFrame frame: Int64, by ns: Double) {
        guard current.isFitted, ns.isFinite, abs(ns) >= 10_000, abs(ns) < 1e9 else { return }
        let before = current
        (current.stepFrom, current.stepBy) = (frame, ns)
        publish(after: before)
    }

    /// The writer is handing frames from `frame` on to the device at monotonic `now`, so none of
    /// them is heard before `now`. If the line places `frame` earlier, the device ran dry while
    /// the writer was away (an underrun its server has not reported yet): the floor (`Fit.lateFrom`)
    /// is published. Called from the observing thread (the one that writes the audio) before the
    /// frames are handed over. Does not allocate, lock or block.
    public func noteWrite(frame: Int64, at now: UInt64) {
        guard current.isFitted, let heard = current.time(ofFrame: frame), heard < now else { return }
        let before = current
        current.lateFrom = frame
        current.lateAt = now
        publish(after: before)
    }

    /// Adds an observation (frame `frame` heard at monotonic `time`) and republishes the fit.
    /// Called from one thread only (the audio output's). Does not allocate, lock or block.
    public func observe(frame: Int64, heardAt time: UInt64) {
        let before = current
        // The first observation past an expected step settles it: nearer where the step put the
        // frame than the line, the step came, and the line and its history move by what the
        // observation says (the fit goes on as it was, its slope kept); else the line alone stands.
        if current.hasStep, frame >= current.stepFrom {
            let off = Double(time) - current.lineTime(frame)
            if abs(off - current.stepBy) < abs(off), abs(off - current.stepBy) <= Self.stepThreshold, count > 0 {
                // The history moves so that its newest observation's line meets this one (the
                // published line may be partway through a slew from it).
                let newest = (next + frames.count - 1) % frames.count
                let shift = Double(time) - (Double(times[newest]) + Double(frame - frames[newest]) * current.slope)
                for i in 0..<min(count, frames.count) { times[i] = Self.nanoseconds(Double(times[i]) + shift) }
                current.t0 = Self.nanoseconds(Double(current.t0) + off)
                current.stepsCame += 1
            } else {
                current.stepsWithdrawn += 1
            }
            (current.stepFrom, current.stepBy) = (.max, 0)
        }
        // A jump (a late start, a restarted stream): forget the history and start over from here.
        if current.isFitted, abs(Double(time) - current.lineTime(frame)) > Self.stepThreshold {
            count = 0
            next = 0
        }
        frames[next] = frame
        times[next] = time
        next = (next + 1) % frames.count
        count += 1
        let n = min(count, frames.count)
        let nominal = 1e9 / current.sampleRate
        let refF = frame, refT = Double(time)
        // x = frames from the newest, y = ns from the newest.
        func fit(_ use: (Int) -> Bool) -> (slope: Double, intercept: Double)? {
            var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, k = 0.0
            for i in 0..<n where use(i) {
                let x = Double(frames[i] - refF), y = Double(times[i]) - refT
                sx += x; sy += y; sxx += x * x; sxy += x * y; k += 1
            }
            guard k >= 1 else { return nil }
            var slope = nominal
            let denominator = k * sxx - sx * sx
            if k >= 8, denominator > 0 {
                slope = min(max((k * sxy - sx * sy) / denominator, nominal * (1 - 0.002)), nominal * (1 + 0.002))
            }
            return (slope, (sy - slope * sx) / k)
        }
        guard var line = fit({ _ in true }) else { return }
        if let refit = fit({ i in abs(Double(times[i]) - refT - (line.intercept + line.slope * Double(frames[i] - refF))) <= 1_000_000 }) {
            line = refit
        }
        var newest = refT + line.intercept
        if count > Self.settling, current.isFitted {
            let before = current.lineTime(refF)
            let change = newest - before
            if abs(change) <= Self.stepThreshold {
                newest = before + min(max(change, -Self.maxSlew), Self.maxSlew)
            }
        }
        current.f0 = refF
        current.t0 = UInt64(max(0, newest))
        current.slope = line.slope
        current.observations = n
        current.observedAt = time
        // The reports caught up with a late write, or it is long past: the line alone.
        if current.hasFloor,
           current.lineTime(current.lateFrom) + (current.lateFrom >= current.stepFrom ? current.stepBy : 0) >= Double(current.lateAt)
            || time > current.lateAt &+ Self.floorPatience {
            current.lateFrom = .max
        }
        publish(after: before)
    }

    /// Publishes `current` (the fit was `before`) and, when the frames still to come have moved
    /// more than `earlierWakeThreshold` earlier since the last post (in one publication, or
    /// summed over a slew's small ones), posts `earlierWake`: a reader sleeping on it until a
    /// deadline it took from the old line wakes and takes the new one. The move is measured at
    /// the newest observed frame, or an expected step's or a floor's first frame (in either fit)
    /// when later, and 1 s of frames beyond it (a slope that changed), the larger taken. Called
    /// from the observing thread. Does not allocate, lock or block.
    private func publish(after before: Fit) {
        published.write(current)
        guard let wake = earlierWake, before.isFitted, current.isFitted else { return }
        @inline(__always) func atLeast(_ f: Int64, _ g: Int64) -> Int64 { g == .max ? f : max(f, g) }
        let probe = atLeast(atLeast(atLeast(atLeast(max(before.f0, current.f0), before.stepFrom), current.stepFrom),
                                    before.lateFrom), current.lateFrom)
        @inline(__always) func earlier(_ f: Int64) -> Double {
            guard let was = before.time(ofFrame: f), let now = current.time(ofFrame: f) else { return 0 }
            return Double(was) - Double(now)
        }
        let moved = max(earlier(probe), earlier(probe &+ Int64(current.sampleRate)))
        unwokenMove = max(0, unwokenMove + moved)
        if unwokenMove > Self.earlierWakeThreshold {
            unwokenMove = 0
            wake.post()
        }
    }
}
