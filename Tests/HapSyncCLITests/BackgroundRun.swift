import Foundation
import Glibc
import Testing

/// A `hapsync` command started in the background, its output in files (for `play` runs ended by
/// signals and the `serve` service).
struct BackgroundRun {
    let process = Process()
    let out: URL, err: URL

    init(_ args: [String], in dir: URL, environment: [String: String] = [:], executable: URL? = nil) throws {
        out = dir.appendingPathComponent("out.txt")
        err = dir.appendingPathComponent("err.txt")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.executableURL = try executable ?? BinaryTests.binary()
        process.arguments = args
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
    }

    /// Waits (at most `limit` s, a bound for a broken run) until `ready` holds.
    func wait(atMost limit: Double, until ready: () -> Bool) -> Bool {
        let giveUp = Date().addingTimeInterval(limit)
        while !ready() {
            if Date() > giveUp || !process.isRunning { return ready() }
            usleep(20_000)
        }
        return true
    }

    /// The UDP port a `hapsync serve` on `udp:127.0.0.1:0` says it listens on, once it says so (at
    /// most `limit` s); nil if it never does.
    func servicePort(atMost limit: Double = 30) -> UInt16? {
        var port: UInt16?
        _ = wait(atMost: limit) {
            let said = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
            port = said.range(of: "listening on udp:127.0.0.1:").flatMap { UInt16(said[$0.upperBound...].prefix { $0.isNumber }) }
            return port != nil
        }
        return port
    }

    /// Waits for the end (at most `limit` s: a run that hangs is killed, by its PID, and fails).
    func finish(atMost limit: Double = 120) -> (status: Int32, reason: Process.TerminationReason, out: String, err: String) {
        let ended = wait(atMost: limit) { !process.isRunning }
        if !ended {
            Issue.record("the run did not end within \(limit) s; killed")
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        let o = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        let e = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        return (process.terminationStatus, process.terminationReason, o, e)
    }
}
