import Foundation
import HapSyncHapticOutput

/// Checks what a real pad faked over uhid received from its kernel driver (hid-playstation,
/// hid-sony) while `hapsync play` drove it: decoded from the pad's output reports, the way the pad
/// reads them (Tests/VM/fake-hid-pad.c logs each with CLOCK_MONOTONIC ns and its motors).
///
/// - Probe: the driver asked for the model's feature reports, answered at their exact sizes.
/// - Motors follow `RumbleMapping.standard` within the driver's quantization: both drivers send
///   strong >> 8 (the left, heavy motor) and weak >> 8. For each steady level of the trace, the pad
///   plays exactly that pair `settle` after it.
/// - Nothing left running: the last motor report is 0/0, after the pattern's last level.
/// - The rate limit: at most 100 ms / interval + 3 changes to new motor values in any 100 ms
///   (ff-memless's timer and the driver's work queue can bunch them; a stop is never held back).
/// - Latency from each level HapSync applied to the first report carrying it, reported.
final class HIDPadCheck {
    /// What differs between the pads checked.
    struct Model {
        /// As the VM test names it ("dualsense").
        var name: String
        /// The output report's flag bits (byte 1) that say it carries the motors.
        var motorFlags: Int
        /// The feature reports the driver must ask for at probe, with the sizes answered.
        var probe: [(id: Int, size: Int)]
        /// The size of the output report the driver sends (63 for the DualSense, 32 for the
        /// DualShock 4 on USB).
        var outputSize: Int
    }

    /// DualSense on USB (hid-playstation): compatible vibration and haptics select.
    static let dualsense = Model(name: "dualsense", motorFlags: 0x03, probe: [(0x09, 20), (0x20, 64), (0x05, 41)], outputSize: 63)
    /// DualShock 4 on USB (hid-sony in 6.1): the rumble flag.
    static let dualshock4 = Model(name: "dualshock4", motorFlags: 0x01, probe: [(0x02, 37), (0x81, 7), (0xa3, 49)], outputSize: 32)

    /// One line of the fake DualSense's log.
    struct Event: Decodable {
        var t: UInt64
        var kind: String
        var report: Int?
        var size: Int?
        var flags0: Int?
        var weak: Int?
        var strong: Int?
        var what: String?

        enum CodingKeys: String, CodingKey {
            case t = "t_ns"
            case kind = "event"
            case report, size, flags0, weak, strong, what
        }
    }

    let model: Model
    let interval: UInt64
    /// A tap's burst length (`--burst-ms`): levels that near a tap are not steady.
    let burst: UInt64
    /// How long after a level the pad must play it: ff-memless's timer and the driver's work queue
    /// under software emulation (the fake uinput pad's check allows 60 ms too).
    let settle: UInt64 = 60_000_000
    /// Timer slack when comparing report gaps with the rate limit (HZ=250: 4 ms ticks).
    let slack: UInt64 = 4_000_000
    var failures: [String] = []
    var report: [String] = []

    init(model: Model, interval: UInt64, burst: UInt64) {
        self.model = model
        self.interval = interval
        self.burst = burst
    }

    /// Reads the log at `path`; a line that is not an event names the file and line.
    static func log(_ path: String) throws -> [Event] {
        try LogCheck.jsonLines(path, of: "a fake-hid-pad event")
    }

    /// The output reports that carry the motors (the model's flag bits set), in time order.
    func motorReports(_ pad: [Event]) -> [Event] {
        pad.filter { $0.kind == "output" && $0.report == nil && ($0.flags0 ?? 0) & model.motorFlags != 0 }
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
    /// asked for, and every output report the driver sent was the model's motor report at its size.
    func checkLog(_ pad: [Event], run: String) {
        for e in pad where e.kind == "error" { failures.append("\(run): the fake pad failed: \(e.what ?? "?")") }
        for e in pad where e.kind == "get-report" && (e.size ?? 0) == 0 {
            failures.append("\(run): the driver asked for feature report 0x\(String(e.report ?? -1, radix: 16)), which the fake pad does not know")
        }
        for e in pad where e.kind == "output" && (e.report != nil || e.size != model.outputSize) {
            failures.append("\(run): an output report that is not the \(model.outputSize)-byte motor report: \(e)")
        }
    }

    func check(pad: [Event], trace: [TraceRecord.Command]) {
        checkLog(pad, run: "play")
        // 1. The probe, as the real pad answers it.
        let asked = pad.filter { $0.kind == "get-report" }.map { ($0.report ?? -1, $0.size ?? -1) }
        for (id, size) in model.probe {
            expect(asked.contains { $0 == (id, size) }, "the driver should ask for feature report 0x\(String(id, radix: 16)) (\(size) bytes); asked \(asked)")
        }
        let motorReports = motorReports(pad)
        report.append("probe: feature reports \(asked.map { "0x\(String($0.0, radix: 16)) (\($0.1) B)" }.joined(separator: ", ")); "
                      + "output reports: \(pad.filter { $0.kind == "output" }.count), \(motorReports.count) with motors")

        // 2. Steady levels: `settle` after a level that holds, the pad plays its mapping >> 8.
        let map = RumbleMapping.standard.map
        // The engine's final stop-all ends the last level as a level 0 would.
        let commands = trace.filter { $0.kind == .level || $0.kind == .transient || $0.kind == .stopAll }
        let steadyLevels = LogCheck.steadyLevels(commands, settle: settle, burst: burst, interval: interval, slack: slack)
        let steady = steadyLevels.count
        var latencies: [UInt64] = []
        for (c, next) in steadyLevels {
            let want = map(c.intensity, c.sharpness)
            let wanted = (strong: Int(want.strong >> 8), weak: Int(want.weak >> 8))
            let plays = motors(motorReports, at: c.appliedNs + settle)
            expect(plays == wanted, "level \(c.intensity)/\(c.sharpness) at \(c.appliedNs): the pad should play strong \(wanted.strong), weak \(wanted.weak) "
                   + "(the mapping >> 8) \(settle / 1_000_000) ms later, plays \(plays.strong), \(plays.weak)")
            // Latency only where the level changed what the pad plays: the first report carrying
            // it before the next command.
            if motors(motorReports, at: c.appliedNs) != wanted,
               let first = motorReports.first(where: { $0.t >= c.appliedNs && $0.t < next && ($0.strong ?? 0, $0.weak ?? 0) == wanted }) {
                latencies.append(first.t - c.appliedNs)
            }
        }
        expect(steady >= 3, "the pattern should have at least 3 steady levels to check, found \(steady)")
        report.append("steady levels checked against the mapping >> 8: \(steady)")
        if !latencies.isEmpty {
            let sorted = latencies.sorted()
            let p = { (q: Double) in Double(sorted[min(sorted.count - 1, Int(q * Double(sorted.count - 1)))]) / 1e6 }
            report.append(String(format: "HapSync applied -> output report: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d levels)",
                                 p(0.5), p(0.99), p(1), sorted.count))
        }

        // 3. Nothing left running.
        let last = motorReports.last
        expect(last.map { $0.strong == 0 && $0.weak == 0 } ?? false, "the last motor report should turn both motors off, is \(String(describing: last))")
        // After the pattern's last level (the engine's final stop-all comes later, and finds the
        // motors already off: it changes nothing the driver would report).
        // And promptly: within `settle` of it, not when the effect's 250 ms replay length runs
        // out (which would turn the motors off with no stop from HapSync at all).
        if let end = trace.last(where: { $0.kind == .level })?.appliedNs, let last {
            expect(last.t >= end && last.t - end <= settle,
                   "the motors should go off within \(settle / 1_000_000) ms of the pattern's last level; "
                   + (last.t >= end ? "\((last.t - end) / 1_000_000) ms" : "before it"))
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
    /// the evdev file, stops the effect, and the driver turns both motors off within the dead-man
    /// window (250 ms).
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
        // Within 100 ms: the kernel stops the effect when the evdev file closes. (The 250 ms replay
        // length would turn them off too, with nothing stopping them: that must not pass.)
        expect(off.map { $0.t - mark <= 100_000_000 } ?? false,
               "killed run: both motors should be off within 100 ms of the SIGKILL; \(off.map { "\(($0.t - mark) / 1_000_000) ms" } ?? "never")")
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
