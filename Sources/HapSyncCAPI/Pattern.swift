import CHapSync
import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime

/// What an `hs_pattern` handle holds: the compiled pattern and its warnings as one C string.
final class PatternBox: @unchecked Sendable {
    let playable: PlayablePattern
    let diagnostics: UnsafeMutablePointer<CChar>

    init(_ playable: PlayablePattern) {
        self.playable = playable
        diagnostics = strdup(playable.diagnostics.map(\.description).joined(separator: "\n"))!
    }

    deinit { free(diagnostics) }
}

/// What an `hs_pattern_builder` handle holds.
final class BuilderBox: @unchecked Sendable {
    let builder = Locked(AHAPPatternBuilder())
}

/// A load failure as a C status: a file that cannot be read, or a pattern with errors (the first
/// named with its JSON path, and how many there are).
func loadFailure(_ error: PlayablePattern.LoadError) -> CFailure {
    if let render = error.renderError { return CFailure(status: HS_ERROR_INVALID_PATTERN, message: "\(error.name): \(render.description)") }
    let count = error.errors.count + error.omitted.errors
    let unreadable = error.errors.contains { $0.code == .fileUnreadable }
    let first = error.errors.first.map { ": \($0.description)" } ?? ""
    return CFailure(status: unreadable ? HS_ERROR_FILE : HS_ERROR_INVALID_PATTERN,
                    message: "\(error.name) has \(count) error\(count == 1 ? "" : "s")\(first)")
}

/// `hs_pattern_load_file`: reads an AHAP file, its audio looked up beside it; the reader's errors name file and JSON path.
@_cdecl("hs_pattern_load_file")
public func hsPatternLoadFile(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> hs_status {
    cCall { () throws(CFailure) in
        guard let out else { throw .null("out") }
        out.pointee = nil
        let file = try cString(path, "path")
        do throws(PlayablePattern.LoadError) {
            out.pointee = Handles.make(PatternBox(try PlayablePattern(contentsOf: URL(fileURLWithPath: file))))
        } catch {
            throw loadFailure(error)
        }
    }
}

/// `hs_pattern_load_memory`: reads `length` bytes of AHAP JSON (no NUL needed); its audio events are not played.
@_cdecl("hs_pattern_load_memory")
public func hsPatternLoadMemory(_ json: UnsafePointer<CChar>?, _ length: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> hs_status {
    cCall { () throws(CFailure) in
        guard let out else { throw .null("out") }
        out.pointee = nil
        guard let json else { throw .null("ahap_json") }
        guard length >= 0, length <= AHAPLimits.default.maxFileBytes else {
            throw .invalid("length \(length) is more than \(AHAPLimits.default.maxFileBytes) bytes, the largest AHAP read")
        }
        let data = Data(bytes: json, count: length)
        let pattern: AHAPPattern
        do throws(AHAPReadError) {
            pattern = try AHAPReader().read(data: data, file: "(memory)").pattern
        } catch {
            let first = error.diagnostics.first { $0.severity == .error }.map { ": \($0.description)" } ?? ""
            throw CFailure(status: HS_ERROR_INVALID_PATTERN, message: "the AHAP in memory has errors\(first)")
        }
        do throws(PlayablePattern.LoadError) {
            out.pointee = Handles.make(PatternBox(try PlayablePattern(pattern: pattern, name: "(memory)")))
        } catch {
            throw loadFailure(error)
        }
    }
}

/// `hs_pattern_destroy`: frees a pattern (players made from it keep their own copy); NULL is ignored.
@_cdecl("hs_pattern_destroy")
public func hsPatternDestroy(_ pattern: OpaquePointer?) { Handles.destroy(pattern, as: PatternBox.self) }

/// `hs_pattern_duration`: the pattern's length in seconds, into `out`.
@_cdecl("hs_pattern_duration")
public func hsPatternDuration(_ pattern: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: PatternBox = try Handles.get(pattern, "pattern")
        guard let out else { throw .null("out") }
        out.pointee = box.playable.timeline.end
    }
}

nonisolated(unsafe) private let empty = strdup("")!

/// `hs_pattern_diagnostics`: the reader's warnings, one per line ("" if none), owned by the pattern.
@_cdecl("hs_pattern_diagnostics")
public func hsPatternDiagnostics(_ pattern: OpaquePointer?) -> UnsafePointer<CChar> {
    guard let box = try? Handles.get(pattern, "pattern", as: PatternBox.self) else { return UnsafePointer(empty) }
    return UnsafePointer(box.diagnostics)
}

// MARK: - Builder

/// `hs_pattern_builder_create`: an empty builder for a pattern made in code.
@_cdecl("hs_pattern_builder_create")
public func hsPatternBuilderCreate(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> hs_status {
    cCall { () throws(CFailure) in
        guard let out else { throw .null("out") }
        out.pointee = Handles.make(BuilderBox())
    }
}

/// A builder call's numbers: finite (ranges are the reader's, checked when built).
private func finite(_ values: [(String, Double)]) throws(CFailure) {
    for (name, v) in values where !v.isFinite { throw .invalid("\(name) \(v) is not a finite number") }
}

/// Adds to a builder in place (each add costs the same however many came before: a chained,
/// copying add made 10,000 adds take 1.7 s and 100,000 about three minutes), refusing the add
/// past `AHAPLimits.maxEntries`, which `build` would refuse anyway.
private func adding(_ box: BuilderBox, _ add: (inout AHAPPatternBuilder) -> Void) throws(CFailure) {
    try box.builder.withLock { (b) throws(CFailure) in
        let limit = AHAPLimits.default.maxEntries
        guard b.entryCount < limit else {
            throw CFailure(status: HS_ERROR_LIMIT, message: "the builder holds \(limit) entries, the most a pattern may have")
        }
        add(&b)
    }
}

/// `hs_pattern_builder_add_transient`: adds a tap at `time` s with intensity and sharpness 0...1.
@_cdecl("hs_pattern_builder_add_transient")
public func hsPatternBuilderAddTransient(_ builder: OpaquePointer?, _ time: Double, _ intensity: Float, _ sharpness: Float) -> hs_status {
    cCall { () throws(CFailure) in
        let box: BuilderBox = try Handles.get(builder, "builder")
        try finite([("time", time), ("intensity", Double(intensity)), ("sharpness", Double(sharpness))])
        try adding(box) { $0.addTransient(at: time, intensity: Double(intensity), sharpness: Double(sharpness)) }
    }
}

/// `hs_pattern_builder_add_continuous`: adds a continuous event of `duration` s at `time` s.
@_cdecl("hs_pattern_builder_add_continuous")
public func hsPatternBuilderAddContinuous(_ builder: OpaquePointer?, _ time: Double, _ duration: Double, _ intensity: Float, _ sharpness: Float) -> hs_status {
    cCall { () throws(CFailure) in
        let box: BuilderBox = try Handles.get(builder, "builder")
        try finite([("time", time), ("duration", duration), ("intensity", Double(intensity)), ("sharpness", Double(sharpness))])
        try adding(box) { $0.addContinuous(at: time, duration: duration, intensity: Double(intensity), sharpness: Double(sharpness)) }
    }
}

/// A dynamic parameter ID from its AHAP name.
func parameterID(_ p: UnsafePointer<CChar>?) throws(CFailure) -> AHAPDynamicParameterID {
    let name = try cString(p, "parameter_id")
    guard let id = AHAPDynamicParameterID(rawValue: name) else {
        throw .invalid("parameter_id \"\(name)\" is not a dynamic parameter (HapticIntensityControl, AudioVolumeControl, ...)")
    }
    return id
}

/// COUNT curve points from two C arrays.
func curvePoints(_ times: UnsafePointer<Double>?, _ values: UnsafePointer<Float>?, _ count: Int) throws(CFailure) -> [AHAPControlPoint] {
    guard let times else { throw .null("point_times") }
    guard let values else { throw .null("point_values") }
    guard (1...16).contains(count) else { throw .invalid("count \(count) is outside 1...16 (control points of a curve)") }
    var points: [AHAPControlPoint] = []
    for i in 0..<count {
        try finite([("point_times[\(i)]", times[i]), ("point_values[\(i)]", Double(values[i]))])
        points.append(AHAPControlPoint(time: times[i], value: Double(values[i])))
    }
    return points
}

/// `hs_pattern_builder_add_parameter`: adds a dynamic parameter ("HapticIntensityControl", ...) taking `value` at `time`.
@_cdecl("hs_pattern_builder_add_parameter")
public func hsPatternBuilderAddParameter(_ builder: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ value: Float, _ time: Double) -> hs_status {
    cCall { () throws(CFailure) in
        let box: BuilderBox = try Handles.get(builder, "builder")
        let parameter = try parameterID(id)
        try finite([("value", Double(value)), ("time", time)])
        try adding(box) { $0.addParameter(parameter, Double(value), at: time) }
    }
}

/// `hs_pattern_builder_add_curve`: adds a parameter curve of `count` points, their times relative to `time`.
@_cdecl("hs_pattern_builder_add_curve")
public func hsPatternBuilderAddCurve(_ builder: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ time: Double,
                                     _ times: UnsafePointer<Double>?, _ values: UnsafePointer<Float>?, _ count: Int) -> hs_status {
    cCall { () throws(CFailure) in
        let box: BuilderBox = try Handles.get(builder, "builder")
        let parameter = try parameterID(id)
        try finite([("time", time)])
        let points = try curvePoints(times, values, count)
        try adding(box) { $0.addCurve(parameter, at: time, points: points.map { ($0.time, $0.value) }) }
    }
}

/// `hs_pattern_builder_build`: checks the entries by the reader's rules and makes the pattern.
@_cdecl("hs_pattern_builder_build")
public func hsPatternBuilderBuild(_ builder: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: BuilderBox = try Handles.get(builder, "builder")
        guard let out else { throw .null("out") }
        out.pointee = nil
        let pattern: AHAPPattern
        do { pattern = try box.builder.withLock { $0 }.build() } catch { throw CFailure(status: HS_ERROR_INVALID_PATTERN, message: "\(error)") }
        do throws(PlayablePattern.LoadError) {
            out.pointee = Handles.make(PatternBox(try PlayablePattern(pattern: pattern, name: "(builder)")))
        } catch {
            throw loadFailure(error)
        }
    }
}

/// `hs_pattern_builder_destroy`: frees a builder (patterns built from it stay); NULL is ignored.
@_cdecl("hs_pattern_builder_destroy")
public func hsPatternBuilderDestroy(_ builder: OpaquePointer?) { Handles.destroy(builder, as: BuilderBox.self) }
