import HapSyncPulseAudio
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

/// What `hapsync live`'s summary counts for each transient it asks of the engine.
@Suite("live: the summary's counts")
struct LiveCountsTests {
    @Test func aStartTheRateLimitMergedIsNotCountedAsATransient() {
        var counts = LiveSession.Counts()
        counts.add(started: true, late: false, lag: 20e6)
        counts.add(started: false, late: false, lag: 20e6)
        counts.add(started: true, late: true, lag: 25e6)
        #expect(counts.transients == 2)
        #expect(counts.merged == 1)
        #expect(counts.late == 1)
        #expect(counts.lags.latest.count == 2, "a merged start has no lag of its own")
    }
}

/// How `hapsync live` lengthens its capture's fragment after underruns where that fragment sets
/// the graph's cycle (pipewire-pulse), and how far behind the sound is then held: at 48 kHz with
/// the detector's 15 ms look-ahead.
@Suite("live: the capture's fragment grown after underruns")
struct LiveCaptureGrowthTests {
    @Test func theFragmentDoublesTwiceAndTheHoldCoversLookAheadAndFragment() throws {
        let first = try #require(LiveFeed.grown(from: 0.005, hold: 960, lookAhead: 0.015, rate: 48_000))
        #expect(first.fragment == 0.010 && first.hold == 1_200, "20 ms → 25 ms")
        let second = try #require(LiveFeed.grown(from: first.fragment, hold: first.hold, lookAhead: 0.015, rate: 48_000))
        #expect(second.fragment == 0.020 && second.hold == 1_680, "→ 35 ms")
        #expect(LiveFeed.grown(from: second.fragment, hold: second.hold, lookAhead: 0.015, rate: 48_000) == nil, "20 ms is the longest")
    }

    @Test func aLongerDelayTheUserAskedForIsKept() throws {
        let grown = try #require(LiveFeed.grown(from: 0.005, hold: 2_400, lookAhead: 0.015, rate: 48_000))
        #expect(grown.fragment == 0.010 && grown.hold == 2_400)
    }

    @Test func onlyWhereTheCapturesFragmentSetsTheGraphsCycle() {
        #expect(PulseConnection.Server(serverName: "PulseAudio (on PipeWire 0.3.65)").captureFragmentSetsCycle)
        #expect(!PulseConnection.Server(serverName: "pulseaudio").captureFragmentSetsCycle)
    }
}
