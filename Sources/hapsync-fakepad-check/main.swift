import Foundation

// hapsync-fakepad-check: reads the logs of the real-kernel test on the host and checks them
// against HapSync's rumble rules (see LogCheck).
//
//   hapsync-fakepad-check --pad PAD.jsonl --trace TRACE.jsonl [--killed PAD2.jsonl]
//                         [--interval-ms 10] [--burst-ms 30] [--window-ms 250] [--any-pattern]
//   hapsync-fakepad-check --MODEL PAD.jsonl --trace TRACE.jsonl [--interval-ms 10]
//                         [--killed PAD2.jsonl] [--unplugged PAD3.jsonl --unplugged-trace TRACE3.jsonl]
//
// MODEL: a pad fake-hid-pad fakes (HIDPadCheck.models: dualsense, dualsense-bt, dualshock4, ...).
// --any-pattern: the trace is not rumble-steps.ahap (Apple's sample code): the rules are checked,
// not that the pattern exercises them.

func value(_ args: [String], _ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func warn(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

/// Prints a check's report and its verdict, and exits with 0 when it passed, else 1.
func finish(report: [String], failures: [String], pass: String) -> Never {
    for line in report { print("  " + line) }
    guard failures.isEmpty else {
        for f in failures { print("FAIL: " + f) }
        exit(1)
    }
    print("PASS: " + pass)
    exit(0)
}

/// Runs `body`, which reads the logs; a log that cannot be read ends the program with status 1.
func reading(_ body: () throws -> Void) {
    do { try body() } catch {
        warn("hapsync-fakepad-check: cannot read the logs: \(error)\n")
        exit(1)
    }
}

let args = Array(CommandLine.arguments.dropFirst())
let ms = { (name: String, d: UInt64) in (value(args, name).flatMap { UInt64($0) } ?? d) * 1_000_000 }
// A real pad faked over uhid, driven through its kernel driver.
if let (model, padLog) = HIDPadCheck.models.lazy.compactMap({ m in value(args, "--" + m.name).map { (m, $0) } }).first {
    guard let tracePath = value(args, "--trace") else {
        warn("usage: hapsync-fakepad-check --\(model.name) PAD.jsonl --trace TRACE.jsonl\n")
        exit(64)
    }
    guard ms("--interval-ms", 10) > 0 else {
        warn("hapsync-fakepad-check: --interval-ms must be at least 1\n")
        exit(64)
    }
    guard (value(args, "--unplugged") == nil) == (value(args, "--unplugged-trace") == nil) else {
        warn("hapsync-fakepad-check: --unplugged PAD.jsonl and --unplugged-trace TRACE.jsonl go together\n")
        exit(64)
    }
    let check = HIDPadCheck(model: model, interval: ms("--interval-ms", 10), burst: ms("--burst-ms", 30))
    reading {
        check.check(pad: try HIDPadCheck.log(padLog), trace: try LogCheck.trace(tracePath))
        if let killed = value(args, "--killed") { check.checkKilled(pad: try HIDPadCheck.log(killed)) }
        if let unplugged = value(args, "--unplugged"), let trace = value(args, "--unplugged-trace") {
            check.checkUnplugged(pad: try HIDPadCheck.log(unplugged), trace: try LogCheck.trace(trace))
        }
    }
    finish(report: check.report, failures: check.failures, pass: "the \(model.name)'s own output reports carry what HapSync's rumble rules say")
}
guard let padPath = value(args, "--pad"), let tracePath = value(args, "--trace") else {
    warn("usage: hapsync-fakepad-check --pad PAD.jsonl --trace TRACE.jsonl [--killed PAD2.jsonl]\n")
    exit(64)
}
let check = LogCheck(interval: ms("--interval-ms", 10), burst: ms("--burst-ms", 30), window: ms("--window-ms", 250),
                     exercising: !args.contains("--any-pattern"))
reading {
    check.checkPlayback(pad: try LogCheck.pad(padPath), trace: try LogCheck.trace(tracePath))
    if let killed = value(args, "--killed") { check.checkKilled(pad: try LogCheck.pad(killed)) }
}
finish(report: check.report, failures: check.failures, pass: "the device saw what HapSync's rumble rules say")
