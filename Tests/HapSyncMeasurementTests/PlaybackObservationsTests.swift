import HapSyncMeasurement
import Testing

@Suite("Playback observations")
struct PlaybackObservationsTests {
    static let rate = 48_000.0
    /// A sink 200 ppm fast: ns per frame.
    static let nsPerFrame = 1e9 / rate * (1 - 200e-6)
    static let t0 = 5_000_000_000.0

    /// When `frame` was played on the made-up line.
    static func line(_ frame: Int64) -> Double { t0 + Double(frame) * nsPerFrame }

    /// Observations every 480 frames (10 ms), frames 0..<count·480, on the line plus `offset(i)` ns.
    static func observations(_ count: Int, offset: (Int) -> Double = { _ in 0 }) -> PlaybackObservations {
        var o = PlaybackObservations(sampleRate: rate)
        for i in 0..<count {
            let f = Int64(i * 480)
            o.append(frame: f, time: UInt64(line(f) + offset(i)))
        }
        return o
    }

    @Test func aFrameIsTimedByTheLineThroughItsNeighbours() throws {
        let o = Self.observations(600)
        for frame: Int64 in [30_000, 100_123, 200_000] {
            let t = try #require(o.heardTime(ofFrame: frame))
            #expect(abs(Double(t) - Self.line(frame)) < 5, "frame \(frame): \(Double(t) - Self.line(frame)) ns off")
        }
    }

    @Test func aLateObservationIsLeftOutOfTheSecondFit() throws {
        // Observation 300 (frame 144000) read 3 ms late; the first fit moves by tens of µs, the
        // second, without it (3 ms off the first line, over the 1 ms limit), is exact again.
        let o = Self.observations(600) { $0 == 300 ? 3_000_000 : 0 }
        let t = try #require(o.heardTime(ofFrame: 144_100))
        #expect(abs(Double(t) - Self.line(144_100)) < 5)
    }

    @Test func aReadStarvedForTensOfMillisecondsAmongFewIsLeftOut() throws {
        // A 2048-frame quantum: 23 reads within 0.5 s; the reader starved for 30 ms on one (the
        // underrun benchmark's staller shares its core). The first least-squares line moved by
        // 1.3 ms and tilted; frames near the late read came out up to 3.8 ms off.
        var o = PlaybackObservations(sampleRate: Self.rate)
        for i in 0..<100 {
            let f = Int64(i * 2048)
            o.append(frame: f, time: UInt64(Self.line(f) + (i == 50 ? 30_000_000 : 0)))
        }
        for frame: Int64 in [50 * 2048 - 1000, 50 * 2048 + 100, 52 * 2048] {
            let t = try #require(o.heardTime(ofFrame: frame))
            #expect(abs(Double(t) - Self.line(frame)) < 5, "frame \(frame): \(Double(t) - Self.line(frame)) ns off")
        }
    }

    @Test func onlyObservationsWithinHalfASecondCount() throws {
        // From observation 300 on (frame 144000), everything 5 ms later; frame 100000 is more
        // than 24000 frames (0.5 s) from there, so it sees only the first line.
        let o = Self.observations(600) { $0 >= 300 ? 5_000_000 : 0 }
        let t = try #require(o.heardTime(ofFrame: 100_000))
        #expect(abs(Double(t) - Self.line(100_000)) < 5)
        // Past the last observation (frame 599·480): 8 observations within 24000 frames give an
        // answer, 7 do not.
        #expect(o.heardTime(ofFrame: 599 * 480 + 24_000 - 7 * 480) != nil)
        #expect(o.heardTime(ofFrame: 599 * 480 + 24_000 - 7 * 480 + 1) == nil)
        #expect(PlaybackObservations(sampleRate: Self.rate).heardTime(ofFrame: 0) == nil)
    }

    @Test func aPauseOfTheSinkSeparatesTwoLines() throws {
        // The sink stopped for 2 s before observation 300 (frame 144000: nothing played, then
        // playing resumed on a line 2 s later). The frames on either side, each well within 0.5 s
        // of the other line's observations, are timed by their own line only; with both lines
        // in one fit they were 1 s off.
        let pause = 2_000_000_000.0
        let o = Self.observations(600) { $0 >= 300 ? pause : 0 }
        let before = try #require(o.heardTime(ofFrame: 143_900))
        #expect(abs(Double(before) - Self.line(143_900)) < 5, "\(Double(before) - Self.line(143_900)) ns off")
        let after = try #require(o.heardTime(ofFrame: 144_100))
        #expect(abs(Double(after) - Self.line(144_100) - pause) < 5, "\(Double(after) - Self.line(144_100) - pause) ns off")
        // A reader 40 ms late on one read (a stall of its own, not a pause) leaves one line.
        let late = Self.observations(600) { $0 == 300 ? 40_000_000 : 0 }
        let t = try #require(late.heardTime(ofFrame: 143_900))
        #expect(abs(Double(t) - Self.line(143_900)) < 5)
    }

    @Test func aStaleObservationIsDropped() {
        var o = PlaybackObservations(sampleRate: Self.rate)
        o.append(frame: 960, time: 20)
        o.append(frame: 480, time: 10)
        o.append(frame: 960, time: 30)
        #expect(o.frames == [960] && o.times == [20])
    }

    @Test func aJumpIsFoundOnceAndASteadyRecordingHasNone() throws {
        #expect(Self.observations(600).discontinuities.isEmpty)
        // 3 ms lost at observation 300: one discontinuity of +3 ms, placed within the 40
        // observations the medians look at on either side. The medians stand up to 60
        // observations apart, over which the 200 ppm sink moves 2 µs per observation against the
        // nominal rate: the jump is 3 ms within 0.2 ms.
        let jumped = Self.observations(600) { $0 >= 300 ? 3_000_000 : 0 }.discontinuities
        try #require(jumped.count == 1)
        #expect(abs(jumped[0].jump - 3_000_000) < 200_000)
        #expect(abs(jumped[0].frame - 300 * 480) <= 40 * 480)
        // Too few observations to judge (two windows of 40 are needed).
        #expect(Self.observations(80) { $0 >= 40 ? 3_000_000 : 0 }.discontinuities.isEmpty)
    }

    @Test func stepsThatComeAndGoAreFollowedWhereTheTimelineSteps() throws {
        // A graph whose cycle changes length every 0.37 s (128 <-> 1024 frames on PipeWire
        // 0.3.65): every frame of the long spells heard 18.7 ms earlier than the short spells'
        // line. Timed by the level of its own side of a step, each frame takes its own spell's
        // line (the last block before a step and the first after it too); by the level of the whole ±0.5 s window, the short spells' line (the
        // majority) stands for both. Late reads (a reader stalled 3 ms) beside a step, two in a
        // row, and the first read do not move either.
        let step = -896 * 1e9 / Self.rate
        func spell(_ f: Int64) -> Bool { (f / 17_760) % 2 == 1 }  // 0.37 s spells
        func observations(splits: Bool) -> PlaybackObservations {
            var o = PlaybackObservations(sampleRate: Self.rate)
            o.splitsAtSteps = splits
            var f: Int64 = 0, k = 0
            var lastLong = false
            while f < 200_000 {
                let long = spell(f)
                // Late: the first read of each long spell (beside its step), two in a row in the
                // third short spell, and the very first read.
                let late = (long && !lastLong) || (f >= 17_760 * 2 + 5_120 && f < 17_760 * 2 + 5_120 + 256) || k == 0
                o.append(frame: f, time: UInt64(Self.line(f) + (long ? step : 0) + (late ? 3_000_000 : 0)))
                lastLong = long
                f += long ? 1024 : 128
                k += 1
            }
            return o
        }
        let split = observations(splits: true), whole = observations(splits: false)
        for frame: Int64 in [10, 17_700, 17_760 + 500, 17_760 + 5_000, 35_200 + 100, 17_760 * 2 + 5_000, 17_760 * 2 + 5_200, 17_760 * 3 + 9_000, 17_760 * 5 + 100] {
            let expected = Self.line(frame) + (spell(frame) ? step : 0)
            let t = try #require(split.heardTime(ofFrame: frame))
            #expect(abs(Double(t) - expected) < 50_000, "frame \(frame): \((Double(t) - expected) / 1e6) ms off")
        }
        let longFrame: Int64 = 17_760 * 3 + 9_000
        let unsplit = try #require(whole.heardTime(ofFrame: longFrame))
        #expect(abs(Double(unsplit) - Self.line(longFrame)) < 50_000, "by the window's level, the short spells' line")
    }
}
