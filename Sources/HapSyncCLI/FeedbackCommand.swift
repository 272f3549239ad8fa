import AHAP
import Foundation
import HapSyncCore

/// `hapsync feedback NAME`: plays a built-in SensoryFeedback style; `--list` shows them,
/// `--export DIR` writes each as an AHAP file.
enum FeedbackCommand {
    static let help = """
        USAGE: hapsync feedback NAME [--intensity X] [play options]
               hapsync feedback --list
               hapsync feedback --export DIR [--force]

        Plays one of SwiftUI's SensoryFeedback styles, built in as haptic patterns:
        success, warning, error, selection, impact-light, impact-medium, impact-heavy,
        impact-rigid, impact-solid, impact-soft, increase, decrease, start, stop,
        alignment, level-change, path-complete ("impact" alone is impact-medium).
        Apple does not publish these waveforms; the shapes follow how people describe
        them (see --list and README "Feedback styles").

        OPTIONS:
          --intensity X   an impact's intensity, 0-1 (default 1)
          --list          list the styles with their length and shape
          --export DIR    write every style as DIR/NAME.ahap (existing files are kept
                          unless --force)
          play options    --haptics, --at, --loop, --no-haptics, --intensity-scale, ...
                          as for 'hapsync play' (see 'hapsync play --help')
          -h, --help      show this help

        """

    static func run(_ args: [String], console: HapSyncCLI.Console) throws(CommandLineArguments.UsageError) -> Int32 {
        if args.isEmpty { throw .init(message: "feedback needs a NAME, --list or --export DIR") }
        if args.contains("-h") || args.contains("--help") { console.out(help); return HapSyncCLI.ExitCode.success }
        if args.first == "--list" {
            guard args.count == 1 else { throw .init(message: "--list takes nothing else") }
            for f in SensoryFeedback.all {
                let end = (try? PatternTimeline(pattern: f.pattern).end) ?? 0
                console.out(f.name.padding(toLength: 15, withPad: " ", startingAt: 0) + String(format: "%3.0f ms  ", end * 1000) + f.summary + "\n")
            }
            return HapSyncCLI.ExitCode.success
        }
        if args.first == "--export" {
            let parsed = try CommandLineArguments(args, options: [.init(name: "export", takesValue: true), .init(name: "force", takesValue: false)],
                                                  command: "hapsync feedback --export")
            guard parsed.positional.isEmpty, let dir = parsed.all("export").first else { throw .init(message: "--export takes one DIR") }
            return export(to: dir, force: parsed.has("force"), console: console)
        }
        let name = args[0]
        guard !name.hasPrefix("-") else { throw .init(message: "feedback needs the NAME first (got '\(name)'); --list shows the names") }
        var rest = Array(args.dropFirst())
        var intensity = 1.0
        if let i = rest.firstIndex(where: { $0 == "--intensity" || $0.hasPrefix("--intensity=") }) {
            let text: String
            if rest[i].hasPrefix("--intensity=") {
                text = String(rest[i].dropFirst("--intensity=".count))
                rest.remove(at: i)
            } else {
                guard i + 1 < rest.count else { throw .init(message: "option '--intensity' needs a value") }
                text = rest[i + 1]
                rest.removeSubrange(i...(i + 1))
            }
            guard let x = Double(text), x.isFinite, (0...1).contains(x) else {
                throw .init(message: "--intensity must be a number from 0 to 1, not '\(text)'")
            }
            intensity = x
        }
        guard let feedback = SensoryFeedback.named(name, intensity: intensity) else {
            let names = SensoryFeedback.all.map(\.name).joined(separator: ", ")
            throw .init(message: "unknown feedback '\(name)'; known: \(names)")
        }
        return try PlayCommand.run(rest, console: console, builtIn: (feedback.description, feedback.pattern))
    }

    /// Writes every style as DIR/NAME.ahap; never replaces a file unless `force`.
    static func export(to dir: String, force: Bool, console: HapSyncCLI.Console) -> Int32 {
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        } catch {
            console.err("error: cannot create \(dir): \(error.localizedDescription)\n")
            return HapSyncCLI.ExitCode.failure
        }
        var kept = 0
        for f in SensoryFeedback.all {
            let path = (dir as NSString).appendingPathComponent("\(f.name).ahap")
            if let problem = OutputTarget(path: path, force: force).write(AHAPWriter.string(from: f.pattern), console: console) {
                console.err("warning: \(problem)\n")
                kept += 1
            }
        }
        console.out("wrote \(SensoryFeedback.all.count - kept) of \(SensoryFeedback.all.count) styles to \(dir)\n")
        return kept == 0 ? HapSyncCLI.ExitCode.success : HapSyncCLI.ExitCode.failure
    }
}

/// `hapsync spring --response S --damping Z`: when a spring animation peaks.
enum SpringCommand {
    static let help = """
        USAGE: hapsync spring --response S --damping Z [--json]

        When a spring animation (SwiftUI's response / dampingFraction) overshoots, from the
        damped-oscillator equations, so a haptic can land on the visual peak:
        ω₀ = 2π/response, ω_d = ω₀·√(1−ζ²), first peak at π/ω_d, overshoot e^(−ζπ/√(1−ζ²)),
        target first reached at (π − arccos ζ)/ω_d. A spring with ζ ≥ 1 has no peak.

        OPTIONS:
          --response S   period of the undamped oscillation, seconds (> 0)
          --damping Z    damping fraction ζ (≥ 0)
          --json         one JSON object instead of text
          -h, --help     show this help

        """

    static func run(_ args: [String], console: HapSyncCLI.Console) throws(CommandLineArguments.UsageError) -> Int32 {
        let parsed = try CommandLineArguments(args, options: [.init(name: "response", takesValue: true), .init(name: "damping", takesValue: true),
                                                              .init(name: "json", takesValue: false)], command: "hapsync spring")
        if parsed.has("help") { console.out(help); return HapSyncCLI.ExitCode.success }
        guard parsed.positional.isEmpty else { throw .init(message: "spring takes no FILE (got '\(parsed.positional[0])')") }
        guard let r = parsed.all("response").first, let z = parsed.all("damping").first else {
            throw .init(message: "spring needs --response S and --damping Z")
        }
        guard let response = Double(r) else { throw .init(message: "--response must be a number of seconds, not '\(r)'") }
        guard let damping = Double(z) else { throw .init(message: "--damping must be a number, not '\(z)'") }
        let spring = SpringTiming(response: response, dampingFraction: damping)
        do { try spring.validate() } catch { throw .init(message: error.description) }
        let ms = { (x: Double) in String(format: "%.1f ms", x * 1000) }
        let t90 = spring.time(toReach: 0.9), settle = spring.settlingTime()
        if parsed.has("json") {
            let doc: JSONValue = .object([
                ("response", .number(response)), ("dampingFraction", .number(damping)),
                ("naturalFrequency", .number(spring.naturalFrequency)),
                ("dampedFrequency", spring.dampedFrequency.map { .number($0) } ?? JSONValue(.null)),
                ("peakTime", spring.peakTime.map { .number($0) } ?? JSONValue(.null)),
                ("overshoot", .number(spring.overshoot)),
                ("firstCrossing", spring.firstCrossing.map { .number($0) } ?? JSONValue(.null)),
                ("time90", .number(t90)), ("settlingTime2Percent", .number(settle)),
            ])
            console.out(JSONWriter.string(doc) + "\n")
            return HapSyncCLI.ExitCode.success
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
        out += "  settled (±2 %)     \(ms(settle))\n"
        console.out(out)
        return HapSyncCLI.ExitCode.success
    }
}
