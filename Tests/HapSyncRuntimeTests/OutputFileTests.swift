import Foundation
import Glibc
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// `OutputFile`'s rules: a regular file is replaced only when asked, a device or FIFO is written
/// into (never renamed over), a directory is refused, writes and closes are checked.
@Suite("OutputFile: what a write may replace")
struct OutputFileTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory
    var dir: URL { scratch.url }

    init() throws {
        scratch = try TemporaryDirectory("out")
    }

    private func kind(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0
    }

    @Test func aNewFileIsCreatedAndAnExistingOneKeptUnlessReplacing() throws {
        let path = dir.appendingPathComponent("a.json").path
        try OutputFile.write("one\n", to: path, replacing: false)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\n")
        #expect(throws: OutputFile.Failure.exists(path: path)) { try OutputFile.write("two\n", to: path, replacing: false) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\n")
        try OutputFile.write("two\n", to: path, replacing: true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "two\n")
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["a.json"])
    }

    /// The permissions of a replaced file stay; a link is followed and stays a link.
    @Test func replacingKeepsPermissionsAndLinks() throws {
        let real = dir.appendingPathComponent("real.svg").path, link = dir.appendingPathComponent("link.svg").path
        try OutputFile.write("old", to: real, replacing: false)
        chmod(real, 0o640)
        symlink(real, link)
        try OutputFile.write("new", to: link, replacing: true)
        #expect(kind(link) == S_IFLNK, "the link is still a link")
        #expect(try String(contentsOfFile: real, encoding: .utf8) == "new")
        var st = stat()
        stat(real, &st)
        #expect(st.st_mode & 0o777 == 0o640)
    }

    /// `--out /dev/null --force` as root used to rename a regular file over the system's null device.
    @Test func aCharacterDeviceIsWrittenIntoNeverReplaced() throws {
        try OutputFile.write("discarded\n", to: "/dev/null", replacing: true)
        try OutputFile.write("discarded\n", to: "/dev/null", replacing: false)
        #expect(kind("/dev/null") == S_IFCHR, "/dev/null is still a character device")
        // Its failures are reported: /dev/full has no space.
        #expect(throws: OutputFile.Failure.writeFailed(path: "/dev/full", reason: "No space left on device")) {
            try OutputFile.write("x", to: "/dev/full", replacing: true)
        }
    }

    @Test func aFIFOIsWrittenIntoWhenReadAndRefusedWithoutAReader() throws {
        let fifo = dir.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: OutputFile.Failure.noReader(path: fifo)) { try OutputFile.write("x", to: fifo, replacing: true) }
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        try OutputFile.write("through the pipe\n", to: fifo, replacing: true)
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(reader, &buffer, buffer.count)
        #expect(n > 0 && String(decoding: buffer[..<n], as: UTF8.self) == "through the pipe\n")
        #expect(kind(fifo) == S_IFIFO, "still a FIFO")
    }

    @Test func directoriesAndSocketsAreRefused() throws {
        #expect(throws: OutputFile.Failure.refusedKind(path: dir.path, kind: "a directory")) {
            try OutputFile.write("x", to: dir.path, replacing: true)
        }
        let sock = dir.appendingPathComponent("s").path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in sock.utf8.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0)
        #expect(throws: OutputFile.Failure.refusedKind(path: sock, kind: "a socket")) { try OutputFile.write("x", to: sock, replacing: true) }
        #expect(kind(sock) == S_IFSOCK)
    }

    /// A stream is written in place; `.append` goes on after what is there and never truncates.
    @Test func streamAndAppend() throws {
        let path = dir.appendingPathComponent("t.jsonl").path
        let first = try OutputFile.create(path, replacing: false, mode: .stream)
        try first.write("1\n")
        try first.commit()
        let again = try OutputFile.create(path, replacing: false, mode: .append)
        #expect(again.bytesWritten == 2)
        try again.write("2\n")
        try again.commit()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "1\n2\n")
        // A cut-back after a failed write keeps whole records.
        let third = try OutputFile.create(path, replacing: false, mode: .append)
        try third.write("3 and half a rec")
        try third.truncate(to: 4)
        try third.commit()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "1\n2\n")
    }
}
