import HapSyncConcurrency
import HapSyncCore

/// A haptic command on its way from the scheduler to the backend: what to do, for which player,
/// and the times it was meant for and released at. Fixed-size, so it moves through `SPSCRing`.
public struct OutputCommand: Sendable, Equatable, BitwiseCopyable {
    /// What the actuator is asked to do.
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Set the continuous level (all players mixed); intensity 0 stops.
        case level
        /// A tap on top of the level.
        case transient
        /// Stop everything now (engine stopping); a backend must leave no motor running.
        case stopAll
    }

    /// Engine time (ns) the command was scheduled for.
    public var scheduled: UInt64
    /// Engine time (ns) the scheduler released it.
    public var released: UInt64
    /// The player whose command caused it (its id), or 0 for engine-wide commands.
    public var player: UInt32
    /// Level, transient or stop.
    public var kind: Kind
    /// 0...1; for levels, all players mixed.
    public var intensity: Float
    /// 0...1; for levels, all players mixed.
    public var sharpness: Float
    /// Pattern time (seconds) of the command in its player's timeline, or -1 for engine commands.
    public var patternTime: Double
    /// The audio output frame of `patternTime` when the player follows the audio (the frame its
    /// audio at the same pattern time starts at, by the same conversion; for a player without
    /// audio started on a frame, `HapticPatternPlayer.start(atTime:outputFrame:)`, that frame and
    /// the pattern time after it), else −1. A backend mixed into the audio's own stream places
    /// the command there, sample-locked.
    public var frame: Int64
    /// How much earlier than the engine's configured `hapticLatency` the scheduler released it
    /// (what the backend had asked for then, `HapticLeadAdjusting`), ns: the command is meant to be
    /// felt at `scheduled` + the configured latency + this.
    public var extraLead: UInt64

    /// Makes a command.
    public init(scheduled: UInt64, released: UInt64, player: UInt32, kind: Kind, intensity: Float, sharpness: Float, patternTime: Double,
                frame: Int64 = -1, extraLead: UInt64 = 0) {
        self.scheduled = scheduled
        self.released = released
        self.player = player
        self.kind = kind
        self.intensity = intensity
        self.sharpness = sharpness
        self.patternTime = patternTime
        self.frame = frame
        self.extraLead = extraLead
    }
}
