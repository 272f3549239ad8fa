import Foundation
import HapSyncAHAP
import Testing
@testable import HapSyncCore

/// Renders `frames` frames of a one-voice pattern whose file is `samples`, starting at frame 0.
func render(_ build: (AHAPPatternBuilder) -> AHAPPatternBuilder, samples: AudioSamples?, frames: Int, rate: Double = 48_000,
            first: Int64 = 0, length: Double? = nil) throws -> (left: [Float], right: [Float]) {
    let pattern = try build(AHAPPatternBuilder()).build()
    let timeline = try PatternTimeline(pattern: pattern, audioLength: { _ in length ?? samples.map { Double($0.frames) / rate } })
    let audio = PlayerAudio(timeline: timeline, samples: timeline.voices.map { v in
        if case .file = v.source { return samples } else { return nil }
    })
    let mixer = AudioMixer(sampleRate: rate)
    mixer.start(slot: 0, audio: Unmanaged.passRetained(audio), startFrame: 0)
    var out = [Float](repeating: 0, count: frames * 2)
    out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: frames, firstFrame: first) }
    return (stride(from: 0, to: out.count, by: 2).map { out[$0] }, stride(from: 1, to: out.count, by: 2).map { out[$0] })
}

func near(_ a: Float, _ b: Double, _ tol: Double = 1e-5) -> Bool { abs(Double(a) - b) <= tol }

/// Expected samples are derived by hand from the documented mixer rules (AudioMixer's comment).
@Suite("Mixer")
struct MixerTests {
    let ones = AudioSamples(mono: [Float](repeating: 1, count: 48_000))

    /// A voice stopped at or before its first frame never sounds, not even as the 5 ms stop
    /// fade (a loop's next pass sent ahead and then called off, a seek over voices not begun).
    @Test func aVoiceStoppedBeforeItBeginsNeverSounds() throws {
        let pattern = try AHAPPatternBuilder().audioCustom(at: 0, path: "a.wav", useVolumeEnvelope: false).build()
        let timeline = try PatternTimeline(pattern: pattern, audioLength: { _ in 1 })
        let audio = Unmanaged.passRetained(PlayerAudio(timeline: timeline, samples: [ones]))
        defer { audio.release() }
        let mixer = AudioMixer(sampleRate: 48_000)
        mixer.start(slot: 0, audio: audio, startFrame: 100)
        mixer.stop(slot: 0, atFrame: 100)
        var out = [Float](repeating: 0, count: 400)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 200, firstFrame: 0) }
        #expect(out.allSatisfy { $0 == 0 }, "stopped at its first frame: silent")
        #expect(!mixer.isPlaying)
        // One that has begun fades over 5 ms from the stop.
        mixer.start(slot: 0, audio: audio, startFrame: 200)
        mixer.stop(slot: 0, atFrame: 201)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 200, firstFrame: 200) }
        #expect(out[0] == 1 && out[2] == 1 && out[4] > 0.9, "\(out.prefix(6))")
    }

    @Test func panLawIsEqualPowerWithUnityAtTheCentre() throws {
        // θ = (pan + 1)·π/4; left = √2·cos θ, right = √2·sin θ; no envelope, volume 0.5.
        for (pan, l, r) in [(0.0, 1.0, 1.0), (-1.0, 2.0.squareRoot(), 0.0), (1.0, 0.0, 2.0.squareRoot()),
                            (0.5, 2.0.squareRoot() * cos(0.375 * Double.pi), 2.0.squareRoot() * sin(0.375 * Double.pi))] {
            let out = try render({ $0.audioCustom(at: 0, path: "a.wav", volume: 0.5, pan: pan, useVolumeEnvelope: false) }, samples: ones, frames: 64)
            #expect(near(out.left[40], 0.5 * l) && near(out.right[40], 0.5 * r), "pan \(pan): \(out.left[40]) \(out.right[40])")
        }
        // Power is constant: l² + r² = 2 for every pan.
        #expect(abs(pow(2.0.squareRoot() * cos(0.375 * Double.pi), 2) + pow(2.0.squareRoot() * sin(0.375 * Double.pi), 2) - 2) < 1e-12)
    }

    @Test func volumeEnvelopeFadesInAndOutOverFiveMilliseconds() throws {
        // A 0.1 s file (4800 frames) with the envelope: 5 ms = 240 frames of linear fade at each end.
        let short = AudioSamples(mono: [Float](repeating: 1, count: 4800))
        let out = try render({ $0.audioCustom(at: 0, path: "a.wav") }, samples: short, frames: 4800)
        #expect(out.left[0] == 0)
        #expect(near(out.left[120], 0.5), "half way through the fade in: \(out.left[120])")
        #expect(near(out.left[240], 1) && near(out.left[2400], 1))
        #expect(near(out.left[4800 - 120], 0.5, 1e-4), "half way through the fade out: \(out.left[4680])")
        // Without the envelope it starts at full level.
        let hard = try render({ $0.audioCustom(at: 0, path: "a.wav", useVolumeEnvelope: false) }, samples: short, frames: 16)
        #expect(hard.left[0] == 1)
    }

    @Test func loopSeamInterpolatesFromTheLastFrameToTheFirst() throws {
        // Frames 0, 1, 2, 3 looped; pitch log2(1.5) reads 1.5 frames per output frame:
        // positions 0, 1.5, 3, 4.5 → 0.5 (wrapped), 6 → 2, 7.5 → 3.5: between frame 3 (3) and frame 0 (0) → 1.5,
        // then 9 → 1 and 10.5 → 2.5.
        let ramp = AudioSamples(mono: [0, 1, 2, 3])
        let pitch = log2(1.5)
        let out = try render({ $0.audioCustom(at: 0, path: "a.wav", duration: 1, pitch: pitch, loop: true, useVolumeEnvelope: false) },
                             samples: ramp, frames: 8, length: 4.0 / 48_000)
        let expected: [Double] = [0, 1.5, 3, 0.5, 2, 1.5, 1, 2.5]
        for (k, e) in expected.enumerated() { #expect(near(out.left[k], e, 1e-4), "frame \(k): \(out.left[k]) vs \(e)") }
    }

    @Test func truncationAndPadding() throws {
        // A 0.2 s file: EventDuration 0.1 cuts it; EventDuration 0.5 pads it with silence (no loop).
        let file = AudioSamples(mono: [Float](repeating: 1, count: 9600))
        let cut = try render({ $0.audioCustom(at: 0, path: "a.wav", duration: 0.1, useVolumeEnvelope: false) }, samples: file, frames: 9600)
        #expect(cut.left[4799] == 1 && cut.left[4800] == 0 && cut.left[9000] == 0)
        let padded = try render({ $0.audioCustom(at: 0, path: "a.wav", duration: 0.5, useVolumeEnvelope: false) }, samples: file, frames: 12_000)
        #expect(padded.left[9599] == 1 && padded.left[9600] == 0 && padded.left[11_999] == 0)
        let looped = try render({ $0.audioCustom(at: 0, path: "a.wav", duration: 0.5, loop: true, useVolumeEnvelope: false) }, samples: file, frames: 12_000)
        #expect(looped.left[9600] == 1 && looped.left[11_999] == 1)
    }

    @Test func pitchIsAPlaybackRate() throws {
        // Frame k of a ramp (value = index) read at pitch 1 (rate 2) is 2k; at pitch −1 (rate 0.5) k/2.
        let ramp = AudioSamples(mono: (0..<1000).map(Float.init))
        let up = try render({ $0.audioCustom(at: 0, path: "a.wav", pitch: 1, useVolumeEnvelope: false) }, samples: ramp, frames: 100)
        #expect((0..<100).allSatisfy { near(up.left[$0], Double(2 * $0), 1e-3) })
        let down = try render({ $0.audioCustom(at: 0, path: "a.wav", pitch: -1, useVolumeEnvelope: false) }, samples: ramp, frames: 100)
        #expect((0..<100).allSatisfy { near(down.left[$0], Double($0) / 2, 1e-3) })
    }

    @Test func brightnessIsAOnePoleLowPass() throws {
        // DC 1.0 at brightness 0: fc = 200 Hz, a = 1 − e^(−2π·200/48000); y_n = 1 − (1 − a)^(n+1).
        let out = try render({ $0.audioCustom(at: 0, path: "a.wav", brightness: 0, useVolumeEnvelope: false) }, samples: ones, frames: 200)
        let a = 1 - exp(-2 * Double.pi * 200 / 48_000)
        for n in [0, 1, 10, 100, 199] { #expect(near(out.left[n], 1 - pow(1 - a, Double(n + 1)), 1e-4), "frame \(n)") }
    }

    @Test func startsAtItsFrameAndFollowsVolumeControl() throws {
        // A voice at 0.01 s (frame 480) under AudioVolumeControl 0.5 from 0.
        let out = try render({ $0.audioCustom(at: 0.01, path: "a.wav", volume: 1, useVolumeEnvelope: false).parameter(.audioVolumeControl, 0.5, at: 0) },
                             samples: ones, frames: 600)
        #expect(out.left[479] == 0 && near(out.left[480], 0.5) && near(out.left[599], 0.5))
    }

    @Test func synthesizedToneIsASineAtBrightnessZero() throws {
        // 220 Hz sine, volume 1, pan 0, after the 1 ms attack (frame 100): sin(2π·220·k/48000).
        let out = try render({ $0.audioContinuous(at: 0, duration: 1, volume: 1, brightness: 0) }, samples: nil, frames: 400)
        for k in [100, 150, 300, 399] { #expect(near(out.left[k], sin(2 * Double.pi * 220 * Double(k) / 48_000), 1e-3), "frame \(k)") }
        #expect(abs(Double(AudioMixer.tone(phase: 0.25, brightness: 1)) - (2 / Double.pi) * (1 - 1.0 / 3 + 1.0 / 5 - 1.0 / 7)) < 1e-6)
    }

    @Test func stopFadesOutOverFiveMilliseconds() throws {
        let pattern = try AHAPPatternBuilder().audioCustom(at: 0, path: "a.wav", useVolumeEnvelope: false).build()
        let timeline = try PatternTimeline(pattern: pattern, audioLength: { _ in 1 })
        let audio = PlayerAudio(timeline: timeline, samples: [ones])
        let mixer = AudioMixer(sampleRate: 48_000)
        mixer.start(slot: 3, audio: Unmanaged.passRetained(audio), startFrame: 0)
        mixer.stop(slot: 3, atFrame: 100)
        var out = [Float](repeating: 0, count: 800)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 400, firstFrame: 0) }
        #expect(out[2 * 99] == 1 && near(out[2 * 220], 0.5) && out[2 * 340] == 0)
        #expect(mixer.activeVoices == 1)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 400, firstFrame: 400) }
        #expect(mixer.activeVoices == 0)
    }
}
