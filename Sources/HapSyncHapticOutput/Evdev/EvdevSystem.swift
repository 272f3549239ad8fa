import CLinuxInput
import Glibc
import HapSyncRuntime
import HapSyncSystem

/// The one chokepoint through which the evdev backend touches the system: open, ioctl, write,
/// close and listing /dev/input. Tests replace it with a mock that records every call and answers
/// like a device would, so exact syscall sequences can be checked without hardware.
///
/// Every call returns the raw result or a `SystemErrno`; the real implementation retries EINTR with
/// `SystemErrno.retryingInterrupts`.
public protocol EvdevSystem: AnyObject {
    /// open(2); `readWrite` false opens read-only (for listing devices).
    func open(_ path: String, readWrite: Bool) -> Result<Int32, SystemErrno>
    /// ioctl(2) with a pointer argument.
    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Result<Int32, SystemErrno>
    /// ioctl(2) with an int argument passed by value.
    func ioctl(_ fd: Int32, _ request: UInt, value: Int32) -> Result<Int32, SystemErrno>
    /// write(2).
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, SystemErrno>
    /// close(2).
    func close(_ fd: Int32)
    /// Paths of /dev/input/event*, sorted by number.
    func eventDevicePaths() -> [String]
    /// The kernel driver behind an event node, as its module is named (`hid-playstation`,
    /// `hid-sony`, `xpad`); nil for a device with no driver of its own (uinput, virtual).
    func driver(ofEventDevice path: String) -> String?
}

/// The real system calls.
public final class LinuxEvdevSystem: EvdevSystem {
    /// Makes the (stateless) system.
    public init() {}

    /// open(2) with O_CLOEXEC (and O_RDWR or O_RDONLY).
    public func open(_ path: String, readWrite: Bool) -> Result<Int32, SystemErrno> {
        SystemErrno.retryingInterrupts { Glibc.open(path, (readWrite ? O_RDWR : O_RDONLY) | O_CLOEXEC) }
    }
    /// ioctl(2) with a pointer. Does not allocate or lock.
    public func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Result<Int32, SystemErrno> {
        SystemErrno.retryingInterrupts { hapsync_ioctl_ptr(fd, request, argument) }
    }
    /// ioctl(2) with a value. Does not allocate or lock.
    public func ioctl(_ fd: Int32, _ request: UInt, value: Int32) -> Result<Int32, SystemErrno> {
        SystemErrno.retryingInterrupts { hapsync_ioctl_int(fd, request, value) }
    }
    /// write(2). Does not allocate or lock.
    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, SystemErrno> {
        SystemErrno.retryingInterrupts { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }
    /// close(2).
    public func close(_ fd: Int32) { _ = Glibc.close(fd) }
    /// /dev/input/event* sorted by number.
    public func eventDevicePaths() -> [String] {
        guard let dir = opendir("/dev/input") else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("event"), Int(name.dropFirst(5)) != nil { names.append(name) }
        }
        return names.sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }.map { "/dev/input/" + $0 }
    }
    /// From sysfs: /sys/class/input/eventN/device (the input device), its parent device (the HID
    /// device or USB interface), that one's driver and the driver's module (`hid_playstation`
    /// read as `hid-playstation`; a driver built into the kernel has no module: its own name).
    /// A link to the node (/dev/input/by-id/...) is followed first.
    /// Read through `SysfsTree`, the one sysfs reader.
    public func driver(ofEventDevice path: String) -> String? {
        let sysfs = SysfsTree()
        let driver = InputDeviceProbe.sysfsPath(ofEventDevice: path) + "/device/device/driver"
        // What a link leads to, by its last component: the driver's directory, its module's.
        func leadsTo(_ link: String) -> String? {
            guard case .success(let target) = sysfs.resolve(link) else { return nil }
            return target.split(separator: "/").last.map(String.init)
        }
        guard let name = leadsTo(driver) else { return nil }
        return String((leadsTo(driver + "/module") ?? name).map { $0 == "_" ? "-" : $0 })
    }
}

/// Kernel ABI numbers and sizes the backend relies on (checked by tests).
public enum EvdevABI {
    /// EVIOCSFF (0x40304580 on x86_64).
    public static var EVIOCSFF: UInt { hapsync_EVIOCSFF() }
    /// EVIOCRMFF (0x40044581).
    public static var EVIOCRMFF: UInt { hapsync_EVIOCRMFF() }
    /// EVIOCGEFFECTS (0x80044584).
    public static var EVIOCGEFFECTS: UInt { hapsync_EVIOCGEFFECTS() }
    /// EVIOCGBIT(EV_FF, 16): the force-feedback capability bits.
    public static var EVIOCGBIT_FF: UInt { hapsync_EVIOCGBIT(UInt32(EV_FF), 16) }
    /// EVIOCGNAME(256).
    public static var EVIOCGNAME: UInt { hapsync_EVIOCGNAME(256) }
    /// EVIOCGID: bus, vendor, product, version.
    public static var EVIOCGID: UInt { hapsync_EVIOCGID() }
    /// EV_FF event type.
    public static let EV_FF = UInt16(0x15)
    /// FF_RUMBLE effect type and capability bit.
    public static let FF_RUMBLE = UInt16(0x50)
    /// sizeof(struct input_event): 24 on x86_64.
    public static var inputEventSize: Int { MemoryLayout<input_event>.size }
    /// sizeof(struct ff_effect): 48 on x86_64.
    public static var ffEffectSize: Int { MemoryLayout<ff_effect>.size }
}
