import HapSyncRuntime

/// Several haptic backends at once (a gamepad and a trace): every command goes to each, in order.
///
/// When a device among them disconnects it is dropped and the others go on: the error is passed
/// to the engine as `HapticDeviceDisconnected` with `othersContinue` set, so the engine reports
/// the disconnect and keeps running. Other errors pass through unchanged.
public final class FanOutBackend: HapticBackend, RealtimeThreaded, HapticLeadAdjusting, @unchecked Sendable {
    private var backends: [HapticBackend]
    /// Every backend it was made with (`backends` shrinks on the output thread; this never changes).
    private let all: [HapticBackend]
    /// Those of them that may ask for more lead (found once, off the real-time threads).
    private let leadSources: [HapticLeadAdjusting]

    /// Makes a fan-out over `backends` (at least one).
    public init(_ backends: [HapticBackend]) {
        precondition(!backends.isEmpty, "FanOutBackend needs at least one backend")
        self.backends = backends
        all = backends
        leadSources = backends.compactMap { $0 as? HapticLeadAdjusting }
    }

    /// Every backend's report together.
    public var health: OutputHealth { all.reduce(OutputHealth()) { $0.merged(with: $1.health) } }

    /// The children's names joined with "+" ("evdev+trace").
    public var name: String { backends.map(\.name).joined(separator: "+") }
    /// Every device, joined with " + ".
    public var device: String { backends.map(\.device).joined(separator: " + ") }
    /// The most motors any of them drives.
    public var motors: Int { backends.map(\.motors).max() ?? 0 }
    /// The finest of its backends' (a trace beside a pad: exact).
    public var timingResolution: UInt64 { backends.map(\.timingResolution).min() ?? 0 }

    /// The greatest extra lead any of its backends asks for (`HapticLeadAdjusting`). Does not
    /// allocate, lock or block.
    public var extraLead: UInt64 {
        // An index loop and a plain comparison: a for-in's iterator and generic max would
        // instantiate metadata on first use (debug builds), on the scheduler's thread.
        var most: UInt64 = 0, i = 0
        while i < leadSources.count {
            let extra = leadSources[i].extraLead
            if extra > most { most = extra }
            i += 1
        }
        return most
    }

    /// The backends still in use.
    public var children: [HapticBackend] { backends }

    /// Passed to every backend with threads of its own (`RealtimeThreaded`); the first's when read.
    public var threadPriority: Int32? {
        get { all.lazy.compactMap { ($0 as? RealtimeThreaded)?.threadPriority }.first }
        set { for case let b as RealtimeThreaded in all { b.threadPriority = newValue } }
    }
    /// Every backend's threads.
    public var realtimeThreads: [RealtimeThread] { all.flatMap { ($0 as? RealtimeThreaded)?.realtimeThreads ?? [] } }

    /// Opens each; if one fails, closes those already open and rethrows.
    public func open() throws {
        for (i, b) in backends.enumerated() {
            do { try b.open() } catch {
                for opened in backends[..<i] { try? opened.close() }
                throw error
            }
        }
    }

    // MARK: - Real-time (output thread)

    /// Applies to each (all of them, even after one dropped out). Allocates nothing unless a device
    /// drops out (then the list shrinks).
    public func apply(_ command: OutputCommand, appliedAt: UInt64) throws {
        var gone: HapticDeviceDisconnected?
        var i = 0
        while i < backends.count {
            do {
                try backends[i].apply(command, appliedAt: appliedAt)
                i += 1
            } catch let e as HapticDeviceDisconnected {
                gone = drop(at: i, e)
            }
        }
        if let gone { throw gone }
    }

    /// The earliest time any child wants service.
    public func service(now: UInt64) throws -> UInt64? {
        var next: UInt64?
        var gone: HapticDeviceDisconnected?
        var i = 0
        while i < backends.count {
            do {
                if let t = try backends[i].service(now: now) { next = min(next ?? t, t) }
                i += 1
            } catch let e as HapticDeviceDisconnected {
                gone = drop(at: i, e)
            }
        }
        if let gone { throw gone }
        return next
    }

    private func drop(at i: Int, _ gone: HapticDeviceDisconnected) -> HapticDeviceDisconnected {
        let dead = backends.remove(at: i)
        try? dead.close()
        return HapticDeviceDisconnected(device: gone.device, othersContinue: !backends.isEmpty)
    }

    // MARK: - Control side

    /// Stops each.
    public func stopAll() throws {
        for b in backends { try? b.stopAll() }
    }

    /// Abandons each (a start that failed after `open`).
    public func abandon() {
        for b in backends { b.abandon() }
    }

    /// Closes each; the first error is rethrown after all were closed.
    public func close() throws {
        var first: Error?
        for b in backends {
            do { try b.close() } catch { first = first ?? error }
        }
        if let first { throw first }
    }
}
