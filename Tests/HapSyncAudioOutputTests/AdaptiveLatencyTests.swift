import Testing
@testable import HapSyncAudioOutput

/// The adaptive latency rule: grows by half on underruns, to a cap, never down.
@Suite("Adaptive latency")
struct AdaptiveLatencyTests {
    @Test func growsByHalfOnUnderrunsUpToTheCap() {
        var a = AdaptiveLatency(initial: 0.020)
        #expect(a.underruns(0) == nil && a.current == a.initial)
        #expect(a.underruns(1) == 0.030)
        #expect(a.underruns(1) == nil, "no new underrun: no change")
        #expect(a.underruns(4) == 0.045)
        #expect(a.underruns(5) == 0.068)
        #expect(a.underruns(6) == 0.1, "capped at 100 ms")
        #expect(a.underruns(9) == nil && a.current == 0.1 && a.current > a.initial)
    }

    @Test func aLatencyAboveTheCapStaysWhereItIs() {
        var a = AdaptiveLatency(initial: 0.2)
        #expect(a.cap == 0.2)
        #expect(a.underruns(3) == nil && a.current == 0.2 && a.current == a.initial)
    }
}
