/// Turns a parsed JSON document into an `AHAPPattern`, applying Core Haptics' loading rules and
/// collecting every finding with its JSON path. Used by `AHAPReader`; not public.
struct PatternDecoder {
    let limits: AHAPLimits
    let source: SourceText?
    let file: String?
    typealias Severity = AHAPDiagnostic.Severity
    /// One finding and where it is: its byte offset (`Int.max` when it has none) and the order it
    /// was found in.
    private struct Finding {
        var diagnostic: AHAPDiagnostic
        var offset: Int
        var sequence: Int
    }
    /// The findings kept: at most `2 × limits.maxFindings` between trims, the best
    /// `limits.maxFindings` after `trim()` (errors first, then source order).
    private var found: [Finding] = []
    /// After a trim, the worst finding kept (severity, offset, sequence): one worse than it can
    /// never be listed.
    private var worstKept: (Severity, Int, Int)?
    private var reported = 0
    /// Findings whose path and message were built, listed or not: those found while they could
    /// still be listed (tests check that it stays near `maxFindings` however many are found).
    private(set) var findingsBuilt = 0
    /// Errors and warnings found in all, kept or not.
    private(set) var errorCount = 0
    private(set) var warningCount = 0

    init(limits: AHAPLimits, source: SourceText?, file: String?) {
        self.limits = limits
        self.source = source
        self.file = file
    }

    /// Whether any error was found (listed or not).
    var hasErrors: Bool { errorCount > 0 }

    /// Findings in source order (findings without a position last, in the order they were found),
    /// at most `limits.maxFindings` of them: errors are kept before warnings. Line and column are
    /// filled in for those listed only.
    var sortedDiagnostics: [AHAPDiagnostic] {
        var kept = found
        Self.trim(&kept, to: max(limits.maxFindings, 0))
        return kept.sorted { ($0.offset, $0.sequence) < ($1.offset, $1.sequence) }.map { f in
            var d = f.diagnostic
            if f.offset != Int.max, let source {
                let lc = source.lineColumn(of: f.offset)
                d.line = lc.line
                d.column = lc.column
            }
            return d
        }
    }

    /// The findings left out of `sortedDiagnostics`, by severity.
    var omitted: AHAPOmittedFindings {
        let listed = min(found.count, max(limits.maxFindings, 0))
        let listedErrors = min(errorCount, listed)
        return AHAPOmittedFindings(errors: errorCount - listedErrors, warnings: warningCount - (listed - listedErrors))
    }

    /// Keeps the best `limit` findings (`precedes`), in that order.
    private static func trim(_ findings: inout [Finding], to limit: Int) {
        guard findings.count > limit else { return }
        findings.sort { precedes(($0.diagnostic.severity, $0.offset, $0.sequence), ($1.diagnostic.severity, $1.offset, $1.sequence)) }
        findings.removeLast(findings.count - limit)
    }

    /// Records a finding. Memory stays bounded by `limits.maxFindings` however many there are, and
    /// so does the work of building findings: `path` and `message` are only built for a finding
    /// that can still be listed, not for one worse (a warning after the errors, later in the
    /// source) than `limits.maxFindings` already kept, which is only counted.
    mutating func report(_ code: AHAPDiagnostic.Code, _ path: @autoclosure () -> AHAPPath, offset: Int?, _ message: @autoclosure () -> String) {
        let severity = code.defaultSeverity
        if severity == .error { errorCount += 1 } else { warningCount += 1 }
        let offset = offset ?? Int.max
        defer { reported += 1 }
        let limit = max(limits.maxFindings, 0)
        if let worst = worstKept, !Self.precedes((severity, offset, reported), worst) { return }
        if limit == 0 { return }
        findingsBuilt += 1
        let d = AHAPDiagnostic(code, path: path(), message: message(), file: file)
        found.append(Finding(diagnostic: d, offset: offset, sequence: reported))
        if found.count >= 2 * limit {
            Self.trim(&found, to: limit)
            worstKept = found.last.map { ($0.diagnostic.severity, $0.offset, $0.sequence) }
        }
    }

    /// Whether a finding is listed before another: errors first, then in source order, then in
    /// the order found.
    private static func precedes(_ a: (Severity, Int, Int), _ b: (Severity, Int, Int)) -> Bool {
        if a.0 != b.0 { return a.0 == .error }
        return (a.1, a.2) < (b.1, b.2)
    }

    /// Counts warnings that were found but not recorded (the parser keeps only the first
    /// `limits.maxFindings` of its own).
    mutating func countUnrecordedWarnings(_ n: Int) { warningCount += n }

    // MARK: - Objects and keys

    /// An object's members by key, with where it is.
    struct Object {
        /// Members with unique keys (the parser already resolved duplicates).
        var members: [JSONMember]
        var offset: Int?
        var path: AHAPPath
        /// The member with this key; a linear search, as AHAP objects hold a handful of keys.
        func member(_ key: String) -> JSONMember? { members.first { $0.key == key } }
        subscript(_ key: String) -> JSONValue? { member(key)?.value }
    }

    mutating func object(_ value: JSONValue, _ path: AHAPPath, _ what: String) -> Object? {
        guard let members = value.objectMembers else {
            report(.wrongType, path, offset: value.offset, "\(what) must be an object, found \(value.typeDescription)")
            return nil
        }
        return Object(members: members, offset: value.offset, path: path)
    }

    mutating func warnUnknownKeys(_ o: Object, known: [String], in what: String) {
        for m in o.members where !known.contains(m.key) {
            report(.unknownKey, o.path.key(m.key), offset: m.keyOffset,
                   "unknown key \(AHAPQuote.quoted(m.key)) in \(what) ignored" + Self.didYouMean(m.key, among: known, "; did you mean \"", "\"?"))
        }
    }

    /// `before + suggestion + after` when `name` has a close match among `candidates`, else "".
    static func didYouMean(_ name: String, among candidates: [String], _ before: String, _ after: String) -> String {
        suggestion(for: name, among: candidates).map { before + $0 + after } ?? ""
    }

    /// A close match for a misspelled name: same letters ignoring case; the same name but for a
    /// `Haptic` / `Audio` prefix or a `Control` suffix (several AHAP generators write
    /// `HapticAttackTime` for the event parameter `AttackTime`; the dynamic parameter with the
    /// writer's prefix is preferred); or within a small edit distance (in Unicode scalars).
    ///
    /// The work is bounded whatever the name's length: a name longer than the longest candidate
    /// plus what a prefix and suffix or the edit distance allow (`reach`) can match no rule, and is
    /// dismissed after reading `reach + 1` of its scalars. `work` counts the scalars read and the
    /// edit-distance cells computed.
    static func suggestion(for name: String, among candidates: [String], work: inout Int) -> String? {
        let longest = candidates.map(\.unicodeScalars.count).max() ?? 0
        // Lowercasing never shortens a string in scalars, and a rule matches a lowercased name of
        // at most `longest` (same letters), `longest` + a prefix + a suffix (same core), or
        // `longest` + the distance allowed, a quarter of the candidate's length.
        let reach = longest + max(familyPrefixes.map(\.count).max()! + controlSuffix.count, longest / 4 + 1)
        let scalars = name.unicodeScalars
        work += min(reach + 1, name.utf8.count)
        guard scalars.index(scalars.startIndex, offsetBy: reach + 1, limitedBy: scalars.endIndex) == nil else { return nil }
        let lower = name.lowercased()
        if let same = candidates.first(where: { $0.lowercased() == lower }) { return same }
        let (family, core) = Self.familyAndCore(lower)
        if !core.isEmpty {
            let sameCore = candidates.filter { Self.familyAndCore($0.lowercased()).core == core }
            if let match = sameCore.first(where: { Self.familyAndCore($0.lowercased()).family == family }) ?? sameCore.first { return match }
        }
        let a = Array(lower.unicodeScalars)
        var best: (String, Int)?
        for c in candidates {
            let b = Array(c.lowercased().unicodeScalars)
            work += a.count * b.count
            let d = editDistance(a, b)
            if d <= max(1, b.count / 4), d < (best?.1 ?? Int.max) { best = (c, d) }
        }
        return best?.0
    }

    /// `suggestion(for:among:work:)` without counting.
    static func suggestion(for name: String, among candidates: [String]) -> String? {
        var work = 0
        return suggestion(for: name, among: candidates, work: &work)
    }

    static let familyPrefixes = ["haptic", "audio"]
    static let controlSuffix = "control"

    /// A lowercased parameter name split into its family prefix (`haptic`, `audio` or none) and
    /// the rest without a `control` suffix: `hapticattacktimecontrol` → (`haptic`, `attacktime`).
    static func familyAndCore(_ lower: String) -> (family: Substring, core: Substring) {
        var core = Substring(lower), family: Substring = ""
        for prefix in familyPrefixes where core.hasPrefix(prefix) {
            family = core.prefix(prefix.count)
            core = core.dropFirst(prefix.count)
            break
        }
        if core.hasSuffix(controlSuffix) { core = core.dropLast(controlSuffix.count) }
        return (family, core)
    }

    /// Levenshtein distance, in `a.count × b.count` steps and two rows of memory.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var prev = Array(0...b.count)
        var cur = prev
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&prev, &cur)
        }
        return prev[b.count]
    }

    // MARK: - Scalars

    /// A finite number, or nil after reporting why not.
    mutating func finiteNumber(_ value: JSONValue, _ path: @autoclosure () -> AHAPPath, _ what: String) -> Double? {
        guard case .number(let n) = value.kind else {
            report(.wrongType, path(), offset: value.offset, "\(what) must be a number, found \(value.typeDescription)" + Self.quotedNumberHint(value))
            return nil
        }
        guard n.value.isFinite else {
            report(.nonFiniteNumber, path(), offset: value.offset, "\(what) \(AHAPQuote.literal(n.literal ?? "\(n.value)")) is out of range (not a finite number)")
            return nil
        }
        return n.value
    }

    /// ` ("0.5"); write it without quotes` when a string value reads as a number (a decimal comma
    /// too), else "".
    static func quotedNumberHint(_ value: JSONValue) -> String {
        guard case .string(let s) = value.kind,
              Double(String(decoding: s.utf8.map { $0 == UInt8(ascii: ",") ? UInt8(ascii: ".") : $0 }, as: UTF8.self)) != nil else { return "" }
        return " (\(AHAPQuote.quoted(s))); write it without quotes"
    }

    /// A `Time` key: defaults to 0 (with a warning) when missing; must be finite and ≥ 0.
    mutating func time(_ o: Object, _ what: String) -> Double? {
        guard let v = o["Time"] else {
            report(.defaulted, o.path.key("Time"), offset: o.offset, "\(what) has no \"Time\"; it starts at 0")
            return 0
        }
        guard let t = finiteNumber(v, o.path.key("Time"), "Time") else { return nil }
        guard t >= 0 else {
            report(.negativeTime, o.path.key("Time"), offset: v.offset, "Time \(Self.format(t)) is negative; times are seconds from the pattern's start and must be ≥ 0")
            return nil
        }
        guard withinTimeLimit(t, v, o.path.key("Time"), "Time") else { return nil }
        return t
    }

    /// Whether a time or duration is at most `limits.maxTime`; reports it when it is not.
    mutating func withinTimeLimit(_ x: Double, _ v: JSONValue, _ path: @autoclosure () -> AHAPPath, _ what: String) -> Bool {
        let maxTime = limits.maxTime
        guard x > maxTime else { return true }
        var literal = Self.format(x)
        if case .number(let n) = v.kind, let l = n.literal { literal = AHAPQuote.literal(l) }
        report(.limitExceeded, path(), offset: v.offset,
               "\(what) \(literal) s is over the limit of \(Self.format(maxTime)) s on times and durations")
        return false
    }

    /// A required string, or nil after reporting.
    mutating func string(_ o: Object, _ key: String, missing code: AHAPDiagnostic.Code, _ missingMessage: String) -> (String, JSONValue)? {
        guard let v = o[key] else {
            report(code, o.path.key(key), offset: o.offset, missingMessage)
            return nil
        }
        guard case .string(let s) = v.kind else {
            report(.wrongType, o.path.key(key), offset: v.offset, "\(key) must be a string, found \(v.typeDescription)")
            return nil
        }
        return (s, v)
    }

    /// A boolean flag with its default; 0 and 1 are accepted with a warning.
    mutating func flag(_ o: Object, _ key: String, default def: Bool) -> Bool {
        guard let v = o[key] else { return def }
        switch v.kind {
        case .bool(let b):
            return b
        case .number(let n) where n.value == 0 || n.value == 1:
            report(.numericBoolean, o.path.key(key), offset: v.offset,
                   "\(key) is a boolean; \(AHAPQuote.literal(n.literal ?? "\(n.value)")) read as \(n.value == 1); write true or false")
            return n.value == 1
        default:
            report(.wrongType, o.path.key(key), offset: v.offset, "\(key) must be true or false, found \(v.typeDescription); using the default \(def)")
            return def
        }
    }

    /// `ParameterValue` (or its alias `Value`), clamped to `range`; missing takes `default`.
    mutating func parameterValue(_ o: Object, range: ClosedRange<Double>, default def: Double, name: String) -> Double? {
        var key = "ParameterValue"
        var v = o["ParameterValue"]
        if let alias = o.member("Value") {
            if v == nil {
                report(.valueKeyAlias, o.path.key("Value"), offset: alias.keyOffset,
                       "key \"Value\" read as \"ParameterValue\" (Core Haptics' key is \"ParameterValue\")")
                v = alias.value
                key = "Value"
            } else {
                report(.unknownKey, o.path.key("Value"), offset: alias.keyOffset,
                       "key \"Value\" ignored: \"ParameterValue\" is also given and is used")
            }
        }
        guard let v else {
            report(.defaulted, o.path.key("ParameterValue"), offset: o.offset, "\(name) has no \"ParameterValue\"; using its default \(Self.format(def))")
            return def
        }
        guard let x = finiteNumber(v, o.path.key(key), "ParameterValue") else { return nil }
        return clamp(x, range, o.path.key(key), offset: v.offset, name: name)
    }

    mutating func clamp(_ x: Double, _ range: ClosedRange<Double>, _ path: @autoclosure () -> AHAPPath, offset: Int?, name: String) -> Double {
        guard !range.contains(x) else { return x }
        let c = min(max(x, range.lowerBound), range.upperBound)
        report(.clamped, path(), offset: offset,
               "\(name) value \(Self.format(x)) is outside \(Self.format(range.lowerBound))...\(Self.format(range.upperBound)); clamped to \(Self.format(c))")
        return c
    }

    static func format(_ x: Double) -> String { AHAPWriter.formatNumber(x) }
}
