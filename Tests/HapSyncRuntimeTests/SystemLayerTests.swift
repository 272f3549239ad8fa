import Glibc
import HapSyncSystem
import Testing
@testable import HapSyncRuntime

/// The runtime's one system-call layer: errno's messages and the wall clock.
@Suite("System layer: errno messages and the wall clock")
struct SystemLayerTests {
    @Test func errnoHasItsMessageAloneAndWithItsCode() {
        #expect(SystemErrno(EACCES).message == "Permission denied")
        #expect(SystemErrno(EACCES).description == "Permission denied (errno 13)")
        errno = ENOENT
        #expect(SystemErrno.current == SystemErrno(ENOENT))
    }

    /// The offset read now puts the wall clock where it is: a read of each clock moved by it
    /// agrees with the other within the bracket (and a generous second for a preempted test).
    @Test func theWallClockOffsetMapsOneClockOntoTheOther() {
        let (offset, uncertainty) = WallClock.offset()
        #expect(uncertainty < 1_000_000_000)
        let mono = Int64(bitPattern: Syscalls.monotonicNanoseconds())
        let wall = WallClock.nanoseconds()
        #expect(abs(wall - (mono + offset)) < 1_000_000_000)
        #expect(wall > 1_600_000_000 * 1_000_000_000, "nanoseconds since 1970, after 2020")
    }
}
