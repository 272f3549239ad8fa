/// A request from a control thread (API caller) to the scheduler, through the control ring.
struct ControlMessage: Sendable, BitwiseCopyable {
    enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Start the player in `slot` at `time` from pattern offset `value` (s), restarting it if it
        /// plays; with a `frame`, pattern time `value` falls on that audio output frame.
        case start
        /// Stop the player in `slot` at `time`.
        case stop
        /// Stop the player in `slot` now and give the slot back (its player object is gone).
        case retire
        /// Stop every player now and tell the backend to stop everything.
        case stopAll
        /// Pause the player in `slot` at `time`, remembering where it was.
        case pause
        /// Resume the player in `slot` at `time` from where it was paused (or sought to).
        case resume
        /// Move the player in `slot` to pattern offset `value`: at once if it plays, else for the next resume.
        case seek
        /// Set the playback rate of `slot` to `value` (pattern seconds per second), keeping its place.
        case setRate
        /// Set looping of `slot`: `flag` on/off, loop end `value` (s; 0 = the pattern's end),
        /// `count` passes in all (0: until stopped).
        case setLoop
        /// Live parameters or mute changed for `slot`: re-evaluate its level now.
        case refresh
        /// Move the run of the player in `slot` to start at `time` (from pattern offset 0; with a
        /// `frame`, on that audio output frame, the run anchored there), or with `flag` drop it,
        /// only while it has released nothing yet (else nothing happens: what went out stays out,
        /// never played twice). Only for a player without audio of its own that does not loop.
        case move
    }

    var kind: Kind
    var slot: Int32
    var player: UInt32
    var time: UInt64
    /// Offset, rate or loop end, by kind.
    var value: Double = 0
    /// Loop on/off for `setLoop`; drop rather than move for `move`.
    var flag: Bool = false
    /// Passes for `setLoop` (0: until stopped).
    var count: UInt32 = 0
    /// For `start` and `move` of a player without audio: the audio output frame its start is
    /// heard with (its commands then follow the audio clock and carry their frames, as an audio
    /// player's do); −1: none, by `time` alone.
    var frame: Int64 = -1
}

/// Something the scheduler or output thread reports to the notifier thread, about a player
/// (`slot`, `player`) or the engine (slot −1, player 0). Each kind carries its own payload.
struct EngineNotification: Sendable, BitwiseCopyable {
    enum Event: Sendable, BitwiseCopyable, Equatable {
        /// The player played to its end, at engine time `at` (ns).
        case finished(at: UInt64)
        /// The player was stopped before its end, at engine time `at` (ns).
        case stopped(at: UInt64)
        /// The slot is free again (after `retire`).
        case retired
        /// The backend failed and could not be reopened; the error is in the output stage.
        case backendFailed
        /// The backend failed and was closed and reopened; playback goes on.
        case backendReset
        /// The haptic device went away; the error is in the output stage. Other outputs may go on.
        case deviceDisconnected
        /// The player follows the audio clock; its pattern time 0 is output frame `frame`.
        case startedOnAudio(frame: Int64)
        /// The player was paused at pattern offset `offset` (s).
        case paused(offset: Double)
        /// A start or resume message was handled; `playing` says whether the player now plays.
        case began(playing: Bool)
    }

    var event: Event
    var slot: Int32
    var player: UInt32
    /// The output ring's `pushedCount` when this was posted: a player's end is reported to its
    /// handler only once the output stage has dealt with every command pushed before it.
    var outputMark: Int = 0

    /// A notification about the engine rather than a player.
    static func engine(_ event: Event) -> EngineNotification { EngineNotification(event: event, slot: -1, player: 0) }
}
