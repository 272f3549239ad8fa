import AHAP
import Foundation

/// The `hapsync` command line as a library: parse arguments, call the AHAP layer, print.
///
/// `main` returns the exit status: 0 success, 1 failure (a file has errors), 64 usage error.
/// Output goes through the `Console` so tests can run commands in process.
public enum HapSyncCLI {
    /// The version `--version` prints.
    public static let version = "0.1.0"

    /// Where a command writes: standard output and standard error.
    public struct Console: Sendable {
        /// Writes to standard output.
        public var out: @Sendable (String) -> Void
        /// Writes to standard error.
        public var err: @Sendable (String) -> Void

        /// Makes a console from two writers.
        public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void) {
            self.out = out
            self.err = err
        }

        /// The process's standard output and standard error.
        public static let standard = Console(
            out: { FileHandle.standardOutput.write(Data($0.utf8)) },
            err: { FileHandle.standardError.write(Data($0.utf8)) })
    }

    /// Exit statuses.
    public enum ExitCode {
        /// Success.
        public static let success: Int32 = 0
        /// The command ran and found a problem (a file with errors).
        public static let failure: Int32 = 1
        /// The command line was wrong (sysexits EX_USAGE).
        public static let usage: Int32 = 64
    }

    static let commands: [(name: String, summary: String)] = [
        ("validate", "check AHAP files and list every error and warning with its JSON path"),
        ("info", "describe a pattern: duration, events, parameters, curves, audio files"),
        ("render", "the offline haptic command stream and audio-voice plan (jsonl or csv)"),
        ("plot", "draw a pattern as SVG: intensity, sharpness, transients, audio voices"),
        ("play", "play a pattern's haptics on the real-time engine (rumble pad, trace) with a timing summary"),
        ("devices", "list input devices: name, rumble capability, effect slots, access"),
        ("feedback", "play a built-in SensoryFeedback style (success, impact-heavy, ...); --list, --export"),
        ("spring", "when a spring animation (response, damping) peaks, to time a haptic on it"),
    ]

    static let mainHelp = """
        hapsync \(version): Core Haptics' AHAP patterns on Linux.

        USAGE: hapsync <command> [options]

        COMMANDS:
        \(commands.map { "  " + $0.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

        OPTIONS:
          -h, --help    show help (also after a command: hapsync validate --help)
          --version     print the version

        Exit status: 0 success, 1 a file has errors, 64 usage error.

        """

    /// Runs `hapsync` with the arguments after the program name and returns the exit status.
    public static func main(_ args: [String], console: Console = .standard) -> Int32 {
        guard let first = args.first else {
            console.err(mainHelp)
            return ExitCode.usage
        }
        let rest = Array(args.dropFirst())
        do {
            switch first {
            case "-h", "--help", "help":
                if let topic = rest.first, let help = helpText(for: topic) { console.out(help) } else { console.out(mainHelp) }
                return ExitCode.success
            case "--version":
                console.out("hapsync \(version)\n")
                return ExitCode.success
            case "validate":
                return try ValidateCommand.run(rest, console: console)
            case "info":
                return try InfoCommand.run(rest, console: console)
            case "render":
                return try RenderCommand.run(rest, console: console)
            case "plot":
                return try PlotCommand.run(rest, console: console)
            case "play":
                return try PlayCommand.run(rest, console: console)
            case "devices":
                return try DevicesCommand.run(rest, console: console)
            case "feedback":
                return try FeedbackCommand.run(rest, console: console)
            case "spring":
                return try SpringCommand.run(rest, console: console)
            default:
                var message = "error: unknown command '\(first)'\n"
                if let near = commands.first(where: { $0.name.hasPrefix(first.prefix(3)) }) { message += "hint: did you mean 'hapsync \(near.name)'?\n" }
                message += "hint: 'hapsync --help' lists the commands\n"
                console.err(message)
                return ExitCode.usage
            }
        } catch {
            console.err("error: \(error.message)\nhint: see 'hapsync \(first) --help'\n")
            return ExitCode.usage
        }
    }

    static func helpText(for command: String) -> String? {
        switch command {
        case "validate": return ValidateCommand.help
        case "info": return InfoCommand.help
        case "render": return RenderCommand.help
        case "plot": return PlotCommand.help
        case "play": return PlayCommand.help
        case "devices": return DevicesCommand.help
        case "feedback": return FeedbackCommand.help
        case "spring": return SpringCommand.help
        default: return nil
        }
    }

    /// Resource roots from `--resources` values, checked to exist.
    static func resourceRoots(_ values: [String]) throws(CommandLineArguments.UsageError) -> [URL] {
        try values.map { (v: String) throws(CommandLineArguments.UsageError) -> URL in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: v, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CommandLineArguments.UsageError(message: "--resources '\(v)' is not a folder")
            }
            return URL(fileURLWithPath: v, isDirectory: true)
        }
    }
}
