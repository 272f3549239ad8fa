import HapSyncCore

/// Where haptic commands end up: a trace file, a gamepad's motors, nothing.
///
/// The engine's output stage calls `apply` for each command, in order, with the time it applies
/// it, from one thread at a time: the output thread, or the scheduler thread handing commands it
/// just released straight on (both real-time). Implementations document whether `apply`
/// allocates; it must not lock or block for long.
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
    /// How finely this output can use the moment a command is released, ns: 0 for exact (a
    /// trace records it; the scheduler then spins the last stretch before each deadline); a
    /// rumble pad's update interval (it applies a level at most that often); a waveform stream's
    /// slack (it places each command by its scheduled time, not the moment it came). Above 0 the
    /// scheduler sleeps to each deadline without spinning and lets level changes wait up to that
    /// long, to go out together: the backend could not tell them apart in time anyway
    /// (`HapticEngine.Configuration.precise` overrides this).
    var timingResolution: UInt64 { get }
}

extension HapticBackend {
    /// Backends without timers of their own never need service.
    public func service(now: UInt64) throws -> UInt64? { nil }
    /// The name, for backends without a device of their own.
    public var device: String { name }
    /// No motors, for backends that drive none (a trace, none).
    public var motors: Int { 0 }
    /// Exact, unless the backend says otherwise.
    public var timingResolution: UInt64 { 0 }
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
    // MARK: - Real-time (output thread)

    /// Ignores the command. Does not allocate, lock or block.
    public func apply(_ command: OutputCommand, appliedAt: UInt64) {}
    /// Nothing to stop.
    public func stopAll() {}
    /// Nothing to close.
    public func close() {}
}
