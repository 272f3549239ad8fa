import Foundation
import HapSyncConcurrency
import HapSyncCore

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

/// When an audio output's stream pauses for want of sound: after it has played only silence,
/// with no start asked for, for `defaultSeconds` (each output's `pauseWhenIdle`). Paused, the
/// stream costs nothing (no cycles, no writes, no timing requests); the next start with audio
/// runs it again first (`AudioDevice.willPlay`) and puts its frames back on the clock's line, so
/// that players following the clock meanwhile keep their times.
public enum IdlePause {
    /// Seconds of silence before a stream pauses, by default.
    public static let defaultSeconds = 2.0
    /// How long `willPlay` waits at most for a resumed stream's frames to be placed, ns.
    public static let resumeWait: UInt64 = 100_000_000

    /// Whether `seconds` (an output's `pauseWhenIdle`) have passed from `since` to `now` (ns):
    /// never for a negative or NaN setting, nor across a wrap (an infinite one never passes).
    /// Does not allocate, lock or block.
    public static func hasPassed(_ seconds: Double, since: UInt64, now: UInt64) -> Bool {
        guard seconds >= 0, now >= since else { return false }
        return now - since >= UInt64(nanosecondsOf: seconds)
    }

    /// `willPlay`'s wait: polls every 0.2 ms until `done` or `running` turns false, at most
    /// `resumeWait` from `start` (ns). Control side; blocks.
    public static func awaitResume(from start: UInt64, done: () -> Bool, running: () -> Bool) {
        let giveUp = start &+ resumeWait
        while !done(), MonotonicClock.nanoseconds() < giveUp, running() {
            HelperThreadCalls.sleep(untilMonotonic: MonotonicClock.nanoseconds() &+ 200_000)
        }
    }
}

/// An audio output the engine can slave its haptics to (`PulseAudioOutput`, `PipeWireOutput`).
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
    /// The first frame a voice started now can begin at and be heard whole: written after the
    /// scheduler's start message has reached the audio thread. Default: `nextWritableFrame` plus
    /// 5 ms (a stream that writes whenever its server asks). Does not allocate, lock or block.
    var earliestStartFrame: Int64 { get }
    /// Buffer underruns so far.
    var underruns: Int { get }
    /// Whether frames are handed to the server well ahead of being heard (a push stream with a
    /// buffer of its own, as PulseAudio's), so that a frame still unwritten as its haptic falls
    /// due means the writer is late: the scheduler holds that haptic until the frame is written.
    /// False for a pull stream written in the graph cycle that plays it (PipeWire's), where that
    /// is how every cycle goes and the cycle's own timing places what comes late, and for a
    /// server that skips what is written after its stream ran dry rather than playing it late
    /// (pipewire-pulse): its frames stay where the clock's line places them.
    var writesAhead: Bool { get }
    /// A player with audio is about to start (control side, before its start message is sent): a
    /// device that paused its stream while nothing sounded starts it again, and returns once the
    /// stream's first cycle has placed its frames on the clock (the caller waits for that, at
    /// most 100 ms). May block.
    func willPlay()
    /// Whether the stream is paused now for want of sound (`IdlePause`).
    var isPaused: Bool { get }
    /// Whether a player with audio plays or is about to (the engine says so, control side, as
    /// players begin, pause and end): a stream never pauses while one does, since the scheduler
    /// sends audio starts of its own (a loop's next pass, a seek, a rate change) that no
    /// `willPlay` precedes. Does not block.
    func audiblePlayersActive(_ active: Bool)
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

extension AudioDevice {
    /// A push stream by default (see the requirement).
    public var writesAhead: Bool { true }
    /// `nextWritableFrame` plus 5 ms.
    public var earliestStartFrame: Int64 { nextWritableFrame + Int64(sampleRate * 0.005) }
    /// Nothing to do for a stream that never pauses.
    public func willPlay() {}
    /// False: a stream that never pauses.
    public var isPaused: Bool { false }
    /// Nothing to keep awake in a stream that never pauses.
    public func audiblePlayersActive(_ active: Bool) {}
}
