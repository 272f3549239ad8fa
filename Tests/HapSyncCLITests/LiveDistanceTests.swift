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

/// What becomes of a transient placed before the pass-through's distance was fixed anew
/// (`LiveSession.replacement`), released 10 ms before it is felt, the fix seen at 1 s, its sound
/// placed at output frame 5000 and the old distance's blocks rendered up to 4000.
@Suite("live: transients placed again after a new distance")
struct LiveReplacementTests {
    let now: UInt64 = 1_000_000_000, lead: UInt64 = 10_000_000

    /// Its sound now at output frame `newFrame` (by default another than it was placed at).
    func decide(_ placedAt: UInt64, _ newAt: UInt64?, outputFrame: Int64 = 5_000, renderedBefore: Int64 = 4_000,
                newFrame: Int64 = 6_000) -> LiveSession.Replacement {
        LiveSession.replacement(placedAt: placedAt, outputFrame: outputFrame, renderedBefore: renderedBefore, newFrame: newFrame,
                                newAt: newAt, lead: lead, now: now)
    }

    @Test func oneNotYetReleasedMovesToWhereItsSoundNowPlays() {
        #expect(decide(now + 30_000_000, now + 14_000_000) == .move(to: now + 14_000_000))
        #expect(decide(now + 30_000_000, now + 50_000_000) == .move(to: now + 50_000_000))
        // Its sound now plays before its release could: moved all the same (the engine plays it at once, late).
        #expect(decide(now + 30_000_000, now + 2_000_000) == .move(to: now + 2_000_000))
    }

    @Test func oneWhoseSoundTheNewDistanceSkipsIsDropped() {
        #expect(decide(now + 30_000_000, nil) == .drop)
    }

    @Test func oneWhoseSoundWentOutAtTheOldDistanceIsLeft() {
        // Output frame 3999 was rendered before the fix: heard where it was placed.
        #expect(decide(now + 30_000_000, nil, outputFrame: 3_999) == .keep)
        #expect(decide(now + 30_000_000, now + 50_000_000, outputFrame: 3_999) == .keep)
        #expect(decide(now + 30_000_000, nil, outputFrame: 4_000) == .drop)
        // The first fix has nothing rendered before it.
        #expect(decide(now + 30_000_000, now + 50_000_000, outputFrame: -5_000, renderedBefore: .min) == .move(to: now + 50_000_000))
    }

    @Test func oneOnTheSameFrameOrAboutToBeReleasedIsLeft() {
        // Placed by frame: the same frame is left whatever the clock now says of it; another
        // frame moves it, even where the clock's estimate of the two times agrees.
        #expect(decide(now + 30_000_000, now + 30_400_000, newFrame: 5_000) == .keep)
        #expect(decide(now + 30_000_000, now + 30_000_000, newFrame: 5_001) == .move(to: now + 30_000_000))
        // Its release (10 ms before 1.012 s) is 2 ms away or less: a move could come after it.
        #expect(decide(now + 12_000_000, now + 40_000_000) == .keep)
        #expect(decide(now + 12_000_000, nil) == .keep)
        #expect(decide(now + 12_000_001, now + 40_000_000) == .move(to: now + 40_000_000))
        // Released already: what went out stays out.
        #expect(decide(now + 5_000_000, nil) == .keep)
    }
}

/// The onset log read back with each onset's last word (`LiveOnsetLog.settled`).
@Suite("live: the onset log's second lines")
struct LiveOnsetLogSettledTests {
    static func line(_ frame: Int64, _ outcome: String, _ at: UInt64?) -> LiveOnsetLog.Line {
        LiveOnsetLog.Line(frame: frame, time: Double(frame) / 48_000, firstSound: 0, loudness: 0.5, centroid: 200, outcome: outcome, transientAt: at)
    }

    @Test func aMovedOrDroppedLineStandsInForItsOnsetsFirst() {
        let lines = [Self.line(100, "transient", 5), Self.line(200, "transient", 6), Self.line(300, "below floor", nil),
                     Self.line(100, "moved", 9), Self.line(200, "dropped", nil), Self.line(400, "transient", 10)]
        #expect(LiveOnsetLog.settled(lines) == [Self.line(100, "moved", 9), Self.line(200, "dropped", nil), Self.line(300, "below floor", nil),
                                                Self.line(400, "transient", 10)])
        #expect(LiveOnsetLog.settled([Self.line(100, "transient", 5), Self.line(100, "transient", 7)]).count == 2,
                "two onsets at one frame (a capture made anew numbers on, never back) are both kept")
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

    /// The step back: after a calm spell, at once where what it would skip is quiet; else only
    /// after twice that spell.
    @Test func aGrownCaptureStepsBackAfterACalmSpellInAQuietMomentOrAfterTwiceThat() {
        #expect(!LiveFeed.stepsBack(sinceUnderrun: 59.9, calm: 60, quiet: true))
        #expect(LiveFeed.stepsBack(sinceUnderrun: 60, calm: 60, quiet: true))
        #expect(!LiveFeed.stepsBack(sinceUnderrun: 119.9, calm: 60, quiet: false), "sound playing: wait for a quiet moment")
        #expect(LiveFeed.stepsBack(sinceUnderrun: 120, calm: 60, quiet: false), "none came: anyway")
    }

    @Test func onlyWhereTheCapturesFragmentSetsTheGraphsCycle() {
        #expect(PulseConnection.Server(serverName: "PulseAudio (on PipeWire 0.3.65)").captureFragmentSetsCycle)
        #expect(!PulseConnection.Server(serverName: "pulseaudio").captureFragmentSetsCycle)
    }
}
