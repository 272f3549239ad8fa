import Testing
@testable import HapSyncCLI

/// When `hapsync live` takes the sound played on back to its hold behind the capture
/// (`LiveSession.setsDistanceAnew`), at a 20 ms hold (960 frames at 48 kHz).
@Suite("live: the pass-through's distance fixed anew")
struct LiveDistanceTests {
    let hold: Int64 = 960

    @Test func anUnderrunSetsItAnewSoItsGapDoesNotStay() {
        #expect(LiveSession.setsDistanceAnew(lateChecks: 0, underran: true, behind: hold, hold: hold))
        #expect(!LiveSession.setsDistanceAnew(lateChecks: 0, underran: false, behind: hold, hold: hold))
    }

    @Test func threeLateChecksRunningOrFallingFarBehindDoToo() {
        #expect(!LiveSession.setsDistanceAnew(lateChecks: 2, underran: false, behind: hold, hold: hold))
        #expect(LiveSession.setsDistanceAnew(lateChecks: 3, underran: false, behind: hold, hold: hold))
        // Twice the hold and 100 ms: 6720 frames.
        #expect(!LiveSession.setsDistanceAnew(lateChecks: 0, underran: false, behind: 6_720, hold: hold))
        #expect(LiveSession.setsDistanceAnew(lateChecks: 0, underran: false, behind: 6_721, hold: hold))
        #expect(!LiveSession.setsDistanceAnew(lateChecks: 0, underran: false, behind: nil, hold: hold), "nothing played yet")
    }
}
