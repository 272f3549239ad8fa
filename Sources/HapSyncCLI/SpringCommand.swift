import Foundation
import HapSyncAHAP
import HapSyncCore

/// `hapsync spring --response S --damping Z`: when a spring animation peaks.
enum SpringCommand {
    static let response = Option<Double>(required: "response", "S", .decimal("seconds", .above(0)),
                                         help: "period of the undamped oscillation, seconds")
    static let damping = Option<Double>(required: "damping", "Z", .decimal(nil, .atLeast(0)), help: "damping fraction ζ")

    static let command = Command(
        name: "spring", summary: "when a spring animation (response, damping) peaks, to time a haptic on it",
        about: """
            When a spring animation (SwiftUI's response / dampingFraction) overshoots, from the
            damped-oscillator equations, so a haptic can land on the visual peak:
            ω₀ = 2π/response, ω_d = ω₀·√(1−ζ²), first peak at π/ω_d, overshoot e^(−ζπ/√(1−ζ²)),
            target first reached at (π − arccos ζ)/ω_d. A spring with ζ ≥ 1 has no peak.
            """,
        groups: [OptionGroup([response, damping, CommonOptions.json])], positionals: .none, run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let response = parsed[Self.response], damping = parsed[Self.damping]
        let console = context.console
        let spring = SpringTiming(response: response, dampingFraction: damping)
        let ms = { (x: Double) in String(format: "%.1f ms", x * 1000) }
        let t90 = spring.time(toReach: 0.9), settle = spring.settlingTime()
        if parsed[CommonOptions.json] {
            let doc: JSONValue = .object([
                ("response", .number(response)), ("dampingFraction", .number(damping)),
                ("naturalFrequency", .number(spring.naturalFrequency)),
                ("dampedFrequency", spring.dampedFrequency.map { .number($0) } ?? JSONValue(.null)),
                ("peakTime", spring.peakTime.map { .number($0) } ?? JSONValue(.null)),
                ("overshoot", .number(spring.overshoot)),
                ("firstCrossing", spring.firstCrossing.map { .number($0) } ?? JSONValue(.null)),
                ("time90", .number(t90)), ("settlingTime2Percent", settle.isFinite ? .number(settle) : JSONValue(.null)),
            ])
            console.out(JSONWriter.string(doc) + "\n")
            return
        }
        var out = "spring: response \(response) s, damping fraction \(damping)\n"
        out += "  natural frequency  ω₀ = \(String(format: "%.3f", spring.naturalFrequency)) rad/s\n"
        if let peak = spring.peakTime, let wd = spring.dampedFrequency, let cross = spring.firstCrossing {
            out += "  damped frequency   ω_d = \(String(format: "%.3f", wd)) rad/s\n"
            out += "  peak (overshoot)   \(ms(peak)), \(String(format: "%.1f", spring.overshoot * 100)) % past the target  ← start the haptic here\n"
            out += "  target reached     \(ms(cross)) (first crossing)\n"
        } else {
            out += "  no overshoot: ζ ≥ 1 approaches the target without passing it; no peak to land on\n"
        }
        out += "  90 % of the way    \(ms(t90))\n"
        out += "  settled (±2 %)     \(settle.isFinite ? ms(settle) : "never (no damping)")\n"
        console.out(out)
    }
}
