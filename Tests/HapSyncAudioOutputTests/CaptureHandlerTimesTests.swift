import HapSyncPulseAudio
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
