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

    /// A step the output sees coming (`expectStep`: PipeWire 0.3.65's cycle after a quantum
    /// change): frames from it on are placed off the line at once, both ways, and the inverse
    /// agrees; the first observation past it keeps it (the slope and history moving with it, not
    /// slewed 25 µs at a time) or, when it did not come, withdraws it.
    @Test func anExpectedStepPlacesTheFramesAfterItAtOnce() {
        // 1024-frame cycles at 48 kHz, frame f heard at 1 s + f / 48 kHz.
        func settled(cycles: Int = 100) -> AudioClock {
            let clock = AudioClock(sampleRate: 48_000)
            for k in 0..<cycles { clock.observe(frame: Int64(k * 1024), heardAt: UInt64(1e9 + Double(k * 1024) * 1e9 / 48_000)) }
            return clock
        }
        let step = -10_666_667.0, from: Int64 = 101 * 1024
        let line = { (f: Int64) in 1e9 + Double(f) * 1e9 / 48_000 }
        let clock = settled()
        #expect(AudioClock(sampleRate: 48_000).fit.hasStep == false)
        clock.expectStep(fromFrame: from, by: step)
        #expect(clock.fit.hasStep)
        #expect(abs(Double(clock.time(ofFrame: from - 1)!) - line(from - 1)) < 1_000, "frames before it stay")
        #expect(abs(Double(clock.time(ofFrame: from)!) - (line(from) + step)) < 1_000, "frames from it on move at once")
        // The inverse: where the earlier step places two frames at one time, the later.
        #expect(abs(clock.frame(atTime: UInt64(line(from) + step))! - from) <= 1)
        #expect(abs(clock.frame(atTime: UInt64(line(from + 4800) + step))! - (from + 4800)) <= 1)
        #expect(abs(clock.frame(atTime: UInt64(line(from - 1024)))! - (from - 1024)) <= 1)
        // The step comes: kept exactly, the slope as it was.
        clock.observe(frame: 100 * 1024, heardAt: UInt64(line(100 * 1024)))
        #expect(clock.fit.hasStep, "an observation before it leaves it pending")
        clock.observe(frame: from, heardAt: UInt64(line(from) + step))
        #expect(!clock.fit.hasStep && clock.fit.stepsCame == 1 && clock.fit.stepsWithdrawn == 0)
        #expect(abs(Double(clock.time(ofFrame: from + 48_000)!) - (line(from + 48_000) + step)) < 1_000)
        #expect(abs(clock.rateErrorPPM) < 1)
        clock.observe(frame: from + 1024, heardAt: UInt64(line(from + 1024) + step))
        #expect(abs(Double(clock.time(ofFrame: from + 1024)!) - (line(from + 1024) + step)) < 1_000, "and stays")
        // It comes 1.1 ms short of what was expected: it came, by what the observation says.
        let short = settled()
        short.expectStep(fromFrame: from, by: step)
        short.observe(frame: from, heardAt: UInt64(line(from) + step + 1_100_000))
        #expect(short.fit.stepsCame == 1)
        #expect(abs(Double(short.time(ofFrame: from + 1024)!) - (line(from + 1024) + step + 1_100_000)) < 1_000)
        // It does not come (a server that keeps time): withdrawn, the line stands.
        let fixed = settled()
        fixed.expectStep(fromFrame: from, by: step)
        fixed.observe(frame: 100 * 1024, heardAt: UInt64(line(100 * 1024)))
        fixed.observe(frame: from, heardAt: UInt64(line(from)))
        #expect(!fixed.fit.hasStep && fixed.fit.stepsCame == 0 && fixed.fit.stepsWithdrawn == 1)
        #expect(abs(Double(fixed.time(ofFrame: from + 1024)!) - line(from + 1024)) < 1_000)
        // Later, not earlier (the quantum shrank): a gap, the frame before it through the gap.
        let later = settled()
        later.expectStep(fromFrame: from, by: -step)
        #expect(abs(Double(later.time(ofFrame: from)!) - (line(from) - step)) < 1_000)
        #expect(later.frame(atTime: UInt64(line(from) + 5e6)) == from - 1)
        // Nothing before the first observation, nor a step under 10 µs; a restart drops it.
        let empty = AudioClock(sampleRate: 48_000)
        empty.expectStep(fromFrame: 0, by: step)
        #expect(!empty.fit.hasStep)
        later.restart()
        later.observe(frame: 100 * 1024, heardAt: UInt64(line(100 * 1024)))
        #expect(!later.fit.hasStep)
        let tiny = settled()
        tiny.expectStep(fromFrame: from, by: 5_000)
        #expect(!tiny.fit.hasStep)
    }

    @Test func framesMovedEarlierWakeTheSchedulerAndNothingElseDoes() {
        // 1024-frame cycles at 48 kHz, frame f heard at 1 s + f / 48 kHz; the clock posts its
        // wake (the engine's scheduler's) only when frames still to come move over 0.5 ms earlier.
        let line = { (f: Int64) in 1e9 + Double(f) * 1e9 / 48_000 }
        func settled() -> (AudioClock, Syscalls.Semaphore) {
            let clock = AudioClock(sampleRate: 48_000)
            let wake = Syscalls.Semaphore()
            clock.earlierWake = wake
            for k in 0..<100 { clock.observe(frame: Int64(k * 1024), heardAt: UInt64(line(Int64(k * 1024)))) }
            return (clock, wake)
        }
        /// Whether the wake was posted since the last look (taking the post).
        func posted(_ wake: Syscalls.Semaphore) -> Bool { wake.wait(untilMonotonic: 0) }
        let from: Int64 = 101 * 1024
        // Settling and following an exact line: no wake.
        let (clock, wake) = settled()
        #expect(!posted(wake))
        // An expected step earlier: a wake; the observation that finds it where it was put: none.
        clock.expectStep(fromFrame: from, by: -10_666_667)
        #expect(posted(wake))
        #expect(!posted(wake), "one post per move")
        clock.observe(frame: from, heardAt: UInt64(line(from) - 10_666_667))
        #expect(clock.fit.stepsCame == 1 && !posted(wake))
        // A step later, then withdrawn by a restart: the withdrawal moves frames earlier.
        let (later, laterWake) = settled()
        later.expectStep(fromFrame: from, by: 8_000_000)
        #expect(!posted(laterWake))
        later.restart()
        #expect(posted(laterWake))
        // A report 20 ms earlier than the line (taken at once): a wake; 20 ms later: none.
        let (jump, jumpWake) = settled()
        jump.observe(frame: 100 * 1024, heardAt: UInt64(line(100 * 1024) - 20e6))
        #expect(posted(jumpWake))
        let (late, lateWake) = settled()
        late.observe(frame: 100 * 1024, heardAt: UInt64(line(100 * 1024) + 20e6))
        #expect(!posted(lateWake))
        // A late write's floor moves frames later: no wake.
        late.noteWrite(frame: 200 * 1024, at: UInt64(line(200 * 1024) + 30e6))
        #expect(late.fit.hasFloor && !posted(lateWake))
        // A slewed disagreement (1 ms earlier, taken 25 µs per report, none 0.5 ms at once): a
        // wake once the small moves add up past 0.5 ms.
        let (slewed, slewedWake) = settled()
        for k in 100..<140 { slewed.observe(frame: Int64(k * 1024), heardAt: UInt64(line(Int64(k * 1024)) - 1e6)) }
        #expect(posted(slewedWake))
        // Nobody to wake: nothing happens.
        let alone = AudioClock(sampleRate: 48_000)
        for k in 0..<40 { alone.observe(frame: Int64(k * 1024), heardAt: UInt64(line(Int64(k * 1024)))) }
        alone.expectStep(fromFrame: 41 * 1024, by: -10_666_667)
        #expect(alone.fit.hasStep)
    }
}
