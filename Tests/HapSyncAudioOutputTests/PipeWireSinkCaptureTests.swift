import HapSyncPipeWire
import Testing

/// `PipeWireSinkCapture.gap`: which cycles the native live sink's data thread missed, from the
/// graph's clock and the cycles' starts (256-frame cycles at 48 kHz, 5.33 ms).
@Suite("PipeWire sink capture: missed cycles")
struct PipeWireSinkCaptureTests {
    static let cycle: Int64 = 5_333_333

    /// The gap before a cycle `cycles` cycles after the last one by the clock and `elapsed` ns
    /// after it by its start.
    static func gap(clock cycles: UInt64, elapsed: Int64, frames: Int = 256) -> Int64? {
        PipeWireSinkCapture.gap(ticks: 1_000_000 + 256 * cycles, expected: 1_000_000 + 256, now: 9_000_000_000 + elapsed, lastNow: 9_000_000_000,
                                lastFrames: 256, frames: frames, sampleRate: 48_000)
    }

    @Test func theNextCycleIsNoGap() {
        #expect(Self.gap(clock: 1, elapsed: Self.cycle) == nil)
        // Its start a little late or early (the driver's timer): still none.
        #expect(Self.gap(clock: 1, elapsed: Self.cycle + 1_500_000) == nil)
        #expect(Self.gap(clock: 1, elapsed: Self.cycle - 1_500_000) == nil)
    }

    @Test func missedCyclesAreTheirFrames() {
        #expect(Self.gap(clock: 2, elapsed: 2 * Self.cycle) == 256)
        #expect(Self.gap(clock: 4, elapsed: 4 * Self.cycle + 1_000_000) == 768)
    }

    /// The node moved to another driver, whose clock counts from elsewhere: its ticks jump while
    /// the cycle comes on time; and a clock that went back. No gap, no silence handed over.
    @Test func aClockThatJumpedAloneOrWentBackIsNoGap() {
        #expect(Self.gap(clock: 100_000, elapsed: Self.cycle) == nil)
        #expect(PipeWireSinkCapture.gap(ticks: 5, expected: 1_000, now: 2, lastNow: 1, lastFrames: 256, frames: 256, sampleRate: 48_000) == nil)
        // Ticks as far apart as UInt64 allows: nothing traps.
        #expect(PipeWireSinkCapture.gap(ticks: .max, expected: 0, now: 2, lastNow: 1, lastFrames: 256, frames: 256, sampleRate: 48_000) == nil)
    }

    /// A cycle late by its start alone (the data thread held up, the graph's clock not moved on
    /// by more): no gap; nor before a first cycle (no start to compare with).
    @Test func aLateStartAloneOrNoLastCycleIsNoGap() {
        #expect(Self.gap(clock: 1, elapsed: 3 * Self.cycle) == nil)
        #expect(PipeWireSinkCapture.gap(ticks: 2_000, expected: 1_000, now: 5, lastNow: 0, lastFrames: 256, frames: 256, sampleRate: 48_000) == nil)
    }
}
