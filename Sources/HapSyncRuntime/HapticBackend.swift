import HapSyncCore

/// Where haptic commands end up: a trace file, a gamepad's motors, nothing.
///
/// The engine's output stage calls `apply` for each command, in order, with the time it applies
/// it, from one thread at a time: the output thread, or the scheduler thread handing commands it
/// just released straight on (both real-time). `apply` and `service` are never called at once:
/// a backend needs no lock of its own. Implementations document whether `apply` allocates; it
/// must not lock or block for long.
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
    /// Undoes `open()` when the engine's start fails after it (the audio could not start): closes,
    /// and leaves behind nothing this open made (a trace file it created), so the same command can
    /// run again. Files that were there before are left as they are.
    func abandon()
    /// The device or file it drives, for capability reports ("/dev/input/event5 (Pad)", a path).
    var device: String { get }
    /// Rumble motors it drives (0 for a trace or none).
    var motors: Int { get }
    /// Gives the backend time of its own (a rate limiter's deferred update, a dead-man refresh),
    /// on the output thread, never while `apply` runs; returns when it next needs to be called
    /// (engine ns), or nil. The output thread calls it after every batch of commands and at the
    /// time it asked for.
    func service(now: UInt64) throws -> UInt64?
    /// How finely this output can use the moment a command is released, ns: 0 for exact (a
    /// trace records it; the scheduler then spins the last stretch before each deadline); a
    /// rumble pad's update interval (it applies a level at most that often); a waveform stream's
    /// slack (it places each command by its scheduled time, not the moment it came). Above 0 the
    /// scheduler sleeps to each deadline without spinning and lets level changes wait up to that
    /// long, to go out together: the backend could not tell them apart in time anyway
    /// (`HapticEngine.Configuration.precise` overrides this).
    var timingResolution: UInt64 { get }
    /// What has gone wrong so far without ending playback (a trace that could not be written,
    /// records lost), for reports while it runs. Read on the control side, any time.
    var health: OutputHealth { get }
}

/// Problems an output has had so far that its user should hear of while it runs, not only when
/// it closes: `hapsync serve`'s `/hapsync/status`, `HapticEngine.outputHealth`.
public struct OutputHealth: Sendable, Equatable {
    /// Why an output stopped working, naming it (a trace that could not be written: the file and
    /// the system's reason), nil while none has.
    public var failure: String?
    /// Records or commands lost so far (a trace's ring that overflowed, the engine's output ring).
    public var lost: Int

    /// Makes a report; the defaults are a healthy output.
    public init(failure: String? = nil, lost: Int = 0) {
        self.failure = failure
        self.lost = lost
    }

    /// Both reports together: the first failure, every loss.
    public func merged(with other: OutputHealth) -> OutputHealth {
        OutputHealth(failure: failure ?? other.failure, lost: lost + other.lost)
    }
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
    /// Healthy, for backends with nothing to lose.
    public var health: OutputHealth { OutputHealth() }
    /// Closes, for backends that make nothing at open.
    public func abandon() { try? close() }
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
