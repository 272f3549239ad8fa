import HapSyncCore
import Testing

/// `nearestRankPercentile`: the one percentile the summaries, the C API and the benchmarks use.
@Suite("Nearest-rank percentile")
struct PercentileTests {
    @Test func nearestRankOfSortedValues() {
        let values = Array(1...10)
        #expect(values.nearestRankPercentile(50) == 5, "5 of 10 lie at or below 5")
        #expect(values.nearestRankPercentile(51) == 6)
        #expect(values.nearestRankPercentile(99) == 10)
        #expect(values.nearestRankPercentile(100) == 10)
        #expect(values.nearestRankPercentile(0) == 1)
        #expect([7].nearestRankPercentile(99.9) == 7)
    }

    @Test func outOfRangeAndEmptyNeverTrap() {
        let values: [Int64] = [-3, 0, 4]
        #expect(values.nearestRankPercentile(-5) == -3)
        #expect(values.nearestRankPercentile(250) == 4)
        #expect(values.nearestRankPercentile(.nan) == 4)
        #expect(values.nearestRankPercentile(.infinity) == 4)
        #expect([Double]().nearestRankPercentile(50) == nil)
    }
}
