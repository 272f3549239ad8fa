import Foundation
import HapSyncTestSupport
import Testing
@testable import HapSyncCLI

/// docs/cli.md is the Markdown reference generated from the command table, and every generated
/// document (Markdown, manual page, bash, zsh and fish completions) holds every command and option
/// of the table. When the table changes (a command, an option, a help text), regenerate the file
/// with `HAPSYNC_UPDATE_DOCS=1 swift test --filter CLIReferenceTests` (which then fails, saying so),
/// review the diff and commit it.
@Suite("CLI reference generated from the command table")
struct CLIReferenceTests {
    /// `serve --pattern-memory`'s default is a quarter of this machine's memory up to 1024 MiB, so
    /// the reference reads 1024 only where the machine has 4 GiB or more.
    static let defaultsAreThePublishedOnes = ServeCommand.patternMemory.declaration.defaultText == "1024"

    @Test(.enabled(if: defaultsAreThePublishedOnes, "this machine has less than 4 GiB: serve --pattern-memory's default is not the published 1024"))
    func docsCLIMarkdownIsTheGeneratedReference() throws {
        let url = packageRoot.appendingPathComponent(CLIReference.markdownPath)
        let generated = CLIReference.markdown()
        if ProcessInfo.processInfo.environment["HAPSYNC_UPDATE_DOCS"] == "1" {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(generated.utf8).write(to: url)
            Issue.record("wrote \(url.path): review it and commit it, then run again without HAPSYNC_UPDATE_DOCS")
            return
        }
        let file = try #require(try? String(contentsOf: url, encoding: .utf8),
                                "\(url.path) is missing: create it with HAPSYNC_UPDATE_DOCS=1 swift test --filter CLIReferenceTests")
        guard file != generated else { return }
        let have = file.split(separator: "\n", omittingEmptySubsequences: false)
        let want = generated.split(separator: "\n", omittingEmptySubsequences: false)
        let line = zip(have, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(have.count, want.count)
        Issue.record("""
            \(CLIReference.markdownPath) is not what the command table generates; first difference at line \(line + 1):
              file:      \(line < have.count ? have[line] : "(end of file)")
              generated: \(line < want.count ? want[line] : "(end of text)")
            regenerate it with HAPSYNC_UPDATE_DOCS=1 swift test --filter CLIReferenceTests, review the diff and commit it
            """)
    }

    /// Every command of the table, with its summary and each option, in every generated document:
    /// a command added to the table cannot be left out of one.
    @Test(arguments: HapSyncCLI.commands.map(\.name))
    func everyCommandAndOptionIsInEveryDocument(_ name: String) throws {
        let command = try #require(HapSyncCLI.commands.first { $0.name == name })
        let markdown = CLIReference.markdown()
        let man = ManualPage.roff(date: "2025-01-31")
        let bash = ShellCompletions.bash(), zsh = ShellCompletions.zsh(), fish = ShellCompletions.fish()
        #expect(markdown.contains("| [`\(name)`](#hapsync-\(name)) | "))
        #expect(markdown.contains("\n## hapsync \(name)\n\n```text\n" + command.syntax.usageForms.joined(separator: "\n") + "\n```\n"))
        #expect(man.contains(".SS \"hapsync \(name)\"\n"))
        #expect(man.contains(".TP\n\\fB\(name)\\fR\n"))
        #expect(bash.contains("\n    \(name))\n") && bash.contains("-W 'validate info render"))
        #expect(zsh.contains("\n    \(name))\n") && zsh.contains("'\(name):"))
        #expect(fish.contains("-a \(name) -d ") && fish.contains("'__hapsync_using \(name)'"))
        for option in command.syntax.groups.flatMap(\.options) {
            let entry = CLIReference.OptionEntry(option)
            let listed = "- `--\(option.name)" + (option.valueName.map { " " + $0 } ?? "") + "`"
            #expect(markdown.contains(listed), "docs/cli.md: \(name) --\(option.name)")
            #expect(man.contains(".TP\n\\fB" + ManualPage.escape("--" + option.name) + "\\fR"), "man: \(name) --\(option.name)")
            let description = entry.summary.prefix(20).replacingOccurrences(of: "'", with: "'\\''")
            #expect(zsh.contains("--\(option.name)" + (option.takesValue ? "=[" : "[") + description), "zsh: \(name) --\(option.name)")
            #expect(fish.contains("'__hapsync_using \(name)' -l \(option.name)"), "fish: \(name) --\(option.name)")
        }
        for help in ["-h", "--help"] {
            #expect(markdown.contains("- `-h`, `--help`: show this help"), "docs/cli.md: \(name) \(help)")
        }
    }

    /// Every `"HAPSYNC_..."` string in Sources/ names a variable of `CLIReference.environment`
    /// (the one list the manual page and docs/cli.md print), and each listed one is read somewhere.
    @Test func theEnvironmentListHasEveryVariableTheSourcesRead() throws {
        let sources = packageRoot.appendingPathComponent("Sources")
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var named: [String: String] = [:]
        let pattern = try Regex(#""(HAPSYNC_[A-Z_]+)"#)
        for case let url as URL in enumerator where url.pathExtension == "swift" && url.lastPathComponent != "CLIReference.swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            for match in text.matches(of: pattern) {
                if let name = match.output[1].substring { named[String(name), default: url.lastPathComponent] = url.lastPathComponent }
            }
        }
        let listed = Set(CLIReference.environment.map(\.name))
        for (name, file) in named.sorted(by: { $0.key < $1.key }) {
            #expect(listed.contains(name), "\(file) reads \(name), which CLIReference.environment does not list")
        }
        for name in listed.sorted() { #expect(named[name] != nil, "CLIReference.environment lists \(name), which no source reads") }
    }

    /// Choices come from the options' value parsers: an enumeration's cases, a fixed list; a
    /// parser that takes any text or a number has none.
    @Test func choicesAreReadFromTheValueParsers() {
        #expect(PlaybackOptions.audio.declaration.choices == ["auto", "pipewire", "pulse", "none"])
        #expect(RenderCommand.format.declaration.choices == ["jsonl", "csv"])
        #expect(GenerateCommand.style.declaration.choices == ["percussive", "ambient", "balanced"])
        #expect(PlotCommand.waveform.declaration.choices == ["dualsense", "shaker", "generic"])
        for option in [PlaybackOptions.haptics.declaration, PlaybackOptions.sink.declaration, PlaybackOptions.latency.declaration,
                       PlaybackOptions.at.declaration, ServeCommand.osc.declaration, InstallCommand.prefix.declaration,
                       CommonOptions.resources.declaration, CommonOptions.json.declaration] {
            #expect(option.choices == nil, "--\(option.name)")
        }
        #expect(CommonOptions.json.declaration.valueKind == .flag)
        #expect(InstallCommand.prefix.declaration.valueKind == .directory)
        #expect(PlotCommand.out.declaration.valueKind == .file(extension: "svg"))
        #expect(PlaybackOptions.latency.declaration.valueKind == .text)
    }

    @Test func placeholdersNameFilesFoldersOrText() {
        let cases: [(String, CLIReference.ValueKind)] = [
            ("FILE", .file(extension: nil)), ("PATH", .file(extension: nil)), ("AUDIO", .file(extension: nil)),
            ("PATH.svg", .file(extension: "svg")), ("FILE.ahap", .file(extension: "ahap")), ("DIR|FILE", .file(extension: nil)),
            ("DIR", .directory), ("NAME", .text), ("N", .text), ("+MS", .text), ("MIB", .text), ("TARGET", .text),
        ]
        for (placeholder, kind) in cases { #expect(CLIReference.ValueKind(placeholder: placeholder) == kind, "\(placeholder)") }
    }

    /// Help text as the table writes it: prose paragraphs, and indented lines kept as laid out.
    @Test func helpTextSplitsIntoProseAndLiteralBlocks() {
        let text = "Checks files and lists\nevery finding as\n  file:line: message\n    more\nThen prose.\n\nA new paragraph."
        #expect(CLIReference.blocks(text) == [.prose(["Checks files and lists", "every finding as"]), .literal(["file:line: message", "  more"]),
                                              .prose(["Then prose."]), .prose(["A new paragraph."])])
    }

    /// A help text or summary never turns into Markdown markup it did not mean.
    @Test func markdownEscapesWhatWouldBeMarkup() {
        let command = Command(name: "zz", summary: "a | b with *stars* and_under _x `ticks` <tag>",
                              about: "- not a list\n1. not numbered\n# not a heading\n--opt=value stays\n#1 stays",
                              groups: [OptionGroup([Option<String?>("zz-opt", "A|B", .text, help: "one\\two"),
                                                    Option<RenderCommand.Format>("zz-format", "FMT", .choice, default: .csv, help: "the format")])],
                              positionals: .none,
                              run: { _, _ throws(CLIError) in })
        let text = CLIReference.markdown(commands: [command])
        #expect(text.contains("| [`zz`](#hapsync-zz) | a \\| b with \\*stars\\* and_under \\_x \\`ticks\\` \\<tag> |"))
        #expect(text.contains("\n\\- not a list\n1\\. not numbered\n\\# not a heading\n--opt=value stays\n#1 stays\n"))
        #expect(text.contains("- `--zz-opt A|B`: one\\\\two\n"))
        // Choices that neither the placeholder nor the help names are listed.
        #expect(text.contains("- `--zz-format FMT`: the format (default csv); one of `jsonl`, `csv`\n"))
    }
}
