import Testing

@testable import HapSyncConcurrency

/// `DurationHistogram`: counts, the longest, the mean, and percentiles within a quarter octave.
@Suite("Duration histogram")
struct DurationHistogramTests {
    @Test func binsAreAQuarterOctaveFromAMicrosecond() {
        #expect(DurationHistogram.bin(ofNanoseconds: 0) == 0)
        #expect(DurationHistogram.bin(ofNanoseconds: 1_000) == 0)
        #expect(DurationHistogram.bin(ofNanoseconds: 1_001) == 1)
        #expect(DurationHistogram.bin(ofNanoseconds: 2_000) == 4, "an edge stays in its bin")
        #expect(DurationHistogram.bin(ofNanoseconds: 2_001) == 5)
        #expect(DurationHistogram.bin(ofNanoseconds: 1_000_000) == 40, "1 ms: 2^10 µs")
        #expect(DurationHistogram.bin(ofNanoseconds: .max) == DurationHistogram.binCount - 1)
        for ns: UInt64 in [1_500, 7_777, 123_456, 3_000_000, 45_000_000] {
            let edge = DurationHistogram.upperEdge(ofBin: DurationHistogram.bin(ofNanoseconds: ns))
            #expect(Double(ns) <= edge && edge < Double(ns) * 1.19, "\(ns) ns in a bin up to \(edge)")
        }
    }

    @Test func percentilesComeWithinTheirBin() throws {
        let h = DurationHistogram()
        #expect(h.percentile(50) == nil && h.mean == nil && h.count == 0 && h.maximum == 0)
        // 1...1000 µs evenly: p50 500 µs, p99 990 µs.
        for us in 1...1_000 { h.record(nanoseconds: UInt64(us) * 1_000) }
        #expect(h.count == 1_000 && h.maximum == 1_000_000)
        #expect(try #require(h.mean) == 500_500)
        let p50 = try #require(h.percentile(50)), p99 = try #require(h.percentile(99))
        #expect(p50 >= 500_000 && p50 < 500_000 * 1.19, "\(p50)")
        #expect(p99 >= 990_000 && p99 <= 1_000_000, "capped at the longest: \(p99)")
        #expect(h.percentile(100) == 1_000_000)
        #expect(try #require(h.percentile(0)) <= 1_000, "the first")
        #expect(h.percentile(.nan) == 1_000_000)
    }
}
