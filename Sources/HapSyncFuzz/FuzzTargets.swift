import Foundation
import HapSyncAHAP
import HapSyncCore

/// The fuzz targets: one per entry point that reads outside input, each taking arbitrary bytes.
/// `.ci/fuzz` builds them with libFuzzer and AddressSanitizer (`-sanitize=fuzzer,address`) and
/// runs them on the conformance corpus and Assets; `HapSyncFuzzTests` replays every input kept in
/// `Tests/Fuzz/regressions/<target>/` through the same functions in the ordinary test run.
///
/// A target fails by crashing: a trap in HapSync's code, an address error, or one of the
/// invariants below (`precondition`), which are what the documentation promises of any input:
/// - `reader`: any bytes give a report, never a crash; a pattern read without errors is written
///   back (canonical AHAP) and reads back equal, with no error.
/// - `render`: a pattern that reads without errors compiles (or is refused with an error) within
///   the render limits; its command stream (and its voice plan, unless refused with an error) is in time order with finite intensities and
///   sharpnesses in 0...1; its voice automation and haptic state at any time are finite.
/// - `plot`: the SVG of any compiled pattern is a finite drawing (no NaN or infinity in it).
/// - `audioHeader`: any bytes as a WAV/FLAC/... header give an `AudioFileInfo` or an error, never a
///   crash; a header that reads has positive rate and channels.
/// - `propertyList`: any nested value the bytes build (`PropertyListShape`: Swift and Foundation
///   arrays and dictionaries, shared, self-containing, hundreds deep) converts as a pattern
///   dictionary or fails naming a path no longer than the nesting limit, never a crash; what
///   converts is no deeper than the limit, its AHAP text reads back as the same value, and the
///   reader reads it as a pattern.
/// - `player`: the bytes as calls on a manual-clock engine's players (`EngineFuzz`): every call
///   and scheduling pass returns, loops pass no faster than their floor, every command is in range.
/// - `osc`: the bytes as datagrams to `hapsync serve`'s service (`OSCFuzz`): every one handled,
///   never more players than the limit, status still answers.
public enum FuzzTargets {
    /// The targets by name, as `.ci/fuzz` and the regression tests call them.
    public static let all: [(name: String, run: @Sendable (Data) -> Void)] = [
        ("reader", { reader($0) }), ("render", { render($0) }), ("plot", { plot($0) }), ("audioHeader", { audioHeader($0) }),
        ("propertyList", { propertyList($0) }), ("player", { EngineFuzz.run($0) }), ("osc", { OSCFuzz.run($0) }),
    ]

    /// Reads the bytes as AHAP; a clean pattern must survive the writer and the reader again.
    public static func reader(_ data: Data) {
        let report = AHAPReader().diagnose(data: data)
        guard let pattern = report.pattern, !report.diagnostics.contains(where: { $0.severity == .error }) else { return }
        let written = AHAPWriter.string(from: pattern)
        let again = AHAPReader().diagnose(data: Data(written.utf8))
        precondition(!again.diagnostics.contains { $0.severity == .error }, "the writer's output does not read back: \(again.diagnostics)")
        precondition(again.pattern == pattern, "written and read back, the pattern changed")
    }

    /// The compiled timeline of a clean pattern (audio files of unknown length), checked.
    static func timeline(_ data: Data) -> PatternTimeline? {
        let report = AHAPReader().diagnose(data: data)
        guard let pattern = report.pattern, !report.diagnostics.contains(where: { $0.severity == .error }) else { return nil }
        return try? PatternTimeline(pattern: pattern, options: RenderOptions(maxCommands: 200_000), audioLength: { _ in nil })
    }

    /// Compiles and renders the bytes as AHAP and checks what comes out.
    public static func render(_ data: Data) {
        guard let t = timeline(data) else { return }
        var last = -Double.infinity
        for c in t.commands {
            precondition(c.time.isFinite && c.time >= last, "commands out of time order at \(c.time)")
            precondition((0...1).contains(c.intensity) && (0...1).contains(c.sharpness), "a command outside 0...1: \(c)")
            last = c.time
        }
        // Refused with an error (a voice that would need too many samples) is an answer too.
        for p in (try? t.voiceAutomation()) ?? [] {
            precondition(p.time.isFinite && p.state.gain.isFinite && p.state.pan.isFinite && p.state.pitch.isFinite
                         && p.state.brightness.isFinite, "voice automation not finite: \(p)")
        }
        for k in 0...8 {
            let s = t.hapticState(at: t.end * Double(k) / 8)
            precondition(s.intensity.isFinite && s.sharpness.isFinite, "haptic state not finite")
        }
    }

    /// Draws the bytes as AHAP and checks the drawing is finite.
    public static func plot(_ data: Data) {
        guard let t = timeline(data) else { return }
        let svg = PatternPlot.svg(t, title: "fuzz", width: 600)
        precondition(!svg.contains("nan") && !svg.contains("inf"), "the plot has a non-finite coordinate")
    }

    /// Reads the bytes as an audio file's header.
    public static func audioHeader(_ data: Data) {
        guard let info = try? AudioFileInfo(header: [UInt8](data), fileSize: data.count) else { return }
        precondition(info.sampleRate > 0 && info.channels > 0, "a header read with rate \(info.sampleRate), \(info.channels) channels")
    }

    /// The limits the `propertyList` target converts with: the reader's nesting, and a smaller
    /// size (64 KB of text) so that a shared value stops within milliseconds.
    static let propertyListLimits = AHAPLimits(maxFileBytes: 1 << 16, maxEntries: AHAPLimits.default.maxEntries,
                                               maxCurvePoints: AHAPLimits.default.maxCurvePoints,
                                               maxNestingDepth: AHAPLimits.default.maxNestingDepth)

    /// Builds a nested value from the bytes and converts it as a pattern dictionary.
    public static func propertyList(_ data: Data) {
        let shape = PropertyListShape(data)
        defer { shape.release() }
        guard let value = shape.value else { return }
        let limits = propertyListLimits
        let json: JSONValue
        do {
            json = try PropertyListConverter(limits: limits).json(value)
        } catch {
            precondition(error.path.components.count <= limits.maxNestingDepth, "a failure deeper than the limit: \(error)")
            return
        }
        precondition(depth(json) < limits.maxNestingDepth, "converted deeper than the limit")
        let text = JSONWriter.string(json, pretty: false)
        let unbounded = AHAPLimits(maxFileBytes: .max - 1, maxEntries: .max, maxCurvePoints: .max, maxNestingDepth: limits.maxNestingDepth)
        let read = AHAPReader(limits: unbounded).diagnose(data: Data(text.utf8))
        precondition(!read.diagnostics.contains { $0.code == .jsonSyntax || $0.message.hasPrefix("nesting deeper") },
                     "the converted value's text does not read back: \(read.diagnostics.prefix(3))")
        _ = AHAPReader(limits: limits).diagnose(json: json)
    }

    /// The deepest level of a value (a scalar at the top is level 0).
    private static func depth(_ value: JSONValue) -> Int {
        switch value.kind {
        case .array(let items): return 1 + (items.map(depth).max() ?? -1)
        case .object(let members): return 1 + (members.map { depth($0.value) }.max() ?? -1)
        default: return 0
        }
    }
}
