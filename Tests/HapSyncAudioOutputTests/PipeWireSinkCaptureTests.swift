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
    }

    /// The clock a cycle on while the cycle's start came on time: the node moved to another
    /// driver (its clock a cycle apart), not a missed cycle; nor when that start came a little
    /// late or early (the driver's timer).
    @Test func aClockACycleAheadWithTheStartOnTimeIsNoGap() {
        #expect(Self.gap(clock: 2, elapsed: Self.cycle) == nil)
        #expect(Self.gap(clock: 2, elapsed: Self.cycle + 1_500_000) == nil)
        #expect(Self.gap(clock: 2, elapsed: Self.cycle - 1_500_000) == nil)
    }

    @Test func missedCyclesAreTheirFrames() {
        #expect(Self.gap(clock: 2, elapsed: 2 * Self.cycle) == 256)
        #expect(Self.gap(clock: 4, elapsed: 4 * Self.cycle + 1_000_000) == 768)
        #expect(Self.gap(clock: 2, elapsed: 2 * Self.cycle + 1_500_000) == 256)
        // At 44.1 kHz: a missed 256-frame cycle is 5.8 ms.
        #expect(PipeWireSinkCapture.gap(ticks: 1_512, expected: 1_256, now: 9_011_609_977, lastNow: 9_000_000_000, lastFrames: 256,
                                        frames: 256, sampleRate: 44_100) == 256)
        // The graph's cycle grew to 512 frames as one of them was missed.
        #expect(PipeWireSinkCapture.gap(ticks: 1_768, expected: 1_256, now: 9_000_000_000 + 3 * Self.cycle, lastNow: 9_000_000_000,
                                        lastFrames: 256, frames: 512, sampleRate: 48_000) == 512)
    }

    /// The node moved to another driver, whose clock counts from elsewhere: its ticks jump while
    /// the cycle comes on time; and a clock that went back. No gap, no silence handed over.
    @Test func aClockThatJumpedAloneOrWentBackIsNoGap() {
        #expect(Self.gap(clock: 100_000, elapsed: Self.cycle) == nil)
        #expect(PipeWireSinkCapture.gap(ticks: 5, expected: 1_000, now: 2, lastNow: 1, lastFrames: 256, frames: 256, sampleRate: 48_000) == nil)
        // Ticks as far apart as UInt64 allows: nothing traps.
        #expect(PipeWireSinkCapture.gap(ticks: .max, expected: 0, now: 2, lastNow: 1, lastFrames: 256, frames: 256, sampleRate: 48_000) == nil)
    }

    /// A cycle late by its start alone (the graph's clock one cycle on): no gap, however late; a
    /// clock two cycles on with the start three late: not one cycle's gap either (they disagree
    /// by more than a cycle); nor before a first cycle (no start to compare with, though the
    /// clock and the times would agree).
    @Test func aLateStartAloneOrNoLastCycleIsNoGap() {
        #expect(Self.gap(clock: 1, elapsed: 3 * Self.cycle) == nil)
        #expect(Self.gap(clock: 2, elapsed: 4 * Self.cycle) == nil)
        #expect(PipeWireSinkCapture.gap(ticks: 1_512, expected: 1_256, now: 2 * Self.cycle, lastNow: 0, lastFrames: 256, frames: 256,
                                        sampleRate: 48_000) == nil)
    }
}
