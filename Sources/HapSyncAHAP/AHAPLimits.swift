/// Bounds the reader enforces so that a hostile or broken file fails with a clear error instead of
/// exhausting memory or time.
public struct AHAPLimits: Sendable, Equatable {
    /// Largest file accepted, in bytes (default 16 MiB; the largest real AHAP we know is 36 KB).
    public var maxFileBytes: Int
    /// Most `Pattern` entries (events, parameters and curves together; default 100,000).
    public var maxEntries: Int
    /// Most control points in one `ParameterCurve` (default 4,096).
    public var maxCurvePoints: Int
    /// Deepest JSON nesting (default 64; a valid AHAP needs 6).
    public var maxNestingDepth: Int
    /// Most findings listed for one file (default 1,000). Beyond it findings are counted, not
    /// listed (`AHAPReader.Report.omitted`), errors before warnings: 16 MB of comments is four
    /// million warnings, which would take gigabytes to hold and print.
    public var maxFindings: Int
    /// Latest `Time`, longest `EventDuration` and latest control-point `Time` accepted, seconds
    /// (default 86,400: one day; real patterns last seconds). Larger values are a `limit-exceeded`
    /// error, so every time a pattern read from a file holds, and every sum of them, converts to
    /// integer nanoseconds, frames and control-rate steps without overflowing.
    public var maxTime: Double

    /// The defaults described on each property.
    public static let `default` = AHAPLimits(maxFileBytes: 16 << 20, maxEntries: 100_000, maxCurvePoints: 4_096, maxNestingDepth: 64)

    /// Makes limits; `maxFindings` and `maxTime` default to the values described on them.
    public init(maxFileBytes: Int, maxEntries: Int, maxCurvePoints: Int, maxNestingDepth: Int,
                maxFindings: Int = 1_000, maxTime: Double = 86_400) {
        self.maxFileBytes = maxFileBytes
        self.maxEntries = maxEntries
        self.maxCurvePoints = maxCurvePoints
        self.maxNestingDepth = maxNestingDepth
        self.maxFindings = maxFindings
        self.maxTime = maxTime
    }
}
