import Foundation
import HapSyncRuntime
import Testing

/// `AudioClockHistory`: a frame is read by the fit that stood when it was heard, not by the final
/// fit (after an underrun, the stream's later frames are heard later by the gap; the earlier ones
/// were not). Checks values, never how long anything took.
@Suite("Audio clock history")
struct AudioClockHistoryTests {
    @Test func framesBeforeAJumpAreReadByTheFitThatStoodThen() throws {
        let clock = AudioClock(sampleRate: 48_000)
        let t0 = MonotonicClock.nanoseconds()
        clock.observe(frame: 0, heardAt: t0)
        let history = AudioClockHistory(clock)
        Thread.sleep(forTimeInterval: 0.1)
        // An underrun: from frame 9600 (0.2 s) on, everything is heard 10 ms later.
        clock.observe(frame: 9_600, heardAt: t0 + 210_000_000)
        Thread.sleep(forTimeInterval: 0.1)
        history.stop()
        let before = try #require(history.heard(0)), after = try #require(history.heard(48_000))
        #expect(abs(Int64(bitPattern: before &- t0)) < 100_000, "frame 0 heard at t0 by the fit then, not 10 ms later: \(Int64(bitPattern: before &- t0)) ns")
        #expect(abs(Int64(bitPattern: after &- (t0 + 1_010_000_000))) < 100_000, "frame 48000 by the fit after the jump")
        #expect(clock.time(ofFrame: 0).map { Int64(bitPattern: $0 &- t0) } ?? 0 > 9_000_000, "the final fit alone would misplace frame 0")
    }

    @Test func aClockWithoutAFitHasNoHistory() {
        let clock = AudioClock(sampleRate: 48_000)
        let history = AudioClockHistory(clock)
        history.stop()
        #expect(history.heard(100) == nil)
    }
}
