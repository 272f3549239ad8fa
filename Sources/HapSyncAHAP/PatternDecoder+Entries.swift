/// The AHAP document's entries: the pattern, its events, parameters and curves, by Core
/// Haptics' rules.
extension PatternDecoder {
    // MARK: - Pattern

    static let topKeys = ["Version", "Metadata", "Pattern"]

    mutating func decodePattern(_ root: JSONValue) -> AHAPPattern {
        var pattern = AHAPPattern()
        guard root.objectMembers != nil, let top = object(root, .root, "the top level") else {
            report(.notAHAP, .root, offset: root.offset,
                   "not an AHAP file: the top level is \(root.typeDescription); an AHAP file is an object with \"Version\" and a \"Pattern\" array")
            return pattern
        }
        guard let patternValue = top["Pattern"] else {
            let near = top.members.first { Self.suggestion(for: $0.key, among: ["Pattern"]) != nil }
            report(.notAHAP, AHAPPath.root.key("Pattern"), offset: root.offset,
                   "not an AHAP file: there is no \"Pattern\" key at the top level" + (near.map { " (found \(AHAPQuote.quoted($0.key)); the key is \"Pattern\")" } ?? ""))
            return pattern
        }
        warnUnknownKeys(top, known: Self.topKeys, in: "the top level")
        if let v = top["Version"] {
            if let n = finiteNumber(v, AHAPPath.root.key("Version"), "Version") { pattern.version = n }
        } else {
            report(.defaulted, AHAPPath.root.key("Version"), offset: root.offset, "no \"Version\"; assuming 1.0")
        }
        pattern.metadata = top["Metadata"]
        let patternPath = AHAPPath.root.key("Pattern")
        guard case .array(let items) = patternValue.kind else {
            report(.wrongType, patternPath, offset: patternValue.offset, "Pattern must be an array of entries, found \(patternValue.typeDescription)")
            return pattern
        }
        let maxEntries = limits.maxEntries
        guard items.count <= maxEntries else {
            report(.limitExceeded, patternPath, offset: patternValue.offset,
                   "Pattern has \(items.count) entries; the limit is \(maxEntries)")
            return pattern
        }
        for (i, item) in items.enumerated() {
            if let entry = decodeEntry(item, patternPath.index(i)) { pattern.entries.append(entry) }
        }
        return pattern
    }

    static let entryKinds = ["Event", "Parameter", "ParameterCurve"]

    mutating func decodeEntry(_ value: JSONValue, _ path: AHAPPath) -> AHAPEntry? {
        guard let o = object(value, path, "a Pattern entry") else { return nil }
        let kinds = Self.entryKinds.filter { o.member($0) != nil }
        if kinds.count > 1 {
            report(.ambiguousEntry, path, offset: o.offset,
                   "one entry holds \(kinds.map { "\"\($0)\"" }.joined(separator: " and ")); put each in its own entry")
            return nil
        }
        guard let kind = kinds.first else {
            report(.emptyEntry, path, offset: o.offset, Self.emptyEntryMessage(o))
            return nil
        }
        for m in o.members where m.key != kind {
            report(.unknownKey, path.key(m.key), offset: m.keyOffset, "unknown key \(AHAPQuote.quoted(m.key)) beside \"\(kind)\" ignored")
        }
        let inner = o[kind]!
        switch kind {
        case "Event": return decodeEvent(inner, path.key("Event")).map(AHAPEntry.event)
        case "Parameter": return decodeParameter(inner, path.key("Parameter")).map(AHAPEntry.parameter)
        default: return decodeCurve(inner, path.key("ParameterCurve")).map(AHAPEntry.curve)
        }
    }

    /// Most keys an empty entry's message lists.
    static let maxListedKeys = 8

    /// Why an entry with none of `entryKinds` is ignored: its first `maxListedKeys` keys, and the
    /// kind one of its keys may have meant.
    static func emptyEntryMessage(_ o: Object) -> String {
        var keys = o.members.prefix(maxListedKeys).map { AHAPQuote.quoted($0.key) }
        if o.members.count > maxListedKeys { keys.append("and \(o.members.count - maxListedKeys) more") }
        var message = "entry has none of \"Event\", \"Parameter\", \"ParameterCurve\"" + (keys.isEmpty ? "" : " (keys: \(keys.joined(separator: ", ")))") + "; ignored"
        if let s = o.members.lazy.compactMap({ suggestion(for: $0.key, among: entryKinds) }).first { message += "; did you mean \"\(s)\"?" }
        return message
    }

    // MARK: - Event

    static let eventKeys = ["Time", "EventType", "EventDuration", "EventParameters", "EventWaveformPath",
                            "EventWaveformUseVolumeEnvelope", "EventWaveformLoopEnabled"]

    mutating func decodeEvent(_ value: JSONValue, _ path: AHAPPath) -> AHAPEvent? {
        guard let o = object(value, path, "Event") else { return nil }
        warnUnknownKeys(o, known: Self.eventKeys, in: "an Event")
        let typeField = string(o, "EventType", missing: .missingKey, "Event has no \"EventType\" (one of \(AHAPEventType.allCases.map(\.rawValue).joined(separator: ", ")))")
        var type: AHAPEventType?
        if let (name, v) = typeField {
            type = AHAPEventType(rawValue: name)
            if type == nil {
                let known = AHAPEventType.allCases.map(\.rawValue)
                report(.unknownEventType, path.key("EventType"), offset: v.offset,
                       "unknown EventType \(AHAPQuote.quoted(name)); expected one of \(known.joined(separator: ", "))"
                       + Self.didYouMean(name, among: known, " (did you mean \"", "\"?)"))
            }
        }
        let time = time(o, "Event")
        var duration: Double?
        var durationOK = true
        if let v = o["EventDuration"] {
            if let d = finiteNumber(v, path.key("EventDuration"), "EventDuration") {
                if d < 0 {
                    report(.negativeDuration, path.key("EventDuration"), offset: v.offset, "EventDuration \(Self.format(d)) is negative; durations must be ≥ 0")
                    durationOK = false
                } else if let type, type.isContinuous, d > AHAPEvent.maximumContinuousDuration {
                    duration = clamp(d, 0...AHAPEvent.maximumContinuousDuration, path.key("EventDuration"), offset: v.offset, name: "\(type.rawValue) EventDuration")
                } else if withinTimeLimit(d, v, path.key("EventDuration"), "EventDuration") {
                    duration = d
                } else {
                    durationOK = false
                }
            } else {
                durationOK = false
            }
        } else if let type, type.isContinuous {
            report(.missingDuration, path.key("EventDuration"), offset: o.offset,
                   "\(type.rawValue) event has no \"EventDuration\": Core Haptics gives it no fixed end, so it plays until its player stops (at most \(Self.format(AHAPEvent.maximumContinuousDuration)) s)")
        }
        let parameters = decodeEventParameters(o, type: type)

        var waveformPath: String?
        var useEnvelope = true
        var loop = false
        var pathOK = true
        if type == .audioCustom {
            if let (p, v) = string(o, "EventWaveformPath", missing: .missingWaveformPath,
                                   "AudioCustom event has no \"EventWaveformPath\" naming its audio file") {
                if let problem = AHAPResourceResolver.staticProblem(with: p) {
                    report(.unsafeWaveformPath, path.key("EventWaveformPath"), offset: v.offset, "EventWaveformPath \(AHAPQuote.quoted(p)) \(problem)")
                    pathOK = false
                } else {
                    waveformPath = p
                }
            } else {
                pathOK = false
            }
            useEnvelope = flag(o, "EventWaveformUseVolumeEnvelope", default: true)
            loop = flag(o, "EventWaveformLoopEnabled", default: false)
            if loop, o["EventDuration"] == nil {
                report(.loopWithoutDuration, path.key("EventWaveformLoopEnabled"), offset: o["EventWaveformLoopEnabled"]?.offset,
                       "EventWaveformLoopEnabled is true but there is no EventDuration to loop for; the file plays once")
            }
        } else if let type {
            for key in ["EventWaveformPath", "EventWaveformUseVolumeEnvelope", "EventWaveformLoopEnabled"] {
                if let m = o.member(key) {
                    report(.inapplicableKey, path.key(key), offset: m.keyOffset, "\(key) applies only to AudioCustom events; ignored on \(type.rawValue)")
                }
            }
        }
        guard let type, let time, durationOK, pathOK, let parameters else { return nil }
        return AHAPEvent(time: time, type: type, duration: duration, parameters: parameters,
                         waveformPath: waveformPath, useVolumeEnvelope: useEnvelope, loopEnabled: loop)
    }

    mutating func decodeEventParameters(_ o: Object, type: AHAPEventType?) -> [AHAPEventParameter]? {
        guard let v = o["EventParameters"] else { return [] }
        let path = o.path.key("EventParameters")
        guard case .array(let items) = v.kind else {
            report(.wrongType, path, offset: v.offset, "EventParameters must be an array, found \(v.typeDescription)")
            return nil
        }
        var result: [AHAPEventParameter] = []
        var ok = true
        for (i, item) in items.enumerated() {
            let p = path.index(i)
            guard let po = object(item, p, "an event parameter") else { ok = false; continue }
            warnUnknownKeys(po, known: ["ParameterID", "ParameterValue", "Value"], in: "an event parameter")
            guard let (name, idValue) = string(po, "ParameterID", missing: .missingKey, "event parameter has no \"ParameterID\"") else { ok = false; continue }
            guard let id = AHAPEventParameterID(rawValue: name) else {
                reportBadParameterID(name, idValue, p.key("ParameterID"), expectingEvent: true)
                ok = false
                continue
            }
            guard let value = parameterValue(po, range: id.range, default: id.defaultValue, name: name) else { ok = false; continue }
            if let type, !id.applies(to: type) {
                report(.inapplicableParameter, p, offset: item.offset, "\(name) does not act on \(type.rawValue) events; ignored when playing")
            }
            if let earlier = result.firstIndex(where: { $0.id == id }) {
                report(.duplicateParameter, p, offset: item.offset, "\(name) is given more than once in this event; the last one (\(Self.format(value))) is used")
                result.remove(at: earlier)
            }
            result.append(AHAPEventParameter(id, value))
        }
        return ok ? result : nil
    }

    mutating func reportBadParameterID(_ name: String, _ v: JSONValue, _ path: AHAPPath, expectingEvent: Bool) {
        if expectingEvent, AHAPDynamicParameterID(rawValue: name) != nil {
            report(.wrongParameterKind, path, offset: v.offset,
                   "\(name) is a dynamic parameter; it belongs in a \"Parameter\" or \"ParameterCurve\" entry, not in EventParameters")
            return
        }
        if !expectingEvent, let e = AHAPEventParameterID(rawValue: name) {
            let hint = AHAPDynamicParameterID.allCases.first { $0.rawValue.hasPrefix(e.rawValue) || $0.rawValue == "Haptic\(e.rawValue)Control" }
            report(.wrongParameterKind, path, offset: v.offset,
                   "\(name) is an event parameter; dynamic parameters are the ...Control IDs" + (hint.map { " (did you mean \"\($0.rawValue)\"?)" } ?? ""))
            return
        }
        let known = expectingEvent ? AHAPEventParameterID.allCases.map(\.rawValue) : AHAPDynamicParameterID.allCases.map(\.rawValue)
        report(.unknownParameterID, path, offset: v.offset,
               "unknown ParameterID \(AHAPQuote.quoted(name))"
               + (Self.suggestion(for: name, among: known).map { "; did you mean \"\($0)\"?" } ?? "; expected one of \(known.joined(separator: ", "))"))
    }

    // MARK: - Parameter and ParameterCurve

    mutating func dynamicID(_ o: Object, _ what: String) -> AHAPDynamicParameterID? {
        guard let (name, v) = string(o, "ParameterID", missing: .missingKey, "\(what) has no \"ParameterID\"") else { return nil }
        guard let id = AHAPDynamicParameterID(rawValue: name) else {
            reportBadParameterID(name, v, o.path.key("ParameterID"), expectingEvent: false)
            return nil
        }
        return id
    }

    mutating func decodeParameter(_ value: JSONValue, _ path: AHAPPath) -> AHAPDynamicParameter? {
        guard let o = object(value, path, "Parameter") else { return nil }
        warnUnknownKeys(o, known: ["Time", "ParameterID", "ParameterValue", "Value"], in: "a Parameter")
        let id = dynamicID(o, "Parameter")
        let time = time(o, "Parameter")
        guard let id else { return nil }
        guard let v = parameterValue(o, range: id.range, default: id.defaultValue, name: id.rawValue), let time else { return nil }
        return AHAPDynamicParameter(id, v, time: time)
    }

    mutating func decodeCurve(_ value: JSONValue, _ path: AHAPPath) -> AHAPParameterCurve? {
        guard let o = object(value, path, "ParameterCurve") else { return nil }
        warnUnknownKeys(o, known: ["Time", "ParameterID", "ParameterCurveControlPoints"], in: "a ParameterCurve")
        let id = dynamicID(o, "ParameterCurve")
        let time = time(o, "ParameterCurve")
        let pointsPath = path.key("ParameterCurveControlPoints")
        guard let pv = o["ParameterCurveControlPoints"] else {
            report(.missingKey, pointsPath, offset: o.offset, "ParameterCurve has no \"ParameterCurveControlPoints\"")
            return nil
        }
        guard case .array(let items) = pv.kind else {
            report(.wrongType, pointsPath, offset: pv.offset, "ParameterCurveControlPoints must be an array, found \(pv.typeDescription)")
            return nil
        }
        guard !items.isEmpty else {
            report(.emptyCurve, pointsPath, offset: pv.offset, "ParameterCurve has no control points; give at least one")
            return nil
        }
        let maxPoints = limits.maxCurvePoints
        guard items.count <= maxPoints else {
            report(.limitExceeded, pointsPath, offset: pv.offset, "curve has \(items.count) control points; the limit is \(maxPoints)")
            return nil
        }
        guard let id else { return nil }
        var points: [AHAPControlPoint] = []
        var ok = true
        var previous: Double?
        for (i, item) in items.enumerated() {
            let p = pointsPath.index(i)
            guard let po = object(item, p, "a control point") else { ok = false; continue }
            warnUnknownKeys(po, known: ["Time", "ParameterValue", "Value"], in: "a control point")
            guard let t = self.time(po, "control point") else { ok = false; continue }
            if let previous, t < previous {
                report(.controlPointsOutOfOrder, p.key("Time"), offset: po["Time"]?.offset ?? po.offset,
                       "control point Time \(Self.format(t)) comes before the previous point's \(Self.format(previous)); control points must be in time order")
                ok = false
            }
            previous = max(previous ?? t, t)
            guard let v = parameterValue(po, range: id.range, default: id.defaultValue, name: id.rawValue) else { ok = false; continue }
            points.append(AHAPControlPoint(time: t, value: v))
        }
        guard ok, let time else { return nil }
        return AHAPParameterCurve(id, time: time, controlPoints: points)
    }
}
