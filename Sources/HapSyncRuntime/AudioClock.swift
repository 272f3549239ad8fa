import Foundation
import HapSyncCore
import Synchronization

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
/// The fit is published with a sequence lock: readers (`time(ofFrame:)`, `frame(atTime:)`, on the
/// scheduler thread) never lock or allocate; they retry only if they overlap a publication.
public final class AudioClock: @unchecked Sendable {
    /// The device's nominal frames per second.
    public let sampleRate: Double
    private let sequence = Atomic<UInt64>(0)
    private let f0 = Atomic<Int64>(0)
    private let t0 = Atomic<UInt64>(0)
    private let slopeBits = Atomic<UInt64>(0)
    private let fitted = Atomic<Bool>(false)
    // Observations: written by one thread (the audio output's), read there only.
    private var frames = [Int64](repeating: 0, count: 64)
    private var times = [UInt64](repeating: 0, count: 64)
    private var count = 0
    private var next = 0

    /// Largest move of the published mapping per observation, ns.
    static let maxSlew = 25_000.0
    /// Disagreements larger than this are taken at once, ns.
    static let stepThreshold = 5_000_000.0
    /// Observations after a (re)start during which the fit is published without slewing.
    static let settling = 32
    /// Observations after which the fit has settled (an audio output waits for them at start).
    public static var settlingObservations: Int { settling + 1 }

    /// A clock for a device running at `sampleRate`.
    public init(sampleRate: Double) { self.sampleRate = sampleRate }

    /// Whether at least one observation has been published.
    public var isFitted: Bool { fitted.load(ordering: .acquiring) }

    /// Nanoseconds per frame the fit found.
    public var nanosecondsPerFrame: Double { snapshot()?.slope ?? 1e9 / sampleRate }

    /// How fast the device runs against CLOCK_MONOTONIC, parts per million (positive: fast).
    public var rateErrorPPM: Double { (1e9 / sampleRate / nanosecondsPerFrame - 1) * 1e6 }

    /// Observations currently in the fit.
    public var observations: Int { min(count, frames.count) }

    private func snapshot() -> (f0: Int64, t0: UInt64, slope: Double)? {
        guard fitted.load(ordering: .acquiring) else { return nil }
        while true {
            // Acquiring: the fields read below are at least as new as this sequence number.
            let s1 = sequence.load(ordering: .acquiring)
            if s1 & 1 == 1 { continue }
            // Relaxed loads: ordered by the sequence loads around them.
            let a = f0.load(ordering: .relaxed), b = t0.load(ordering: .relaxed), c = slopeBits.load(ordering: .relaxed)
            // Acquiring: if the sequence did not move, no write overlapped the three loads.
            if sequence.load(ordering: .acquiring) == s1 { return (a, b, Double(bitPattern: c)) }
        }
    }

    /// When `frame` is (or was) heard, CLOCK_MONOTONIC ns; nil before the first observation.
    /// Does not allocate, lock or block.
    public func time(ofFrame frame: Int64) -> UInt64? {
        guard let s = snapshot() else { return nil }
        let t = Double(s.t0) + Double(frame - s.f0) * s.slope
        return t <= 0 ? 0 : UInt64(t)
    }

    /// The frame heard at `time`; nil before the first observation. Does not allocate, lock or block.
    public func frame(atTime time: UInt64) -> Int64? {
        guard let s = snapshot() else { return nil }
        return s.f0 + Int64(((Double(time) - Double(s.t0)) / s.slope).rounded())
    }

    /// Forgets the observations (the device reported an underrun: where frames are heard may have
    /// moved). The next observation is published as it is and the fit settles again from there.
    /// Called from the observing thread only.
    public func restart() {
        count = 0
        next = 0
    }

    /// Adds an observation (frame `frame` heard at monotonic `time`) and republishes the fit.
    /// Called from one thread only (the audio output's).
    public func observe(frame: Int64, heardAt time: UInt64) {
        // A jump (a late start, a restarted stream): forget the history and start over from here.
        if let predicted = self.time(ofFrame: frame), abs(Double(time) - Double(predicted)) > Self.stepThreshold {
            count = 0
            next = 0
        }
        frames[next] = frame
        times[next] = time
        next = (next + 1) % frames.count
        count += 1
        let n = min(count, frames.count)
        let nominal = 1e9 / sampleRate
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
        if count > Self.settling, let before = self.time(ofFrame: refF) {
            let change = newest - Double(before)
            if abs(change) <= Self.stepThreshold {
                newest = Double(before) + min(max(change, -Self.maxSlew), Self.maxSlew)
            }
        }
        // Publish: odd sequence while writing; releasing so readers that see the even number see the fields.
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .releasing)
        f0.store(refF, ordering: .relaxed)
        t0.store(UInt64(max(0, newest)), ordering: .relaxed)
        slopeBits.store(line.slope.bitPattern, ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
        fitted.store(true, ordering: .releasing)
    }
}

/// A request from the scheduler to the audio thread, through a lock-free ring.
public struct AudioMessage: Sendable, BitwiseCopyable {
    /// What to do.
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Start the voices of the player in `slot` with pattern time 0 at output frame `frame`.
        case start
        /// Stop that player's voices from `frame` on (with a short fade).
        case stop
        /// Silence everything now.
        case stopAll
    }
    /// What to do.
    public var kind: Kind
    /// The player's slot.
    public var slot: Int32
    /// Output frame (for `start`: the frame of pattern time 0).
    public var frame: Int64
    /// For `start`: the first frame to sound (later than `frame` when starting at an offset).
    public var from: Int64
    /// For `start`: pattern seconds per second (event times and durations scale, pitch does not).
    public var rate: Double

    /// Makes a message.
    public init(kind: Kind, slot: Int32, frame: Int64, from: Int64? = nil, rate: Double = 1) {
        self.kind = kind
        self.slot = slot
        self.frame = frame
        self.from = from ?? frame
        self.rate = rate
    }
}

/// An audio output the engine can slave its haptics to (PulseAudio in `AudioOutput`).
///
/// The scheduler sends it `AudioMessage`s through `messages` (it is the ring's only producer) and
/// schedules haptics through `clock`. The device renders the players' voices from the sources the
/// engine registers with `setSource`.
public protocol AudioDevice: AnyObject, Sendable {
    /// A short name ("pulse").
    var name: String { get }
    /// Output frames per second (known after `open`).
    var sampleRate: Double { get }
    /// Frames to heard time; fitted continuously once playing.
    var clock: AudioClock { get }
    /// The scheduler → audio thread ring.
    var messages: SPSCRing<AudioMessage> { get }
    /// The first output frame that has not yet been handed to the device: a voice can start no
    /// earlier. Does not allocate, lock or block.
    var nextWritableFrame: Int64 { get }
    /// Buffer underruns so far.
    var underruns: Int { get }
    /// Connects and starts the stream; returns once its clock has a first observation.
    func open() throws
    /// Stops and disconnects.
    func close()
    /// Registers the audio of the player in `slot` (control thread, before its start message).
    func setSource(slot: Int, _ source: Unmanaged<HapSyncCore.PlayerAudio>?)
    /// Decodes a timeline's audio files (waveform path → resolved file) at this device's rate
    /// (load time, may allocate and read files).
    func load(_ timeline: PatternTimeline, files: [String: URL]) throws -> PlayerAudio
    /// Called (on the device's own thread) if the server goes away mid-play.
    var onServerLost: (@Sendable (String) -> Void)? { get set }
    /// Live parameters and player mutes the device applies to voices (the engine sets it before `open`).
    var liveParameters: LiveParameters? { get set }
    /// Whether everything the device plays is silenced (the engine's audio mute); voices go on
    /// advancing so that unmuting resumes in step.
    var isMuted: Bool { get set }
    /// Whether the server answers now (a short connection attempt; the engine's watcher calls it
    /// once a second after the server went away).
    func canConnect() -> Bool
}
