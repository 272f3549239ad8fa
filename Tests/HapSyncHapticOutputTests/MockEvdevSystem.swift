import CLinuxInput
import Glibc
import HapSyncHapticOutput
import HapSyncRuntime
import HapSyncSystem

/// A pretend evdev device behind the syscall chokepoint: answers capability queries, assigns
/// effect ids, records every call decoded, and fails on demand.
final class MockEvdevSystem: EvdevSystem {
    enum Call: Equatable, CustomStringConvertible {
        case open(String, readWrite: Bool)
        case getName, getFFBits, getEffects, getID
        case upload(id: Int16, strong: UInt16, weak: UInt16, length: UInt16)
        case erase(Int32)
        case play(code: UInt16, value: Int32)
        case close

        var description: String {
            switch self {
            case .open(let p, let rw): return "open(\(p), \(rw ? "rw" : "ro"))"
            case .getName: return "EVIOCGNAME"
            case .getFFBits: return "EVIOCGBIT(EV_FF)"
            case .getEffects: return "EVIOCGEFFECTS"
            case .getID: return "EVIOCGID"
            case .upload(let id, let s, let w, let l): return "EVIOCSFF(id \(id), strong \(s), weak \(w), length \(l) ms)"
            case .erase(let id): return "EVIOCRMFF(\(id))"
            case .play(let code, let value): return "write(EV_FF, code \(code), value \(value))"
            case .close: return "close"
            }
        }
    }

    var calls: [Call] = []
    var name = "Mock Rumble Pad"
    var hasRumble = true
    var slots: Int32 = 16
    var openErrno: Int32?
    var writeErrno: Int32?
    /// What EVIOCSFF fails with (a driver refusing the effect), nil to accept it.
    var uploadErrno: Int32?
    /// What EVIOCGBIT fails with (a pad gone between open and probe), nil to answer.
    var probeErrno: Int32?
    var assignedID: Int16 = 3
    var devices = ["/dev/input/event0", "/dev/input/event1"]
    var rumbleDevices: Set<String> = ["/dev/input/event1"]
    /// EVIOCGID's answer (bus, vendor, product), nil to fail it.
    var ids: [String: (bus: UInt16, vendor: UInt16, product: UInt16)] = [:]
    /// What sysfs says drives each node.
    var drivers: [String: String] = [:]
    private var openedPath = ""

    func open(_ path: String, readWrite: Bool) -> Result<Int32, SystemErrno> {
        calls.append(.open(path, readWrite: readWrite))
        if let e = openErrno, readWrite { return .failure(SystemErrno(e)) }
        openedPath = path
        return .success(7)
    }

    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Result<Int32, SystemErrno> {
        switch request {
        case EvdevABI.EVIOCGNAME:
            calls.append(.getName)
            let bytes = Array(name.utf8) + [0]
            argument.copyMemory(from: bytes, byteCount: bytes.count)
        case EvdevABI.EVIOCGBIT_FF:
            calls.append(.getFFBits)
            if let e = probeErrno { return .failure(SystemErrno(e)) }
            let bits = argument.assumingMemoryBound(to: UInt8.self)
            let rumble = devices.count > 1 ? rumbleDevices.contains(openedPath) && hasRumble : hasRumble
            if rumble { bits[Int(EvdevABI.FF_RUMBLE) / 8] |= 1 << (EvdevABI.FF_RUMBLE % 8) }
        case EvdevABI.EVIOCGEFFECTS:
            calls.append(.getEffects)
            argument.assumingMemoryBound(to: Int32.self).pointee = slots
        case EvdevABI.EVIOCGID:
            calls.append(.getID)
            guard let id = ids[openedPath] else { return .failure(SystemErrno(ENOTTY)) }
            let out = argument.assumingMemoryBound(to: input_id.self)
            out.pointee.bustype = id.bus
            out.pointee.vendor = id.vendor
            out.pointee.product = id.product
        case EvdevABI.EVIOCSFF:
            let effect = argument.assumingMemoryBound(to: ff_effect.self)
            calls.append(.upload(id: effect.pointee.id, strong: effect.pointee.u.rumble.strong_magnitude,
                                 weak: effect.pointee.u.rumble.weak_magnitude, length: effect.pointee.replay.length))
            if let e = uploadErrno { return .failure(SystemErrno(e)) }
            if effect.pointee.id == -1 { effect.pointee.id = assignedID }
        default:
            fatalError("unexpected ioctl 0x\(String(request, radix: 16))")
        }
        return .success(0)
    }

    func ioctl(_ fd: Int32, _ request: UInt, value: Int32) -> Result<Int32, SystemErrno> {
        precondition(request == EvdevABI.EVIOCRMFF, "unexpected ioctl 0x\(String(request, radix: 16))")
        calls.append(.erase(value))
        return .success(0)
    }

    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, SystemErrno> {
        precondition(bytes.count == MemoryLayout<input_event>.size)
        let event = bytes.load(as: input_event.self)
        precondition(event.type == EvdevABI.EV_FF)
        if let e = writeErrno { return .failure(SystemErrno(e)) }
        calls.append(.play(code: event.code, value: event.value))
        return .success(bytes.count)
    }

    func close(_ fd: Int32) { calls.append(.close) }

    func eventDevicePaths() -> [String] { devices }

    func driver(ofEventDevice path: String) -> String? { drivers[path] }

    /// The calls after the open sequence, then forgets them.
    func take() -> [Call] {
        defer { calls = [] }
        return calls
    }
}
