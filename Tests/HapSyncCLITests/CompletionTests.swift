import Foundation
import HapSyncTestSupport
import Testing
@testable import HapSyncCLI

/// The shell completions, checked by the shells themselves: each script parses (`bash -n`,
/// `zsh -n`, `fish -n`), and completing real command lines offers what the command table says.
/// zsh and fish are checked where installed (Debian packages zsh and fish); bash always is.
@Suite("Shell completions")
struct CompletionTests {
    @Test func bashParsesTheScript() throws {
        let dir = try ReferenceTools.writeGenerated()
        defer { dir.remove() }
        let r = try ReferenceTools.run("bash", ["-n", ShellCompletions.Shell.bash.file(in: dir).path])
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
    }

    @Test func bashCompletesCommandsOptionsAndChoices() throws {
        let dir = try ReferenceTools.writeGenerated()
        defer { dir.remove() }
        let script = ShellCompletions.Shell.bash.file(in: dir)
        func complete(_ words: String...) throws -> [String] { try ReferenceTools.bashComplete(script, words) }
        #expect(try complete("hapsync", "pl") == ["plot", "play"])
        #expect(try complete("hapsync", "play", "--au") == ["--audio"])
        #expect(try complete("hapsync", "play", "--audio", "") == ["auto", "pipewire", "pulse", "none"])
        // --audio=p: bash splits the word at '=' (COMP_WORDBREAKS).
        #expect(try complete("hapsync", "play", "--audio", "=", "p") == ["pipewire", "pulse"])
        #expect(try complete("hapsync", "render", "--format", "") == ["jsonl", "csv"])
        #expect(try complete("hapsync", "help", "se") == ["serve"])
        #expect(try complete("hapsync", "-") == ["-h", "--help", "--version"])
        #expect(try complete("hapsync", "play", "--latency-ms", "").isEmpty)
        #expect(try complete("hapsync", "spring", "--response", "0.5", "--da") == ["--damping"])
        // Files: a positional FILE, an option's PATH, a DIR (folders only), FILE.ahap's extension.
        let files = try TemporaryDirectory("files")
        defer { files.remove() }
        for name in ["a.ahap", "b.svg"] { try Data().write(to: files.file(name)) }
        try FileManager.default.createDirectory(at: files.file("sub"), withIntermediateDirectories: true)
        let prefix = files.path + "/"
        #expect(try Set(complete("hapsync", "validate", "--json", prefix)) == Set(["a.ahap", "b.svg", "sub"].map { prefix + $0 }))
        #expect(try complete("hapsync", "install", "--prefix", prefix) == [prefix + "sub"])
        #expect(try Set(complete("hapsync", "generate", "--out", prefix)) == Set(["a.ahap", "sub"].map { prefix + $0 }))
        #expect(try complete("hapsync", "validate", "--", prefix + "a").first == prefix + "a.ahap")
    }

    /// With bash-completion loaded, file names come from its `_filedir` (quoting, ~, folders).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/bash-completion/bash_completion"),
                   "bash-completion is not installed (Debian: bash-completion)"))
    func bashUsesBashCompletionsFileNamesWhenLoaded() throws {
        let dir = try ReferenceTools.writeGenerated()
        defer { dir.remove() }
        let prefix = dir.path + "/share/"
        let setup = "source /usr/share/bash-completion/bash_completion\n"
        let script = ShellCompletions.Shell.bash.file(in: dir)
        let found = try ReferenceTools.bashComplete(script, ["hapsync", "install", "--prefix", prefix], setup: setup)
        #expect(Set(found) == Set(["bash-completion", "fish", "man", "zsh"].map { prefix + $0 }))
    }

    /// Each option with a fixed set of values completes to exactly those values, in every command
    /// that takes it, and every option of every command completes from its prefix.
    @Test(arguments: HapSyncCLI.commands.map(\.name))
    func bashOffersEveryOptionAndChoiceOfTheTable(_ name: String) throws {
        let dir = try ReferenceTools.writeGenerated()
        defer { dir.remove() }
        let script = ShellCompletions.Shell.bash.file(in: dir)
        let command = try #require(HapSyncCLI.commands.first { $0.name == name })
        let options = command.syntax.groups.flatMap(\.options)
        #expect(try Set(ReferenceTools.bashComplete(script, ["hapsync", name, "--"])) == Set(options.map { "--" + $0.name } + ["--help"]))
        for option in options {
            if let choices = option.choices {
                #expect(try ReferenceTools.bashComplete(script, ["hapsync", name, "--" + option.name, ""]) == choices, "\(name) --\(option.name)")
            }
        }
    }

    @Test(.enabled(if: ReferenceTools.has("zsh"), "zsh is not installed (Debian: zsh)"))
    func zshParsesAndCompletes() throws {
        let dir = try ReferenceTools.writeGenerated()
        defer { dir.remove() }
        let script = ShellCompletions.Shell.zsh.file(in: dir)
        let parse = try ReferenceTools.run("zsh", ["-n", script.path])
        #expect(parse.status == 0 && parse.err.isEmpty, "\(parse.err)")
        let functions = script.deletingLastPathComponent()
        #expect(try Set(ReferenceTools.zshComplete(functions, "hapsync pl")) == ["play", "plot"])
        #expect(try ReferenceTools.zshComplete(functions, "hapsync play --au") == ["--audio"])
        #expect(try ReferenceTools.zshComplete(functions, "hapsync play --audio ") == ["auto", "pipewire", "pulse", "none"])
        #expect(try ReferenceTools.zshComplete(functions, "hapsync render --format=") == ["jsonl", "csv"])
        #expect(try Set(ReferenceTools.zshComplete(functions, "hapsync install --prefix \(dir.path)/")) == ["share"])
    }

    @Test(.enabled(if: ReferenceTools.has("fish"), "fish is not installed (Debian: fish)"))
    func fishParsesAndCompletes() throws {
        let dir = try ReferenceTools.writeGenerated()
        defer { dir.remove() }
        let script = ShellCompletions.Shell.fish.file(in: dir)
        let parse = try ReferenceTools.run("fish", ["--no-config", "-n", script.path])
        #expect(parse.status == 0 && parse.err.isEmpty, "\(parse.err)")
        #expect(try ReferenceTools.fishComplete(script, "hapsync pl") == ["play", "plot"])
        #expect(try ReferenceTools.fishComplete(script, "hapsync play --au") == ["--audio"])
        #expect(try ReferenceTools.fishComplete(script, "hapsync play --audio ") == ["auto", "none", "pipewire", "pulse"])
        #expect(try ReferenceTools.fishComplete(script, "hapsync render --format=") == ["--format=csv", "--format=jsonl"])
        #expect(try ReferenceTools.fishComplete(script, "hapsync install --prefix \(dir.path)/") == ["\(dir.path)/share/"])
        #expect(try ReferenceTools.fishComplete(script, "hapsync play --latency-ms ").isEmpty)
        for command in HapSyncCLI.commands {
            let offered = try Set(ReferenceTools.fishComplete(script, "hapsync \(command.name) --"))
            #expect(offered == Set(command.syntax.groups.flatMap(\.options).map { "--" + $0.name } + ["--help"]), "\(command.name)")
        }
    }
}
