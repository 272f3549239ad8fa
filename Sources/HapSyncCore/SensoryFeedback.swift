import Foundation
import HapSyncAHAP

/// SwiftUI's `SensoryFeedback` styles as built-in haptic patterns, playable by name
/// (`engine.play(.success)`, `hapsync feedback success`) and exported as AHAP files in
/// Assets/feedback/ so designers can start from them.
///
/// Apple does not publish these waveforms; the shapes follow how people describe them (lengths
/// include the 25 ms of a tap): success ~130 ms, a double tap rising; warning ~250 ms, a strong
/// tap then a weaker one; error ~500 ms, three taps and a buzz; selection ~30 ms, the lightest
/// crisp tick; impact light ~40, medium ~50, heavy ~70 ms; rigid ~35, solid ~45, soft ~60 ms;
/// increase / decrease ~35 ms gliding up / down; start and stop ~100 ms, a rise into a tap and a
/// tap into a fall; alignment ~25 ms, a crisp snap; levelChange ~45 ms, a firm click;
/// pathComplete ~90 ms, a tap with a falling tail. An impact's intensity (0...1) scales the
/// whole pattern.
public struct SensoryFeedback: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// An impact's weight.
    public enum Weight: String, Sendable, CaseIterable {
        /// A light, fairly crisp knock (`impact-light`, ~40 ms).
        case light
        /// A medium knock, between light and heavy (`impact-medium`, ~50 ms).
        case medium
        /// The strongest, dullest knock (`impact-heavy`, ~70 ms).
        case heavy
    }

    /// An impact's flexibility.
    public enum Flexibility: String, Sendable, CaseIterable {
        /// Rigid (short and crisp).
        case rigid
        /// A firm knock, between rigid and soft (`impact-solid`, ~45 ms).
        case solid
        /// Soft (longer and duller).
        case soft
    }

    enum Kind: Hashable, Sendable {
        case success, warning, error, selection, increase, decrease, start, stop, alignment, levelChange, pathComplete
        case weight(Weight)
        case flexibility(Flexibility)
    }

    let kind: Kind
    /// The impact intensity (1 for the other styles).
    public let intensity: Double

    /// A task completed.
    public static let success = SensoryFeedback(kind: .success, intensity: 1)
    /// Something needs attention: a strong tap, then a weaker one (~250 ms).
    public static let warning = SensoryFeedback(kind: .warning, intensity: 1)
    /// Something failed: three quick taps and a falling buzz (~500 ms).
    public static let error = SensoryFeedback(kind: .error, intensity: 1)
    /// A selection changed.
    public static let selection = SensoryFeedback(kind: .selection, intensity: 1)
    /// A value went up.
    public static let increase = SensoryFeedback(kind: .increase, intensity: 1)
    /// A value went down.
    public static let decrease = SensoryFeedback(kind: .decrease, intensity: 1)
    /// An activity started.
    public static let start = SensoryFeedback(kind: .start, intensity: 1)
    /// An activity stopped.
    public static let stop = SensoryFeedback(kind: .stop, intensity: 1)
    /// Something snapped into alignment.
    public static let alignment = SensoryFeedback(kind: .alignment, intensity: 1)
    /// A level (a discrete step) changed.
    public static let levelChange = SensoryFeedback(kind: .levelChange, intensity: 1)
    /// A path (a drawing, a gesture) completed.
    public static let pathComplete = SensoryFeedback(kind: .pathComplete, intensity: 1)

    /// A physical impact of a weight; `intensity` 0...1 scales it (clamped).
    public static func impact(weight: Weight = .medium, intensity: Double = 1) -> SensoryFeedback {
        SensoryFeedback(kind: .weight(weight), intensity: Self.clamp(intensity))
    }

    /// A physical impact of a flexibility; `intensity` 0...1 scales it (clamped).
    public static func impact(flexibility: Flexibility, intensity: Double = 1) -> SensoryFeedback {
        SensoryFeedback(kind: .flexibility(flexibility), intensity: Self.clamp(intensity))
    }

    private static func clamp(_ x: Double) -> Double { x.isFinite ? min(max(x, 0), 1) : 1 }

    /// Every style (impacts at full intensity), in the order `hapsync feedback --list` shows.
    public static let all: [SensoryFeedback] = [.success, .warning, .error, .selection]
        + Weight.allCases.map { impact(weight: $0) } + Flexibility.allCases.map { impact(flexibility: $0) }
        + [.increase, .decrease, .start, .stop, .alignment, .levelChange, .pathComplete]

    /// The name used by the CLI and the Assets file: "success", "impact-heavy", "impact-soft", "level-change".
    public var name: String {
        switch kind {
        case .success: return "success"
        case .warning: return "warning"
        case .error: return "error"
        case .selection: return "selection"
        case .increase: return "increase"
        case .decrease: return "decrease"
        case .start: return "start"
        case .stop: return "stop"
        case .alignment: return "alignment"
        case .levelChange: return "level-change"
        case .pathComplete: return "path-complete"
        case .weight(let w): return "impact-\(w.rawValue)"
        case .flexibility(let f): return "impact-\(f.rawValue)"
        }
    }

    /// The name, with the intensity when it is not 1.
    public var description: String { intensity == 1 ? name : "\(name) (intensity \(intensity))" }

    /// The style called `name` (see `name`; "impact" alone is a medium impact; SwiftUI spellings
    /// "levelChange" and "pathComplete" work too), at `intensity` for impacts.
    public static func named(_ name: String, intensity: Double = 1) -> SensoryFeedback? {
        let key = name.lowercased()
        if key == "impact" { return .impact(weight: .medium, intensity: intensity) }
        if key == "levelchange" { return .levelChange }
        if key == "pathcomplete" { return .pathComplete }
        guard let base = all.first(where: { $0.name == key }) else { return nil }
        switch base.kind {
        case .weight(let w): return .impact(weight: w, intensity: intensity)
        case .flexibility(let f): return .impact(flexibility: f, intensity: intensity)
        default: return base
        }
    }

    /// A sentence on the style for `--list` and the AHAP file's metadata.
    public var summary: String {
        switch kind {
        case .success: return "~130 ms: two taps, the second stronger and sharper"
        case .warning: return "~250 ms: a strong tap, then a weaker one"
        case .error: return "~500 ms: three quick taps and a falling buzz"
        case .selection: return "~30 ms: the lightest crisp tick"
        case .increase: return "~35 ms: a short glide up in intensity and sharpness"
        case .decrease: return "~35 ms: a short glide down in intensity and sharpness"
        case .start: return "~100 ms: a rise into a firm tap"
        case .stop: return "~100 ms: a firm tap into a fall"
        case .alignment: return "~25 ms: a crisp snap"
        case .levelChange: return "~45 ms: a firm click"
        case .pathComplete: return "~90 ms: a tap with a falling tail"
        case .weight(.light): return "~40 ms: a light, fairly crisp knock"
        case .weight(.medium): return "~50 ms: a medium knock"
        case .weight(.heavy): return "~70 ms: a heavy, dull knock"
        case .flexibility(.rigid): return "~35 ms: a hard, very crisp knock"
        case .flexibility(.solid): return "~45 ms: a firm knock"
        case .flexibility(.soft): return "~60 ms: a soft, dull knock"
        }
    }

    /// The pattern. Every value is within its AHAP range, so building cannot fail.
    public var pattern: AHAPPattern {
        let k = intensity
        var b = AHAPPatternBuilder().metadata("Project", "HapSync built-in feedback").metadata("Description", "\(name): \(summary)")
        // A knock: a tap plus a continuous tail that decays over `length` (attack 0, no sustain).
        func knock(_ b: AHAPPatternBuilder, at t: Double, intensity: Double, sharpness: Double, length: Double) -> AHAPPatternBuilder {
            // AHAP envelope times are 10^(3x−3) s: this decay parameter fades the tail over `length`.
            let decay = ((log10(length) + 3) / 3 * 1000).rounded() / 1000
            return b.transient(at: t, intensity: intensity, sharpness: sharpness)
                .continuous(at: t, duration: length, intensity: intensity * 0.6, sharpness: sharpness * 0.8,
                            attack: 0, decay: decay, release: 0, sustained: false)
        }
        func glide(_ b: AHAPPatternBuilder, at t: Double, length: Double, from: Double, to: Double, sharp: (Double, Double)) -> AHAPPatternBuilder {
            b.continuous(at: t, duration: length, intensity: 1, sharpness: 0.5)
                .curve(.hapticIntensityControl, at: t, points: [(0, from), (length, to)])
                .curve(.hapticSharpnessControl, at: t, points: [(0, sharp.0), (length, sharp.1)])
        }
        switch kind {
        case .success:
            b = b.transient(at: 0, intensity: 0.6, sharpness: 0.5).transient(at: 0.105, intensity: 1, sharpness: 0.7)
        case .warning:
            b = b.transient(at: 0, intensity: 1, sharpness: 0.6).transient(at: 0.225, intensity: 0.55, sharpness: 0.4)
        case .error:
            b = b.transient(at: 0, intensity: 0.9, sharpness: 0.8).transient(at: 0.1, intensity: 0.9, sharpness: 0.8)
                .transient(at: 0.2, intensity: 0.9, sharpness: 0.8)
                .continuous(at: 0.3, duration: 0.2, intensity: 0.8, sharpness: 0.3)
                .curve(.hapticIntensityControl, at: 0.3, points: [(0, 1), (0.2, 0.2)])
        case .selection:
            b = b.continuous(at: 0, duration: 0.03, intensity: 0.35, sharpness: 0.9)
        case .increase:
            b = glide(b, at: 0, length: 0.035, from: 0.3, to: 0.9, sharp: (-0.2, 0.2))
        case .decrease:
            b = glide(b, at: 0, length: 0.035, from: 0.9, to: 0.3, sharp: (0.2, -0.2))
        case .start:
            b = glide(b, at: 0, length: 0.075, from: 0.1, to: 0.7, sharp: (-0.2, 0)).transient(at: 0.075, intensity: 0.9, sharpness: 0.6)
        case .stop:
            b = b.transient(at: 0, intensity: 0.9, sharpness: 0.6)
            b = glide(b, at: 0.025, length: 0.075, from: 0.7, to: 0.1, sharp: (0, -0.2))
        case .alignment:
            b = b.transient(at: 0, intensity: 0.55, sharpness: 1)
        case .levelChange:
            b = knock(b, at: 0, intensity: 0.75, sharpness: 0.7, length: 0.045)
        case .pathComplete:
            b = b.transient(at: 0, intensity: 0.9, sharpness: 0.6)
                .continuous(at: 0, duration: 0.09, intensity: 0.7, sharpness: 0.4)
                .curve(.hapticIntensityControl, at: 0, points: [(0, 1), (0.09, 0.1)])
        case .weight(.light): b = knock(b, at: 0, intensity: 0.5 * k, sharpness: 0.6, length: 0.04)
        case .weight(.medium): b = knock(b, at: 0, intensity: 0.75 * k, sharpness: 0.45, length: 0.05)
        case .weight(.heavy): b = knock(b, at: 0, intensity: 1 * k, sharpness: 0.3, length: 0.07)
        case .flexibility(.rigid): b = knock(b, at: 0, intensity: 0.8 * k, sharpness: 1, length: 0.035)
        case .flexibility(.solid): b = knock(b, at: 0, intensity: 0.8 * k, sharpness: 0.6, length: 0.045)
        case .flexibility(.soft): b = knock(b, at: 0, intensity: 0.7 * k, sharpness: 0.15, length: 0.06)
        }
        // Every value above is inside its range, so this cannot throw.
        return (try? b.build()) ?? AHAPPattern()
    }
}
