import CHapSync
import Foundation
import HapSyncRuntime

/// The `hapsync` command line as a library: parse arguments, call the library, print.
///
/// `main` returns the exit status: 0 success, 1 failure (a file has errors, or output that could not
/// be written), 64 usage error, 130 interrupted, 141 output into a pipe nobody reads. Output goes
/// through the `Console` so tests can run commands in process.
public enum HapSyncCLI {
    /// The version `--version` prints: the C header's (`HAPSYNC_VERSION_*` in hapsync.h), the one
    /// place it is written.
    public static let version = "\(HAPSYNC_VERSION_MAJOR).\(HAPSYNC_VERSION_MINOR).\(HAPSYNC_VERSION_PATCH)"

    /// Where a command writes: standard output and standard error.
    ///
    /// A write never fails to its caller: a console of `ConsoleStream`s records the first failure
    /// of each stream (a pipe whose reader left, a full disk, a closed descriptor), writes nothing
    /// more to that stream, and `main` turns the failure into the exit status. Cleanup after a
    /// failed write (motors stopped, trace written) therefore runs as it would have.
    public struct Console: Sendable {
        /// Writes to standard output.
        public var out: @Sendable (String) -> Void
        /// Writes to standard error.
        public var err: @Sendable (String) -> Void
        /// The first failed write of standard output and of standard error (nil while none failed).
        public var failures: @Sendable () -> (out: DescriptorWrite.Failure?, err: DescriptorWrite.Failure?)

        /// Makes a console from two writers that cannot fail.
        public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void) {
            self.out = out
            self.err = err
            self.failures = { (nil, nil) }
        }

        /// Makes a console from two streams, whose failures it reports.
        public init(out: ConsoleStream, err: ConsoleStream) {
            self.out = { out.write($0) }
            self.err = { err.write($0) }
            self.failures = { (out.failure, err.failure) }
        }

        /// Whether standard output can no longer be written: a command that produces much checks
        /// it between chunks and stops producing.
        public var outputFailed: Bool { failures().out != nil }

        /// The process's standard output and standard error, written with write(2)
        /// (`ConsoleStream`). A pipe nobody reads is an EPIPE failure where SIGPIPE is ignored, as
        /// the `hapsync` executable ignores it; elsewhere SIGPIPE ends the process.
        public static let standard = Console(out: ConsoleStream(descriptor: STDOUT_FILENO), err: ConsoleStream(descriptor: STDERR_FILENO))
    }

    /// Every subcommand, in the order `hapsync --help` lists them: the one table.
    static let commands: [Command] = [
        ValidateCommand.command, InfoCommand.command, RenderCommand.command, PlotCommand.command,
        GenerateCommand.command, PlayCommand.command, DevicesCommand.command, FeedbackCommand.command, SpringCommand.command, ServeCommand.command, LiveCommand.command, InstallCommand.command,
    ]

    static let mainHelp = """
        hapsync \(version): Core Haptics' AHAP patterns on Linux.

        USAGE: hapsync <command> [options]

        COMMANDS:
        \(commands.map { "  " + $0.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

        OPTIONS:
          -h, --help    show help (also after a command: hapsync validate --help)
          --version     print the version

        Exit status: 0 success, 1 a file has errors or output could not be written,
        64 usage error, 141 output into a pipe nobody reads.

        """

    /// Runs `hapsync` with the arguments after the program name and returns the exit status.
    ///
    /// A console write that failed decides the status, whatever the command returned, unless a
    /// signal ended the run (its status stands): a pipe nobody reads (EPIPE, on either stream) is
    /// 141 (128 + SIGPIPE, what a shell reports for a tool SIGPIPE ended), quietly; any other
    /// failure of standard output is 1, with `error: cannot write standard output: REASON` on
    /// standard error; of standard error, 1 with nothing more (there is nowhere to say it).
    public static func main(_ args: [String], console: Console = .standard,
                            environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        let status: Int32
        do {
            try dispatch(args, context: Command.Context(console: console, environment: environment))
            status = CLIError.Status.success.rawValue
        } catch {
            status = error.report(to: console)
        }
        return settle(status, console: console)
    }

    /// The exit status once the console's write failures are counted (the rule on `main`).
    static func settle(_ status: Int32, console: Console) -> Int32 {
        let (out, err) = console.failures()
        guard out != nil || err != nil else { return status }
        let failed: CLIError.Status
        if out?.isBrokenPipe == true || (out == nil && err?.isBrokenPipe == true) {
            failed = .brokenPipe
        } else {
            failed = .failure
            if let out {
                let hint = out.errno?.code == EBADF ? "standard output is closed or not open for writing; give the command somewhere to write"
                    : "what was written before the failure is incomplete"
                _ = CLIError(.failure, ["cannot write standard output: \(out)"], hints: [hint]).report(to: console)
            }
        }
        return CLIError.Status(rawValue: status)?.isSignal == true ? status : failed.rawValue
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
