/// A request from a control thread (API caller) to the scheduler, through the control ring.
struct ControlMessage: Sendable, BitwiseCopyable {
    enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Start the player in `slot` at `time` (its pattern time 0), restarting it if it plays.
        case start
        /// Stop the player in `slot` at `time`.
        case stop
        /// Stop the player in `slot` now and give the slot back (its player object is gone).
        case retire
        /// Stop every player now and tell the backend to stop everything.
        case stopAll
    }

    var kind: Kind
    var slot: Int32
    var player: UInt32
    var time: UInt64
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
    }

    var kind: Kind
    var slot: Int32
    var player: UInt32
    var time: UInt64
}
