import Foundation
import Glibc
import HapSyncTestSupport
import Testing

/// The built `hapsync` started with its standard output or error somewhere that cannot be written:
/// a pipe nobody reads, a pipe whose reader leaves after 10 bytes, /dev/full, a closed descriptor.
/// What Unix tools do: a closed pipe ends the run quietly (141, as a shell reports a tool SIGPIPE
/// ended); a full disk or a closed descriptor is a failure (1) said on the other stream when it can
/// be; never a crash. (Before: every one of these was a SIGILL, exit status 132, and a backtrace,
/// from `FileHandle.write`'s trap.)
@Suite("hapsync with output it cannot write")
struct BrokenOutputBinaryTests {
    /// Where the child's standard output or error goes.
    enum Stream {
        /// A file, read back after the run.
        case captured
        /// A path opened for writing (/dev/full).
        case path(String)
        /// Not open at all (`>&-`).
        case closed
        /// A pipe whose read end is closed before the child starts.
        case pipeWithoutReader
        /// A pipe read for `n` bytes, then closed while the child still writes.
        case pipeClosedAfter(Int)
    }

    /// How the child ended, and what it wrote where it was captured.
    struct Outcome: CustomStringConvertible {
        var exitStatus: Int32?
        var signal: Int32?
        var timedOut: Bool
        var out: String
        var err: String
        var description: String {
            "exit \(exitStatus.map(String.init) ?? "-") signal \(signal.map(String.init) ?? "-")\(timedOut ? " timed out" : ""); stdout: \(out.prefix(200)) stderr: \(err.prefix(600))"
        }
        /// Ended by its own exit, with no crash report.
        var clean: Bool { exitStatus != nil && !timedOut && !err.contains("crashed") && !err.contains("Fatal error") && !err.contains("Backtrac") }
    }

    /// Runs the binary with `args`, fd 1 and fd 2 set up as `out` and `err` (posix_spawn, so that a
    /// descriptor can be left closed), killing it by its PID after 60 s.
    static func run(_ args: [String], out: Stream, err: Stream, during: (pid_t) -> Void = { _ in }) throws -> Outcome {
        let binary = try BinaryTests.binary().path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentCloses: [Int32] = [], captures: [(fd: Int32, url: URL)] = [], readers: [(fd: Int32, bytes: Int)] = []
        defer { for fd in parentCloses { close(fd) } }
        for (target, stream) in [(Int32(1), out), (Int32(2), err)] {
            switch stream {
            case .captured:
                let url = try TemporaryDirectory.create("broken").appendingPathComponent("captured")
                let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                try #require(fd >= 0)
                posix_spawn_file_actions_adddup2(&actions, fd, target)
                parentCloses.append(fd)
                captures.append((target, url))
            case .path(let path):
                let fd = open(path, O_WRONLY | O_CLOEXEC)
                try #require(fd >= 0, "cannot open \(path)")
                posix_spawn_file_actions_adddup2(&actions, fd, target)
                parentCloses.append(fd)
            case .closed:
                posix_spawn_file_actions_addclose(&actions, target)
            case .pipeWithoutReader, .pipeClosedAfter:
                var fds: [Int32] = [0, 0]
                try #require(Self.pipe2(&fds, O_CLOEXEC) == 0)
                posix_spawn_file_actions_adddup2(&actions, fds[1], target)
                parentCloses.append(fds[1])
                if case .pipeClosedAfter(let n) = stream { readers.append((fds[0], n)) } else { close(fds[0]) }
            }
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + args).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        try #require(rc == 0, "posix_spawn: \(String(cString: strerror(rc)))")
        for fd in parentCloses { close(fd) }
        parentCloses = []
        for (fd, bytes) in readers {
            var buffer = [UInt8](repeating: 0, count: bytes)
            var got = 0
            while got < bytes {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, bytes - got) }
                if n <= 0 { break }
                got += n
            }
            close(fd)
        }
        during(pid)
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(60)
        var timedOut = false
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                timedOut = true
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                break
            }
            usleep(5_000)
        }
        var outcome = Outcome(exitStatus: status & 0x7F == 0 ? (status >> 8) & 0xFF : nil, signal: status & 0x7F == 0 ? nil : status & 0x7F,
                              timedOut: timedOut, out: "", err: "")
        for (fd, url) in captures {
            let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            if fd == 1 { outcome.out = text } else { outcome.err = text }
            try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
        }
        return outcome
    }

    /// pipe2(2), which Swift's Glibc module does not declare: both ends close-on-exec from the
    /// start, so a child another test spawns meanwhile cannot hold this pipe open.
    static let pipe2: @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else { fatalError("no pipe2 in the C library") }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    }()

    static let engine = packageRoot.appendingPathComponent("Assets/engine.ahap").path

    /// Commands that write to standard output, each a few hundred bytes or more.
    static let printing: [[String]] = [
        ["render", engine], ["render", "--format", "csv", engine], ["info", engine], ["info", "--json", engine],
        ["validate", engine], ["validate", "--json", engine, engine], ["--help"], ["validate", "--help"], ["--version"],
        ["spring", "--response", "0.4", "--damping", "0.7"], ["feedback", "--list"],
    ]

    @Test(arguments: printing)
    func aPipeNobodyReadsEndsTheRunQuietly(_ args: [String]) throws {
        let r = try Self.run(args, out: .pipeWithoutReader, err: .captured)
        #expect(r.clean, "\(args): \(r)")
        #expect(r.exitStatus == 141, "\(args): \(r)")
        #expect(r.err.isEmpty, "\(args): quiet, as other tools are: \(r)")
    }

    /// `render` of engine.ahap writes 238 KB, more than a pipe holds (64 KiB): the reader leaving
    /// after 10 bytes is seen while the run still writes.
    @Test(arguments: [["render", engine], ["render", "--format", "csv", engine]])
    func aReaderThatLeavesEarlyEndsTheRunQuietly(_ args: [String]) throws {
        let r = try Self.run(args, out: .pipeClosedAfter(10), err: .captured)
        #expect(r.clean && r.exitStatus == 141 && r.err.isEmpty, "\(args): \(r)")
    }

    @Test(arguments: printing)
    func aFullDiskIsAFailureSaidOnStandardError(_ args: [String]) throws {
        let r = try Self.run(args, out: .path("/dev/full"), err: .captured)
        #expect(r.clean && r.exitStatus == 1, "\(args): \(r)")
        #expect(r.err.hasSuffix("error: cannot write standard output: No space left on device\nhint: what was written before the failure is incomplete\n"), "\(args): \(r)")
    }

    @Test(arguments: printing)
    func aClosedStandardOutputIsAFailureSaidOnStandardError(_ args: [String]) throws {
        let r = try Self.run(args, out: .closed, err: .captured)
        #expect(r.clean && r.exitStatus == 1, "\(args): \(r)")
        #expect(r.err.hasSuffix("error: cannot write standard output: Bad file descriptor\nhint: standard output is closed or not open for writing; give the command somewhere to write\n"), "\(args): \(r)")
    }

    /// Errors go to standard error: when it cannot be written the run fails (1; 141 for a pipe
    /// nobody reads) and says nothing more. A usage error is then 1, not 64: what went wrong
    /// first is that nothing could be said.
    @Test(arguments: [["bogus"], ["info", "/nonexistent/x.ahap"], ["render", "/nonexistent/x.ahap"], ["validate", "--bogus"]])
    func anUnwritableStandardErrorIsAFailure(_ args: [String]) throws {
        for (err, status) in [(Stream.path("/dev/full"), Int32(1)), (.closed, 1), (.pipeWithoutReader, 141)] {
            let r = try Self.run(args, out: .captured, err: err)
            #expect(r.clean && r.exitStatus == status, "\(args) with stderr \(err): \(r)")
            #expect(r.out.isEmpty, "\(args): \(r)")
        }
    }

    /// A command that prints nothing on the stream that fails is not affected by it.
    @Test func onlyTheStreamsACommandUsesMatter() throws {
        let svgFolder = try TemporaryDirectory("broken")
        defer { svgFolder.remove() }
        let svg = svgFolder.file("broken.svg")
        let plot = try Self.run(["plot", "--out", svg.path, Self.engine], out: .pipeWithoutReader, err: .path("/dev/full"))
        #expect(plot.clean && plot.exitStatus == 0, "\(plot)")
        #expect(FileManager.default.fileExists(atPath: svg.path))
        let help = try Self.run(["--help"], out: .captured, err: .closed)
        #expect(help.clean && help.exitStatus == 0 && help.out.contains("USAGE: hapsync"), "\(help)")
        let unknown = try Self.run(["bogus"], out: .closed, err: .captured)
        #expect(unknown.clean && unknown.exitStatus == 64 && unknown.err.hasPrefix("error: unknown command 'bogus'"), "\(unknown)")
    }

    /// `play` stops the backend and finishes its trace before its summary; a summary (or a note
    /// on standard error) that cannot be printed changes the exit status, not the cleanup: the
    /// trace is whole, ending with the stop-all record. (Before: a crash after the trace.)
    @Test func playFinishesItsTraceWhenItsOutputIsGone() throws {
        let dirFolder = try TemporaryDirectory("broken")
        let dir = dirFolder.url
        defer { dirFolder.remove() }
        let cases: [(out: Stream, err: Stream, status: Int32)] = [(.pipeWithoutReader, .captured, 141), (.path("/dev/full"), .captured, 1),
                                                                  (.closed, .captured, 1), (.captured, .path("/dev/full"), 1)]
        for (i, c) in cases.enumerated() {
            let trace = dir.appendingPathComponent("trace-\(i).jsonl")
            let r = try Self.run(["play", "--haptics", "trace:\(trace.path)", "--audio", "none", Self.engine], out: c.out, err: c.err)
            #expect(r.clean && r.exitStatus == c.status, "\(c): \(r)")
            let records = ((try? String(contentsOf: trace, encoding: .utf8)) ?? "").split(separator: "\n").map {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
            #expect(records.count > 100 && records.allSatisfy { $0 != nil }, "\(c): \(records.count) records")
            #expect(records.last??["kind"] as? String == "stop-all", "\(c)")
            if case .captured = c.out { #expect(r.out.contains("played      "), "\(c): \(r)") }
        }
    }

    /// With standard output closed, a file the command opens must not take descriptor 1 and
    /// receive what was meant for standard output: `serve` prints its "listening" line while its
    /// trace is open, and the trace holds trace records only. (Before, with descriptor 1 free,
    /// the trace was opened on it and the line went into the trace.)
    @Test func aClosedStandardOutputIsNotReusedByAFileTheCommandOpens() throws {
        let dirFolder = try TemporaryDirectory("broken")
        let dir = dirFolder.url
        defer { dirFolder.remove() }
        let trace = dir.appendingPathComponent("trace.jsonl"), socket = dir.appendingPathComponent("osc.sock")
        var started = false
        let r = try Self.run(["serve", "--osc", "unix:\(socket.path)", "--haptics", "trace:\(trace.path)", "--audio", "none"],
                             out: .closed, err: .captured) { pid in
            let deadline = Date().addingTimeInterval(30)
            while !FileManager.default.fileExists(atPath: socket.path), Date() < deadline { usleep(20_000) }
            started = FileManager.default.fileExists(atPath: socket.path)
            usleep(200_000)   // past the "listening" line, which follows the socket's creation
            kill(pid, SIGTERM)
        }
        #expect(started, "serve did not start: \(r)")
        #expect(r.clean && r.exitStatus == 1, "\(r)")
        #expect(r.err.contains("error: cannot write standard output: Bad file descriptor"), "\(r)")
        let text = (try? String(contentsOf: trace, encoding: .utf8)) ?? ""
        #expect(!text.contains("hapsync serve"), "the console's lines went into the trace: \(text.prefix(300))")
        #expect(text.split(separator: "\n").allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil }, "\(text.prefix(300))")
    }
}
