import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime

/// `hapsync feedback NAME`: plays a built-in SensoryFeedback style; `--list` shows them,
/// `--export DIR` writes each as an AHAP file.
enum FeedbackCommand {
    static let intensity = Option<Double>("intensity", "X", .decimal(nil, .from(0, to: 1)), default: 1, help: "an impact's intensity")
    static let list = Option(flag: "list", help: "list the styles with their length and shape")
    static let export = Option<String?>("export", "DIR", .text,
                                        help: "write every style as DIR/NAME.ahap (existing files are kept unless --force)")

    static let command = Command(
        name: "feedback", summary: "play a built-in SensoryFeedback style (success, impact-heavy, ...); --list, --export",
        about: """
            Plays one of SwiftUI's SensoryFeedback styles, built in as haptic patterns:
            success, warning, error, selection, impact-light, impact-medium, impact-heavy,
            impact-rigid, impact-solid, impact-soft, increase, decrease, start, stop,
            alignment, level-change, path-complete ("impact" alone is impact-medium).
            Apple does not publish these waveforms; the shapes follow how people describe
            them (see --list and docs/swift-api.md, "Feedback styles").
            """,
        groups: [OptionGroup([intensity, list, export])] + PlaybackOptions.groups(title: "PLAY OPTIONS (as for 'hapsync play')"),
        positionals: .optional("NAME"),
        synopsis: ["hapsync feedback NAME [--intensity X] [play options]", "hapsync feedback --list", "hapsync feedback --export DIR [--force]"],
        run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        if parsed[list] {
            if let other = parsed.positional.first ?? parsed.given.first(where: { $0 != list.declaration.name }).map({ "--" + $0 }) {
                throw .usage("--list takes nothing else (got '\(other)')")
            }
            for f in SensoryFeedback.all {
                let end = (try? PatternTimeline(pattern: f.pattern).end) ?? 0
                context.console.out(f.name.padding(toLength: 15, withPad: " ", startingAt: 0) + String(format: "%3.0f ms  ", end * 1000) + f.summary + "\n")
            }
            return
        }
        if let dir = parsed[export] {
            let allowed = [export.declaration.name, PlaybackOptions.force.declaration.name]
            if let other = parsed.positional.first ?? parsed.given.first(where: { !allowed.contains($0) }).map({ "--" + $0 }) {
                throw .usage("--export DIR takes only --force (got '\(other)')")
            }
            try exportStyles(to: dir, force: parsed[PlaybackOptions.force], console: context.console)
            return
        }
        guard let name = parsed.positional.first else { throw .usage("feedback needs a NAME, --list or --export DIR") }
        guard let feedback = SensoryFeedback.named(name, intensity: parsed[intensity]) else {
            throw .usage("unknown feedback '\(name)'; known: \(SensoryFeedback.all.map(\.name).joined(separator: ", "))")
        }
        let options = try PlaybackOptions(parsed, environment: context.environment)
        try PlayCommand.play(options, console: context.console) { () throws(CLIError) in
            do throws(PlayablePattern.LoadError) {
                return try PlayablePattern(pattern: feedback.pattern, name: feedback.description, options: options.render)
            } catch {
                throw .loading(error)
            }
        }
    }

    /// Writes every style as DIR/NAME.ahap; never replaces a file unless `force`.
    static func exportStyles(to dir: String, force: Bool, console: HapSyncCLI.Console) throws(CLIError) {
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        } catch {
            throw .failure("cannot create \(dir): \(error.localizedDescription)")
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
        if kept > 0 { throw CLIError(.failure) }
    }
}
