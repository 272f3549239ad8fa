import Foundation
import HapSyncAHAP
import HapSyncTestSupport
import Testing
@testable import HapSyncConcurrency
@testable import HapSyncCore
@testable import HapSyncRuntime

/// The real-time readers of live parameters and of the audio clock never wait for a writer that
/// was preempted half-way through a publication: they read the last complete value at once.
/// (Before `SeqLock`, a reader spun while the sequence number was odd: on the writer's core, until
/// the kernel's RT throttling let the writer go on.)
@Suite("Readers beside a preempted writer")
struct PreemptedWriterTests {
    /// A send to a live parameter stopped half-way through its first copy, as a control thread
    /// preempted there would be: the scheduler's and the mixer's reads give the previous value at
    /// once, and the new one when the send completes.
    @Test func aSendStoppedHalfWay() throws {
        let live = LiveParameters(slots: 1)
        try live.send(slot: 0, .hapticIntensity, [.init(time: 0, value: 0.5, ramp: false)])
        try live.send(slot: 0, .audioVolume, [.init(time: 0, value: 0.8, ramp: false)])
        #expect(live.value(slot: 0, .hapticIntensity, at: 10) == 0.5)
        for control in [LiveParameters.Control.hapticIntensity, .audioVolume] {
            let lock = live.published[control.rawValue].takeUnretainedValue()
            let before = live.value(slot: 0, control, at: 10)
            let next = LiveParameters.Automation([.init(time: 0, value: 0.25, ramp: false), .init(time: 5, value: 0.1, ramp: false)])
            for stop in [1, lock.wordCount / 2, lock.wordCount + 1] {
                lock.writeSteps(next, 0..<stop)
                let read = finishes(within: 10) { live.value(slot: 0, control, at: 10) }
                #expect(read == before, "\(control) with the send stopped after \(stop) stores")
                #expect(finishes(within: 10) { live.isSet(slot: 0, control) } == true)
                lock.writeSteps(next, stop..<lock.stepCount)
                #expect(live.value(slot: 0, control, at: 10) == 0.1)
                try live.send(slot: 0, control, [.init(time: 0, value: before, ramp: false)])
            }
        }
    }

    /// The audio thread stopped after each store of a new fit's publication: a reader refreshing
    /// its snapshot as the scheduler does (and any other reader) gets the last complete fit at once,
    /// the new one once readers have been switched to it.
    @Test func anObservationStoppedHalfWay() throws {
        let clock = AudioClock(sampleRate: 48_000)
        for k in 0..<40 { clock.observe(frame: Int64(k) * 480, heardAt: 1_000_000_000 + UInt64(k) * 10_000_000) }
        var snapshot = clock.snapshot()
        let fit = snapshot.value
        let moved = AudioClock.Fit(sampleRate: 48_000)
        for stop in 1..<clock.published.stepCount {
            clock.published.writeSteps(moved, 0..<stop)
            let read = finishes(within: 10) { [snapshot] in
                var s = snapshot
                clock.refresh(&s)
                return s.value
            }
            #expect(read == (stop <= clock.published.wordCount + 1 ? fit : moved), "stopped after \(stop) stores")
            #expect(finishes(within: 10) { clock.fit } == (stop <= clock.published.wordCount + 1 ? fit : moved))
            clock.published.writeSteps(moved, stop..<clock.published.stepCount)
            clock.refresh(&snapshot)
            #expect(snapshot.value == moved)
            clock.published.write(fit)
            clock.refresh(&snapshot)
        }
    }
}
