/// How many findings a list left out because it reached `AHAPLimits.maxFindings`, by severity.
///
/// A file can hold millions of findings (16 MB of comments is four million warnings); listing them
/// all costs gigabytes and helps nobody. A report lists at most `maxFindings`, errors before
/// warnings, and counts the rest here, so totals stay exact and an error is never hidden behind
/// warnings.
public struct AHAPOmittedFindings: Sendable, Equatable {
    /// Errors not listed.
    public var errors: Int
    /// Warnings not listed.
    public var warnings: Int

    /// Nothing left out.
    public static let none = AHAPOmittedFindings(errors: 0, warnings: 0)

    /// Makes counts.
    public init(errors: Int, warnings: Int) {
        self.errors = errors
        self.warnings = warnings
    }

    /// Errors and warnings together.
    public var total: Int { errors + warnings }

    /// Counts of both lists added up.
    public static func + (lhs: AHAPOmittedFindings, rhs: AHAPOmittedFindings) -> AHAPOmittedFindings {
        AHAPOmittedFindings(errors: lhs.errors + rhs.errors, warnings: lhs.warnings + rhs.warnings)
    }
}

extension AHAPDiagnostic {
    /// At most `limit` of `diagnostics`, in their order: errors are kept first, then the earliest
    /// warnings; the rest are counted in `omitted`.
    public static func capped(_ diagnostics: [AHAPDiagnostic], limit: Int) -> (listed: [AHAPDiagnostic], omitted: AHAPOmittedFindings) {
        let limit = max(limit, 0)
        guard diagnostics.count > limit else { return (diagnostics, .none) }
        let errorIndices = diagnostics.indices.filter { diagnostics[$0].severity == .error }
        let keptErrors = errorIndices.prefix(limit)
        var keep = Set(keptErrors)
        var room = limit - keptErrors.count
        for i in diagnostics.indices where room > 0 && diagnostics[i].severity == .warning {
            keep.insert(i)
            room -= 1
        }
        let listed = diagnostics.indices.filter(keep.contains).map { diagnostics[$0] }
        let errors = errorIndices.count - keptErrors.count
        return (listed, AHAPOmittedFindings(errors: errors, warnings: diagnostics.count - listed.count - errors))
    }
}
