extension Array where Element: Comparable {
    /// The `p`-th percentile (0-100) of these values, which are sorted ascending, by nearest
    /// rank: the smallest value at or below which at least `p` % of them lie (`p` 0 or less: the
    /// first; 100 or more, or NaN: the last). nil when there are none. The one definition the
    /// summaries, the C API's statistics and the benchmarks' tables use.
    public func nearestRankPercentile(_ p: Double) -> Element? {
        guard !isEmpty else { return nil }
        guard !p.isNaN else { return last }
        let rank = (Swift.min(Swift.max(p, 0), 100) / 100 * Double(count)).rounded(.up)
        return self[Swift.min(Swift.max(Int(rank) - 1, 0), count - 1)]
    }
}
