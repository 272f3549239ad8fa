import Foundation
import Synchronization
import Testing
@testable import HapSyncCLI

/// The one command table and the options declared once: help, usage errors and the playback
/// options `play` and `feedback` share.
@Suite("hapsync commands and options")
struct CommandTableTests {
    let taps = packageRoot.appendingPathComponent("Assets/taps.ahap").path

    /// Runs `hapsync` in process with an environment of its own.
    func hapsync(_ args: [String], environment: [String: String]) -> Run {
        let out = Mutex(""), err = Mutex("")
        let console = HapSyncCLI.Console(out: { s in out.withLock { $0 += s } }, err: { s in err.withLock { $0 += s } })
        let status = HapSyncCLI.main(args, console: console, environment: environment)
        return Run(status: status, out: out.withLock { $0 }, err: err.withLock { $0 })
    }

    @Test func everyCommandOfTheTableHasItsHelpInEveryForm() {
        let main = HapSyncCLITests.hapsync("--help")
        #expect(HapSyncCLI.commands.map(\.name) == ["validate", "info", "render", "plot", "generate", "play", "devices", "feedback", "spring", "serve", "live", "install"])
        for command in HapSyncCLI.commands {
            #expect(main.out.contains("  " + command.name.padding(toLength: 10, withPad: " ", startingAt: 0) + command.summary + "\n"))
            let help = HapSyncCLITests.hapsync(command.name, "--help")
            #expect(help.status == 0 && help.out.hasPrefix("USAGE: hapsync \(command.name)") && help.err.isEmpty)
            #expect(HapSyncCLITests.hapsync(command.name, "-h").out == help.out)
            #expect(HapSyncCLITests.hapsync("help", command.name).out == help.out)
            for option in command.syntax.groups.flatMap(\.options) {
                // A synopsis wider than its column has its help on the lines below.
                #expect(help.out.contains("  " + option.synopsis + " ") || help.out.contains("  " + option.synopsis + "\n"),
                        "\(command.name) --help lists --\(option.name)")
            }
        }
    }

    @Test func playValuesAreCheckedAgainstTheirDeclaredRanges() {
        let cases: [([String], String)] = [
            (["--latency-ms", "0"], "--latency-ms must be a number of milliseconds from 1 to 2000, not '0'"),
            (["--haptic-latency-ms", "1001"], "--haptic-latency-ms must be a number of milliseconds from 0 to 1000, not '1001'"),
            (["--rumble-burst=abc"], "--rumble-burst must be a number of milliseconds from 1 to 10000, not 'abc'"),
            (["--at", "soon"], "--at must be +MS, a number of milliseconds from 0 to 3600000 from now, not 'soon'"),
            (["--loop", "0"], "--loop must be a whole number from 1 to 1000000, not '0'"),
            (["--rate", "0"], "--rate must be a number of Hz above 0 and up to 100000, not '0'"),
            (["--from", "-1"], "--from must be a number of seconds, 0 or more, not '-1'"),
            (["--audio", "alsa"], "--audio must be auto, pipewire, pulse or none, not 'alsa'"),
            (["--rate-limit-ms", "60001"], "--rate-limit-ms must be a number of milliseconds from 0 to 60000, not '60001'"),
            (["--haptics", "trace:a.jsonl", "--haptics", "trace:b.jsonl"], "--haptics trace: given twice ('trace:a.jsonl' and 'trace:b.jsonl'); one trace at a time"),
            (["--haptics", "evdev:auto", "--haptics", "none", "--haptics", "evdev:/dev/x"],
             "--haptics evdev: given twice ('evdev:auto' and 'evdev:/dev/x'); one device at a time"),
        ]
        for (args, message) in cases {
            let r = hapsync(["play"] + args + [taps], environment: [:])
            #expect(r.status == 64 && r.err == "error: \(message)\nhint: see 'hapsync play --help'\n", "\(args)")
        }
        let past = hapsync(["play", "--from", "99", taps], environment: [:])
        #expect(past.status == 64 && past.err.hasPrefix("error: --from 99 is past the pattern's end ("))
    }

    @Test func thePolicyComesFromTheEnvironmentThenTheFlags() throws {
        func policy(_ args: [String], _ environment: [String: String]) throws -> PlaybackOptions {
            try PlaybackOptions(try PlayCommand.command.syntax.parse(args + ["f"]), environment: environment)
        }
        let environment = ["HAPSYNC_HAPTICS": "off", "HAPSYNC_INTENSITY_SCALE": "0.5", "HAPSYNC_RATE_LIMIT_MS": "50"]
        let fromEnvironment = try policy([], environment).policy
        #expect(!fromEnvironment.hapticsEnabled && fromEnvironment.intensityScale == 0.5 && fromEnvironment.rateLimitInterval == 0.05)
        let flagsWin = try policy(["--intensity-scale", "0.8", "--rate-limit-ms", "20"], environment).policy
        #expect(flagsWin.intensityScale == 0.8 && flagsWin.rateLimitInterval == 0.02)
        let defaults = try policy([], [:]).policy
        #expect(defaults.hapticsEnabled && defaults.intensityScale == 1 && defaults.rateLimitInterval == 0.1)
        #expect(try policy(["--no-haptics"], ["HAPSYNC_HAPTICS": "on"]).policy.hapticsEnabled == false)

        let bad = hapsync(["play", taps], environment: ["HAPSYNC_INTENSITY_SCALE": "2"])
        #expect(bad.status == 64 && bad.err == "error: HAPSYNC_INTENSITY_SCALE: '2' is not a number from 0 to 1\nhint: see 'hapsync play --help'\n")
    }

    @Test func feedbackParsesItsOptionsAndThePlayOptionsInOnePass() {
        let late = HapSyncCLITests.hapsync("feedback", "--haptics", "none", "--intensity", "3", "impact-heavy")
        #expect(late.status == 64 && late.err.hasPrefix("error: --intensity must be a number from 0 to 1, not '3'"))
        let list = HapSyncCLITests.hapsync("feedback", "--list", "--haptics", "none")
        #expect(list.status == 64 && list.err.hasPrefix("error: --list takes nothing else (got '--haptics')"))
        let export = HapSyncCLITests.hapsync("feedback", "--export", "/tmp/x", "success")
        #expect(export.status == 64 && export.err.hasPrefix("error: --export DIR takes only --force (got 'success')"))
        let none = HapSyncCLITests.hapsync("feedback")
        #expect(none.status == 64 && none.err.hasPrefix("error: feedback needs a NAME, --list or --export DIR"))
        let two = HapSyncCLITests.hapsync("feedback", "success", "warning")
        #expect(two.status == 64 && two.err.hasPrefix("error: feedback takes one NAME (got 2)"))
        let policy = hapsync(["feedback", "success"], environment: ["HAPSYNC_HAPTICS": "maybe"])
        #expect(policy.status == 64 && policy.err.hasPrefix("error: HAPSYNC_HAPTICS: 'maybe' is not on, off or an output (evdev:PATH, evdev:auto, trace:PATH, waveform:SINK[:rear|mono|left|right|all], waveform:auto or none)"))
    }

    @Test func anExistingTraceIsRefusedBeforeAnythingPlays() throws {
        let trace = try temporaryFile("mine.jsonl", "mine\n")
        let r = HapSyncCLITests.hapsync("feedback", "--haptics", "trace:\(trace.path)", "success")
        #expect(r.status == 1)
        #expect(r.err == "error: \(trace.path) already exists; not overwriting it\nhint: pass --force to replace it, or choose another trace path\n")
        #expect(try String(contentsOf: trace, encoding: .utf8) == "mine\n")
    }
}
