/// How a command ends when it does not simply succeed: the one error commands throw. It carries
/// the exit status and what to print, and `report(to:)` prints it, the one place that does.
///
/// Printed in this order: `details` as they are (a file's findings, the main help), then each
/// message as `error: ...`, then each hint as `hint: ...`, all on standard error. A request for
/// help is one too (like swift-argument-parser's `CleanExit`): its text goes to standard output
/// with exit status 0.
public struct CLIError: Error, Sendable {
    /// Exit statuses (sysexits for usage).
    public enum Status: Int32, Sendable {
        /// Success (a help request).
        case success = 0
        /// The command ran and found a problem: a file with errors, a device that would not open.
        case failure = 1
        /// The command line was wrong (EX_USAGE).
        case usage = 64
        /// SIGHUP ended it: the terminal went away (128 + 1).
        case hangup = 129
        /// Ctrl-C (SIGINT) stopped it (128 + 2).
        case interrupted = 130
        /// Ctrl-\ (SIGQUIT) stopped it (128 + 3).
        case quit = 131
        /// Standard output or error went into a pipe nobody reads any more (128 + SIGPIPE's 13, as
        /// a shell reports a tool SIGPIPE ended): the run stopped quietly.
        case brokenPipe = 141
        /// SIGTERM stopped it (128 + 15).
        case terminated = 143

        /// Whether a signal the run caught ended it (SIGHUP, SIGINT, SIGQUIT, SIGTERM).
        public var isSignal: Bool { self == .hangup || self == .interrupted || self == .quit || self == .terminated }

        /// The status a run that `signal` ended exits with: 128 + its number, as a shell reports it.
        public static func ended(by signal: Int32) -> Status {
            Status(rawValue: 128 + signal) ?? .interrupted
        }
    }

    /// The exit status.
    public var status: Status
    /// What went wrong, one `error:` line each (none when the output already said it).
    public var messages: [String]
    /// What to do about it, one `hint:` line each.
    public var hints: [String]
    /// Lines printed before the messages, as they are (e.g. a file's findings).
    public var details: [String]
    /// Text for standard output (a help request).
    public var output: String?

    /// Makes an error; every part but the status may be empty.
    public init(_ status: Status, _ messages: [String] = [], hints: [String] = [], details: [String] = [], output: String? = nil) {
        self.status = status
        self.messages = messages
        self.hints = hints
        self.details = details
        self.output = output
    }

    /// A usage error (exit status 64) with one message.
    public static func usage(_ message: String, hint: String? = nil) -> CLIError {
        CLIError(.usage, [message], hints: hint.map { [$0] } ?? [])
    }

    /// A failure (exit status 1) with one message.
    public static func failure(_ message: String, hint: String? = nil) -> CLIError {
        CLIError(.failure, [message], hints: hint.map { [$0] } ?? [])
    }

    /// A help request: `text` on standard output, exit status 0.
    public static func help(_ text: String) -> CLIError { CLIError(.success, output: text) }

    /// Prints the error and returns the exit status.
    public func report(to console: HapSyncCLI.Console) -> Int32 {
        if let output { console.out(output) }
        var text = ""
        for d in details { text += d.hasSuffix("\n") ? d : d + "\n" }
        for m in messages { text += "error: \(m)\n" }
        for h in hints { text += "hint: \(h)\n" }
        if !text.isEmpty { console.err(text) }
        return status.rawValue
    }
}
