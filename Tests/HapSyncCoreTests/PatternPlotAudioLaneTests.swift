import Foundation
import HapSyncAHAP
import HapSyncCore
import Testing

/// The plot's waveform lanes for AudioCustom voices, judged by where the audio is loud: a file
/// silent but for a known burst must draw a lane that is flat before and after the burst and full
/// during it, at the pattern time the voice plays it (start, pitch, loop, end). Tones and files
/// that could not be decoded keep their bar; a plot given no audio is the plot it always was.
@Suite("Plot: audio waveform lanes")
struct PatternPlotAudioLaneTests {
    static let rate = 8_000.0

    /// `seconds` of silence at 8 kHz with a ±`level` square wave (period 4 frames) from `from` to
    /// `to` seconds: its envelope is 0 outside the burst and ±level inside it.
    static func burst(seconds: Double, from: Double, to: Double, level: Float = 0.8) -> AudioSamples {
        let n = Int(seconds * rate), a = Int(from * rate), b = Int(to * rate)
        var mono = [Float](repeating: 0, count: n)
        for k in a..<b { mono[k] = k % 4 < 2 ? level : -level }
        return AudioSamples(mono: mono)
    }

    /// One column of a waveform path: its x and the height of its min-max line, in pixels.
    struct Column { var x: Double, top: Double, bottom: Double; var height: Double { bottom - top } }

    /// Each `class="audio-wave"` path's columns, lane by lane.
    static func waves(_ svg: String) throws -> [[Column]] {
        let column = try Regex("M([0-9.]+) ([0-9.-]+)V([0-9.-]+)")
        return svg.components(separatedBy: "class=\"audio-wave\" d=\"").dropFirst().map { rest in
            let d = String(rest.prefix { $0 != "\"" })
            return d.matches(of: column).map { m in
                Column(x: Double(String(m.output[1].substring!))!, top: Double(String(m.output[2].substring!))!,
                       bottom: Double(String(m.output[3].substring!))!)
            }
        }
    }

    /// Each voice's rectangle (x, width, height), in order.
    static func voiceRects(_ svg: String) throws -> [(x: Double, width: Double, height: Double)] {
        let rect = try Regex("<rect class=\"voice\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\" height=\"([0-9.]+)\"")
        return svg.matches(of: rect).map { m in
            (Double(String(m.output[1].substring!))!, Double(String(m.output[2].substring!))!, Double(String(m.output[3].substring!))!)
        }
    }

    /// The plot's x scale, from the first voice's rectangle: pattern seconds → pixels.
    static func scale(_ svg: String, _ voice: AudioVoice, stop: Double) throws -> (Double) -> Double {
        let r = try #require(try voiceRects(svg).first)
        return { t in r.x + (t - voice.start) / (stop - voice.start) * r.width }
    }

    static func timeline(_ builder: AHAPPatternBuilder, length: Double) throws -> PatternTimeline {
        try PatternTimeline(pattern: builder.build()) { _ in length }
    }

    /// Full scale fills the lane: 72 px less 3 px at each edge, so ±0.8 is 0.8 × 66 px tall.
    static let fullHeight = 66.0

    /// A 2 s file with a burst from 0.8 to 1.0 s, played from 0.5 s: the lane is near zero until
    /// 1.3 s, about 1.6 × 33 px tall from 1.3 to 1.5 s, near zero again until the file ends at
    /// 2.5 s, and has no column before the voice starts. The x scale comes from the voice's own
    /// rectangle (start to end), so the check does not lean on the layout's constants.
    @Test func theEnvelopeFollowsTheAudioAtTheRightTime() throws {
        let t = try Self.timeline(AHAPPatternBuilder().transient(at: 1.3, intensity: 1).audioCustom(at: 0.5, path: "burst.wav"), length: 2)
        let v = t.voices[0]
        #expect(v.end == 2.5)
        let svg = PatternPlot.svg(t, title: "burst", audio: [.samples(Self.burst(seconds: 2, from: 0.8, to: 1.0), sampleRate: Self.rate)])
        let x = try Self.scale(svg, v, stop: 2.5)
        let lane = try #require(try Self.waves(svg).first)
        let column = 1.2   // one pixel column (920 in a 1000 px plot) and the 0.1 px rounding
        #expect(lane.count > 700, "a column per pixel over the 2 s the voice plays (\(lane.count))")
        #expect(lane.allSatisfy { $0.x >= x(0.5) - column && $0.x <= x(2.5) + column }, "only where the voice plays")
        let loudOutside = lane.filter { ($0.x < x(1.3) - column || $0.x > x(1.5) + column) && $0.height >= 0.5 }
        #expect(loudOutside.isEmpty, "silent before and after the burst: \(loudOutside.prefix(3).map { ($0.x, $0.height) })")
        let inside = lane.filter { $0.x > x(1.3) + column && $0.x < x(1.5) - column }
        #expect(inside.count > 60 && inside.allSatisfy { abs($0.height - 1.6 * Self.fullHeight / 2) < 1 },
                "±0.8 during the burst: \(inside.map(\.height).min() ?? 0)...\(inside.map(\.height).max() ?? 0) px")
        // Where it starts: the first loud column is the one holding 1.3 s.
        let first = try #require(lane.first { $0.height > 10 })
        #expect(abs(first.x - x(1.3)) <= column, "burst drawn at \(first.x), expected \(x(1.3))")
        // The transient at 1.3 s has its guide line through the lane.
        let guides = svg.components(separatedBy: "class=\"transient-guide\" d=\"M").dropFirst().first?.prefix { $0 != " " } ?? ""
        #expect(abs((Double(guides) ?? 0) - x(1.3)) < 0.5)
        #expect(try Self.voiceRects(svg).first?.height == 68, "a tall lane (72 px) for the waveform")
    }

    /// AudioVolume 0.5 halves the lane's envelope; AudioPitch 1 (rate 2) plays the file twice as
    /// fast, so the burst at 0.8 s of the file sounds 0.4 s after the voice starts.
    @Test func gainAndPitchActOnTheLane() throws {
        let samples = PatternPlot.VoiceAudio.samples(Self.burst(seconds: 2, from: 0.8, to: 1.0), sampleRate: Self.rate)
        let quiet = try Self.timeline(AHAPPatternBuilder().audioCustom(at: 0, path: "b.wav", volume: 0.5), length: 2)
        let q = try #require(try Self.waves(PatternPlot.svg(quiet, title: "q", audio: [samples])).first)
        #expect(abs((q.map(\.height).max() ?? 0) - 0.5 * 1.6 * Self.fullHeight / 2) < 1)

        let fast = try Self.timeline(AHAPPatternBuilder().audioCustom(at: 0.2, path: "b.wav", pitch: 1), length: 2)
        let v = fast.voices[0]
        #expect(v.end == 1.2, "2 s of file at rate 2")
        let svg = PatternPlot.svg(fast, title: "f", audio: [samples])
        let x = try Self.scale(svg, v, stop: 1.2)
        let lane = try #require(try Self.waves(svg).first)
        let column = 1.2   // one pixel column (920 in a 1000 px plot) and the 0.1 px rounding
        let loud = lane.filter { $0.height > 10 }
        #expect(abs((loud.first?.x ?? 0) - x(0.6)) <= column, "the burst at 0.2 + 0.8 / 2 s")
        #expect(abs((loud.last?.x ?? 0) - x(0.7)) <= column, "until 0.2 + 1.0 / 2 s")
    }

    /// A 0.4 s file loud in its first 0.1 s, looping for 1.2 s from 0: three bursts, at 0, 0.4
    /// and 0.8 s. Without the loop and with EventDuration 1.2 s, one burst, and no column past
    /// the file's end at 0.4 s (EventDuration pads with silence). EventDuration 0.05 s cuts it.
    @Test func loopsWrapAndDurationsPadOrCut() throws {
        let samples = PatternPlot.VoiceAudio.samples(Self.burst(seconds: 0.4, from: 0, to: 0.1), sampleRate: Self.rate)
        let looping = try Self.timeline(AHAPPatternBuilder().audioCustom(at: 0, path: "l.wav", duration: 1.2, loop: true), length: 0.4)
        let svg = PatternPlot.svg(looping, title: "loop", audio: [samples])
        let x = try Self.scale(svg, looping.voices[0], stop: 1.2)
        let column = 1.2   // one pixel column (920 in a 1000 px plot) and the 0.1 px rounding
        let lane = try #require(try Self.waves(svg).first)
        // Burst starts: loud columns after a quiet one or the lane's start. The first is at most
        // two columns late: the 5 ms fade-in holds the first column's gain under 0.2.
        let starts = lane.indices.filter { lane[$0].height > 10 && ($0 == 0 || lane[$0 - 1].height <= 10) }.map { lane[$0].x }
        #expect(starts.count == 3)
        for (s, expected) in zip(starts, [0, 0.4, 0.8]) {
            #expect(abs(s - x(expected)) <= (expected == 0 ? 2 : 1) * column, "\(s) vs \(x(expected))")
        }

        let padded = try Self.timeline(AHAPPatternBuilder().audioCustom(at: 0, path: "l.wav", duration: 1.2), length: 0.4)
        let p = PatternPlot.svg(padded, title: "pad", audio: [samples])
        let px = try Self.scale(p, padded.voices[0], stop: 1.2)
        let padLane = try #require(try Self.waves(p).first)
        #expect((padLane.last?.x ?? .infinity) <= px(0.4) + column, "nothing drawn after the file ends")
        #expect(padLane.filter { $0.height > 10 }.allSatisfy { $0.x <= px(0.1) + column })

        let cut = try Self.timeline(AHAPPatternBuilder().audioCustom(at: 0, path: "l.wav", duration: 0.05).transient(at: 1), length: 0.4)
        let c = PatternPlot.svg(cut, title: "cut", audio: [samples])
        let cx = try Self.scale(c, cut.voices[0], stop: 0.05)
        #expect(try #require(try Self.waves(c).first).allSatisfy { $0.x <= cx(0.05) + 1 }, "cut at its end")
    }

    /// An AudioContinuous voice keeps its 18 px bar even when handed samples; a file voice given
    /// `.unavailable` keeps its bar and shows the note; only the decoded file gets a waveform.
    @Test func tonesAndUndecodedFilesKeepTheirBars() throws {
        let t = try Self.timeline(AHAPPatternBuilder().audioContinuous(at: 0, duration: 0.5)
            .audioCustom(at: 0.1, path: "bad.wav").audioCustom(at: 0.2, path: "good.wav"), length: 0.3)
        let good = PatternPlot.VoiceAudio.samples(Self.burst(seconds: 0.3, from: 0.1, to: 0.2), sampleRate: Self.rate)
        let svg = PatternPlot.svg(t, title: "mixed", audio: [good, .unavailable("cannot read <it> & more"), good])
        #expect(try Self.voiceRects(svg).map(\.height) == [18, 18, 68])
        #expect(try Self.waves(svg).count == 1)
        #expect(svg.contains("<tspan class=\"audio-note\" dx=\"6\" fill=\"#a8322d\">(no waveform: cannot read &lt;it&gt; &amp; more)</tspan>"))
        #expect(svg.contains(">tone 220 Hz</text>"))
    }

    /// The haptic drawing (intensity area, transients) is the same with and without audio lanes;
    /// a plot given no audio, or nil for every voice, is byte for byte the plot of old callers.
    /// (That plot was also compared, before this change, with the SVG the previous code wrote for
    /// every pattern of the corpus and Assets, with and without --waveform: identical.)
    @Test func oldCallersGetTheSamePicture() throws {
        let t = try Self.timeline(AHAPPatternBuilder().transient(at: 0.1, intensity: 0.8)
            .continuous(at: 0.2, duration: 0.3, intensity: 0.5).audioCustom(at: 0, path: "a.wav")
            .audioContinuous(at: 0.3, duration: 0.2), length: 0.6)
        let old = PatternPlot.svg(t, title: "same", waveform: .dualSense)
        #expect(PatternPlot.svg(t, title: "same", waveform: .dualSense, audio: []) == old)
        #expect(PatternPlot.svg(t, title: "same", waveform: .dualSense, audio: [nil, nil]) == old)
        #expect(!old.contains("audio-wave") && !old.contains("transient-guide") && !old.contains("audio-note"))
        let with = PatternPlot.svg(t, title: "same", waveform: .dualSense,
                                   audio: [.samples(Self.burst(seconds: 0.6, from: 0.1, to: 0.2), sampleRate: Self.rate), nil])
        func haptics(_ s: String) -> [Substring] {
            s.split(separator: "\n").filter { $0.hasPrefix("<polygon") || $0.contains("class=\"transient\"") || $0.contains("class=\"drive\"") }
        }
        #expect(haptics(with) == haptics(old))
        #expect(haptics(old).count == 3)
        #expect(try Self.waves(with).count == 1)
    }

    /// A file of ten minutes at 8 kHz in a 20,000 px plot: every column of the lane is there and
    /// finite, and a file of only NaN draws a flat lane rather than non-finite coordinates.
    @Test func longAndOddFilesDrawFiniteLanes() throws {
        let long = try Self.timeline(AHAPPatternBuilder().audioCustom(at: 0, path: "song.wav"), length: 600)
        let svg = PatternPlot.svg(long, title: "song", width: 20_000,
                                  audio: [.samples(Self.burst(seconds: 600, from: 0, to: 600, level: 0.5), sampleRate: Self.rate)])
        let lane = try #require(try Self.waves(svg).first)
        #expect(lane.count >= 19_919 && lane.count <= 19_921)
        #expect(lane.dropFirst(5).dropLast(5).allSatisfy { abs($0.height - Self.fullHeight / 2) < 0.2 })

        let nan = AudioSamples(mono: [Float](repeating: .nan, count: 800))
        let odd = try Self.timeline(AHAPPatternBuilder().audioCustom(at: 0, path: "odd.wav"), length: 0.1)
        let s = PatternPlot.svg(odd, title: "odd", audio: [.samples(nan, sampleRate: Self.rate)])
        #expect(!s.contains("nan") && !s.contains("inf"))
        #expect(try Self.waves(s).first?.allSatisfy { $0.height == 0 } == true)
    }
}
