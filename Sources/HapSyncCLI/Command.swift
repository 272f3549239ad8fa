import Foundation

/// One subcommand of `hapsync`: its name, the line `hapsync --help` lists it with, its syntax
/// (options, arguments, help) and what it does. `HapSyncCLI.commands` is the one table of them.
struct Command: Sendable {
    /// What a command runs with besides its arguments.
    struct Context: Sendable {
        /// Where it prints.
        var console: HapSyncCLI.Console
        /// The environment (`play` reads the HAPSYNC_* policy variables).
        var environment: [String: String]
    }

    /// The name typed after `hapsync`.
    let name: String
    /// One line for the command list.
    let summary: String
    /// Options, arguments and help.
    let syntax: CommandSyntax
    /// Runs the command; returning is success, anything else is a thrown `CLIError`.
    let run: @Sendable (ParsedArguments, Context) throws(CLIError) -> Void

    /// Makes a command; its syntax is `hapsync NAME` with these options, arguments and help.
    init(name: String, summary: String, about: String, groups: [OptionGroup], positionals: Positionals, synopsis: [String]? = nil,
         footer: String? = nil, run: @escaping @Sendable (ParsedArguments, Context) throws(CLIError) -> Void) {
        self.name = name
        self.summary = summary
        self.syntax = CommandSyntax(command: "hapsync \(name)", about: about, groups: groups, positionals: positionals,
                                    synopsis: synopsis, footer: footer)
        self.run = run
    }
}
