import HapSyncPulseAudio
import HapSyncRuntime
import Testing

/// `MonitorCapture.HandlerTimes`: what the live capture's handler cost its thread, per call and
/// in the busiest 100 ms window.
@Suite("Capture handler times")
struct CaptureHandlerTimesTests {
    @Test func theBusiestWindowSumsTheCallsThatBeganInIt() {
        let t = MonitorCapture.HandlerTimes()
        #expect(t.busiestWindow == 0 && t.perFragment.count == 0)
        // A call of 0.1 ms every 5 ms for a second: 20 in each window, 2 ms.
        for k in 0..<200 { t.record(began: 1_000_000_000 + UInt64(k) * 5_000_000, took: 100_000) }
        #expect(t.busiestWindow == 2_000_000)
        // A backlog: 60 calls of 0.1 ms back to back, in the window from 2.1 s.
        var at: UInt64 = 2_100_000_000
        for _ in 0..<60 {
            t.record(began: at, took: 100_000)
            at += 100_000
        }
        #expect(t.busiestWindow == 6_000_000)
        #expect(t.perFragment.count == 260 && t.perFragment.maximum == 100_000)
        // Later windows start from zero.
        t.record(began: 3_000_000_000, took: 1_000_000)
        #expect(t.busiestWindow == 6_000_000)
    }
}

/// `MonitorCapture.framesLostBeforeQueue`: a frame entering the monitor later than the capture's
/// clock places it, by more than the threshold, after the server's queue (1 s here) filled,
/// counts the gap as frames lost.
@Suite("Capture frames lost before the server's queue")
struct CaptureLostFramesTests {
    static func lost(_ fit: AudioClock.Fit, at: UInt64, queued: Int64 = 48_000) -> Int64? {
        MonitorCapture.framesLostBeforeQueue(fit: fit, entering: 48_000, at: at, sampleRate: 48_000, queued: queued, queueFrames: 48_000)
    }

    @Test func aGapPastTheThresholdAfterAFullQueueIsCountedAtTheRate() {
        let clock = AudioClock(sampleRate: 48_000)
        // Frame 480 k at 1 s + 10 ms × k: on the line.
        for k in 0..<7 { clock.observe(frame: Int64(480 * k), heardAt: 1_000_000_000 + UInt64(k) * 10_000_000) }
        #expect(Self.lost(clock.fit, at: 3_000_000_000) == nil, "fewer than 8 observations: no line to go by")
        clock.observe(frame: 480 * 7, heardAt: 1_070_000_000)
        // Frame 48 000 is due at 2 s.
        #expect(Self.lost(clock.fit, at: 2_049_000_000) == nil, "49 ms: within the threshold")
        #expect(Self.lost(clock.fit, at: 2_051_000_000) == 2_448, "51 ms")
        #expect(Self.lost(clock.fit, at: 2_500_000_000) == 24_000, "0.5 s lost")
        #expect(Self.lost(clock.fit, at: 1_900_000_000) == nil, "early is not a loss")
        // The queue did not fill since the last reply (a sink that was suspended, a stalled
        // thread): late, but nothing was dropped.
        #expect(Self.lost(clock.fit, at: 2_500_000_000, queued: 43_199) == nil)
        #expect(Self.lost(clock.fit, at: 2_500_000_000, queued: 43_200) == 24_000)
    }
}
