import AHAP
import Foundation
import HapSyncCore

/// `hapsync plot FILE --out PATH.svg`: the picture people want of a pattern.
enum PlotCommand {
    static let out = Option<String>(required: "out", "PATH.svg", .text,
                                    help: "the SVG file to write; an existing file is not replaced unless --force is given")
    static let width = Option<Int>("width", "PX", .integer("pixels", 300...20_000), default: 1000, help: "picture width")
    static let waveform = Option<String?>("waveform", "PROFILE", ValueParser(
        expectation: ActuatorProfile.all.map(\.name).joined(separator: ", "),
        convert: { name in ActuatorProfile.all.contains { $0.name == name } ? name : nil }, show: { $0 }),
        help: "also draw the drive signal a voice-coil actuator gets (\(ActuatorProfile.all.map(\.name).joined(separator: ", ")))")

    static let command = Command(
        name: "plot", summary: "draw a pattern as SVG: intensity, sharpness, transients, audio voices",
        about: """
            Draws a pattern as SVG: intensity (filled) and sharpness (line) of the continuous
            haptic signal over time, transients as stems (height = intensity, colour =
            sharpness), audio voices as bars with their file names and gain, time axis in ms.
            With --waveform PROFILE, a lane shows the drive signal a voice-coil actuator
            (a DualSense's, a bass shaker) would get for it.
            """,
        groups: [OptionGroup([out, CommonOptions.forceOutput, width, waveform, CommonOptions.resources])], positionals: .one("FILE"), run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let file = parsed.positional[0]
        let playable = try PlayablePattern.load(file, resources: parsed[CommonOptions.resources], options: RenderOptions(), console: context.console)
        let profile = parsed[waveform].flatMap { name in ActuatorProfile.all.first { $0.name == name } }
        let svg = PatternPlot.svg(playable.timeline, title: (file as NSString).lastPathComponent, width: parsed[width], waveform: profile)
        if let problem = OutputTarget(path: parsed[out], force: parsed[CommonOptions.forceOutput]).write(svg, console: context.console) {
            throw .failure(problem)
        }
    }
}
