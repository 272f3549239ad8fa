/// Turns a parsed JSON document into an `AHAPPattern`, applying Core Haptics' loading rules and
/// collecting every finding with its JSON path. Used by `AHAPReader`; not public.
struct PatternDecoder {
    let limits: AHAPLimits
    let source: SourceText?
    let file: String?
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
    private var reported = 0
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

    /// Keeps the best `limit` findings: errors first, then the earliest in the source.
    private static func trim(_ findings: inout [Finding], to limit: Int) {
        guard findings.count > limit else { return }
        findings.sort { a, b in
            let ae = a.diagnostic.severity == .error, be = b.diagnostic.severity == .error
            if ae != be { return ae }
            return (a.offset, a.sequence) < (b.offset, b.sequence)
        }
        findings.removeLast(findings.count - limit)
    }

    /// Records a finding. Memory stays bounded by `limits.maxFindings` however many there are.
    mutating func report(_ code: AHAPDiagnostic.Code, _ path: AHAPPath, offset: Int?, _ message: String) {
        let d = AHAPDiagnostic(code, path: path, message: message, file: file)
        if d.severity == .error { errorCount += 1 } else { warningCount += 1 }
        found.append(Finding(diagnostic: d, offset: offset ?? Int.max, sequence: reported))
        reported += 1
        let limit = max(limits.maxFindings, 0)
        if found.count >= 2 * max(limit, 1) { Self.trim(&found, to: limit) }
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
            var message = "unknown key \"\(m.key)\" in \(what) ignored"
            if let s = Self.suggestion(for: m.key, among: known) { message += "; did you mean \"\(s)\"?" }
            report(.unknownKey, o.path.key(m.key), offset: m.keyOffset, message)
        }
    }

    /// A close match for a misspelled name: same letters ignoring case; the same name but for a
    /// `Haptic` / `Audio` prefix or a `Control` suffix (several AHAP generators write
    /// `HapticAttackTime` for the event parameter `AttackTime`; the dynamic parameter with the
    /// writer's prefix is preferred); or within a small edit distance.
    static func suggestion(for name: String, among candidates: [String]) -> String? {
        let lower = name.lowercased()
        if let same = candidates.first(where: { $0.lowercased() == lower }) { return same }
        let (family, core) = Self.familyAndCore(lower)
        if !core.isEmpty {
            let sameCore = candidates.filter { Self.familyAndCore($0.lowercased()).core == core }
            if let match = sameCore.first(where: { Self.familyAndCore($0.lowercased()).family == family }) ?? sameCore.first { return match }
        }
        var best: (String, Int)?
        for c in candidates {
            let d = editDistance(Array(lower), Array(c.lowercased()))
            if d <= max(1, c.count / 4), d < (best?.1 ?? Int.max) { best = (c, d) }
        }
        return best?.0
    }

    /// A lowercased parameter name split into its family prefix (`haptic`, `audio` or none) and
    /// the rest without a `control` suffix: `hapticattacktimecontrol` → (`haptic`, `attacktime`).
    static func familyAndCore(_ lower: String) -> (family: Substring, core: Substring) {
        var core = Substring(lower), family: Substring = ""
        for prefix in ["haptic", "audio"] where core.hasPrefix(prefix) {
            family = core.prefix(prefix.count)
            core = core.dropFirst(prefix.count)
            break
        }
        if core.hasSuffix("control") { core = core.dropLast("control".count) }
        return (family, core)
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var prev = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var cur = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            prev = cur
        }
        return a.isEmpty ? b.count : prev[b.count]
    }

    // MARK: - Scalars

    /// A finite number, or nil after reporting why not.
    mutating func finiteNumber(_ value: JSONValue, _ path: @autoclosure () -> AHAPPath, _ what: String) -> Double? {
        guard case .number(let n) = value.kind else {
            var message = "\(what) must be a number, found \(value.typeDescription)"
            if case .string(let s) = value.kind, Double(s.replacingOccurrences(of: ",", with: ".")) != nil {
                message += " (\"\(s)\"); write it without quotes"
            }
            report(.wrongType, path(), offset: value.offset, message)
            return nil
        }
        guard n.value.isFinite else {
            report(.nonFiniteNumber, path(), offset: value.offset, "\(what) \(n.literal ?? "\(n.value)") is out of range (not a finite number)")
            return nil
        }
        return n.value
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
        guard x > limits.maxTime else { return true }
        var literal = Self.format(x)
        if case .number(let n) = v.kind, let l = n.literal { literal = l }
        report(.limitExceeded, path(), offset: v.offset,
               "\(what) \(literal) s is over the limit of \(Self.format(limits.maxTime)) s on times and durations")
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
                   "\(key) is a boolean; \(n.literal ?? "\(n.value)") read as \(n.value == 1); write true or false")
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
