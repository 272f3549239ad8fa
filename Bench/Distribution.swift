/// A latency distribution for the tables: percentiles of values in microseconds.
struct Distribution {
    var benchmark: String
    var subject: String
    var values: [Double]
    /// p99 of each round, when the benchmark ran in rounds.
    var roundP99: [Double] = []

    func percentile(_ p: Double) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s[min(s.count - 1, max(0, Int((p / 100 * Double(s.count)).rounded(.up)) - 1))]
    }

    var overOneMillisecond: Int { values.filter { $0 > 1000 }.count }
}
