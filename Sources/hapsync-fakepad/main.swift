import Glibc

// hapsync-fakepad: a fake rumble gamepad on /dev/uinput for the real-kernel test (.ci/vm-evdev-test).
// Glibc only, so the VM's initramfs stays small; hapsync-fakepad-check reads its logs on the host.
//
//   hapsync-fakepad serve --log PAD.jsonl

nonisolated(unsafe) var stopRequested: sig_atomic_t = 0
nonisolated(unsafe) var markRequested: sig_atomic_t = 0

func warn(_ text: String) {
    _ = text.withCString { Glibc.write(2, $0, strlen($0)) }
}

func value(_ args: [String], _ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

let args = Array(CommandLine.arguments.dropFirst())
switch args.first {
case "serve":
    guard let logPath = value(args, "--log") else {
        warn("usage: hapsync-fakepad serve --log PAD.jsonl\n")
        exit(64)
    }
    signal(SIGTERM) { _ in stopRequested = 1 }
    signal(SIGINT) { _ in stopRequested = 1 }
    signal(SIGUSR1) { _ in markRequested = 1 }
    do {
        let pad = try FakePad(logPath: logPath)
        pad.run(stop: { stopRequested != 0 }, mark: {
            defer { markRequested = 0 }
            return markRequested != 0
        })
    } catch {
        warn("hapsync-fakepad: \(error)\n")
        exit(1)
    }
default:
    warn("usage: hapsync-fakepad serve --log PAD.jsonl\n")
    exit(64)
}
