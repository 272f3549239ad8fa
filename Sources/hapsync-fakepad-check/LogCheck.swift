import Foundation
import HapSyncHapticOutput

/// A log that cannot be read, with the file and line.
struct CheckError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Checks a fake-pad log against the trace of the `hapsync play` that drove it, from the outside:
/// what the kernel passed to the device must follow HapSync's documented rumble behaviour.
final class LogCheck {
    /// One line of `hapsync-fakepad`'s log: what the kernel passed to the device (fields a line's
    /// event does not carry read as 0, false or empty).
    struct PadEvent: Decodable {
        var t: UInt64
        var kind: String
        var id: Int
        var new: Bool
        var strong: UInt16
        var weak: UInt16
        var lengthMs: Int
        var reason: String

        enum CodingKeys: String, CodingKey {
            case t = "t_ns"
            case kind = "event"
            case lengthMs = "length_ms"
            case id, new, strong, weak, reason
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            t = try c.decode(UInt64.self, forKey: .t)
            kind = try c.decode(String.self, forKey: .kind)
            id = try c.decodeIfPresent(Int.self, forKey: .id) ?? -1
            new = try c.decodeIfPresent(Bool.self, forKey: .new) ?? false
            strong = try c.decodeIfPresent(UInt16.self, forKey: .strong) ?? 0
            weak = try c.decodeIfPresent(UInt16.self, forKey: .weak) ?? 0
            lengthMs = try c.decodeIfPresent(Int.self, forKey: .lengthMs) ?? 0
            reason = try c.decodeIfPresent(String.self, forKey: .reason) ?? ""
        }
    }

    let interval: UInt64
    let burst: UInt64
    let window: UInt64
    /// Kernel timestamps land a little after HapSync's own clock readings; this much slack (ns)
    /// is allowed when comparing gaps (TCG emulation can delay a system call by a few ms).
    let slack: UInt64 = 3_000_000
    var failures: [String] = []
    var report: [String] = []

    /// Whether the pattern was made to exercise the rules (rumble-steps.ahap: several steady
    /// levels, many more level commands than the rate limit lets through); false for other code
    /// (Apple's samples), where only the rules themselves are checked.
    let exercising: Bool

    init(interval: UInt64, burst: UInt64, window: UInt64, exercising: Bool = true) {
        self.exercising = exercising
        self.interval = interval
        self.burst = burst
        self.window = window
    }

    /// The events of the fake pad's log at `path`; a line that is not one fails naming file and line.
    static func pad(_ path: String) throws -> [PadEvent] {
        try jsonLines(path, of: "a fake-pad event")
    }

    /// Each non-empty line of the JSON Lines log at `path` decoded as `T` (the fake pads' logs); a
    /// line that is not one fails naming the file, the line (blank ones counted) and `what` it
    /// should be.
    static func jsonLines<T: Decodable>(_ path: String, of what: String) throws -> [T] {
        let decoder = JSONDecoder()
        var items: [T] = []
        for (i, line) in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.isEmpty {
            do { items.append(try decoder.decode(T.self, from: Data(line.utf8))) } catch {
                throw CheckError("\(path):\(i + 1): not \(what) (\(error))")
            }
        }
        return items
    }

    /// The levels of `commands` (levels, taps and what else ends a level, in time order) steady
    /// enough to check what a device plays: the next command comes at least `settle` + 20 ms
    /// later, and no tap's burst (`burst` + `interval` + `slack` after it) reaches into it. Each
    /// with the time of the command after it (`UInt64.max` for the last).
    static func steadyLevels(_ commands: [TraceRecord.Command], settle: UInt64, burst: UInt64, interval: UInt64,
                             slack: UInt64) -> [(level: TraceRecord.Command, next: UInt64)] {
        commands.enumerated().compactMap { k, c in
            guard c.kind == .level else { return nil }
            let next = k + 1 < commands.count ? commands[k + 1].appliedNs : UInt64.max
            let nearTap = commands.contains { $0.kind == .transient && $0.appliedNs + burst + interval + slack >= c.appliedNs && $0.appliedNs <= c.appliedNs + settle }
            return next >= c.appliedNs + settle + 20_000_000 && !nearTap ? (c, next) : nil
        }
    }

    /// The commands of the trace at `path` (the trace's own record type reads it).
    static func trace(_ path: String) throws -> [TraceRecord.Command] {
        try TraceRecord.read(contentsOf: path).commands
    }

    func expect(_ ok: Bool, _ what: @autoclosure () -> String) {
        if !ok { failures.append(what()) }
    }

    /// The device's state at `t`: the magnitudes last uploaded and whether the motor runs.
    func state(_ pad: [PadEvent], at t: UInt64) -> (strong: UInt16, weak: UInt16, on: Bool) {
        var m: (UInt16, UInt16) = (0, 0)
        var on = false
        for e in pad where e.t <= t {
            switch e.kind {
            case "upload": m = (e.strong, e.weak)
            case "play": on = true
            case "stop", "erase", "motor-off": on = false
            default: break
            }
        }
        return (m.0, m.1, on)
    }

    /// Run 1: a whole playback. `mapping` is HapSync's standard mapping.
    func checkPlayback(pad: [PadEvent], trace: [TraceRecord.Command]) {
        let map = RumbleMapping.standard.map
        let uploads = pad.filter { $0.kind == "upload" }
        // 1. One effect, uploaded once, then updated in place.
        let ids = Set(uploads.map(\.id))
        expect(uploads.filter(\.new).count == 1, "expected exactly one new upload, got \(uploads.filter(\.new).count)")
        expect(ids.count == 1, "every upload should use the same effect id, got \(ids.sorted())")
        expect(uploads.allSatisfy { $0.lengthMs == Int(window / 1_000_000) }, "every upload should carry the \(window / 1_000_000) ms dead-man replay length")
        report.append("uploads: \(uploads.count) (1 new, \(uploads.count - 1) in place), effect id \(ids.first ?? -1)")

        // 2. Steady levels: `settle` after a level that holds, the device plays exactly its mapping.
        // (60 ms: an effect upload to a uinput device waits for its userspace driver, here the fake
        // pad under software emulation, which has been seen to take 18 ms to answer.)
        let settle: UInt64 = 60_000_000
        let commands = trace.filter { $0.kind == .level || $0.kind == .transient }
        let steadyLevels = Self.steadyLevels(commands, settle: settle, burst: burst, interval: interval, slack: slack)
        let steady = steadyLevels.count
        for (c, _) in steadyLevels {
            let s = state(pad, at: c.appliedNs + settle)
            let want = map(c.intensity, c.sharpness)
            if want == (0, 0) {
                expect(!s.on, "level \(c.intensity)/\(c.sharpness) at \(c.appliedNs): motor should be off \(settle / 1_000_000) ms later")
            } else {
                expect(s.on && s.strong == want.strong && s.weak == want.weak,
                       "level \(c.intensity)/\(c.sharpness) at \(c.appliedNs): device should play \(want) \(settle / 1_000_000) ms later, plays \(s.on ? "\((s.strong, s.weak))" : "nothing")")
            }
        }
        expect(!exercising || steady >= 3, "the pattern should have at least 3 steady levels to check, found \(steady)")
        report.append("steady levels checked against the mapping: \(steady)")

        // 3. Transients: a burst with the mapping of level + tap, lasting at least the burst length.
        var taps = 0
        for c in commands where c.kind == .transient {
            taps += 1
            let levelBefore = commands.last { $0.kind == .level && $0.appliedNs <= c.appliedNs }
            let li = levelBefore?.intensity ?? 0, ls = levelBefore?.sharpness ?? 0
            let sum = li + c.intensity
            let want = map(min(1, sum), sum > 0 ? (li * ls + c.intensity * c.sharpness) / sum : 0)
            guard let start = uploads.first(where: { $0.t >= c.appliedNs && $0.strong == want.strong && $0.weak == want.weak }) else {
                failures.append("transient at \(c.appliedNs): no upload of \(want)")
                continue
            }
            let end = pad.first { $0.t > start.t && ($0.kind == "stop" || ($0.kind == "upload" && ($0.strong, $0.weak) != want)) }
            // HapSync holds a burst from when its limiter lets it through (the transient's time,
            // or one interval after the upload before) on its own clock. The kernel's timestamp
            // of the burst's upload can land late (5.9 ms seen in CI under emulation), which
            // shortens the span measured from it; so the burst is measured from the earlier of
            // that timestamp and the time the limiter allowed, which no late timestamp can move
            // earlier than HapSync's own.
            let before = uploads.last { $0.t < start.t }
            let allowed = max(c.appliedNs, before.map { $0.t + interval } ?? 0)
            let from = min(start.t, allowed)
            let lasted = (end?.t ?? UInt64.max) - from
            expect(lasted + slack >= burst, "transient at \(c.appliedNs): burst lasted \(lasted / 1000) µs, less than \(burst / 1_000_000) ms")
            report.append("transient burst \(want): \(end.map { String(($0.t - from) / 1000) + " µs" } ?? "open")")
        }
        expect(taps >= 1, "the pattern should have transients to check")

        // 4. Rate limit: uploads at least the interval apart. A kernel timestamp taken late (the
        // emulated guest stalls the ioctl by a few ms; 4.6 ms seen in CI) shortens every span
        // that starts at it by as much, and lengthens the one before. So every run of n
        // consecutive gaps (n up to 8) must span n intervals less one such lateness (twice the
        // slack): a late timestamp passes, a limiter that lets uploads through faster fails the
        // longer runs.
        let gaps = zip(uploads.dropFirst(), uploads).map { $0.t - $1.t }
        if let minGap = gaps.min() {
            for n in 1...min(8, gaps.count) {
                let spans = (0...(gaps.count - n)).map { gaps[$0..<($0 + n)].reduce(0, +) }
                let shortest = spans.min() ?? .max
                expect(shortest + 2 * slack >= UInt64(n) * interval,
                       "\(n + 1) uploads within \(shortest / 1000) µs, less than \(n) interval(s) of \(interval / 1_000_000) ms")
            }
            let levels = trace.filter { $0.kind == .level }.count
            expect(!exercising || levels > uploads.count * 2, "the pattern should send far more level commands (\(levels)) than uploads (\(uploads.count)) to exercise the rate limit")
            report.append("\(levels) level commands became \(uploads.count) uploads; closest uploads \(minGap / 1000) µs apart (limit \(interval / 1_000_000) ms, \(slack / 1_000_000) ms slack for kernel timestamps)")
        }

        // 5. Dead-man: the motor never ran out while HapSync wanted it on; refreshes kept it going.
        let expired = pad.filter { $0.kind == "motor-off" && $0.reason == "expired" }
        expect(expired.isEmpty, "the motor ran out of replay time during playback \(expired.count) time(s): refresh missing")
        report.append("plays (including dead-man refreshes): \(pad.filter { $0.kind == "play" }.count), expiries during playback: \(expired.count)")

        // 6. The end: stopped and erased, nothing played after.
        if let last = trace.last {
            let after = pad.filter { $0.t >= last.appliedNs }
            expect(after.contains { $0.kind == "erase" }, "the effect should be erased after playback")
            let eraseAt = pad.last { $0.kind == "erase" }?.t ?? 0
            expect(!pad.contains { $0.kind == "play" && $0.t > eraseAt }, "nothing may play after the erase")
            expect(!state(pad, at: UInt64.max).on, "the motor must be off at the end")
            report.append("end: " + after.map { $0.kind + ($0.reason.isEmpty ? "" : "(\($0.reason))") }.joined(separator: ", "))
        }
    }

    /// Run 2: the player was killed with SIGKILL right after the pad logged its "mark". Events are
    /// taken in log order after the mark (the kernel's cleanup can carry a timestamp a hair before
    /// the pad got round to logging the mark).
    func checkKilled(pad: [PadEvent]) {
        guard let markIndex = pad.firstIndex(where: { $0.kind == "mark" }) else {
            failures.append("killed run: no mark in the pad log")
            return
        }
        let mark = pad[markIndex]
        let after = pad[(markIndex + 1)...]
        expect(state(pad, at: mark.t).on, "killed run: the motor should have been running when the player was killed")
        let off = after.first { $0.kind == "motor-off" || $0.kind == "stop" || $0.kind == "erase" }
        let erase = after.first { $0.kind == "erase" }
        func delay(_ e: PadEvent?) -> String { e.map { $0.t > mark.t ? "\(($0.t - mark.t) / 1000) µs" : "0 µs" } ?? "never" }
        expect(off != nil && (off!.t <= mark.t || off!.t - mark.t <= window + 50_000_000),
               "killed run: motor still on \(window / 1_000_000) ms after SIGKILL")
        expect(erase != nil, "killed run: the kernel should erase the dead process's effect")
        expect(!after.contains { $0.kind == "play" }, "killed run: nothing may play after the kill")
        report.append("killed run: motor off \(delay(off)) after SIGKILL (\(off?.kind ?? "-")\(off?.reason.isEmpty == false ? "/" + off!.reason : "")), effect erased \(delay(erase)) after")
    }
}
