import Foundation

/// What an engine reports: why it stopped, what it can do, its errors and its timing figures.
extension HapticEngine {
    /// Why the engine stopped on its own (Core Haptics' `CHHapticEngine.StoppedReason` in spirit).
    public enum StoppedReason: Sendable, Equatable {
        /// The engine object was released while running.
        case engineDestroyed
        /// The haptic device went away (unplugged). When other outputs are configured (a trace,
        /// audio) the engine keeps running with them; otherwise it has stopped.
        case deviceDisconnected
        /// The backend failed and could not be reopened.
        case systemError(String)
        /// The audio server went away; haptics go on (on the last fitted audio clock). When it
        /// comes back the engine restarts itself and calls the reset handler.
        case audioServerLost(String)
        /// No player played for `Configuration.idleTimeout`; the next player start restarts the engine.
        case idleTimeout
        /// A `notifyWhenPlayersFinished` handler returned `.stopEngine`.
        case finished
    }

    /// What a `notifyWhenPlayersFinished` handler wants next (Core Haptics' `FinishedAction`).
    public enum FinishedAction: Sendable {
        /// Stop the engine (the stopped handler hears `.finished`).
        case stopEngine
        /// Keep it running.
        case leaveEngineRunning
    }

    /// What this engine can do.
    public struct Capabilities: Sendable, Equatable {
        /// Haptics go somewhere (the backend is not "none").
        public var supportsHaptics: Bool
        /// Audio playback (an audio device is configured).
        public var supportsAudio: Bool
        /// The haptic backend's name.
        public var hapticBackend: String
        /// The haptic device or file ("/dev/input/event5 (Xbox Wireless Controller)", a trace path).
        public var hapticDevice: String
        /// Rumble motors the device drives (0 for a trace or none).
        public var motors: Int
        /// The audio output ("pulse"), or nil.
        public var audioDevice: String?
        /// Audio events are ignored.
        public var playsHapticsOnly: Bool
        /// Haptics are silenced.
        public var playsAudioOnly: Bool
    }

    /// Errors of engine and player calls.
    public enum EngineError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The call needs a running engine.
        case notRunning
        /// All player slots are in use.
        case tooManyPlayers(limit: Int)
        /// The configuration cannot work.
        case invalidConfiguration(String)
        /// The engine's control queue is full (more than 1024 calls waiting for the scheduler).
        case controlQueueFull
        /// The backend could not be opened.
        case backendUnavailable(String)
        /// The audio output could not be started.
        case audioUnavailable(String)
        /// A live parameter that cannot be sent, or a value out of its range.
        case invalidParameter(String)
        /// A call that would pass a bound the engine keeps (a player's live breakpoints per
        /// control), naming it; nothing was changed.
        case limitReached(String)
        /// One of the engine's threads did not end within 10 s of `stop()` (a bug): named, and
        /// left running.
        case threadDidNotStop(String)

        /// A sentence for the user.
        public var description: String {
            switch self {
            case .notRunning: return "the haptic engine is not running; call start() first"
            case .tooManyPlayers(let limit): return "all \(limit) player slots are in use; release players or raise maxPlayers"
            case .invalidConfiguration(let why): return "invalid engine configuration: \(why)"
            case .controlQueueFull: return "the engine's control queue is full"
            case .backendUnavailable(let why): return "cannot open the haptic backend: \(why)"
            case .audioUnavailable(let why): return "cannot start audio output: \(why)"
            case .invalidParameter(let why): return "invalid parameter: \(why)"
            case .limitReached(let why): return "limit reached: \(why)"
            case .threadDidNotStop(let name): return "the engine's \(name) thread did not stop within 10 s of stop(); it was left running"
            }
        }
    }
}

/// Timing figures of an engine's output so far.
public struct EngineStatistics: Sendable {
    /// Commands handed to the backend.
    public var applied: Int
    /// Released − scheduled, ns, per command (the scheduler's lateness).
    public var dispatchErrors: [Int64]
    /// Applied − released, ns, per command (the ring and output thread's delay).
    public var applyLatencies: [Int64]
    /// Commands lost because the output ring was full.
    public var outputOverflows: Int
    /// Control messages lost because the control ring was full.
    public var controlOverflows: Int
    /// Every applied command: player, pattern time, applied time (ns), and how much earlier than
    /// the configured `hapticLatency` it was released (`OutputCommand.extraLead`), in order.
    public var commands: [(player: UInt32, patternTime: Double, applied: UInt64, extraLead: UInt64)]
    /// Audio buffer underruns reported by the audio device.
    public var audioUnderruns: Int
    /// Transients dropped because haptics were off (policy or mute).
    public var suppressedTransients: Int
    /// Transients not sent because they were silent where they fell: intensity 0 after dynamic
    /// parameters and curves, or their player muted.
    public var skippedTransients: Int = 0
    /// Stop-all commands among `applied` (the engine's stops and restarts, not the pattern's).
    public var stopsApplied: Int = 0
}
