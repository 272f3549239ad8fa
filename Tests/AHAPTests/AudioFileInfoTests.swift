import AHAP
import Foundation
import Testing

/// The header reader never opens what is not a regular file.
@Suite("Audio file headers")
struct AudioFileInfoTests {
    /// A FIFO (which a blocking open waits on forever) and a device node are refused, by kind,
    /// without blocking. (Today's reader blocks in open(2) on the FIFO: a helper thread opens the
    /// FIFO's write end after 20 s so that it fails instead of hanging; it reads /dev/zero as "not
    /// a WAV or FLAC file".)
    @Test func aFIFOOrDeviceIsNoAudioFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("x.wav")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let path = fifo.path
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 20)
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        #expect {
            try AudioFileInfo(contentsOf: fifo)
        } throws: { error in
            "\(error)" == "\(fifo.path) is a FIFO (named pipe), not a regular file; refusing to read it"
        }
        #expect {
            try AudioFileInfo(contentsOf: URL(fileURLWithPath: "/dev/zero"))
        } throws: { error in
            "\(error)" == "/dev/zero is a character device, not a regular file; refusing to read it"
        }
    }

    @Test func aDirectoryIsNotOpened() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(throws: RegularFile.Failure.notRegular(path: dir.path, kind: "a directory")) { try RegularFile.open(dir.path) }
        #expect(RegularFile.kind(of: dir.appendingPathComponent("nothing").path) == .failure(.cannotOpen(path: dir.appendingPathComponent("nothing").path, reason: "No such file or directory")))
    }
}
