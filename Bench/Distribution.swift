import HapSyncCore

/// A latency distribution for the tables: percentiles of values in microseconds.
struct Distribution {
    var benchmark: String
    var subject: String
    var values: [Double]
    /// p99 of each round, when the benchmark ran in rounds.
    var roundP99: [Double] = []

    /// The p-th percentile (nearest rank), 0 for no values.
    func percentile(_ p: Double) -> Double { values.sorted().nearestRankPercentile(p) ?? 0 }

    var overOneMillisecond: Int { values.filter { $0 > 1000 }.count }
}
