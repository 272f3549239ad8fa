import Foundation
import HapSyncCore
import Synchronization

/// Plays one compiled pattern on an engine, like Core Haptics' `CHHapticPatternPlayer`.
///
/// `start(atTime:)` and `stop(atTime:)` post a message to the scheduler and return at once; they
/// never wait for it. Times are engine times (`HapticEngine.currentTime`); `timeImmediate` (0) or
/// any time already past means now.
public final class HapticPatternPlayer: @unchecked Sendable {
    /// How a playback ended.
    public enum Completion: Sendable, Equatable {
        /// It played to its end (the last release or audio voice).
        case finished
        /// `stop(atTime:)`, a restart or the engine stopping ended it early.
        case stopped
    }

    /// The compiled pattern this player plays.
    public let timeline: PatternTimeline
    /// A number unique within the engine, recorded with each of this player's commands.
    public let id: UInt32
    /// Called on the engine's notifier thread when a playback ends.
    public var completionHandler: (@Sendable (Completion) -> Void)?
    /// For a player that follows the audio clock: the output frame its latest start put pattern
    /// time 0 on (known shortly after `start`), else nil.
    public var audioStartFrame: Int64? {
        get { startFrame.withLock { $0 } }
        set { startFrame.withLock { $0 = newValue } }
    }
    private let startFrame = Mutex<Int64?>(nil)

    private weak var engine: HapticEngine?
    private let slot: Int

    init(engine: HapticEngine, slot: Int, id: UInt32, timeline: PatternTimeline) {
        self.engine = engine
        self.slot = slot
        self.id = id
        self.timeline = timeline
    }

    deinit { engine?.retire(slot: slot, id: id) }

    /// Starts (or restarts) playback so that pattern time 0 falls at `time`. Does not wait.
    public func start(atTime time: TimeInterval) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        try engine.startPlayer(slot: slot, id: id, at: time)
    }

    /// Stops playback at `time`. Does not wait.
    public func stop(atTime time: TimeInterval) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        try engine.stopPlayer(slot: slot, id: id, at: time)
    }
}
