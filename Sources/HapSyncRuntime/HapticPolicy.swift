import Foundation

/// Accessibility and policy settings the engine applies to everything it plays: haptics on or off
/// globally, an intensity scale (a reduced-motion setting commonly scales to 0.4-0.5), and a
/// per-source rate limit (a second haptic from the same source within the interval merges into
/// the one playing instead of stacking on it).
///
/// Settable by API (`HapticEngine.policy`), by the CLI (`--no-haptics`, `--intensity-scale`,
/// `--rate-limit-ms`) and by environment variables (`HAPSYNC_HAPTICS=on|off`,
/// `HAPSYNC_INTENSITY_SCALE=0..1`, `HAPSYNC_RATE_LIMIT_MS=N`; see `fromEnvironment`).
public struct HapticPolicy: Sendable, Equatable {
    /// Whether haptics play at all (audio is not affected).
    public var hapticsEnabled: Bool
    /// Multiplies every haptic intensity, 0...1.
    public var intensityScale: Double
    /// Starts from one source closer together than this merge (seconds; 0 turns the limit off).
    public var rateLimitInterval: TimeInterval

    /// Makes a policy; the defaults leave everything as authored, with a 100 ms per-source limit.
    public init(hapticsEnabled: Bool = true, intensityScale: Double = 1, rateLimitInterval: TimeInterval = 0.1) {
        self.hapticsEnabled = hapticsEnabled
        self.intensityScale = intensityScale
        self.rateLimitInterval = rateLimitInterval
    }

    /// A setting that cannot be used, naming where it came from.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// Where the value came from ("HAPSYNC_INTENSITY_SCALE", "--intensity-scale").
        public var source: String
        /// The value as given.
        public var value: String
        /// What is accepted.
        public var expected: String
        /// A sentence for the user.
        public var description: String { "\(source): '\(value)' is not \(expected)" }
    }

    /// Checks the ranges (scale 0...1, interval 0...60 s).
    public func validated(source: String = "policy") throws(Invalid) -> HapticPolicy {
        guard intensityScale.isFinite, (0...1).contains(intensityScale) else {
            throw Invalid(source: "\(source) intensity scale", value: "\(intensityScale)", expected: "a number from 0 to 1")
        }
        guard rateLimitInterval.isFinite, (0...60).contains(rateLimitInterval) else {
            throw Invalid(source: "\(source) rate limit", value: "\(rateLimitInterval)", expected: "0 to 60 seconds")
        }
        return self
    }

    /// `HAPSYNC_HAPTICS`'s switch: true for on, 1, true, yes; false for off, 0, false, no (any
    /// case); nil for anything else (an output, or a bad value).
    public static func switchValue(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "on", "1", "true", "yes": true
        case "off", "0", "false", "no": false
        default: nil
        }
    }

    /// This policy with any of `HAPSYNC_HAPTICS` (on/off, 1/0, true/false; an output such as
    /// `trace:PATH` is not a policy value and leaves it alone),
    /// `HAPSYNC_INTENSITY_SCALE` (0...1) and `HAPSYNC_RATE_LIMIT_MS` (0...60000) from `environment`
    /// applied; a bad value is an error naming the variable and the value.
    public func applying(environment: [String: String] = ProcessInfo.processInfo.environment) throws(Invalid) -> HapticPolicy {
        var p = self
        // HAPSYNC_HAPTICS also names an output (evdev:PATH, trace:PATH, none) for engines that pick
        // theirs from the environment (`import CoreHaptics`); that is not a policy value.
        if let v = environment["HAPSYNC_HAPTICS"], HapticOutputSpec(parsing: v) == nil {
            guard let enabled = Self.switchValue(v) else {
                throw Invalid(source: "HAPSYNC_HAPTICS", value: v, expected: "on, off or an output (\(HapticOutputSpec.expectation))")
            }
            p.hapticsEnabled = enabled
        }
        if let v = environment["HAPSYNC_INTENSITY_SCALE"] {
            guard let x = Double(v), x.isFinite, (0...1).contains(x) else {
                throw Invalid(source: "HAPSYNC_INTENSITY_SCALE", value: v, expected: "a number from 0 to 1")
            }
            p.intensityScale = x
        }
        if let v = environment["HAPSYNC_RATE_LIMIT_MS"] {
            guard let x = Double(v), x.isFinite, (0...60_000).contains(x) else {
                throw Invalid(source: "HAPSYNC_RATE_LIMIT_MS", value: v, expected: "milliseconds from 0 to 60000")
            }
            p.rateLimitInterval = x / 1000
        }
        return p
    }
}
