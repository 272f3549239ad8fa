import Foundation
import HapSyncCore
import HapSyncHapticOutput

/// Checks what a real pad faked over uhid received from its kernel driver (hid-playstation,
/// hid-sony, hid-nintendo, hid-microsoft) while `hapsync play` drove it: decoded from the pad's
/// output reports, the way the pad reads them (Tests/VM/fake-hid-pad.c logs each with
/// CLOCK_MONOTONIC ns, and its motors in the report's own units).
///
/// - Probe: the driver asked for the model's feature reports, answered at their exact sizes.
/// - Motors follow the mapping HapSync uses for the pad's driver (`PadRumble`), scaled as the
///   driver scales it (`Model.scale`): for each steady level of the trace, the pad plays exactly
///   that pair `settle` after it. Rumble flags exactly as the driver sets them for this pad.
/// - Nothing left running: the last motor report is 0/0, after the pattern's last level.
/// - The rate limit: at most 100 ms / interval + 3 changes to new motor values in any 100 ms
///   (ff-memless's timer and the driver's work queue can bunch them; a stop is never held back).
/// - Latency from each level HapSync applied to the first report carrying it, reported.
final class HIDPadCheck {
    /// What differs between the pads checked.
    struct Model {
        /// As the VM test names it ("dualsense").
        var name: String
        /// The kernel driver that serves it (whose `PadRumble` mapping HapSync plays).
        var driver: String
        /// The valid-flag bits (valid flag 0) a report sets when it carries the motors (any of
        /// them: the report is a rumble report), and exactly which of them it must set; 0: the
        /// report has no flags, each motor report is a rumble report.
        var rumbleFlags: (any: Int, exactly: Int)
        /// A bit valid flag 2 must have in a rumble report (the DualSense's vibration v2), or 0.
        var rumbleFlag2: Int = 0
        /// The feature reports the driver must ask for at probe, with the sizes answered.
        var probe: [(id: Int, size: Int)]
        /// The size of the motor report the driver sends; nil where it varies (the fake checks
        /// each report's form itself).
        var outputSize: Int?
        /// Output reports other than motor reports the driver may send (a handshake, subcommands).
        var otherReports: Set<Int> = []
        /// How the driver scales FF_RUMBLE's (strong, weak) magnitudes into the report, and that
        /// rule in words for the report's lines.
        var scale: @Sendable (UInt16) -> Int
        var scaleRule: String
        /// How long after a level the pad must play it: ff-memless's timer and the driver's work
        /// queue under software emulation (the fake uinput pad's check allows 60 ms too).
        var settle: UInt64 = 60_000_000
    }

    static let byteScale: @Sendable (UInt16) -> Int = { Int($0 >> 8) }
    /// DualSense on USB (hid-playstation), an early firmware: vibration v1 (compatible vibration
    /// and haptics select in valid flag 0).
    static let dualsense = Model(name: "dualsense", driver: "hid-playstation", rumbleFlags: (0x03, 0x03),
                                 probe: [(0x09, 20), (0x20, 64), (0x05, 41)], outputSize: 63, scale: byteScale, scaleRule: ">> 8")
    /// DualSense on Bluetooth (hid-playstation), a current firmware: vibration v2 (haptics select
    /// alone in valid flag 0, compatible vibration 2 in valid flag 2); report 0x31 with its CRC.
    static let dualsenseBluetooth = Model(name: "dualsense-bt", driver: "hid-playstation", rumbleFlags: (0x03, 0x02), rumbleFlag2: 0x04,
                                          probe: [(0x09, 20), (0x20, 64), (0x05, 41)], outputSize: 78, scale: byteScale, scaleRule: ">> 8")
    /// DualShock 4 on USB (hid-sony in 6.1): the rumble flag.
    static let dualshock4 = Model(name: "dualshock4", driver: "hid-sony", rumbleFlags: (0x01, 0x01),
                                  probe: [(0x02, 37), (0x81, 7), (0xa3, 49)], outputSize: 32, scale: byteScale, scaleRule: ">> 8")
    /// Xbox One S controller on Bluetooth (hid-microsoft): report 0x03, enable bits 3 in every
    /// report (a stop too), each motor 0-100, u16 × 100 / 65535 truncated (`ms_play_effect`).
    static let xboxBluetooth = Model(name: "xboxbt", driver: "hid-microsoft", rumbleFlags: (0x03, 0x03), probe: [], outputSize: 9,
                                     scale: { Int(UInt32($0) * 100 / 65535) }, scaleRule: "× 100 / 65535")
    /// hid-nintendo's HD-rumble amplitudes (joycon_rumble_amplitudes' amp column, 0-1003).
    static let joyconAmplitudes = [
        0, 10, 12, 14, 17, 20, 24, 28, 33, 40, 47, 56, 67, 80, 95, 112, 117, 123, 128, 134, 140, 146, 152, 159, 166, 173, 181,
        189, 198, 206, 215, 225, 230, 235, 240, 245, 251, 256, 262, 268, 273, 279, 286, 292, 298, 305, 311, 318, 325, 332, 340,
        347, 355, 362, 370, 378, 387, 395, 404, 413, 422, 431, 440, 450, 460, 470, 480, 491, 501, 512, 524, 535, 547, 559, 571,
        584, 596, 609, 623, 636, 650, 665, 679, 694, 709, 725, 741, 757, 773, 790, 808, 825, 843, 862, 881, 900, 920, 940, 960,
        981, 1003,
    ]
    /// Switch Pro Controller on USB (hid-nintendo): HD-rumble frames in report 0x10 and in every
    /// subcommand (0x01), no flags; each grip's amplitude is magnitude × 1003 / 65535, rounded up
    /// to the driver's table (`joycon_set_rumble`, `joycon_find_rumble_amp`). The driver sends
    /// a change one report late (its queue sends the frame before it first) and no faster than
    /// every 25 ms, right after an input report: a level is played within 150 ms. (Fed faster than
    /// it sends, its 8-frame queue falls behind: HapSync's 10 ms pace put the pattern's stop
    /// 155-204 ms late, which the 150 ms here fails; the rate-limit count cannot, as the driver's
    /// own pace keeps it.)
    static let switchPro = Model(name: "switchpro", driver: "hid-nintendo", rumbleFlags: (0, 0), probe: [], outputSize: nil,
                                 otherReports: [0x80, 0x01],
                                 scale: { magnitude in
                                     let amp = Int(UInt32(magnitude) * 1003 / 65535)
                                     guard amp > 0 else { return 0 }
                                     return joyconAmplitudes.dropFirst().first { $0 >= amp } ?? 1003
                                 },
                                 scaleRule: "× 1003 / 65535 up to hid-nintendo's amplitude table", settle: 150_000_000)
    /// Every model the VM test fakes, by the name its option takes (`--dualsense-bt`).
    static let models = [dualsense, dualsenseBluetooth, dualshock4, xboxBluetooth, switchPro]

    /// One line of the fake pad's log.
    struct Event: Decodable {
        var t: UInt64
        var kind: String
        var report: Int?
        /// A get-report's kind: "feature" or "input".
        var type: String?
        var size: Int?
        var motors: Int?
        var bad: Int?
        var why: String?
        var flags0: Int?
        var flags2: Int?
        var weak: Int?
        var strong: Int?
        var what: String?

        enum CodingKeys: String, CodingKey {
            case t = "t_ns"
            case kind = "event"
            case report, type, size, motors, bad, why, flags0, flags2, weak, strong, what
        }
    }

    let model: Model
    let interval: UInt64
    /// A tap's burst length (`--burst-ms`): levels that near a tap are not steady.
    let burst: UInt64
    /// How long after a level the pad must play it (`Model.settle`).
    var settle: UInt64 { model.settle }
    /// Timer slack when comparing report gaps with the rate limit (HZ=250: 4 ms ticks).
    let slack: UInt64 = 4_000_000
    var failures: [String] = []
    var report: [String] = []

    /// A check of `model`'s logs; `interval` is HapSync's rate limit as configured (the driver's
    /// own pace, `PadRumble.minimumUpdateInterval`, where that is longer).
    init(model: Model, interval: UInt64, burst: UInt64) {
        self.model = model
        self.interval = max(interval, PadRumble.of(driver: model.driver).minimumUpdateInterval)
        self.burst = burst
    }

    /// Reads the log at `path`; a line that is not an event names the file and line.
    static func log(_ path: String) throws -> [Event] {
        try LogCheck.jsonLines(path, of: "a fake-hid-pad event")
    }

    /// The output reports that carry the motors for the pad to play (any of the model's rumble
    /// flags set), in time order.
    func motorReports(_ pad: [Event]) -> [Event] {
        pad.filter { $0.kind == "output" && $0.motors == 1 && (model.rumbleFlags.any == 0 || ($0.flags0 ?? 0) & model.rumbleFlags.any != 0) }
    }

    func expect(_ ok: Bool, _ what: @autoclosure () -> String) {
        if !ok { failures.append(what()) }
    }

    /// The motors (strong, weak) the pad plays at `t`: the last motor report before it.
    func motors(_ reports: [Event], at t: UInt64) -> (strong: Int, weak: Int) {
        let last = reports.last { $0.t <= t }
        return (last?.strong ?? 0, last?.weak ?? 0)
    }

    /// What every run's log must show: the fake pad met no error, answered every feature report
    /// asked for, every output report the driver sent was the model's motor report at its size
    /// (or one of its other reports), well formed, and each rumble report set exactly the flags
    /// the driver sets for this pad.
    func checkLog(_ pad: [Event], run: String) {
        for e in pad where e.kind == "error" { failures.append("\(run): the fake pad failed: \(e.what ?? "?")") }
        for e in pad where e.kind == "get-report" && (e.size ?? 0) == 0 {
            failures.append("\(run): the driver asked for \(e.type ?? "?") report 0x\(String(e.report ?? -1, radix: 16)), which the fake pad does not know")
        }
        for e in pad where e.kind == "output" {
            if e.bad == 1 {
                failures.append("\(run): a malformed motor report at \(e.t): \(e.why ?? "?")")
            } else if e.motors == 1 ? model.outputSize.map({ e.size != $0 }) ?? false : !model.otherReports.contains(e.report ?? -1) {
                failures.append("\(run): an output report that is not the \(model.outputSize.map { "\($0)-byte " } ?? "")motor report: report \(e.report ?? -1), \(e.size ?? -1) bytes")
            }
        }
        for e in motorReports(pad) where model.rumbleFlags.any != 0 {
            let flags = (e.flags0 ?? 0) & model.rumbleFlags.any
            expect(flags == model.rumbleFlags.exactly && (e.flags2 ?? 0) & model.rumbleFlag2 == model.rumbleFlag2,
                   "\(run): a rumble report at \(e.t) with valid flags 0x\(String(flags, radix: 16))/flag 2 0x\(String(e.flags2 ?? 0, radix: 16)), "
                   + "the driver sets 0x\(String(model.rumbleFlags.exactly, radix: 16))" + (model.rumbleFlag2 != 0 ? " and 0x\(String(model.rumbleFlag2, radix: 16)) in flag 2" : ""))
        }
    }

    func check(pad: [Event], trace: [TraceRecord.Command]) {
        checkLog(pad, run: "play")
        // 1. The probe, as the real pad answers it.
        let asked = pad.filter { $0.kind == "get-report" && $0.type == "feature" }.map { ($0.report ?? -1, $0.size ?? -1) }
        for (id, size) in model.probe {
            expect(asked.contains { $0 == (id, size) }, "the driver should ask for feature report 0x\(String(id, radix: 16)) (\(size) bytes); asked \(asked)")
        }
        let motorReports = motorReports(pad)
        let gets = pad.filter { $0.kind == "get-report" }.map { "\($0.type ?? "?") 0x\(String($0.report ?? -1, radix: 16)) (\($0.size ?? -1) B)" }
        report.append("probe: reports asked for: \(gets.isEmpty ? "none" : gets.joined(separator: ", ")); "
                      + "output reports: \(pad.filter { $0.kind == "output" }.count), \(motorReports.count) with motors")

        // 2. Steady levels: `settle` after a level that holds, the pad plays its mapping as the
        // driver scales it.
        let map = PadRumble.of(driver: model.driver).mapping.map
        // The engine's final stop-all ends the last level as a level 0 would.
        let commands = trace.filter { $0.kind == .level || $0.kind == .transient || $0.kind == .stopAll }
        let steadyLevels = LogCheck.steadyLevels(commands, settle: settle, burst: burst, interval: interval, slack: slack)
        let steady = steadyLevels.count
        var latencies: [UInt64] = []
        for (c, next) in steadyLevels {
            let want = map(c.intensity, c.sharpness)
            let wanted = (strong: model.scale(want.strong), weak: model.scale(want.weak))
            let plays = motors(motorReports, at: c.appliedNs + settle)
            expect(plays == wanted, "level \(c.intensity)/\(c.sharpness) at \(c.appliedNs): the pad should play strong \(wanted.strong), weak \(wanted.weak) "
                   + "(the mapping \(model.scaleRule)) \(settle / 1_000_000) ms later, plays \(plays.strong), \(plays.weak)")
            // Latency only where the level changed what the pad plays: the first report carrying
            // it before the next command.
            if motors(motorReports, at: c.appliedNs) != wanted,
               let first = motorReports.first(where: { $0.t >= c.appliedNs && $0.t < next && ($0.strong ?? 0, $0.weak ?? 0) == wanted }) {
                latencies.append(first.t - c.appliedNs)
            }
        }
        expect(steady >= 3, "the pattern should have at least 3 steady levels to check, found \(steady)")
        report.append("steady levels checked against the mapping \(model.scaleRule): \(steady)")
        if !latencies.isEmpty {
            let sorted = latencies.sorted()
            let ms = { (p: Double) in Double(sorted.nearestRankPercentile(p) ?? 0) / 1e6 }
            report.append(String(format: "HapSync applied -> output report: p50 %.2f ms, max %.2f ms (%d levels)",
                                 ms(50), ms(100), sorted.count))
        }

        // 3. Nothing left running: after the pattern's last level the motors go off, and stay
        // off (a driver may send the off state again: hid-nintendo does, up to five times). The
        // engine's final stop-all comes later and finds them off already: it changes nothing the
        // driver would report. And promptly: within `settle` of that level, not when the effect's
        // 250 ms replay length runs out (which would turn them off with no stop from HapSync).
        let last = motorReports.last
        expect(last.map { $0.strong == 0 && $0.weak == 0 } ?? false, "the last motor report should turn both motors off, is \(String(describing: last))")
        if let end = trace.last(where: { $0.kind == .level })?.appliedNs {
            let after = motorReports.filter { $0.t >= end }
            let off = after.firstIndex { $0.strong == 0 && $0.weak == 0 }
            expect(off.map { after[$0].t - end <= settle } ?? false,
                   "the motors should go off within \(settle / 1_000_000) ms of the pattern's last level; "
                   + (off.map { "\((after[$0].t - end) / 1_000_000) ms" } ?? "never"))
            if let off {
                report.append(String(format: "motors off %.1f ms after the pattern's last level", Double(after[off].t - end) / 1e6))
                let again = after[off...].first { $0.strong != 0 || $0.weak != 0 }
                expect(again == nil, "the motors should stay off after the pattern's end; on again at \(again?.t ?? 0)")
            }
        }

        // 4. The rate limit, as the pad sees it: changes reach it through ff-memless's timer and
        // the driver's work queue, so one can come late and bunch with the next (a gap of 5 ms
        // between two uploads 10 ms apart has been seen). Held instead to a count: in any 100 ms at
        // most 100 ms / interval + 3 changes to new values (a stop is never held back, so changes
        // to off do not count). A flood (an update per command) would be ten times that.
        var changes: [Event] = []
        for r in motorReports where changes.last.map({ ($0.strong, $0.weak) != (r.strong, r.weak) }) ?? true { changes.append(r) }
        let moving = changes.filter { ($0.strong ?? 0, $0.weak ?? 0) != (0, 0) }
        let window: UInt64 = 100_000_000
        let allowed = Int(window / interval) + 3
        let busiest = moving.indices.map { i in moving[i...].prefix { $0.t < moving[i].t + window }.count }.max() ?? 0
        expect(busiest <= allowed, "\(busiest) motor changes within 100 ms, over the \(allowed) the \(interval / 1_000_000) ms rate limit allows")
        let gaps = zip(moving.dropFirst(), moving).map { $0.t - $1.t }
        report.append("motor changes: \(changes.count), at most \(busiest) in any 100 ms (limit \(allowed)), closest \(String(format: "%.1f", Double(gaps.min() ?? 0) / 1e6)) ms apart")
    }

    /// The player killed with SIGKILL while the motors ran (at the log's mark): the kernel, closing
    /// the evdev file, stops the effect, and the driver turns both motors off before the replay
    /// length could have run out (half the dead-man window after the kill).
    func checkKilled(pad: [Event]) {
        guard let mark = pad.first(where: { $0.kind == "mark" })?.t else {
            failures.append("killed run: no mark in the pad's log (the kill was not recorded)")
            return
        }
        checkLog(pad, run: "killed run")
        let motorReports = motorReports(pad)
        let before = motors(motorReports, at: mark)
        expect(before != (0, 0), "killed run: the motors should run when the player is killed")
        let off = motorReports.first { $0.t >= mark && $0.strong == 0 && $0.weak == 0 }
        // The kernel stops the effect when the evdev file closes. The replay length would turn the
        // motors off too, with nothing stopping them: that must not pass. HapSync re-triggers the
        // effect every half window, so the replay could run out no sooner than half a window
        // after the kill; the stop must come before that. (Not a tighter bound: under software
        // emulation on a loaded host, hid-nintendo's stop has taken 107 ms.)
        let deadline = EvdevBackend.Configuration(path: "").deadManWindow / 2
        expect(off.map { $0.t - mark < deadline } ?? false,
               "killed run: both motors should be off within \(deadline / 1_000_000) ms of the SIGKILL, before the replay could run out; \(off.map { "\(($0.t - mark) / 1_000_000) ms" } ?? "never")")
        expect(motorReports.last.map { $0.strong == 0 && $0.weak == 0 } ?? false, "killed run: the last motor report should be off")
        if let off { report.append(String(format: "killed run: motors off %.1f ms after the SIGKILL", Double(off.t - mark) / 1e6)) }
    }

    /// The pad unplugged mid-play (UHID_DESTROY while the motors ran): the pad is gone, and the
    /// trace beside it carries on to the pattern's end.
    func checkUnplugged(pad: [Event], trace: [TraceRecord.Command]) {
        guard let gone = pad.first(where: { $0.kind == "destroyed" }) else {
            failures.append("unplugged run: the fake pad never destroyed itself")
            return
        }
        checkLog(pad, run: "unplugged run")
        let motorReports = motorReports(pad)
        expect(motors(motorReports, at: gone.t) != (0, 0), "unplugged run: the motors should run when the pad is unplugged")
        // The pattern's own levels go on being played (into the trace) after the pad went away.
        let after = trace.filter { $0.kind == .level && $0.appliedNs > gone.t + 100_000_000 }
        expect(!after.isEmpty, "unplugged run: the trace should go on with the pattern's levels after the pad went away")
        let lastLevel = after.last?.appliedNs ?? gone.t
        report.append("unplugged run: \(after.count) levels traced after the unplug, the last \(String(format: "%.2f", Double(lastLevel - gone.t) / 1e9)) s after it")
    }
}
