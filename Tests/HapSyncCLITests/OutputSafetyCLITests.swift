import Foundation
import Glibc
import HapSyncTestSupport
import Testing

/// What `hapsync` writes: never a rename over a device or FIFO, every trace write checked, trace
/// memory bounded however many loops.
@Suite("hapsync writes: special files, full disks, long runs")
struct OutputSafetyCLITests {
    let engineAHAP = packageRoot.appendingPathComponent("Assets/engine.ahap").path

    private func fileKind(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0
    }

    /// `render --out /dev/null --force` as root renamed a regular file over /dev/null; `--out` of a
    /// FIFO replaced the FIFO. Both are written into now; a directory is refused.
    @Test func renderAndPlotWriteIntoDevicesAndFIFOs() throws {
        let dirFolder = try TemporaryDirectory("fifo")
        let dir = dirFolder.url
        defer { dirFolder.remove() }
        let r = try BinaryTests.run(["render", "--out", "/dev/null", "--force", engineAHAP])
        #expect(r.status == 0, "\(r.err)")
        #expect(fileKind("/dev/null") == S_IFCHR, "/dev/null is still the null device")

        let fifo = dir.appendingPathComponent("svg-pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader on the FIFO, as a pipeline would have: it collects everything written.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        // Read while it writes: the plot is larger than a pipe holds.
        let plot = Process()
        plot.executableURL = try BinaryTests.binary()
        plot.arguments = ["plot", "--out", fifo, "--force", engineAHAP]
        plot.standardError = FileHandle.nullDevice
        try plot.run()
        var text = [UInt8](), buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(reader, &buffer, buffer.count)
            if n > 0 { text += buffer[..<n]; continue }
            // 0 before the writer opened it or after it closed it; EAGAIN while it writes.
            if !plot.isRunning, n == 0 || errno != EAGAIN { break }
            usleep(2_000)
        }
        plot.waitUntilExit()
        #expect(plot.terminationStatus == 0)
        #expect(String(decoding: text, as: UTF8.self).hasPrefix("<svg"), "the reader got the plot")
        #expect(fileKind(fifo) == S_IFIFO, "the FIFO is still a FIFO")

        let noReader = dir.appendingPathComponent("lonely").path
        #expect(mkfifo(noReader, 0o600) == 0)
        let refused = try BinaryTests.run(["render", "--out", noReader, engineAHAP])
        #expect(refused.status == 1 && refused.err.contains("is a FIFO (named pipe) that nothing reads"), "\(refused.err)")
        let folder = try BinaryTests.run(["render", "--out", dir.path, "--force", engineAHAP])
        #expect(folder.status == 1 && folder.err.contains("\(dir.path) is a directory; refusing to write to it"), "\(folder.err)")
    }

    /// A full disk used to cut the trace mid-record while `play` exited 0 reporting every record
    /// written. Now: exit status 1, the system's reason, and the file is valid JSON Lines holding
    /// exactly the records the message says.
    @Test func aTraceThatCannotBeWrittenFailsThePlay() throws {
        let full = try BinaryTests.run(["play", "--audio", "none", "--haptics", "trace:/dev/full", engineAHAP])
        #expect(full.status == 1 && full.err.contains("cannot write /dev/full: No space left on device"), "\(full.err)")
        // Said while it happens, not only at the end: a warning before the summary's error.
        let warning = full.err.range(of: "warning: trace: cannot write /dev/full"), error = full.err.range(of: "error: trace:")
        #expect(warning != nil && error != nil && warning!.lowerBound < error!.lowerBound, "\(full.err)")

        // A file size limit of 4 blocks (2 KiB: dash counts 512-byte blocks) stands in for a full
        // disk (EFBIG instead of ENOSPC).
        let traceFolder = try TemporaryDirectory("efbig")
        defer { traceFolder.remove() }
        let trace = traceFolder.file("efbig.jsonl")
        let shell = try BinaryTests.run(["-c", "ulimit -f 4; exec \"$0\" play --audio none --loop 5 --haptics trace:\(trace.path) \(engineAHAP)",
                                         try BinaryTests.binary().path], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(shell.status == 1, "\(shell.err)")
        let message = try #require(shell.err.split(separator: "\n").first { $0.contains("File too large") }, "\(shell.err)")
        let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "the file ends with a whole record")
        for line in lines.dropLast() {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
        }
        #expect(message.contains("the trace holds the first \(lines.count - 1) records, whole"), "\(message)")
    }

    /// `play --loop 1000000` reserved trace memory for every loop up front (5.9 GB in 15 s). The
    /// trace streams to disk now: the process stays small while the trace grows.
    @Test func traceMemoryIsBoundedHoweverManyLoops() throws {
        let traceFolder = try TemporaryDirectory("loops")
        defer { traceFolder.remove() }
        let trace = traceFolder.file("loops.jsonl")
        let p = Process()
        p.executableURL = try BinaryTests.binary()
        p.arguments = ["play", "--audio", "none", "--loop", "1000000", "--haptics", "trace:\(trace.path)", engineAHAP]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Until the trace holds a few hundred records (bounded: a broken run fails, not hangs).
        var records = 0
        for _ in 0..<600 where records < 300 {
            usleep(50_000)
            records = ((try? String(contentsOf: trace, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        let status = (try? String(contentsOfFile: "/proc/\(p.processIdentifier)/status", encoding: .utf8)) ?? ""
        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        #expect(records >= 300, "the trace is written while playing")
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? Int.max
        #expect(rss < 200_000, "resident \(rss) kB")
        #expect(p.terminationStatus == 130)
    }
}
