import Foundation

// hapsync-fakepad-check: reads the logs of the real-kernel test on the host and checks them
// against HapSync's rumble rules (see LogCheck).
//
//   hapsync-fakepad-check --pad PAD.jsonl --trace TRACE.jsonl [--killed PAD2.jsonl]
//                         [--interval-ms 10] [--burst-ms 30] [--window-ms 250] [--any-pattern]
//   hapsync-fakepad-check --dualsense|--dualshock4 PAD.jsonl --trace TRACE.jsonl [--interval-ms 10]
//                         [--killed PAD2.jsonl] [--unplugged PAD3.jsonl --unplugged-trace TRACE3.jsonl]
//
// --any-pattern: the trace is not rumble-steps.ahap (Apple's sample code): the rules are checked,
// not that the pattern exercises them.

func value(_ args: [String], _ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func warn(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

let args = Array(CommandLine.arguments.dropFirst())
// A real pad faked over uhid, driven through its kernel driver.
if let (model, padLog) = [HIDPadCheck.dualsense, HIDPadCheck.dualshock4].lazy.compactMap({ m in value(args, "--" + m.name).map { (m, $0) } }).first {
    guard let tracePath = value(args, "--trace") else {
        warn("usage: hapsync-fakepad-check --\(model.name) PAD.jsonl --trace TRACE.jsonl\n")
        exit(64)
    }
    let check = HIDPadCheck(model: model, interval: (value(args, "--interval-ms").flatMap { UInt64($0) } ?? 10) * 1_000_000)
    do {
        check.check(pad: try HIDPadCheck.log(padLog), trace: try LogCheck.trace(tracePath))
        if let killed = value(args, "--killed") { check.checkKilled(pad: try HIDPadCheck.log(killed)) }
        if let unplugged = value(args, "--unplugged"), let trace = value(args, "--unplugged-trace") {
            check.checkUnplugged(pad: try HIDPadCheck.log(unplugged), trace: try LogCheck.trace(trace))
        }
    } catch {
        warn("hapsync-fakepad-check: cannot read the logs: \(error)\n")
        exit(1)
    }
    for line in check.report { print("  " + line) }
    if check.failures.isEmpty {
        print("PASS: the \(model.name)'s own output reports carry what HapSync's rumble rules say")
        exit(0)
    }
    for f in check.failures { print("FAIL: " + f) }
    exit(1)
}
guard let padPath = value(args, "--pad"), let tracePath = value(args, "--trace") else {
    warn("usage: hapsync-fakepad-check --pad PAD.jsonl --trace TRACE.jsonl [--killed PAD2.jsonl]\n")
    exit(64)
}
let ms = { (name: String, d: UInt64) in (value(args, name).flatMap { UInt64($0) } ?? d) * 1_000_000 }
let check = LogCheck(interval: ms("--interval-ms", 10), burst: ms("--burst-ms", 30), window: ms("--window-ms", 250),
                     exercising: !args.contains("--any-pattern"))
do {
    check.checkPlayback(pad: try LogCheck.pad(padPath), trace: try LogCheck.trace(tracePath))
    if let killed = value(args, "--killed") { check.checkKilled(pad: try LogCheck.pad(killed)) }
} catch {
    warn("hapsync-fakepad-check: cannot read the logs: \(error)\n")
    exit(1)
}
for line in check.report { print("  " + line) }
if check.failures.isEmpty {
    print("PASS: the device saw what HapSync's rumble rules say")
} else {
    for f in check.failures { print("FAIL: " + f) }
    exit(1)
}
