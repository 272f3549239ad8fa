import CLinuxInput
import Glibc
import HapSyncRuntime
import HapSyncSystem

/// Drives a gamepad's rumble motors through the kernel's evdev force-feedback interface.
///
/// - Opens the device read-write, checks FF_RUMBLE (EVIOCGBIT(EV_FF)) and the effect slots
///   (EVIOCGEFFECTS).
/// - Uses one FF_RUMBLE effect for the whole session: uploaded once (EVIOCSFF with id −1, the
///   kernel assigns the id), then updated in place (EVIOCSFF with that id) and played / stopped by
///   writing EV_FF events. Erased (EVIOCRMFF) when the backend closes.
/// - Maps (intensity, sharpness) to (strong, weak) with a replaceable `RumbleMapping`; by default
///   the one its kernel driver calls for (`PadRumble`, found at `open`).
/// - Combines the continuous level with transient bursts of at least `burstLength` (motors need
///   tens of ms to spin up) by the rendering's overlap rule.
/// - Rate-limits: updates at most every `minimumUpdateInterval` (10 ms by default, as USB pads
///   need; longer where the pad's driver keeps a slower pace of its own, `PadRumble`),
///   coalescing to the latest value, so a 1 kHz command stream never floods the device.
/// - Dead-man safety: the effect's replay length is `deadManWindow` (250 ms), re-triggered every
///   half window while playing, so if the process dies or hangs the motors stop within the window
///   (the kernel also erases a dead process's effects when its file closes). `stopAll` and
///   `close` stop and erase at once.
///
/// `apply` and `service` run on the output thread: they do not allocate or lock; the only system
/// calls are one ioctl and one write per update (both return at once for evdev devices).
public final class EvdevBackend: HapticBackend, @unchecked Sendable {
    /// Settings of the backend.
    public struct Configuration: Sendable {
        /// The device, e.g. /dev/input/event5.
        public var path: String
        /// (intensity, sharpness) → (strong, weak); nil: the one the pad's kernel driver calls for
        /// (`PadRumble.of(driver:)`, the standard mapping for most pads).
        public var mapping: RumbleMapping?
        /// Shortest time between two updates of the effect, ns (default 10 ms).
        public var minimumUpdateInterval: UInt64
        /// Shortest rumble a transient produces, ns (default 30 ms).
        public var burstLength: UInt64
        /// Replay length of the effect, ns: how long the motors run on if HapSync stops refreshing
        /// (default 250 ms; refreshed every half window).
        public var deadManWindow: UInt64
        /// Scales every intensity, 0...1 (default 1): a live profile's share for rumble.
        public var level: Double = 1

        /// Makes a configuration; defaults as described on each property.
        public init(path: String, mapping: RumbleMapping? = nil, minimumUpdateInterval: UInt64 = 10_000_000,
                    burstLength: UInt64 = 30_000_000, deadManWindow: UInt64 = 250_000_000) {
            self.path = path
            self.mapping = mapping
            self.minimumUpdateInterval = minimumUpdateInterval
            self.burstLength = burstLength
            self.deadManWindow = deadManWindow
        }
    }

    /// The settings.
    public let configuration: Configuration
    private let system: EvdevSystem
    private var fd: Int32 = -1
    /// The device's name (after `open`).
    public private(set) var deviceName = ""
    /// How many effects the device holds at once (after `open`).
    public private(set) var effectSlots = 0
    /// How the pad's driver plays rumble (after `open`; the standard mapping before).
    public private(set) var padRumble = PadRumble.of(driver: nil)
    /// The mapping in use: the configuration's, else `padRumble`'s (set at `open`).
    private var mapping = RumbleMapping.standard
    /// The shortest time between updates in use: the configuration's, or the pad driver's own
    /// pace where that is longer (set at `open`).
    public private(set) var updateInterval: UInt64

    private var effectID: Int16 = -1
    private var uploaded: (strong: UInt16, weak: UInt16)?
    private var playing = false
    private var lastUpdate: UInt64 = 0
    private var lastPlay: UInt64 = 0
    private var pending = false
    private var level = (intensity: 0.0, sharpness: 0.0)
    private struct Burst { var end: UInt64; var intensity: Double; var sharpness: Double }
    private static let maxBursts = 8
    private let bursts = UnsafeMutablePointer<Burst>.allocate(capacity: EvdevBackend.maxBursts)
    private var burstCount = 0

    /// Makes a backend for one device; `system` is the syscall chokepoint (a mock in tests).
    public init(configuration: Configuration, system: EvdevSystem = LinuxEvdevSystem()) {
        self.configuration = configuration
        self.system = system
        updateInterval = configuration.minimumUpdateInterval
    }

    deinit { bursts.deallocate() }

    /// "evdev".
    public var name: String { "evdev" }

    /// The device path and name.
    public var device: String { deviceDescription }
    /// Two: the strong (low-frequency) and weak (high-frequency) rumble motors.
    public var motors: Int { 2 }
    /// Its update interval: a level is applied at most that often.
    public var timingResolution: UInt64 { updateInterval }
    private var deviceDescription: String { deviceName.isEmpty ? configuration.path : "\(configuration.path) (\(deviceName))" }

    /// Opens the device and checks that it can rumble.
    public func open() throws {
        let fd: Int32
        switch system.open(configuration.path, readWrite: true) {
        case .success(let f): fd = f
        case .failure(let e): throw EvdevError.opening(configuration.path, e)
        }
        do {
            let info = try InputDeviceProbe.probe(fd: fd, system: system)
            guard info.hasRumble else { throw EvdevError.notRumbleCapable(path: configuration.path, name: info.name) }
            guard info.effectSlots > 0 else { throw EvdevError.noEffectSlots(path: configuration.path, name: info.name) }
            deviceName = info.name
            effectSlots = info.effectSlots
            padRumble = PadRumble.of(driver: system.driver(ofEventDevice: configuration.path))
            mapping = configuration.mapping ?? padRumble.mapping
            updateInterval = max(configuration.minimumUpdateInterval, padRumble.minimumUpdateInterval)
        } catch let EvdevError.system(path, what, e) where path.isEmpty {
            // The probe's calls name no device: a pad gone between open and probe (unplugged)
            // says so, anything else names the path.
            system.close(fd)
            if EvdevError.isGone(e) { throw EvdevError.opening(configuration.path, e) }
            throw EvdevError.system(path: configuration.path, what: what, errno: e)
        } catch {
            system.close(fd)
            throw error
        }
        self.fd = fd
        effectID = -1
        uploaded = nil
        playing = false
        pending = false
        burstCount = 0
        level = (0, 0)
        lastUpdate = 0
    }

    // MARK: - Real-time (output thread)

    /// Takes a command at `appliedAt`. Does not allocate or lock.
    public func apply(_ command: OutputCommand, appliedAt now: UInt64) throws {
        switch command.kind {
        case .level:
            level = (Double(command.intensity) * configuration.level, Double(command.sharpness))
        case .transient:
            let start = max(now, lastUpdate &+ updateInterval)
            addBurst(Burst(end: start &+ configuration.burstLength, intensity: Double(command.intensity) * configuration.level,
                           sharpness: Double(command.sharpness)))
        case .stopAll:
            level = (0, 0)
            burstCount = 0
            pending = false
            try stopMotors(now)
            return
        }
        if now >= lastUpdate &+ updateInterval || lastUpdate == 0 {
            try update(now)
        } else {
            pending = true
        }
    }

    /// Deferred updates, burst ends and the dead-man refresh. Does not allocate or lock.
    public func service(now: UInt64) throws -> UInt64? {
        guard fd >= 0 else { return nil }
        var i = 0
        while i < burstCount {
            if bursts[i].end <= now {
                bursts[i] = bursts[burstCount - 1]
                burstCount -= 1
                pending = true
            } else {
                i += 1
            }
        }
        if pending, now >= lastUpdate &+ updateInterval {
            try update(now)
        }
        let refresh = configuration.deadManWindow / 2
        if playing, now >= lastPlay &+ refresh {
            try play(now)
        }
        var next = UInt64.max
        if pending { next = min(next, lastUpdate &+ updateInterval) }
        for j in 0..<burstCount { next = min(next, bursts[j].end) }
        if playing { next = min(next, lastPlay &+ refresh) }
        return next == .max ? nil : next
    }

    // MARK: - Control side (engine stop, after the output thread)

    /// Stops the motors at once (the effect stays uploaded).
    public func stopAll() throws {
        level = (0, 0)
        burstCount = 0
        pending = false
        try stopMotors(0)
    }

    /// Stops the motors, erases the effect and closes the device.
    public func close() throws {
        guard fd >= 0 else { return }
        defer {
            system.close(fd)
            fd = -1
        }
        try? stopMotors(0)
        if uploaded != nil, effectID >= 0 {
            _ = system.ioctl(fd, EvdevABI.EVIOCRMFF, value: Int32(effectID))
            uploaded = nil
            effectID = -1
        }
    }

    // MARK: - Real-time (output thread): effect updates

    private func addBurst(_ b: Burst) {
        if burstCount < Self.maxBursts {
            bursts[burstCount] = b
            burstCount += 1
        } else {
            // Full: replace the burst that ends first.
            var first = 0
            for j in 1..<burstCount where bursts[j].end < bursts[first].end { first = j }
            bursts[first] = b
        }
    }

    /// The level and active bursts combined by the overlap rule.
    private func effective() -> (Double, Double) {
        var sum = level.intensity, weighted = level.intensity * level.sharpness
        for j in 0..<burstCount {
            sum += bursts[j].intensity
            weighted += bursts[j].intensity * bursts[j].sharpness
        }
        return (min(1, sum), sum > 0 ? min(1, weighted / sum) : 0)
    }

    private func update(_ now: UInt64) throws {
        pending = false
        lastUpdate = now
        let (intensity, sharpness) = effective()
        let magnitudes = mapping.map(intensity, sharpness)
        if magnitudes.strong == 0, magnitudes.weak == 0 {
            try stopMotors(now)
            return
        }
        if uploaded == nil || uploaded! != magnitudes {
            try upload(magnitudes)
            try play(now)
        } else if !playing {
            try play(now)
        }
    }

    private func upload(_ m: (strong: UInt16, weak: UInt16)) throws {
        var effect = ff_effect()
        effect.type = EvdevABI.FF_RUMBLE
        effect.id = effectID
        effect.replay.length = UInt16(min(configuration.deadManWindow / 1_000_000, 65_535))
        effect.replay.delay = 0
        effect.u.rumble.strong_magnitude = m.strong
        effect.u.rumble.weak_magnitude = m.weak
        switch system.ioctl(fd, EvdevABI.EVIOCSFF, &effect) {
        case .success:
            effectID = effect.id
            uploaded = m
        case .failure(let e):
            throw error(e, "uploading the rumble effect (EVIOCSFF)")
        }
    }

    private func play(_ now: UInt64) throws {
        try writeFF(value: 1)
        playing = true
        lastPlay = now
    }

    private func stopMotors(_ now: UInt64) throws {
        guard playing else { return }
        playing = false
        try writeFF(value: 0)
    }

    private func writeFF(value: Int32) throws {
        var event = input_event()
        event.type = EvdevABI.EV_FF
        event.code = UInt16(bitPattern: effectID)
        event.value = value
        let result = withUnsafeBytes(of: &event) { system.write(fd, $0) }
        if case .failure(let e) = result { throw error(e, value == 0 ? "stopping the rumble effect" : "playing the rumble effect") }
    }

    private func error(_ e: SystemErrno, _ what: String) -> Error {
        if EvdevError.isGone(e) { return HapticDeviceDisconnected(device: deviceDescription, othersContinue: false) }
        return EvdevError.refused(device: deviceDescription, driver: padRumble.driver.isEmpty ? nil : padRumble.driver, what: what, errno: e)
    }
}
