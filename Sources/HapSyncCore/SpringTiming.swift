import Foundation

/// When a spring animation peaks, from the damped-oscillator equations, so a haptic can land on
/// the visual overshoot (`hapsync spring --response 0.4 --damping 0.7`).
///
/// SwiftUI describes a spring by its `response` (the period of the undamped oscillation, s) and
/// `dampingFraction` ζ. So ω₀ = 2π / response, and for ζ < 1 the damped frequency is
/// ω_d = ω₀ √(1 − ζ²). A spring released from rest at 0 towards 1 moves as
/// x(t) = 1 − e^(−ζω₀t) (cos ω_d t + ζ/√(1 − ζ²) · sin ω_d t).
/// Its velocity is proportional to e^(−ζω₀t) sin ω_d t, so the first peak (the overshoot) is at
/// t_peak = π / ω_d, where x = 1 + e^(−ζπ/√(1 − ζ²)). It first reaches the target when
/// tan(ω_d t) = −√(1 − ζ²)/ζ, i.e. t_cross = (π − arccos ζ) / ω_d.
///
/// For response 0.4, damping 0.7: ω₀ = 15.71 rad/s, ω_d = 11.22 rad/s, the peak is at 280 ms
/// (4.6 % overshoot) and the target is first reached at 209 ms. The "~180 ms" people quote is
/// neither: it lies between the 90 % point (168 ms) and the first crossing (209 ms), where the
/// spring looks arrived, not where it peaks. A critically or over-damped spring (ζ ≥ 1) has no
/// overshoot and no peak.
public struct SpringTiming: Sendable, Equatable {
    /// Period of the undamped oscillation, seconds.
    public var response: Double
    /// ζ: 0 < ζ < 1 overshoots, 1 is critical, more is over-damped.
    public var dampingFraction: Double

    /// A spring; `response` must be > 0 and `dampingFraction` ≥ 0 (see `validate`).
    public init(response: Double, dampingFraction: Double) {
        self.response = response
        self.dampingFraction = dampingFraction
    }

    /// A spring that cannot be evaluated.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// A sentence for the user.
        public var description: String
    }

    /// Checks the parameters.
    public func validate() throws(Invalid) {
        guard response.isFinite, response > 0 else { throw Invalid(description: "response must be a positive number of seconds, got \(response)") }
        guard dampingFraction.isFinite, dampingFraction >= 0 else {
            throw Invalid(description: "damping fraction must be 0 or more, got \(dampingFraction)")
        }
    }

    /// ω₀ = 2π / response (rad/s).
    public var naturalFrequency: Double { 2 * Double.pi / response }

    /// ω_d = ω₀ √(1 − ζ²) (rad/s); nil when ζ ≥ 1.
    public var dampedFrequency: Double? {
        dampingFraction < 1 ? naturalFrequency * (1 - dampingFraction * dampingFraction).squareRoot() : nil
    }

    /// Position at time `t` (0 at rest, 1 the target), released from rest.
    public func position(at t: Double) -> Double {
        let z = dampingFraction, w0 = naturalFrequency
        if z < 1 {
            let wd = dampedFrequency!
            return 1 - exp(-z * w0 * t) * (cos(wd * t) + z / (1 - z * z).squareRoot() * sin(wd * t))
        }
        if z == 1 { return 1 - exp(-w0 * t) * (1 + w0 * t) }
        let s = (z * z - 1).squareRoot()
        // r1 = −ω₀(ζ − s) written as −ω₀ / (ζ + s), which does not cancel to 0 for a large ζ.
        let r1 = -w0 / (z + s), r2 = -w0 * (z + s)
        // x = 1 + A e^(r1 t) + B e^(r2 t) with x(0) = 0, x'(0) = 0.
        let a = r2 / (r1 - r2), b = -r1 / (r1 - r2)
        return 1 + a * exp(r1 * t) + b * exp(r2 * t)
    }

    /// Time of the first peak (the overshoot), π / ω_d; nil when ζ ≥ 1.
    public var peakTime: Double? { dampedFrequency.map { Double.pi / $0 } }

    /// How far past the target the first peak goes, as a fraction (e^(−ζπ/√(1−ζ²))); 0 when ζ ≥ 1.
    public var overshoot: Double {
        let z = dampingFraction
        return z < 1 ? exp(-z * Double.pi / (1 - z * z).squareRoot()) : 0
    }

    /// When the target is first reached, (π − arccos ζ) / ω_d; nil when ζ ≥ 1 (it only approaches it).
    public var firstCrossing: Double? { dampedFrequency.map { (Double.pi - acos(dampingFraction)) / $0 } }

    /// The first time the spring has covered `fraction` of the way (0 < fraction < 1), found by
    /// bisection. An under-damped spring rises without turning back until it first reaches the
    /// target, so that bounds the search; otherwise at most about 1,100 doublings bracket it
    /// (however slow an over-damped spring), then 100 halvings.
    public func time(toReach fraction: Double) -> Double {
        var hi = firstCrossing ?? response
        while position(at: hi) < fraction, hi < .greatestFiniteMagnitude / 2 { hi *= 2 }
        var lo = 0.0
        for _ in 0..<100 {
            let mid = (lo + hi) / 2
            if position(at: mid) < fraction { lo = mid } else { hi = mid }
        }
        return hi
    }

    /// When the spring stays within `tolerance` of the target from then on; infinity when it never
    /// does (an undamped spring, ζ = 0, swings forever).
    ///
    /// Computed, not sampled, so the work is the same for any response and damping (sampling every
    /// 0.1 ms over 20 responses took 2·10¹¹ steps for a response of 10⁶ s): for ζ < 1 the
    /// extremes of x − 1 are at t_n = nπ/ω_d with |x − 1| = e^(−ζω₀t_n), so the last one beyond
    /// the tolerance is the largest n with ζω₀t_n < ln(1/tolerance); after it |x − 1| falls to 0
    /// at (nπ + π − arccos ζ)/ω_d, and the moment it passes the tolerance on the way is found by
    /// bisection. For ζ ≥ 1 the spring approaches without overshoot: the time to reach
    /// 1 − tolerance.
    public func settlingTime(tolerance: Double = 0.02) -> Double {
        let z = dampingFraction
        guard tolerance > 0 else { return .infinity }
        guard tolerance < 1 else { return 0 }
        if z >= 1 { return time(toReach: 1 - tolerance) }
        guard z > 0, let wd = dampedFrequency else { return .infinity }
        let halfPeriod = Double.pi / wd
        let decayPerHalfPeriod = z * naturalFrequency * halfPeriod
        let n = (log(1 / tolerance) / decayPerHalfPeriod).rounded(.up) - 1
        var lo = n * halfPeriod, hi = (n * Double.pi + Double.pi - acos(z)) / wd
        guard lo.isFinite, hi.isFinite else { return .infinity }
        for _ in 0..<100 {
            let mid = (lo + hi) / 2
            if abs(position(at: mid) - 1) > tolerance { lo = mid } else { hi = mid }
        }
        return hi
    }
}
