import Foundation
import HapSyncAHAP
import HapSyncTestSupport
import Testing
@testable import HapSyncCore

@Suite("SensoryFeedback styles")
struct FeedbackTests {
    /// The lengths people describe (ms), each within ±5 ms (a tap lasts 25 ms).
    static let described: [String: Double] = [
        "success": 130, "warning": 250, "error": 500, "selection": 30, "impact-light": 40, "impact-medium": 50, "impact-heavy": 70,
        "impact-rigid": 35, "impact-solid": 45, "impact-soft": 60, "increase": 35, "decrease": 35, "start": 100, "stop": 100,
        "alignment": 25, "level-change": 45, "path-complete": 90,
    ]

    @Test(arguments: SensoryFeedback.all)
    func lastsAsDescribedAndStaysInRange(_ feedback: SensoryFeedback) throws {
        let timeline = try PatternTimeline(pattern: feedback.pattern)
        let want = try #require(Self.described[feedback.name])
        #expect(abs(timeline.end * 1000 - want) <= 5, "\(feedback.name): \(timeline.end * 1000) ms")
        #expect(!timeline.commands.isEmpty)
        #expect(timeline.commands.allSatisfy { (0...1).contains($0.intensity) && (0...1).contains($0.sharpness) })
        // The pattern is valid AHAP by the reader's rules (no errors when written and read back).
        let report = AHAPReader().diagnose(data: AHAPWriter.data(from: feedback.pattern))
        #expect(report.diagnostics.filter { $0.severity == .error }.isEmpty)
    }

    @Test func shapesHaveTheirDirection() throws {
        func at(_ f: SensoryFeedback, _ t: Double) throws -> HapticState { try PatternTimeline(pattern: f.pattern).hapticState(at: t) }
        #expect(try at(.increase, 0.005).intensity < at(.increase, 0.03).intensity)
        #expect(try at(.increase, 0.005).sharpness < at(.increase, 0.03).sharpness)
        #expect(try at(.decrease, 0.005).intensity > at(.decrease, 0.03).intensity)
        let success = try PatternTimeline(pattern: SensoryFeedback.success.pattern).commands.filter { $0.kind == .transient }
        #expect(success.count == 2 && success[0].intensity < success[1].intensity, "success: a double tap rising")
        let error = try PatternTimeline(pattern: SensoryFeedback.error.pattern).commands.filter { $0.kind == .transient }
        #expect(error.count == 3, "error: three taps (then a buzz)")
        // Selection is the lightest; heavier impacts are stronger and duller.
        let peak = { (f: SensoryFeedback) throws -> Double in try PatternTimeline(pattern: f.pattern).commands.map(\.intensity).max()! }
        for f in SensoryFeedback.all where f != .selection { #expect(try peak(.selection) < peak(f), "\(f.name)") }
        #expect(try peak(.impact(weight: .light)) < peak(.impact(weight: .medium)))
        #expect(try peak(.impact(weight: .medium)) < peak(.impact(weight: .heavy)))
        // Intensity scales an impact.
        let half = try PatternTimeline(pattern: SensoryFeedback.impact(weight: .heavy, intensity: 0.5).pattern)
        let full = try PatternTimeline(pattern: SensoryFeedback.impact(weight: .heavy).pattern)
        #expect(abs(half.commands.map(\.intensity).max()! - full.commands.map(\.intensity).max()! / 2) < 1e-9)
    }

    @Test func namesRoundTrip() {
        for f in SensoryFeedback.all { #expect(SensoryFeedback.named(f.name) == f) }
        #expect(SensoryFeedback.named("impact") == .impact(weight: .medium))
        #expect(SensoryFeedback.named("levelChange") == .levelChange)
        #expect(SensoryFeedback.named("impact-soft", intensity: 0.3) == .impact(flexibility: .soft, intensity: 0.3))
        #expect(SensoryFeedback.named("nope") == nil)
        #expect(SensoryFeedback.impact(weight: .light, intensity: 7).intensity == 1, "clamped")
    }

    @Test func assetsHoldEveryStyleExactly() throws {
        let dir = TestFiles.asset("feedback")
        for f in SensoryFeedback.all {
            let file = dir.appendingPathComponent("\(f.name).ahap")
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text == AHAPWriter.string(from: f.pattern), "\(file.lastPathComponent) is stale: run 'hapsync feedback --export Assets/feedback --force'")
        }
    }
}

@Suite("Spring timing")
struct SpringTests {
    @Test func peakOvershootAndCrossingFollowTheEquations() throws {
        let s = SpringTiming(response: 0.4, dampingFraction: 0.7)
        let w0 = 2 * Double.pi / 0.4, wd = w0 * (1 - 0.49).squareRoot()
        #expect(abs(s.naturalFrequency - w0) < 1e-12)
        #expect(abs(try #require(s.peakTime) - Double.pi / wd) < 1e-12)
        #expect(abs(try #require(s.peakTime) - 0.280056) < 1e-5, "280 ms, not the ~180 ms often quoted")
        #expect(abs(s.overshoot - exp(-0.7 * Double.pi / 0.51.squareRoot())) < 1e-12)
        #expect(abs(s.position(at: s.peakTime!) - (1 + s.overshoot)) < 1e-9, "x(t_peak) = 1 + overshoot")
        // The peak is a maximum: slightly before and after are lower.
        #expect(s.position(at: s.peakTime! - 0.001) < s.position(at: s.peakTime!))
        #expect(s.position(at: s.peakTime! + 0.001) < s.position(at: s.peakTime!))
        #expect(abs(s.position(at: try #require(s.firstCrossing)) - 1) < 1e-9)
        #expect(abs(s.firstCrossing! - 0.2092) < 1e-3)
        #expect(abs(s.time(toReach: 0.9) - 0.1675) < 1e-3)
    }

    @Test func criticalAndOverdampedSpringsHaveNoPeak() throws {
        for z in [1.0, 1.5] {
            let s = SpringTiming(response: 0.4, dampingFraction: z)
            #expect(s.peakTime == nil && s.firstCrossing == nil && s.overshoot == 0)
            #expect(abs(s.position(at: 0)) < 1e-12)
            #expect(s.position(at: 0.5) < 1 && s.position(at: 2) > 0.99, "approaches without passing")
        }
        #expect(throws: SpringTiming.Invalid.self) { try SpringTiming(response: 0, dampingFraction: 0.5).validate() }
        #expect(throws: SpringTiming.Invalid.self) { try SpringTiming(response: 0.3, dampingFraction: -1).validate() }
    }
}
