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

    /// The defaults described on each property.
    public static let `default` = AHAPLimits(maxFileBytes: 16 << 20, maxEntries: 100_000, maxCurvePoints: 4_096, maxNestingDepth: 64)

    /// Makes limits; `maxFindings` defaults to the value described on it.
    public init(maxFileBytes: Int, maxEntries: Int, maxCurvePoints: Int, maxNestingDepth: Int,
                maxFindings: Int = 1_000) {
        self.maxFileBytes = maxFileBytes
        self.maxEntries = maxEntries
        self.maxCurvePoints = maxCurvePoints
        self.maxNestingDepth = maxNestingDepth
        self.maxFindings = maxFindings
    }
}
