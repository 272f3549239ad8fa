import Foundation
import HapSyncCLI
import Synchronization
import Testing

/// The option parser on its own: a syntax declared here, every convention and every error text.
@Suite("option declarations and parsing")
struct ParserTests {
    enum Shape: String, CaseIterable, Sendable { case round, square, star }

    static let width = Option<Int>("width", "PX", .integer("pixels", 300...20_000), default: 1000, help: "picture width")
    static let gain = Option<Double?>("gain", "X", .decimal(nil, .from(0, to: 1)), help: "how loud")
    static let rate = Option<Double>("rate", "HZ", .decimal("Hz", .above(0, upTo: 100)), default: 10, help: "how often")
    static let tag = Option<[String]>(repeatable: "tag", "T", .text, help: "a label")
    static let shape = Option<Shape>("shape", nil, .choice, default: .round, help: "the outline")
    static let out = Option<String>(required: "out", "PATH", .text, help: "where to write")
    static let force = Option(flag: "force", help: "replace PATH")
    static let syntax = CommandSyntax(command: "tool draw", about: "Draws.", groups: [
        OptionGroup([out, force, width, gain]), OptionGroup("MORE", [rate, tag, shape]),
    ], positionals: .one("FILE"), footer: "Exit status: 0.")

    func parse(_ args: String...) throws(CLIError) -> ParsedArguments { try Self.syntax.parse(args) }

    /// The error a parse throws, as it would be printed: status, standard output, standard error.
    func failure(_ args: String...) -> (status: Int32, out: String, err: String) { failure(args) }

    /// The error a parse of `args` throws, as it would be printed.
    func failure(_ args: [String]) -> (status: Int32, out: String, err: String) {
        do {
            _ = try Self.syntax.parse(args)
            return (0, "", "(parsed)")
        } catch {
            let out = Mutex(""), err = Mutex("")
            let status = error.report(to: .init(out: { s in out.withLock { $0 += s } }, err: { s in err.withLock { $0 += s } }))
            return (status, out.withLock { $0 }, err.withLock { $0 })
        }
    }

    @Test func valuesDefaultsAndBothSpellings() throws {
        let a = try parse("--out", "x.svg", "--width", "640", "--gain=0.5", "--tag", "a", "--tag=b", "--shape", "star", "--force", "in.ahap")
        #expect(a[Self.out] == "x.svg" && a[Self.width] == 640 && a[Self.gain] == 0.5 && a[Self.tag] == ["a", "b"])
        #expect(a[Self.shape] == .star && a[Self.force] && a.positional == ["in.ahap"])
        #expect(a.given == ["out", "width", "gain", "tag", "shape", "force"])
        let b = try parse("in.ahap", "--out=x.svg")
        #expect(b[Self.width] == 1000 && b[Self.gain] == nil && b[Self.rate] == 10 && b[Self.tag].isEmpty && b[Self.shape] == .round && !b[Self.force])
        #expect(!b.isGiven(Self.width) && b.isGiven(Self.out))
    }

    @Test func doubleDashEndsOptionsAndADashIsPositional() throws {
        let a = try parse("--out", "o", "--", "--width")
        #expect(a.positional == ["--width"] && a[Self.width] == 1000)
        #expect(try parse("--out", "o", "-").positional == ["-"])
        #expect(try parse("--out", "-x", "f")[Self.out] == "-x", "a value may start with a dash")
    }

    @Test func helpAnywhereWinsOverBadValuesButNotOverUnknownOptions() {
        let help = failure("--width", "1", "--help", "f")
        #expect(help.status == 0 && help.err.isEmpty && help.out == Self.syntax.help)
        #expect(failure("-h").status == 0)
        #expect(failure("--bogus", "-h").err == "error: unknown option '--bogus' for 'tool draw'\nhint: see 'tool draw --help'\n")
    }

    @Test func everyUsageErrorNamesTheOptionAndTheValue() {
        let cases: [([String], String)] = [
            (["--out", "o", "--width", "299", "f"], "--width must be a whole number of pixels from 300 to 20000, not '299'"),
            (["--out", "o", "--width", "3.5", "f"], "--width must be a whole number of pixels from 300 to 20000, not '3.5'"),
            (["--out", "o", "--gain", "nan", "f"], "--gain must be a number from 0 to 1, not 'nan'"),
            (["--out", "o", "--gain", "1.01", "f"], "--gain must be a number from 0 to 1, not '1.01'"),
            (["--out", "o", "--rate", "0", "f"], "--rate must be a number of Hz above 0 and up to 100, not '0'"),
            (["--out", "o", "--rate=inf", "f"], "--rate must be a number of Hz above 0 and up to 100, not 'inf'"),
            (["--out", "o", "--shape", "oval", "f"], "--shape must be round, square or star, not 'oval'"),
            (["--out", "o", "--width", "640", "--width", "800", "f"], "option '--width' given more than once"),
            (["--out", "o", "--force=yes", "f"], "option '--force' takes no value"),
            (["--out", "o", "f", "--gain"], "option '--gain' needs a value"),
            (["--out", "o", "-x", "f"], "unknown option '-x' for 'tool draw'"),
            (["f"], "draw needs --out PATH"),
            (["--out", "o"], "draw needs a FILE"),
            (["--out", "o", "a", "b"], "draw takes one FILE (got 2)"),
        ]
        for (args, message) in cases {
            let r = failure(args)
            #expect(r.status == 64 && r.err == "error: \(message)\nhint: see 'tool draw --help'\n", "\(args)")
        }
    }

    @Test func helpComesFromTheDeclarations() {
        // The usage line wraps at 110 columns under the command; the help column is the longest
        // option plus 4, at most 26, so a longer option starts its help on the next line.
        #expect(Self.syntax.help == """
            USAGE: tool draw --out PATH [--force] [--width PX] [--gain X] [--rate HZ] [--tag T]...
                             [--shape round|square|star] FILE

            Draws.

            OPTIONS:
              --out PATH              where to write
              --force                 replace PATH
              --width PX              picture width (from 300 to 20000; default 1000)
              --gain X                how loud (from 0 to 1)
              -h, --help              show this help

            MORE:
              --rate HZ               how often (above 0 and up to 100; default 10)
              --tag T                 a label
              --shape round|square|star
                                      the outline (default round)

            Exit status: 0.

            """)
    }

    @Test func rangesSayWhatTheyAccept() {
        #expect(NumberRange.from(1, to: 2000).description == "from 1 to 2000")
        #expect(NumberRange.atLeast(0).description == "0 or more" && !NumberRange.atLeast(0).contains(-0.001))
        #expect(ValueParser<Double>.decimal("seconds", .atLeast(0)).expectation == "a number of seconds, 0 or more")
        #expect(NumberRange.above(0).description == "above 0" && !NumberRange.above(0).contains(0) && NumberRange.above(0).contains(1e9))
        #expect(NumberRange.above(0, upTo: 0.5).contains(0.5) && !NumberRange.above(0, upTo: 0.5).contains(0.50001))
    }

    @Test func anErrorPrintsDetailsThenMessagesThenHints() {
        let err = Mutex("")
        let status = CLIError(.failure, ["one", "two"], hints: ["try this"], details: ["a.ahap:1:2: error: x", "b\n"])
            .report(to: .init(out: { _ in }, err: { s in err.withLock { $0 += s } }))
        #expect(status == 1)
        #expect(err.withLock { $0 } == "a.ahap:1:2: error: x\nb\nerror: one\nerror: two\nhint: try this\n")
        #expect(CLIError(.interrupted).report(to: .init(out: { _ in }, err: { _ in Issue.record("nothing to print") })) == 130)
    }
}
