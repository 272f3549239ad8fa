import Foundation
import HapSyncAHAP
import HapSyncTestSupport
import Testing
@testable import HapSyncCore

/// Golden renders, as AudioKit checks its DSP: the mixer and the waveform synthesizer render fixed
/// input, block by block as a stream would, and every sample must match the render checked in under
/// Tests/Golden (raw little-endian Float32, interleaved where stereo) to 1e-5. The rule-by-rule
/// tests (MixerTests, WaveformSynthTests) say why each sample is what it is; these catch any change
/// to the output at all, which must then be a decision: review the new render (`hapsync plot`, or
/// any tool that reads raw floats) and regenerate with
/// `HAPSYNC_UPDATE_GOLDEN=1 swift test --filter GoldenRenderTests` (which then fails, saying so).
@Suite("Golden renders")
struct GoldenRenderTests {
    static let rate = 48_000.0
    /// Frames per render call: what a 5 ms stream period asks for, and not a multiple of the
    /// mixer's 16-frame control interval, so block edges fall inside control steps.
    static let block = 250

    /// Fixed source material: a decaying 220 Hz tone on the left and a softer 330 Hz one on the
    /// right, 0.5 s.
    static let source: AudioSamples = {
        let n = Int(rate / 2)
        let left = (0..<n).map { i in Float(0.8 * sin(2 * Double.pi * 220 * Double(i) / rate) * exp(-3 * Double(i) / rate)) }
        let right = (0..<n).map { i in Float(0.5 * sin(2 * Double.pi * 330 * Double(i) / rate)) }
        return AudioSamples(left: left, right: right)
    }()

    /// Two players through one mixer: the first with its volume envelope, a pan and a volume curve,
    /// the second at 1.5× its rate starting 62.5 ms in and stopped at 187.5 ms (the 5 ms stop fade).
    static func mixerRender() throws -> [Float] {
        let first = try AHAPPatternBuilder()
            .audioCustom(at: 0, path: "a.wav", volume: 0.8, pan: -0.3)
            .audioCustom(at: 0.05, path: "a.wav", volume: 0.5, pan: 0.6, useVolumeEnvelope: false)
            .curve(.audioVolumeControl, at: 0.1, points: [(0, 1), (0.1, 0.3)])
            .build()
        let second = try AHAPPatternBuilder().audioCustom(at: 0, path: "a.wav", volume: 0.7, pitch: 0.2, useVolumeEnvelope: false).build()
        func audio(_ p: AHAPPattern) throws -> Unmanaged<PlayerAudio> {
            let timeline = try PatternTimeline(pattern: p, audioLength: { _ in 0.5 })
            return Unmanaged.passRetained(PlayerAudio(timeline: timeline, samples: timeline.voices.map { _ in source }))
        }
        let a = try audio(first), b = try audio(second)
        defer { a.release(); b.release() }
        let mixer = AudioMixer(sampleRate: rate)
        mixer.start(slot: 0, audio: a, startFrame: 0)
        mixer.start(slot: 1, audio: b, startFrame: 3_000, rate: 1.5)
        mixer.stop(slot: 1, atFrame: 9_000)
        let frames = 12_000
        var out = [Float](repeating: 0, count: frames * 2)
        out.withUnsafeMutableBufferPointer { buffer in
            for start in stride(from: 0, to: frames, by: block) {
                mixer.render(into: buffer.baseAddress! + start * 2, frames: min(block, frames - start), firstFrame: Int64(start))
            }
        }
        return out
    }

    /// A profile's drive: a continuous level stepped twice and two transients, one on top of the
    /// level and one after it has stopped.
    static func synthRender(_ profile: ActuatorProfile) -> [Float] {
        var synth = WaveformSynth(profile: profile, sampleRate: rate)
        let frames = 12_000
        var out = [Float](repeating: 0, count: frames)
        // (frame, action) in order; each applies before the block that starts at or after it.
        let steps: [(Int, (inout WaveformSynth) -> Void)] = [
            (0, { $0.setLevel(intensity: 0.6, sharpness: 0.2) }),
            (2_000, { $0.trigger(intensity: 1, sharpness: 0.8) }),
            (4_000, { $0.setLevel(intensity: 1, sharpness: 1) }),
            (7_000, { $0.setLevel(intensity: 0, sharpness: 0.5) }),
            (9_000, { $0.trigger(intensity: 0.5, sharpness: 0) }),
        ]
        var next = 0
        out.withUnsafeMutableBufferPointer { buffer in
            for start in stride(from: 0, to: frames, by: block) {
                while next < steps.count, steps[next].0 <= start {
                    steps[next].1(&synth)
                    next += 1
                }
                synth.render(into: buffer.baseAddress! + start, count: min(block, frames - start))
            }
        }
        return out
    }

    @Test func theMixerRendersAsChecked() throws {
        try Self.compare(try Self.mixerRender(), golden: "mixer-two-players-stereo.f32")
    }

    @Test(arguments: [ActuatorProfile.dualSense, .shaker])
    func theSynthesizerRendersAsChecked(_ profile: ActuatorProfile) throws {
        try Self.compare(Self.synthRender(profile), golden: "synth-\(profile.name).f32")
    }

    /// Compares `samples` with the golden file, or writes it when HAPSYNC_UPDATE_GOLDEN is set.
    static func compare(_ samples: [Float], golden name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = TestFiles.packageRoot.appendingPathComponent("Tests/Golden/\(name)")
        if ProcessInfo.processInfo.environment["HAPSYNC_UPDATE_GOLDEN"] != nil {
            try samples.withUnsafeBytes { try Data($0).write(to: url) }
            Issue.record("wrote \(url.path): review it and commit it, then run again without HAPSYNC_UPDATE_GOLDEN", sourceLocation: sourceLocation)
            return
        }
        #expect(samples.allSatisfy { $0.isFinite }, "\(name): the render holds a NaN or an infinity", sourceLocation: sourceLocation)
        let data = try Data(contentsOf: url)
        let golden = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(golden.count == samples.count, "\(name): \(golden.count) samples checked in, \(samples.count) rendered", sourceLocation: sourceLocation)
        guard let worst = zip(samples, golden).enumerated().max(by: { abs($0.1.0 - $0.1.1) < abs($1.1.0 - $1.1.1) }) else { return }
        let difference = abs(worst.element.0 - worst.element.1)
        #expect(difference <= 1e-5, "\(name): sample \(worst.offset) is \(worst.element.0), the golden render has \(worst.element.1)",
                sourceLocation: sourceLocation)
        #expect(samples.contains { abs($0) > 0.1 }, "\(name): the render is not silence", sourceLocation: sourceLocation)
    }
}
