import AHAP
import Foundation
import HapSyncCore

/// `hapsync plot FILE --out PATH.svg`: the picture people want of a pattern.
enum PlotCommand {
    static let help = """
        USAGE: hapsync plot --out PATH.svg [--force] [--width PX] [--resources DIR]... FILE

        Draws a pattern as SVG: intensity (filled) and sharpness (line) of the continuous
        haptic signal over time, transients as stems (height = intensity, colour =
        sharpness), audio voices as bars with their file names and gain, time axis in ms.

        OPTIONS:
          --out PATH          the SVG file to write (required); an existing file is not
                              replaced unless --force is given
          --force             replace PATH if it exists
          --width PX          picture width (default 1000)
          --resources DIR     also look for audio files here (repeatable)
          -h, --help          show this help

        """

    static func run(_ args: [String], console: HapSyncCLI.Console) throws(CommandLineArguments.UsageError) -> Int32 {
        let parsed = try CommandLineArguments(args, options: [
            .init(name: "out", takesValue: true), .init(name: "force", takesValue: false), .init(name: "width", takesValue: true),
            .init(name: "resources", takesValue: true, repeatable: true),
        ], command: "hapsync plot")
        if parsed.has("help") { console.out(help); return HapSyncCLI.ExitCode.success }
        guard parsed.positional.count == 1, let file = parsed.positional.first else {
            throw .init(message: parsed.positional.isEmpty ? "plot needs a FILE" : "plot takes one FILE (got \(parsed.positional.count))")
        }
        guard let out = parsed.all("out").first else { throw .init(message: "plot needs --out PATH.svg") }
        var width = 1000
        if let w = parsed.all("width").first {
            guard let v = Int(w), (300...20_000).contains(v) else { throw .init(message: "--width must be a whole number of pixels from 300 to 20000, not '\(w)'") }
            width = v
        }
        let roots = try HapSyncCLI.resourceRoots(parsed.all("resources"))
        let loaded: LoadedTimeline
        switch LoadedTimeline.load(file, resources: roots, options: RenderOptions(), console: console) {
        case .success(let l): loaded = l
        case .failure(let status): return status.code
        }
        let svg = PatternPlot.svg(loaded.timeline, title: (file as NSString).lastPathComponent, width: width)
        if let problem = OutputTarget(path: out, force: parsed.has("force")).write(svg, console: console) {
            console.err("error: \(problem)\n")
            return HapSyncCLI.ExitCode.failure
        }
        return HapSyncCLI.ExitCode.success
    }
}
