import CLinuxInput
import Glibc
import HapSyncRuntime
import HapSyncSystem

/// What an input device says about itself: name, whether it can rumble, how many effects it holds.
public struct InputDeviceInfo: Sendable, Equatable {
    /// The device node.
    public var path: String
    /// EVIOCGNAME.
    public var name: String
    /// FF_RUMBLE in EVIOCGBIT(EV_FF).
    public var hasRumble: Bool
    /// EVIOCGEFFECTS.
    public var effectSlots: Int
    /// Whether it opens read-write (needed to play effects); when not, why.
    public var openProblem: String?
    /// EVIOCGID: its bus, vendor and product, when the device answered.
    public var id: InputDeviceID?
    /// The kernel driver behind it (`hid-playstation`), nil for uinput and virtual devices.
    public var driver: String?

    /// A device as `InputDeviceProbe.list` describes it.
    public init(path: String, name: String, hasRumble: Bool, effectSlots: Int, openProblem: String? = nil,
                id: InputDeviceID? = nil, driver: String? = nil) {
        self.path = path
        self.name = name
        self.hasRumble = hasRumble
        self.effectSlots = effectSlots
        self.openProblem = openProblem
        self.id = id
        self.driver = driver
    }

    /// The pad model its ids name (`GamepadModel.known`), if HapSync knows it.
    public var model: GamepadModel? { id.flatMap { GamepadModel.named(vendor: $0.vendor, product: $0.product) } }
}

/// An input device's identity as the kernel reports it (EVIOCGID's struct input_id).
public struct InputDeviceID: Sendable, Equatable {
    /// The bus type (BUS_USB 0x03, BUS_BLUETOOTH 0x05, BUS_VIRTUAL 0x06, ...).
    public var bus: UInt16
    /// The USB or Bluetooth vendor id.
    public var vendor: UInt16
    /// The product id.
    public var product: UInt16

    /// A device with these ids.
    public init(bus: UInt16, vendor: UInt16, product: UInt16) {
        self.bus = bus
        self.vendor = vendor
        self.product = product
    }

    /// The bus by name: "USB", "Bluetooth", "virtual", or its number.
    public var busName: String {
        switch bus {
        case 0x03: return "USB"
        case 0x05: return "Bluetooth"
        case 0x06: return "virtual"
        default: return "bus 0x" + String(bus, radix: 16)
        }
    }

    /// "054c:0ce6".
    public var vendorProduct: String { GamepadModel.idText(vendor: vendor, product: product) }
}

/// Reads device capabilities through `EvdevSystem`.
public enum InputDeviceProbe {
    /// The udev rule that gives the user at the seat read-write access to game controllers'
    /// event nodes (as Assets/udev/70-hapsync.rules has it): only joysticks, never keyboards.
    public static let udevRule = #"SUBSYSTEM=="input", KERNEL=="event*", ENV{ID_INPUT_JOYSTICK}=="1", TAG+="uaccess""#

    /// Name, rumble bit and effect slots of an open device.
    static func probe(fd: Int32, system: EvdevSystem) throws -> (name: String, hasRumble: Bool, effectSlots: Int) {
        var nameBuffer = [UInt8](repeating: 0, count: 256)
        let name: String
        switch nameBuffer.withUnsafeMutableBytes({ system.ioctl(fd, EvdevABI.EVIOCGNAME, $0.baseAddress!) }) {
        case .success: name = String(decoding: nameBuffer.prefix { $0 != 0 }, as: UTF8.self)
        case .failure: name = "(unnamed)"
        }
        var bits = [UInt8](repeating: 0, count: 16)
        if case .failure(let e) = bits.withUnsafeMutableBytes({ system.ioctl(fd, EvdevABI.EVIOCGBIT_FF, $0.baseAddress!) }) {
            throw EvdevError.system(path: "", what: "reading force-feedback capabilities (EVIOCGBIT)", errno: e)
        }
        let rumble = Int(EvdevABI.FF_RUMBLE)
        let hasRumble = bits[rumble / 8] & (1 << UInt8(rumble % 8)) != 0
        var slots: Int32 = 0
        if case .failure(let e) = system.ioctl(fd, EvdevABI.EVIOCGEFFECTS, &slots) {
            throw EvdevError.system(path: "", what: "reading the effect count (EVIOCGEFFECTS)", errno: e)
        }
        return (name, hasRumble, Int(slots))
    }

    /// Every /dev/input/event* with its name, rumble capability, slots and whether it opens
    /// read-write.
    public static func list(system: EvdevSystem = LinuxEvdevSystem()) -> [InputDeviceInfo] {
        system.eventDevicePaths().map { path in
            var problem: String?
            var fd: Int32 = -1
            switch system.open(path, readWrite: true) {
            case .success(let f): fd = f
            case .failure(let e):
                problem = EvdevError.opening(path, e).description
                if case .success(let f) = system.open(path, readWrite: false) { fd = f }
            }
            let driver = system.driver(ofEventDevice: path)
            guard fd >= 0 else {
                return InputDeviceInfo(path: path, name: "?", hasRumble: false, effectSlots: 0, openProblem: problem, driver: driver)
            }
            defer { system.close(fd) }
            let info = try? probe(fd: fd, system: system)
            var id = input_id()
            let ids = withUnsafeMutableBytes(of: &id) { system.ioctl(fd, EvdevABI.EVIOCGID, $0.baseAddress!) }
            return InputDeviceInfo(path: path, name: info?.name ?? "?", hasRumble: info?.hasRumble ?? false,
                                   effectSlots: info?.effectSlots ?? 0, openProblem: problem,
                                   id: (try? ids.get()).map { _ in InputDeviceID(bus: id.bustype, vendor: id.vendor, product: id.product) },
                                   driver: driver)
        }
    }

    /// The first device that can rumble and opens read-write (`evdev:auto`).
    public static func firstRumbleDevice(system: EvdevSystem = LinuxEvdevSystem()) -> InputDeviceInfo? {
        firstRumbleDevice(in: list(system: system))
    }

    /// The device `evdev:auto` chooses among `devices`: the first that can rumble, opens
    /// read-write and holds an effect.
    public static func firstRumbleDevice(in devices: [InputDeviceInfo]) -> InputDeviceInfo? {
        devices.first { $0.hasRumble && $0.openProblem == nil && $0.effectSlots > 0 }
    }

    /// The device an `evdev:` output names: `path` itself, or for `auto` the first rumble device
    /// (`chosen` then says which). Throws `.noRumbleDevice` when `auto` finds none.
    public static func device(named path: String, system: EvdevSystem = LinuxEvdevSystem()) throws(EvdevError)
        -> (path: String, chosen: InputDeviceInfo?) {
        guard path == HapticOutputSpec.auto else { return (path, nil) }
        guard let found = firstRumbleDevice(system: system) else { throw .noRumbleDevice }
        return (found.path, found)
    }

    // MARK: - Where a node sits in sysfs

    /// The sysfs path of an event node: "/dev/input/event5" (or "event5") is
    /// "/sys/class/input/event5"; a link to the node (/dev/input/by-id/...) is followed first
    /// (`eventNodePath`).
    public static func sysfsPath(ofEventDevice path: String) -> String {
        let node = eventNodePath(path)
        return "/sys/class/input/" + (node.split(separator: "/").last.map(String.init) ?? node)
    }

    /// The event node a path names: itself, or where a link to it (/dev/input/by-id/...,
    /// /dev/input/by-path/...) leads; the path as given when it cannot be resolved.
    public static func eventNodePath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The device an event node's input device belongs to, links resolved: for a pad, its HID
    /// device ("/sys/devices/.../1-4:1.3/0003:054C:0CE6.0002", from
    /// /sys/class/input/eventN/device/device), which every node of that pad (its buttons, motion
    /// sensors, touchpad) shares; or why it cannot be read.
    public static func parentDevice(ofEventDevice path: String, sysfs: SysfsReading) -> Result<String, SysfsProblem> {
        sysfs.resolve(sysfsPath(ofEventDevice: path) + "/device/device")
    }

    /// The USB device an event node's pad is (the first directory above its HID device with
    /// idVendor and idProduct), or that it is on Bluetooth, virtual, or not to be found (why).
    public static func usbDevice(ofEventDevice path: String, sysfs: SysfsReading) -> USBDeviceLookup {
        sysfs.usbDevice(above: sysfsPath(ofEventDevice: path) + "/device/device")
    }
}

/// What goes wrong with the pads HapSync opens or looks for, in words a user can act on: evdev
/// devices, and a DualSense's sink that `waveform:auto` looks for beside them.
public enum EvdevError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The device could not be opened.
    case opening(String, SystemErrno)
    /// The device has no FF_RUMBLE.
    case notRumbleCapable(path: String, name: String)
    /// The device reports no effect slots.
    case noEffectSlots(path: String, name: String)
    /// `evdev:auto` found nothing.
    case noRumbleDevice
    /// Another system call failed.
    case system(path: String, what: String, errno: SystemErrno)
    /// The pad's kernel driver refused a rumble call (`what`, e.g. uploading the effect) on
    /// `device` ("/dev/input/event5 (its name)"), served by `driver` when known.
    case refused(device: String, driver: String?, what: String, errno: SystemErrno)
    /// `waveform:auto` found no DualSense sink to play on, or several it cannot choose between, or
    /// one it cannot drive: the text says what it looked for and found, and what to do
    /// (`WaveformAutoSink.Failure` in HapSyncOutputs writes it).
    case waveformAutoSink(String)

    /// Whether a failed call's errno says the device is gone (unplugged): ENODEV, ENOENT, ENXIO,
    /// EIO, or EBADF (its file closed under it). The one list for opening and for playing.
    public static func isGone(_ e: SystemErrno) -> Bool {
        e.code == ENODEV || e.code == ENOENT || e.code == ENXIO || e.code == EIO || e.code == EBADF
    }

    /// A sentence for the user, with how to fix it where there is a way.
    public var description: String {
        switch self {
        case .opening(let path, let e) where e.code == EACCES || e.code == EPERM:
            return "cannot open \(path): permission denied. Rumble needs read-write access to the device: "
                + "install HapSync's udev rule (Assets/udev/70-hapsync.rules in the source), /etc/udev/rules.d/70-hapsync.rules containing "
                + InputDeviceProbe.udevRule + ", then run 'sudo udevadm control --reload && sudo udevadm trigger' and plug the pad in again"
        case .opening(let path, let e) where Self.isGone(e):
            return "cannot open \(path): no such device (unplugged?); 'hapsync devices' lists what is there"
        case .opening(let path, let e):
            return "cannot open \(path): \(e)"
        case .notRumbleCapable(let path, let name):
            return "\(path) (\(name)) cannot rumble: it has no FF_RUMBLE force-feedback capability; 'hapsync devices' shows which devices can"
        case .noEffectSlots(let path, let name):
            return "\(path) (\(name)) reports no force-feedback effect slots"
        case .noRumbleDevice:
            return "no rumble-capable input device that this user can open; 'hapsync devices' lists devices and what is wrong with each"
        case .system(let path, let what, let e):
            return "\(path.isEmpty ? "" : path + ": ")\(what) failed: \(e)"
        case .refused(let device, let driver, let what, let e):
            return "\(device): \(what) failed: \(e): the pad's driver\(driver.map { " (" + $0 + ")" } ?? "") refused it; "
                + "'hapsync devices' shows the pad, its driver and whether it can rumble"
        case .waveformAutoSink(let text):
            return text
        }
    }
}
