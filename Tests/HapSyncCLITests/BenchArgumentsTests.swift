import Foundation
import Testing

/// `hapsync-bench` parses its arguments with the same declarations and errors as `hapsync`: a bad
/// value is a usage error, never a silent default. Every case here stops before any benchmark runs.
@Suite("hapsync-bench arguments")
struct BenchArgumentsTests {
    /// The benchmark executable, built beside `hapsync` (the test target depends on both).
    static let bench: URL? = (try? BinaryTests.binary()).map { $0.deletingLastPathComponent().appendingPathComponent("hapsync-bench") }

    @Test func badValuesAreUsageErrors() throws {
        try #require(Self.bench.map { FileManager.default.isExecutableFile(atPath: $0.path) } == true, "hapsync-bench is built with the tests")
        let cases: [([String], String)] = [
            (["--seconds", "abc"], "--seconds must be a number of seconds above 0 and up to 86400, not 'abc'"),
            (["--rounds", "0"], "--rounds must be a whole number from 1 to 1000, not '0'"),
            (["--corpus", "/nonexistent"], "--corpus must be an existing folder, not '/nonexistent'"),
            (["--json"], "option '--json' needs a value"),
            (["--onset-set", "-1"], "--onset-set must be a whole number from 0 to 1000, not '-1'"),
            (["parse", "bogus"], "unknown benchmark 'bogus'; known: parse, render, ring, inversion, trigger, dispatch, sync, underrun, quantum-step, first-sound, launch, drift, cpu, serve, generate, live-onsets, live, live-nodelay, live-long"),
        ]
        for (args, message) in cases {
            let r = try BinaryTests.run(args, executable: Self.bench)
            #expect(r.status == 64 && r.err == "error: \(message)\nhint: see 'hapsync-bench --help'\n" && r.out.isEmpty, "\(args)")
        }
        let help = try BinaryTests.run(["--help"], executable: Self.bench)
        #expect(help.status == 0 && help.out.hasPrefix("USAGE: hapsync-bench [--seconds S] [--rounds N] [--json FILE] [--plot DIR] [--corpus DIR] [--onset-set N]") && help.out.contains("[NAME...]"))
        #expect(help.out.contains("  --seconds S") && help.out.contains("default 30"))
    }
}
