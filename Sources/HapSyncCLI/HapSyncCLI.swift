import Foundation

/// The `hapsync` command line as a library: parse arguments, call the library, print.
///
/// `main` returns the exit status: 0 success, 1 failure (a file has errors), 64 usage error, 130
/// interrupted. Output goes through the `Console` so tests can run commands in process.
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

    /// Every subcommand, in the order `hapsync --help` lists them: the one table.
    static let commands: [Command] = [
        ValidateCommand.command, InfoCommand.command, RenderCommand.command, PlotCommand.command,
        GenerateCommand.command, PlayCommand.command, DevicesCommand.command, FeedbackCommand.command, SpringCommand.command, ServeCommand.command, InstallCommand.command,
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
    public static func main(_ args: [String], console: Console = .standard,
                            environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        do {
            try dispatch(args, context: Command.Context(console: console, environment: environment))
            return CLIError.Status.success.rawValue
        } catch {
            return error.report(to: console)
        }
    }

    /// Finds the command and runs it; every way it can end other than success is thrown.
    private static func dispatch(_ args: [String], context: Command.Context) throws(CLIError) {
        guard let first = args.first else { throw CLIError(.usage, details: [mainHelp]) }
        let rest = Array(args.dropFirst())
        switch first {
        case "-h", "--help", "help":
            throw .help(rest.first.flatMap { topic in commands.first { $0.name == topic } }?.syntax.help ?? mainHelp)
        case "--version":
            context.console.out("hapsync \(version)\n")
            return
        default:
            guard let command = commands.first(where: { $0.name == first }) else {
                var hints = ["'hapsync --help' lists the commands"]
                if let near = commands.first(where: { $0.name.hasPrefix(first.prefix(3)) }) { hints.insert("did you mean 'hapsync \(near.name)'?", at: 0) }
                throw CLIError(.usage, ["unknown command '\(first)'"], hints: hints)
            }
            do {
                try command.run(try command.syntax.parse(rest), context)
            } catch let error where error.status == .usage && error.hints.isEmpty {
                throw CLIError(.usage, error.messages, hints: ["see '\(command.syntax.command) --help'"], details: error.details)
            }
        }
    }
}
