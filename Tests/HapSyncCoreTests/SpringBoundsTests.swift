import Foundation
import HapSyncCore
import Testing

/// The settling time the way `SpringTiming` used to find it: sampled every 0.1 ms.
private func sampledSettlingTime(_ s: SpringTiming, tolerance: Double = 0.02) -> Double {
    let step = 0.0001
    var last = 0.0, t = 0.0
    while t <= max(s.response * 20, 1) {
        if abs(s.position(at: t) - 1) > tolerance { last = t }
        t += step
    }
    return last + step
}

@Suite("Spring timing: the same work for any response and damping")
struct SpringBoundsTests {
    @Test func agreesWithSamplingOnOrdinarySprings() {
        for (response, damping) in [(0.4, 0.7), (0.3, 0.2), (0.55, 0.9), (1.0, 0.05), (0.4, 1.0), (0.4, 2.5)] {
            let s = SpringTiming(response: response, dampingFraction: damping)
            let computed = s.settlingTime(), sampled = sampledSettlingTime(s)
            #expect(abs(computed - sampled) <= 0.00015, "response \(response), damping \(damping): \(computed) against \(sampled)")
        }
    }

    /// `hapsync spring --response 1e6 --damping 0.001` sampled 2·10¹¹ steps.
    @Test func aSlowLightlyDampedSpringIsComputedAtOnce() throws {
        let s = SpringTiming(response: 1e6, dampingFraction: 0.001)
        let settle = try #require(finishing(within: 5) { s.settlingTime() }, "settlingTime did not finish in 5 s")
        // The last swing beyond 2 % is where e^(−ζω₀t) = 0.02, within one half period (5·10⁵ s).
        let envelope = log(50) / (0.001 * 2 * Double.pi / 1e6)
        #expect(abs(settle - envelope) < 5e5, "\(settle) against \(envelope)")
        #expect(abs(s.position(at: settle) - 1) <= 0.02 + 1e-9)
        let t90 = try #require(finishing(within: 5) { s.time(toReach: 0.9) })
        #expect(t90 < s.firstCrossing! && abs(s.position(at: t90) - 0.9) < 1e-9, "the first time it reaches 90 %")
    }

    @Test func extremesGiveAnswersNotHangs() throws {
        #expect(SpringTiming(response: 0.4, dampingFraction: 0).settlingTime() == .infinity, "undamped: never settles")
        for (response, damping) in [(1e-9, 0.5), (1e12, 1e-12), (0.4, 1e-300), (0.4, 1e6), (1e300, 0.7), (0.4, 1 - 1e-16)] {
            let s = SpringTiming(response: response, dampingFraction: damping)
            let result = finishing(within: 5) { (s.settlingTime(), s.time(toReach: 0.9)) }
            #expect(result != nil, "response \(response), damping \(damping) did not finish")
            if let (settle, t90) = result {
                #expect(settle >= 0 && !settle.isNaN && t90 >= 0 && !t90.isNaN, "response \(response), damping \(damping): \(settle), \(t90)")
            }
        }
        // A heavily over-damped spring creeps: 90 % takes about 2ζ·ln(10)/ω₀.
        let creeping = SpringTiming(response: 0.4, dampingFraction: 1e6)
        let expected = 2 * 1e6 * log(10) / creeping.naturalFrequency
        #expect(abs(creeping.time(toReach: 0.9) / expected - 1) < 1e-3)
    }
}
