import CLinuxInput
import Glibc
import HapSyncSystem

/// A fake rumble gamepad on /dev/uinput, for testing HapSync against a real kernel.
///
/// It creates an input device with FF_RUMBLE and 16 effect slots, answers the kernel's effect
/// upload and erase requests (UI_BEGIN/END_FF_UPLOAD, UI_BEGIN/END_FF_ERASE), and logs every
/// upload, erase, play and stop as JSON Lines with the kernel's CLOCK_MONOTONIC timestamp. Like a
/// driver it runs a simulated motor: on when an effect plays, off at stop, erase, or when the
/// effect's replay length runs out ("expired"). SIGUSR1 logs a "mark" (the test uses it to record
/// the moment it kills the player); SIGTERM removes the device and exits.
final class FakePad {
    struct Effect { var strong: UInt16; var weak: UInt16; var length: UInt16 }

    let fd: Int32
    let log: UnsafeMutablePointer<FILE>
    var effects: [Int16: Effect] = [:]
    var motor: (id: Int16, until: UInt64?)?

    init(logPath: String) throws {
        guard let log = fopen(logPath, "w") else { throw Failure("cannot open log \(logPath)") }
        self.log = log
        fd = open("/dev/uinput", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw Failure("cannot open /dev/uinput: \(SystemErrno.current.message) (is uinput.ko loaded?)") }
        try check(hapsync_ioctl_int(fd, hapsync_UI_SET_EVBIT(), Int32(EV_FF)), "UI_SET_EVBIT(EV_FF)")
        try check(hapsync_ioctl_int(fd, hapsync_UI_SET_FFBIT(), Int32(FF_RUMBLE)), "UI_SET_FFBIT(FF_RUMBLE)")
        var setup = uinput_setup()
        setup.id.bustype = UInt16(BUS_VIRTUAL)
        setup.id.vendor = 0x1209
        setup.id.product = 0x4853
        setup.ff_effects_max = 16
        withUnsafeMutableBytes(of: &setup.name) { buffer in
            let name = Array("HapSync Fake Rumble Pad".utf8)
            buffer.copyBytes(from: name)
        }
        try check(hapsync_ioctl_ptr(fd, hapsync_UI_DEV_SETUP(), &setup), "UI_DEV_SETUP")
        try check(hapsync_ioctl_int(fd, hapsync_UI_DEV_CREATE(), 0), "UI_DEV_CREATE")
    }

    func check(_ rc: Int32, _ what: String) throws {
        if rc < 0 { throw Failure("\(what) failed: \(SystemErrno.current.message)") }
    }

    /// The /dev/input/eventN node the kernel made for us.
    func eventNode() -> String? {
        var sysname = [CChar](repeating: 0, count: 64)
        guard hapsync_ioctl_ptr(fd, hapsync_UI_GET_SYSNAME(64), &sysname) >= 0 else { return nil }
        let dir = "/sys/devices/virtual/input/" + String(decoding: sysname.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let d = opendir(dir) else { return nil }
        defer { closedir(d) }
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("event") { return "/dev/input/" + name }
        }
        return nil
    }

    func write(_ line: String) {
        fputs(line + "\n", log)
        fflush(log)
    }

    static func monotonic() -> UInt64 { SystemClock.monotonicNanoseconds() }

    func motorOff(_ t: UInt64, reason: String) {
        guard let m = motor else { return }
        write("{\"t_ns\":\(t),\"event\":\"motor-off\",\"id\":\(m.id),\"reason\":\"\(reason)\"}")
        motor = nil
    }

    /// Serves the device until SIGTERM.
    func run(stop: () -> Bool, mark: () -> Bool) {
        write("{\"t_ns\":\(Self.monotonic()),\"event\":\"ready\",\"device\":\"\(eventNode() ?? "?")\"}")
        var events = [input_event](repeating: input_event(), count: 16)
        while !stop() {
            if mark() { write("{\"t_ns\":\(Self.monotonic()),\"event\":\"mark\"}") }
            var timeout: Int32 = 100
            if let until = motor?.until {
                let now = Self.monotonic()
                if until <= now { motorOff(until, reason: "expired"); continue }
                timeout = Int32(min(100, (until - now) / 1_000_000 + 1))
            }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, timeout) > 0 else { continue }
            let n = events.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { continue }
            for e in events.prefix(n / MemoryLayout<input_event>.size) { handle(e) }
        }
        motorOff(Self.monotonic(), reason: "exit")
        _ = hapsync_ioctl_int(fd, hapsync_UI_DEV_DESTROY(), 0)
        close(fd)
        fclose(log)
    }

    func handle(_ e: input_event) {
        let t = UInt64(e.time.tv_sec) * 1_000_000_000 + UInt64(e.time.tv_usec) * 1000
        if e.type == UInt16(EV_UINPUT), e.code == UInt16(UI_FF_UPLOAD) {
            var up = uinput_ff_upload()
            up.request_id = UInt32(bitPattern: e.value)
            guard hapsync_ioctl_ptr(fd, hapsync_UI_BEGIN_FF_UPLOAD(), &up) >= 0 else { return }
            let id = up.effect.id
            let new = effects[id] == nil
            let r = up.effect.u.rumble
            effects[id] = Effect(strong: r.strong_magnitude, weak: r.weak_magnitude, length: up.effect.replay.length)
            write("{\"t_ns\":\(t),\"event\":\"upload\",\"id\":\(id),\"new\":\(new),\"type\":\(up.effect.type),\"strong\":\(r.strong_magnitude),\"weak\":\(r.weak_magnitude),\"length_ms\":\(up.effect.replay.length)}")
            // An update in place of the playing effect keeps the motor running (with the new
            // magnitudes) until its replay time runs out: nothing to change here.
            up.retval = 0
            _ = hapsync_ioctl_ptr(fd, hapsync_UI_END_FF_UPLOAD(), &up)
        } else if e.type == UInt16(EV_UINPUT), e.code == UInt16(UI_FF_ERASE) {
            var er = uinput_ff_erase()
            er.request_id = UInt32(bitPattern: e.value)
            guard hapsync_ioctl_ptr(fd, hapsync_UI_BEGIN_FF_ERASE(), &er) >= 0 else { return }
            write("{\"t_ns\":\(t),\"event\":\"erase\",\"id\":\(er.effect_id)}")
            if motor?.id == Int16(er.effect_id) { motorOff(t, reason: "erase") }
            effects[Int16(er.effect_id)] = nil
            er.retval = 0
            _ = hapsync_ioctl_ptr(fd, hapsync_UI_END_FF_ERASE(), &er)
        } else if e.type == UInt16(EV_FF), Int32(e.code) < 16 {
            let id = Int16(e.code)
            if e.value > 0 {
                let length = effects[id]?.length ?? 0
                write("{\"t_ns\":\(t),\"event\":\"play\",\"id\":\(id),\"count\":\(e.value)}")
                motor = (id, length == 0 ? nil : t + UInt64(length) * 1_000_000)
            } else {
                write("{\"t_ns\":\(t),\"event\":\"stop\",\"id\":\(id)}")
                if motor?.id == id { motorOff(t, reason: "stop") }
            }
        }
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
