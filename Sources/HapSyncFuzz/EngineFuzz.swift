import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport

/// The `player` target: the bytes drive a manual-clock engine through the player API, as a
/// hostile caller would (issue 26: a loop end of 2e10 s spun the scheduler; a 1 ms loop at rate
/// 100 wrapped 100,000 times a second; far-off times everywhere). Each 9 bytes are one call: an
/// opcode and a Double whose bits are taken as they come (NaN, infinities, 1e308, subnormals).
/// At most `maxCalls` calls are read and `maxSimulated` seconds simulated, each step at most 2 s
/// (the patterns compile at a 100 Hz control rate), so every input runs in bounded time.
/// Invariants, whatever the calls:
/// - every call returns (a throw is an answer), and so does every scheduling pass: the clock is
///   then moved to the next deadline, and a deadline that does not move on more than
///   `maxPassesPerStep` times in a row is a scheduler that spins (a crash here);
/// - a loop passes no faster than `HapticPatternPlayer.minimumLoopPeriod` allows: the taps at
///   pattern time 0 (one a pass, for the two patterns that have one) are at most 100 a simulated
///   second and two a step for each of those players, plus one for each start, resume or seek;
/// - every command the backend gets has finite times and an intensity and sharpness in 0...1.
public enum EngineFuzz {
    /// Scheduling passes one clock step may take before the scheduler counts as spinning.
    static let maxPassesPerStep = 100_000
    /// Players whose pattern has a tap at pattern time 0.
    static let playersWithATapAtZero = 2
    /// Calls read from one input.
    static let maxCalls = 1_024
    /// Engine seconds one input may move the clock on.
    static let maxSimulated = 30.0

    /// A backend that checks each command and counts them.
    final class CheckingBackend: HapticBackend, @unchecked Sendable {
        var count = 0
        /// Taps at pattern time 0: one a pass.
        var passes = 0
        var name: String { "fuzz" }
        func open() {}
        func apply(_ command: OutputCommand, appliedAt: UInt64) {
            precondition((0...1).contains(command.intensity) && (0...1).contains(command.sharpness),
                         "a command outside 0...1: \(command)")
            precondition(command.patternTime.isFinite || command.patternTime == -1, "a non-finite pattern time: \(command)")
            count += 1
            if command.kind == .transient, command.patternTime == 0 { passes += 1 }
        }
        func stopAll() {}
        func close() {}
    }

    /// The patterns the players play: taps, a continuous event under a curve, and a 1 ms tap.
    static let patterns: [AHAPPattern] = [
        try! AHAPPatternBuilder().transient(at: 0, intensity: 1).transient(at: 0.25, intensity: 0.5)
            .continuous(at: 0, duration: 0.5, intensity: 0.8, sharpness: 0.3, attack: 0, release: 0)
            .curve(.hapticIntensityControl, at: 0, points: [(0, 1), (0.5, 0.1)]).build(),
        try! AHAPPatternBuilder().transient(at: 0, intensity: 1).build(),
        try! AHAPPatternBuilder().continuous(at: 0.001, duration: 2, intensity: 1, attack: 0, release: 0).build(),
    ]

    /// Runs one input (see the type's note).
    public static func run(_ data: Data) {
        let bytes = [UInt8](data)
        let clock = ManualClock()
        let backend = CheckingBackend()
        guard let engine = try? HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, maxPlayers: 4)),
              (try? engine.start()) != nil else { return }
        let players = patterns.compactMap { try? engine.makeAdvancedPlayer(with: $0, options: RenderOptions(controlRate: 100)) }
        precondition(players.count == patterns.count, "the fixed patterns compile")
        var i = 0
        var budget = Budget()
        while i + 9 <= min(bytes.count, 9 * maxCalls) {
            let op = bytes[i]
            let bits = bytes[(i + 1)..<(i + 9)].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            let x = Double(bitPattern: bits)
            i += 9
            let p = players[Int(op >> 4) % players.count]
            // A time "now plus x" on the engine clock, and x as an offset or a span.
            let at = engine.currentTime + x
            switch op & 0x0F {
            case 0: budget.starts += 1; _ = try? p.start(atTime: at)
            case 1: try? p.stop(atTime: at)
            case 2: try? p.pause(atTime: at)
            case 3: budget.starts += 1; try? p.resume(atTime: at)
            case 4: budget.starts += 1; try? p.seek(toOffset: x)
            case 5: try? p.setLoop(true, end: x)
            case 6: p.loopEnd = x; p.loopEnabled = true
            case 7: try? p.setPlaybackRate(x)
            case 8: p.playbackRate = x
            case 9: try? p.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, min(1, abs(x.truncatingRemainder(dividingBy: 1))), time: abs(x))], atTime: at)
            case 10: try? p.scheduleParameterCurve(AHAPParameterCurve(.hapticSharpnessControl, time: x,
                                                                     controlPoints: [AHAPControlPoint(time: 0, value: 0), AHAPControlPoint(time: abs(x), value: 1)]), atTime: at)
            case 11: p.isMuted.toggle()
            case 12: p.loopEnabled = false
            default: step(engine, clock, backend, seconds: x, &budget)
            }
        }
        step(engine, clock, backend, seconds: 2, &budget)
        engine.stop()
    }

    /// Moves the clock on by `seconds` (its magnitude, at most 2 s, and no further than
    /// `maxSimulated` in all), through every deadline on the way, checking that the scheduler moves
    /// on and loops pass no faster than they may.
    /// What the calls so far allow in loop passes.
    struct Budget {
        var starts = 0
        var seconds = 0.0
        var steps = 0
        var passes: Int { playersWithATapAtZero * (Int(seconds * 100) + 2 * steps) + starts }
    }

    static func step(_ engine: HapticEngine, _ clock: ManualClock, _ backend: CheckingBackend, seconds: Double, _ budget: inout Budget) {
        let span = max(0, min(seconds.isFinite ? abs(seconds) : 2, 2, maxSimulated - budget.seconds))
        let end = clock.now() + UInt64(nanosecondsOf: span)
        budget.seconds += span
        budget.steps += 1
        let allowed = budget.passes
        var passes = 0
        var last = clock.now()
        while true {
            let next = engine.pump()
            if next > end || next == .max { break }
            if next > clock.now() {
                clock.set(nanoseconds: next)
                last = next
                passes = 0
            } else {
                passes += 1
                precondition(passes < maxPassesPerStep, "the scheduler does not move on: deadline \(next) at \(last)")
            }
            precondition(backend.passes <= allowed, "\(backend.passes) loop passes in \(budget.seconds) s (at most \(allowed))")
        }
        if clock.now() < end { clock.set(nanoseconds: end) }
        engine.pump()
    }
}
