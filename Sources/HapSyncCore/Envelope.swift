import Foundation

/// The amplitude envelope of a continuous event (haptic or synthesized audio), in seconds.
///
/// Semantics (docs/rendering.md):
/// - `AttackTime`, `DecayTime`, `ReleaseTime` are normalized 0...1 and map exponentially to seconds
///   with `Envelope.seconds(_:)`: 10^(3x − 3), so 0 → 1 ms, 1/3 → 10 ms, 0.5 → 31.6 ms,
///   2/3 → 100 ms, 1 → 1 s.
/// - Segments are linear in amplitude. The attack rises from 0 to 1 over `attack`, starting at the
///   event's time.
/// - Sustained (attack-sustain-release): after the attack the level holds at 1 until `hold`
///   (the EventDuration).
/// - Not sustained (attack-decay): after the attack the level falls linearly to 0 over `decay`; the
///   event ends there, or at `hold` if that comes first.
/// - At `hold` the release starts from whatever level was reached (an unfinished attack releases
///   from below 1) and falls linearly to 0 over `release`. So the event sounds until
///   `hold + release`, after its EventDuration.
public struct Envelope: Sendable, Equatable {
    /// Attack length, seconds.
    public var attack: Double
    /// Decay length, seconds (used when not sustained).
    public var decay: Double
    /// Release length, seconds.
    public var release: Double
    /// When the release starts (the event's EventDuration), seconds after the event's start.
    public var hold: Double
    /// Attack-sustain-release (true) or attack-decay (false).
    public var sustained: Bool

    /// Makes an envelope from lengths in seconds.
    public init(attack: Double, decay: Double, release: Double, hold: Double, sustained: Bool) {
        self.attack = attack
        self.decay = decay
        self.release = release
        self.hold = hold
        self.sustained = sustained
    }

    /// Seconds for a normalized envelope time x (clamped to 0...1): 10^(3x − 3), 1 ms to 1 s.
    public static func seconds(_ x: Double) -> Double { pow(10, 3 * min(max(x, 0), 1) - 3) }

    /// The level before the release, `tau` seconds after the start.
    private func preRelease(_ tau: Double) -> Double {
        if tau < attack { return tau / attack }
        if sustained { return 1 }
        return max(0, 1 - (tau - attack) / decay)
    }

    // MARK: - Real-time (any thread)

    /// The amplitude 0...1 at `tau` seconds after the event's start. Does not allocate, lock or block.
    public func level(at tau: Double) -> Double {
        if tau < 0 || tau >= end { return 0 }
        if tau < hold { return preRelease(tau) }
        let from = preRelease(hold)
        return from * max(0, 1 - (tau - hold) / release)
    }

    /// When the envelope has fallen to 0 for good, seconds after the start.
    public var end: Double {
        if !sustained, attack + decay <= hold { return attack + decay }
        return hold + release
    }
}
