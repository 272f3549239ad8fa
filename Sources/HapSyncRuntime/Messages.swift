/// A request from a control thread (API caller) to the scheduler, through the control ring.
struct ControlMessage: Sendable, BitwiseCopyable {
    enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Start the player in `slot` at `time` from pattern offset `value` (s), restarting it if it plays.
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
        /// Set looping of `slot`: `flag` on/off, loop end `value` (s; 0 = the pattern's end).
        case setLoop
        /// Live parameters or mute changed for `slot`: re-evaluate its level now.
        case refresh
    }

    var kind: Kind
    var slot: Int32
    var player: UInt32
    var time: UInt64
    /// Offset, rate or loop end, by kind.
    var value: Double = 0
    /// Loop on/off for `setLoop`.
    var flag: Bool = false
}

/// Something the scheduler or output thread reports to the notifier thread.
struct EngineNotification: Sendable, BitwiseCopyable {
    enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// The player played to its end.
        case finished
        /// The player was stopped before its end.
        case stopped
        /// The slot is free again (after `retire`).
        case retired
        /// The backend failed and could not be reopened; the error is in the output stage.
        case backendFailed
        /// The backend failed and was closed and reopened; playback goes on.
        case backendReset
        /// The haptic device went away; the error is in the output stage. Other outputs may go on.
        case deviceDisconnected
        /// The player follows the audio clock; its pattern time 0 is output frame `time`.
        case startedOnAudio
        /// The player was paused; `time` is the pattern offset it stopped at, ns.
        case paused
        /// A start or resume message was handled; `time` is 1 if the player now plays, else 0.
        case began
    }

    var kind: Kind
    var slot: Int32
    var player: UInt32
    var time: UInt64
}
