import HapSyncMeasurement
import Testing

@Suite("Click onsets")
struct ClickOnsetsTests {
    /// 1000 Hz for the arithmetic: `quiet` 0.05 s is 50 frames below the threshold.
    static let rate = 1000.0

    /// A recording of `count` silent frames with `value` at each of `at`.
    static func recording(_ count: Int, _ at: [Int: Float]) -> [Float] {
        var x = [Float](repeating: 0, count: count)
        for (i, v) in at { x[i] = v }
        return x
    }

    @Test func aClickAfterTheQuietStretchIsAnOnsetAndItsTailIsNot() {
        // 100 follows 100 quiet frames: an onset. 102 (after a dip below the threshold at 101)
        // and 148 (45 quiet frames after 102) are the same click's tail. 199 follows exactly 50
        // quiet frames (149...198): an onset. 240 follows 40: not one.
        let x = Self.recording(400, [100: 0.5, 101: 0.02, 102: -0.7, 148: 0.3, 199: 0.2, 240: 0.9])
        #expect(ClickOnsets.frames(in: x, quiet: 0.05, sampleRate: Self.rate) == [100, 199])
    }

    @Test func theQuietStretchCountsFromTheStartOfTheRecording() {
        // 49 quiet frames before frame 49: not enough; 50 before frame 50: enough.
        #expect(ClickOnsets.frames(in: Self.recording(100, [49: 1]), quiet: 0.05, sampleRate: Self.rate).isEmpty)
        #expect(ClickOnsets.frames(in: Self.recording(100, [50: 1]), quiet: 0.05, sampleRate: Self.rate) == [50])
    }

    @Test func theThresholdIsOnTheMagnitudeAndInclusive() {
        let x = Self.recording(400, [100: -0.1, 200: 0.099, 300: 0.1])
        // 200 is below the threshold, so 300 follows 199 quiet frames after 100.
        #expect(ClickOnsets.frames(in: x, threshold: 0.1, quiet: 0.05, sampleRate: Self.rate) == [100, 300])
    }
}
