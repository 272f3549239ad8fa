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

    /// Makes a command.
    public init(scheduled: UInt64, released: UInt64, player: UInt32, kind: Kind, intensity: Float, sharpness: Float, patternTime: Double) {
        self.scheduled = scheduled
        self.released = released
        self.player = player
        self.kind = kind
        self.intensity = intensity
        self.sharpness = sharpness
        self.patternTime = patternTime
    }
}

/// Where haptic commands end up: a trace file, a gamepad's motors, nothing.
///
/// The engine's output thread calls `apply` for each command, in order, with the time it applies
/// it. Implementations document whether `apply` allocates; it must not lock or block for long, as
/// it runs on the output thread.
public protocol HapticBackend: AnyObject {
    /// A short name for capability reports and summaries ("trace", "evdev", "none").
    var name: String { get }
    /// Acquires the device or file. Called once before any command.
    func open() throws
    /// Applies one command; `appliedAt` is the engine time (ns) it was handed over.
    func apply(_ command: OutputCommand, appliedAt: UInt64) throws
    /// Stops every effect at once (engine stop, interruption).
    func stopAll() throws
    /// Releases the device or finishes the file. Called once, last.
    func close() throws
    /// The device or file it drives, for capability reports ("/dev/input/event5 (Pad)", a path).
    var device: String { get }
    /// Rumble motors it drives (0 for a trace or none).
    var motors: Int { get }
    /// Gives the backend time of its own (a rate limiter's deferred update, a dead-man refresh),
    /// on the output thread; returns when it next needs to be called (engine ns), or nil. The
    /// output thread calls it after every batch of commands and at the time it asked for.
    func service(now: UInt64) throws -> UInt64?
}

extension HapticBackend {
    /// Backends without timers of their own never need service.
    public func service(now: UInt64) throws -> UInt64? { nil }
    /// The name, for backends without a device of their own.
    public var device: String { name }
    /// No motors, for backends that drive none (a trace, none).
    public var motors: Int { 0 }
}

/// Thrown by a backend whose device went away (unplugged): the engine reports
/// `StoppedReason.deviceDisconnected` instead of trying to reopen it.
public struct HapticDeviceDisconnected: Error, Sendable, CustomStringConvertible {
    /// The device, e.g. "/dev/input/event5 (Xbox Wireless Controller)".
    public var device: String
    /// Whether other outputs (a trace, audio) go on without it.
    public var othersContinue: Bool

    /// Makes the error.
    public init(device: String, othersContinue: Bool) {
        self.device = device
        self.othersContinue = othersContinue
    }

    /// A sentence for the user.
    public var description: String { "haptic device \(device) disconnected" + (othersContinue ? "; other outputs continue" : "") }
}

/// A backend that does nothing: haptics off.
public final class NullHapticBackend: HapticBackend {
    /// Makes the backend.
    public init() {}
    /// "none".
    public var name: String { "none" }
    /// Nothing to open.
    public func open() {}
    /// Ignores the command. Does not allocate, lock or block.
    public func apply(_ command: OutputCommand, appliedAt: UInt64) {}
    /// Nothing to stop.
    public func stopAll() {}
    /// Nothing to close.
    public func close() {}
}
