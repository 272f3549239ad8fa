import Foundation
import HapSyncAHAP
import HapSyncCore
import Testing

/// The actuator drive signal, offline: frequency by sharpness, amplitude by intensity, phase
/// continuity, transient bursts, and the safety stages.
@Suite("Waveform synthesis for voice-coil actuators")
struct WaveformSynthTests {
    let rate = 48_000.0

    private func render(_ synth: inout WaveformSynth, seconds: Double) -> [Float] {
        var out = [Float](repeating: 0, count: Int(seconds * rate))
        out.withUnsafeMutableBufferPointer { synth.render(into: $0.baseAddress!, count: $0.count) }
        return out
    }

    /// The frequency from upward zero crossings, over a steady stretch.
    private func frequency(_ s: ArraySlice<Float>) -> Double {
        var crossings: [Int] = []
        var i = s.startIndex + 1
        while i < s.endIndex {
            if s[i - 1] < 0, s[i] >= 0 { crossings.append(i) }
            i += 1
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) * rate / Double(last - first)
    }

    private func peak(_ s: ArraySlice<Float>) -> Double { Double(s.map { abs($0) }.max() ?? 0) }

    @Test(arguments: [0.0, 0.5, 1.0])
    func sharpnessSetsTheFrequencyOverTheProfilesBand(_ sharpness: Double) {
        var synth = WaveformSynth(profile: .dualSense, sampleRate: rate)
        synth.setLevel(intensity: 0.5, sharpness: sharpness)
        let out = render(&synth, seconds: 0.5)
        let want = 60 * pow(300.0 / 60, sharpness)   // 60, 134.2, 300 Hz
        #expect(abs(frequency(out[12_000...]) - want) < 1, "sharpness \(sharpness): \(frequency(out[12_000...])) Hz, want \(want)")
    }

    @Test func intensitySetsTheAmplitudeThroughThePerceptualCurve() {
        var peaks: [Double] = []
        for intensity in [0.25, 0.5] {
            var synth = WaveformSynth(profile: .generic, sampleRate: rate)
            synth.setLevel(intensity: intensity, sharpness: 0.5)
            peaks.append(peak(render(&synth, seconds: 0.3)[9_600...]))
        }
        #expect(abs(peaks[0] - pow(0.25, 1 / 0.6)) < 0.01 && abs(peaks[1] - pow(0.5, 1 / 0.6)) < 0.01, "\(peaks)")
    }

    @Test func aSharpnessStepKeepsThePhaseAndAnIntensityStepDoesNotClick() {
        var synth = WaveformSynth(profile: .dualSense, sampleRate: rate)
        synth.setLevel(intensity: 0.6, sharpness: 0)
        var out = render(&synth, seconds: 0.1)
        synth.setLevel(intensity: 0.6, sharpness: 1)
        out += render(&synth, seconds: 0.1)
        synth.setLevel(intensity: 0, sharpness: 1)
        out += render(&synth, seconds: 0.05)
        // The largest step between samples is what a 300 Hz sine at that amplitude makes, never a jump.
        let maxStep = zip(out.dropFirst(), out).map { abs(Double($0 - $1)) }.max() ?? 0
        let sineStep = ActuatorProfile.amplitude(intensity: 0.6) * 2 * Double.pi * 300 / rate
        #expect(maxStep < sineStep * 1.1, "largest step \(maxStep), a 300 Hz sine's \(sineStep)")
        #expect(peak(out[11_000...]) < 0.001, "silent after the fade")
    }

    @Test func aTransientIsAWindowedBurstOfItsCycles() {
        var synth = WaveformSynth(profile: .dualSense, sampleRate: rate)
        synth.trigger(intensity: 1, sharpness: 1)
        let out = render(&synth, seconds: 0.05)
        let length = Int((3 / 300.0 * rate).rounded())   // 3 cycles at 300 Hz: 480 samples, 10 ms
        #expect(synth.transientDuration(sharpness: 1) == 0.01)
        #expect(abs(out[0]) < 0.01 && abs(out[length - 1]) < 0.05, "starts and ends near zero")
        #expect(peak(out[0..<length]) > 0.5, "full intensity reaches the profile's range")
        #expect(peak(out[(length + 50)...]) < 0.02, "over after its cycles")
    }

    @Test(arguments: ActuatorProfile.all)
    func theSafetyStagesHoldForAnyInput(_ profile: ActuatorProfile) {
        var synth = WaveformSynth(profile: profile, sampleRate: rate)
        synth.setLevel(intensity: 1, sharpness: 0)
        var out = [Float]()
        for k in 0..<40 {
            synth.trigger(intensity: 1, sharpness: Double(k % 3) / 2)   // bursts on top of a full level
            out += render(&synth, seconds: 0.025)
        }
        #expect(peak(out[...]) <= profile.peakLimit + 1e-6, "\(profile.name): peak \(peak(out[...]))")
        let window = Int(0.1 * rate)
        for start in stride(from: window, to: out.count - window, by: window / 2) {
            let rms = (out[start..<(start + window)].map { Double($0) * Double($0) }.reduce(0, +) / Double(window)).squareRoot()
            #expect(rms <= profile.maxRMS * 1.05, "\(profile.name): RMS \(rms) at sample \(start)")
        }
        let mean = out[window...].map(Double.init).reduce(0, +) / Double(out.count - window)
        // (A 25 Hz tone over a window that is not whole cycles averages to ~0.01 by itself.)
        #expect(abs(mean) < 0.02, "\(profile.name): no DC (\(mean))")
    }

    @Test func theShakerGetsNoHighs() {
        var synth = WaveformSynth(profile: .shaker, sampleRate: rate)
        synth.trigger(intensity: 1, sharpness: 1)
        let out = render(&synth, seconds: 0.1)
        // 80 Hz burst, low-passed at 120 Hz: the sample-to-sample steps of a 80 Hz signal, not clicks.
        let maxStep = zip(out.dropFirst(), out).map { abs(Double($0 - $1)) }.max() ?? 0
        #expect(maxStep < 2 * Double.pi * 120 / rate, "\(maxStep)")
    }

    @Test func thePlotDrawsTheDriveSignalLane() throws {
        let pattern = try AHAPPatternBuilder().transient(at: 0, intensity: 1, sharpness: 0.5)
            .continuous(at: 0.05, duration: 0.2, intensity: 0.7, sharpness: 0.3).build()
        let timeline = try PatternTimeline(pattern: pattern)
        let with = PatternPlot.svg(timeline, title: "t", waveform: .dualSense)
        let without = PatternPlot.svg(timeline, title: "t")
        #expect(with.contains("drive signal") && with.contains("dualsense profile: 60-300 Hz"))
        let path = with.components(separatedBy: "class=\"drive\" d=\"").last?.prefix { $0 != "\"" } ?? ""
        #expect(path.filter { $0 == "M" }.count > 200, "a column per pixel where the signal moves")
        #expect(!without.contains("drive signal"))
    }

    @Test func aPatternRendersAsItsCommandsSay() throws {
        let pattern = try AHAPPatternBuilder().transient(at: 0.1, intensity: 1, sharpness: 1)
            .continuous(at: 0.3, duration: 0.2, intensity: 0.8, sharpness: 0, attack: 0, release: 0).build()
        let out = WaveformSynth.render(try PatternTimeline(pattern: pattern), profile: .dualSense, sampleRate: rate)
        #expect(peak(out[0..<4_700]) < 0.001, "silent before the tap")
        #expect(peak(out[4_800..<5_400]) > 0.5, "the tap at 0.1 s")
        #expect(abs(frequency(out[16_000..<23_000]) - 60) < 2, "the continuous event at sharpness 0: 60 Hz")
        #expect(peak(out[26_000...]) < 0.01, "silent after its end")
    }
}
