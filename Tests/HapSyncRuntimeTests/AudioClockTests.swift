import Testing
@testable import HapSyncRuntime

/// The clock's fitting and slewing, with made-up observations (no audio device).
@Suite("Audio clock")
struct AudioClockTests {
    @Test func followsASinkThatRunsFast() {
        // A 48 kHz sink running 200 ppm fast: frame f is heard at 1 s + f × (1e9 / 48000) / 1.0002 ns.
        let clock = AudioClock(sampleRate: 48_000)
        let nsPerFrame = 1e9 / 48_000 / 1.0002
        for k in 0..<200 {
            let f = Int64(k * 480)
            clock.observe(frame: f, heardAt: UInt64(1e9 + Double(f) * nsPerFrame))
        }
        #expect(abs(clock.rateErrorPPM - 200) < 1, "\(clock.rateErrorPPM) ppm")
        let f: Int64 = 96_000
        #expect(abs(Double(clock.time(ofFrame: f)!) - (1e9 + Double(f) * nsPerFrame)) < 2_000)
        #expect(abs(clock.frame(atTime: UInt64(1e9 + Double(f) * nsPerFrame))! - f) <= 1)
    }

    @Test func jitterIsSmoothedAndSlewed() {
        // ±300 µs of alternating jitter on a perfect 48 kHz clock: the mapping moves at most 25 µs
        // per observation and stays within 50 µs of the truth.
        let clock = AudioClock(sampleRate: 48_000)
        var last: UInt64?
        var worst = 0.0
        for k in 0..<300 {
            let f = Int64(k * 480)
            let truth = 1e9 + Double(f) * 1e9 / 48_000
            clock.observe(frame: f, heardAt: UInt64(truth + (k % 2 == 0 ? 300_000 : -300_000)))
            let t = clock.time(ofFrame: 10_000_000)!
            // Allowed move: the slew, plus what a slope change of up to 2000 ppm does 10M frames out.
            let allowed: Double = 25_001 + 10_000_000.0 * (1e9 / 48_000) * 0.002
            if let last, k > 20 {
                let moved: Double = abs(Double(t) - Double(last))
                #expect(moved <= allowed)
            }
            last = t
            if k > 100 { worst = max(worst, abs(Double(clock.time(ofFrame: f)!) - truth)) }
        }
        #expect(worst < 50_000, "worst error \(worst) ns")
    }

    @Test func aLateStartIsTakenInOneStep() {
        // The first observations say frame 0 is heard at 1 s; then the stream turns out 1.5 s late.
        let clock = AudioClock(sampleRate: 48_000)
        clock.observe(frame: 0, heardAt: 1_000_000_000)
        clock.observe(frame: 480, heardAt: 2_510_000_000)
        #expect(abs(Double(clock.time(ofFrame: 480)!) - 2_510_000_000) < 1_000_000, "a 1.5 s disagreement is a step, not a slew")
        #expect(clock.time(ofFrame: 0) != nil && AudioClock(sampleRate: 48_000).time(ofFrame: 0) == nil)
    }

    @Test func anUnderrunRestartTakesAShiftAtOnceInsteadOfSlewing() {
        // A settled clock; then frames are heard 3 ms later than before (under the 5 ms step).
        func settled() -> AudioClock {
            let clock = AudioClock(sampleRate: 48_000)
            for k in 0..<100 { clock.observe(frame: Int64(k * 480), heardAt: UInt64(1e9 + Double(k) * 1e7)) }
            return clock
        }
        let shifted = { (k: Int) in UInt64(1e9 + Double(k) * 1e7 + 3e6) }
        let slewing = settled(), restarted = settled()
        restarted.restart()
        slewing.observe(frame: 100 * 480, heardAt: shifted(100))
        restarted.observe(frame: 100 * 480, heardAt: shifted(100))
        let truth = Double(shifted(100))
        #expect(abs(Double(slewing.time(ofFrame: 48_000)!) - truth) > 2_900_000, "without a restart it moves 25 µs per observation")
        #expect(abs(Double(restarted.time(ofFrame: 48_000)!) - truth) < 1_000, "after a restart the next observation is taken as it is")
    }
}
