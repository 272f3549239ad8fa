import Foundation
import Glibc
import HapSyncRuntime
import HapSyncSystem
import Synchronization
import Testing
@testable import HapSyncCLI

/// Commands run in process on a console whose streams fail as a real descriptor would (EPIPE, a
/// full disk, a closed descriptor): the exit status says so, the other stream says why when it
/// can, and a command that produces much stops once its output is gone.
@Suite("hapsync in process with output it cannot write")
struct BrokenOutputInProcessTests {
    /// What a stream's writer was handed, and from which call on it fails with `errno`.
    final class FailingWriter: Sendable {
        let failFrom: Int, code: Int32
        let calls = Mutex<[String]>([])
        init(failFrom: Int = 0, errno code: Int32) {
            self.failFrom = failFrom
            self.code = code
        }
        var stream: HapSyncCLI.ConsoleStream {
            HapSyncCLI.ConsoleStream { [self] (bytes) throws(DescriptorWrite.Failure) in
                let n = calls.withLock { c in c.append(String(decoding: bytes, as: UTF8.self)); return c.count - 1 }
                if n >= failFrom { throw DescriptorWrite.Failure(written: 0, errno: SystemErrno(code)) }
            }
        }
        var text: String { calls.withLock { $0.joined() } }
    }

    /// A stream that takes everything.
    static func capturing() -> FailingWriter { FailingWriter(failFrom: .max, errno: 0) }

    static let engine = packageRoot.appendingPathComponent("Assets/engine.ahap").path

    @Test func aPipeNobodyReadsIs141AndQuiet() {
        let out = FailingWriter(errno: EPIPE), err = Self.capturing()
        let status = HapSyncCLI.main(["info", Self.engine], console: HapSyncCLI.Console(out: out.stream, err: err.stream))
        #expect(status == 141)
        #expect(err.text.isEmpty)
    }

    @Test func aFullDiskIsAFailureNamedOnStandardError() {
        let out = FailingWriter(errno: ENOSPC), err = Self.capturing()
        let status = HapSyncCLI.main(["--version"], console: HapSyncCLI.Console(out: out.stream, err: err.stream))
        #expect(status == 1)
        #expect(err.text == "error: cannot write standard output: No space left on device\nhint: what was written before the failure is incomplete\n")
    }

    @Test func aClosedDescriptorSaysSo() {
        let out = FailingWriter(errno: EBADF), err = Self.capturing()
        let status = HapSyncCLI.main(["--help"], console: HapSyncCLI.Console(out: out.stream, err: err.stream))
        #expect(status == 1)
        #expect(err.text == "error: cannot write standard output: Bad file descriptor\nhint: standard output is closed or not open for writing; give the command somewhere to write\n")
    }

    /// A usage error that cannot be said is a failure (1), or 141 into a pipe nobody reads.
    @Test func anUnwritableStandardErrorIsAFailureWithNothingMoreSaid() {
        for (code, status) in [(ENOSPC, Int32(1)), (EBADF, 1), (EPIPE, 141)] {
            let out = Self.capturing(), err = FailingWriter(errno: code)
            #expect(HapSyncCLI.main(["bogus"], console: HapSyncCLI.Console(out: out.stream, err: err.stream)) == status)
            #expect(out.text.isEmpty)
            #expect(err.calls.withLock { $0.count } == 1, "one attempt, nothing after it")
        }
    }

    /// After its first failure a stream hands nothing more to its writer.
    @Test func aStreamWritesNothingAfterItsFirstFailure() {
        let w = FailingWriter(failFrom: 1, errno: ENOSPC)
        let stream = w.stream
        stream.write("one\n")
        #expect(stream.failure == nil)
        stream.write("two\n")
        stream.write("three\n")
        #expect(stream.failure == DescriptorWrite.Failure(written: 0, errno: SystemErrno(ENOSPC)))
        #expect(w.calls.withLock { $0 } == ["one\n", "two\n"])
    }

    /// A signal's status stands (the run was ended by it before the write failed); so does
    /// everything when no write failed.
    @Test func aSignalsStatusStands() {
        let out = FailingWriter(errno: EPIPE), err = Self.capturing()
        let failing = HapSyncCLI.Console(out: out.stream, err: err.stream)
        failing.out("summary\n")
        #expect(HapSyncCLI.settle(130, console: failing) == 130)
        #expect(HapSyncCLI.settle(143, console: failing) == 143)
        #expect(HapSyncCLI.settle(0, console: failing) == 141)
        #expect(HapSyncCLI.settle(64, console: failing) == 141)
        let fine = HapSyncCLI.Console(out: Self.capturing().stream, err: Self.capturing().stream)
        #expect(HapSyncCLI.settle(64, console: fine) == 64 && HapSyncCLI.settle(0, console: fine) == 0)
    }

    /// A console whose standard output fails after its first write: `out` still counts what it is
    /// handed, so a command that kept producing would show.
    final class FailingAfterFirstOutput: Sendable {
        let outs = Mutex<[String]>([])
        var console: HapSyncCLI.Console {
            var console = HapSyncCLI.Console(out: { [self] s in outs.withLock { $0.append(s) } }, err: { _ in })
            console.failures = { [self] in (outs.withLock { $0.isEmpty } ? nil : DescriptorWrite.Failure(written: 0, errno: SystemErrno(EPIPE)), nil) }
            return console
        }
    }

    /// `render` of engine.ahap is 238 KB as jsonl, 113 KB as csv, written in 64 KiB chunks: once
    /// the first chunk has failed no other is written (nor formatted).
    @Test(arguments: ["jsonl", "csv"])
    func renderStopsOnceItsOutputIsGone(_ format: String) {
        let failing = FailingAfterFirstOutput()
        #expect(HapSyncCLI.main(["render", "--format", format, Self.engine], console: failing.console) == 141)
        let written = failing.outs.withLock { $0 }
        #expect(written.count == 1)
        #expect((written.first?.utf8.count ?? 0) >= OutputTarget.Writer.chunkBytes)
        #expect(hapsync("render", "--format", format, Self.engine).out.utf8.count > OutputTarget.Writer.chunkBytes, "more than one chunk to stop")
    }

    /// `validate` checks no further file once standard output is gone.
    @Test(arguments: [false, true])
    func validateStopsOnceItsOutputIsGone(_ json: Bool) {
        let failing = FailingAfterFirstOutput()
        let files = Array(repeating: Self.engine, count: 5)
        #expect(HapSyncCLI.main(["validate"] + (json ? ["--json"] : []) + files, console: failing.console) == 141)
        let reports = failing.outs.withLock { $0 }.filter { $0.contains("engine.ahap") }
        #expect(reports.count == (json ? 0 : 1), "\(reports)")
        let plain = hapsync(["validate"] + (json ? ["--json"] : []) + files)
        #expect(plain.status == 0 && plain.out.components(separatedBy: "engine.ahap").count - 1 == 5)
    }

    /// The one write loop: a full device is ENOSPC with nothing written, a descriptor not open for
    /// writing EBADF (as a closed one is; a closed number could be reused meanwhile by another
    /// test's file), /dev/null takes everything.
    @Test func descriptorWritesReportTheSystemsError() throws {
        let bytes = Array("hello\n".utf8)
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC), null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        let readOnly = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(full >= 0 && null >= 0 && readOnly >= 0)
        defer { close(full); close(null); close(readOnly) }
        try bytes.withUnsafeBytes { raw in
            #expect(throws: DescriptorWrite.Failure(written: 0, errno: SystemErrno(ENOSPC))) { try DescriptorWrite.all(raw, to: full) }
            try DescriptorWrite.all(raw, to: null)
            #expect(throws: DescriptorWrite.Failure(written: 0, errno: SystemErrno(EBADF))) { try DescriptorWrite.all(raw, to: readOnly) }
        }
        #expect(DescriptorWrite.Failure(written: 0, errno: SystemErrno(ENOSPC)).description == "No space left on device")
        #expect(DescriptorWrite.Failure(written: 3, errno: nil).description == "the system wrote nothing")
        #expect(DescriptorWrite.Failure(written: 0, errno: SystemErrno(EPIPE)).isBrokenPipe)
    }
}
