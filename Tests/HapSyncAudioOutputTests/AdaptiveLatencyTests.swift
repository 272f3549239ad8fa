import Foundation
import HapSyncLiveTesting
import HapSyncRuntime
import HapSyncTestSupport
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

    /// Settled after a calm spell: back to what is asked, never below where it began, never up.
    @Test func settlesBackToWhatIsAskedNeverBelowItsStartNorUp() {
        var a = AdaptiveLatency(initial: 0.005)
        #expect(a.settle(to: 0.005) == nil, "not grown: nothing to settle")
        _ = a.underruns(1)
        _ = a.underruns(2)
        #expect(a.current == 0.012)
        #expect(a.settle(to: 0.02) == nil, "never up")
        #expect(a.settle(to: 0.008) == 0.008 && a.current == 0.008)
        #expect(a.settle(to: 0.001) == 0.005, "never below its start")
        #expect(a.settle(to: .nan) == nil)
        #expect(a.underruns(3) == 0.008, "grows again from where it settled")
    }

    /// On a server, through PulseAudio's protocol: a writer starved long enough to run the stream
    /// dry makes the server report an underrun, the stream's tlength grows by half, and
    /// `settleLatency` brings it back to where it began, as the server then grants it (within
    /// 1.5 ms: pipewire-pulse rounds it), unless it underran since the caller looked.
    @Test(.needsPulseAudio) func aStreamGrownByAnUnderrunSettlesBackOnTheServer() throws {
        let audio = PulseAudioOutput(configuration: .init(latency: 0.020, pauseWhenIdle: nil))
        let engine = try HapticEngine(configuration: .init(backend: RecordingHapticBackend(), lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        let began = try #require(audio.grantedLatency, "no stream open")
        try #require(audio.runDry(), "the server reported no underrun after five starved writes")
        #expect(IdlePauseTests.waitUntil(seconds: 2) { audio.currentLatency > 0.020 }, "the latency did not grow: \(audio.currentLatency)")
        #expect(IdlePauseTests.waitUntil(seconds: 2) { (audio.grantedLatency ?? 0) > began + 0.002 },
                "the server did not grant the grown tlength: \(audio.grantedLatency ?? 0) s against \(began) s")
        let grown = audio.grantedLatency ?? 0
        let latency = audio.currentLatency
        // An underrun the caller has not seen: its growth stands.
        audio.settleLatency(to: 0.005, unlessUnderrunsPast: audio.underruns - 1)
        #expect(audio.currentLatency == latency, "settled over an underrun the caller had not seen")
        audio.settleLatency(to: 0.005, unlessUnderrunsPast: audio.underruns)
        #expect(audio.currentLatency == 0.020, "settled to where it began, not below")
        #expect(IdlePauseTests.waitUntil(seconds: 2) { abs((audio.grantedLatency ?? 0) - began) < 0.0015 },
                "the server still grants \(audio.grantedLatency ?? 0) s (it began at \(began) s, grew to \(grown) s)")
        print("adaptive latency (\(audio.serverDescription)): tlength \(began) s, grown to \(grown) s after \(audio.underruns) underruns, settled to \(audio.grantedLatency ?? 0) s")
    }
}
