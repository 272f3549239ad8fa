import Foundation
import HapSyncCLI
import HapSyncTestSupport
import Testing

/// `hapsync plot` decodes each AudioCustom file and draws its waveform where the voice plays; a
/// file that cannot be decoded never fails the plot: its bar stays, with a note, and stderr says why.
@Suite("plot: audio waveform lanes from files")
struct PlotAudioLaneCLITests {
    /// A 16-bit mono PCM WAV at `rate` Hz: `seconds` of silence with a ±`level` square wave
    /// (`period` frames) from `from` to `to` seconds.
    static func burstWAV(_ url: URL, rate: Int = 8_000, seconds: Double, from: Double, to: Double, level: Double = 0.8, period: Int = 4) throws {
        let n = Int(Double(rate) * seconds), a = Int(Double(rate) * from), b = Int(Double(rate) * to)
        let samples = (0..<n).map { k -> Float in k >= a && k < b ? Float(k % period < period / 2 ? level : -level) : 0 }
        try WAVWriter.write(samples, sampleRate: rate, format: .pcm16, to: url)
    }

    /// A PCM WAV of `seconds` of 8-bit mono silence at 48 kHz that takes no disk, for a file too
    /// long to decode.
    static func sparseWAV(_ url: URL, seconds: Double) throws {
        try WAVWriter.writeSparse(to: url, rate: 48_000, channels: 1, bits: 8, seconds: seconds)
    }

    static func folder() throws -> TemporaryDirectory {
        try TemporaryDirectory("plot-audio")
    }

    /// Each `class="audio-wave"` path's columns (x, height in px), lane by lane.
    static func waves(_ svg: String) throws -> [[(x: Double, height: Double)]] {
        let column = try Regex("M([0-9.]+) ([0-9.-]+)V([0-9.-]+)")
        return svg.components(separatedBy: "class=\"audio-wave\" d=\"").dropFirst().map { rest in
            String(rest.prefix { $0 != "\"" }).matches(of: column).map { m in
                (Double(String(m.output[1].substring!))!, Double(String(m.output[3].substring!))! - Double(String(m.output[2].substring!))!)
            }
        }
    }

    /// Each voice rectangle's x, width and height.
    static func voiceRects(_ svg: String) throws -> [(x: Double, width: Double, height: Double)] {
        let rect = try Regex("<rect class=\"voice\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\" height=\"([0-9.]+)\"")
        return svg.matches(of: rect).map { m in
            (Double(String(m.output[1].substring!))!, Double(String(m.output[2].substring!))!, Double(String(m.output[3].substring!))!)
        }
    }

    /// A generated-song layout: the song's file at time 0, transients on its hits. Here a 2 s WAV
    /// loud from 0.5 to 0.7 s and from 1.5 to 1.6 s, with transients at 0.5 and 1.5 s. The lane's
    /// loud columns are those two stretches, each starting at its transient's guide line; before,
    /// between and after, the lane is flat. Run in process and as the built binary.
    @Test(arguments: [false, true])
    func theSongsWaveformLinesUpWithItsTransients(binary: Bool) throws {
        let dirFolder = try Self.folder()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let wav = dir.appendingPathComponent("song.wav")
        try Self.burstWAV(wav, seconds: 2, from: 0.5, to: 0.7)
        // A second burst, 1.5 to 1.6 s: the same file with those frames written in.
        var data = try Data(contentsOf: wav)
        for k in 12_000..<12_800 {
            let v: Int16 = k % 4 < 2 ? 26_213 : -26_213
            withUnsafeBytes(of: v.littleEndian) { data.replaceSubrange(44 + 2 * k..<46 + 2 * k, with: $0) }
        }
        try data.write(to: wav)
        let ahap = dir.appendingPathComponent("song.ahap")
        try Data("""
            { "Version": 1.0, "Pattern": [
              { "Event": { "Time": 0.0, "EventType": "AudioCustom", "EventWaveformPath": "song.wav" } },
              { "Event": { "Time": 0.5, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "ParameterValue": 1 } ] } },
              { "Event": { "Time": 1.5, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "ParameterValue": 1 } ] } }
            ] }
            """.utf8).write(to: ahap)
        let svgURL = dir.appendingPathComponent("song.svg")
        let args = ["plot", "--out", svgURL.path, ahap.path]
        let r = binary ? try BinaryTests.run(args) : hapsync("plot", "--out", svgURL.path, ahap.path)
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        let svg = try String(contentsOf: svgURL, encoding: .utf8)
        let rect = try #require(try Self.voiceRects(svg).first)
        #expect(rect.height == 68, "the waveform lane is 72 px")
        func x(_ t: Double) -> Double { rect.x + t / 2 * rect.width }
        let column = 1.2   // one pixel column (920 in a 1000 px plot) and the 0.1 px rounding
        let lane = try #require(try Self.waves(svg).first)
        #expect(lane.count > 900)
        let loud = lane.filter { $0.height > 10 }.map(\.x)
        #expect(loud.allSatisfy { ($0 >= x(0.5) - column && $0 <= x(0.7) + column) || ($0 >= x(1.5) - column && $0 <= x(1.6) + column) })
        #expect(abs((loud.first ?? 0) - x(0.5)) <= column && abs((loud.first { $0 > x(1) } ?? 0) - x(1.5)) <= column)
        #expect(lane.filter { $0.height > 0.5 }.count == loud.count, "flat outside the bursts")
        let guides = svg.components(separatedBy: "class=\"transient-guide\" d=\"").dropFirst().first?.prefix { $0 != "\"" } ?? ""
        let guideX = guides.split(separator: "M").map { Double($0.prefix { $0 != " " }) ?? 0 }
        #expect(guideX.count == 2 && abs(guideX[0] - x(0.5)) < 0.5 && abs(guideX[1] - x(1.5)) < 0.5)
    }

    /// A 96 kHz file is decoded at 48 kHz (`PlotCommand.maxWaveformRate`): its burst (a 1.5 kHz
    /// square wave, well under the new Nyquist frequency) from 0.3 to 0.6 s is still drawn there
    /// and nowhere else, at least ±0.8 tall: band-limiting a square wave overshoots its edges
    /// (Gibbs: ±0.94 here, 62 of 66 px), never under, and full scale caps it.
    @Test func aFileAbove48kHzIsConvertedDown() throws {
        let dirFolder = try Self.folder()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        try Self.burstWAV(dir.appendingPathComponent("hi.wav"), rate: 96_000, seconds: 1, from: 0.3, to: 0.6, period: 64)
        let ahap = dir.appendingPathComponent("hi.ahap")
        try Data(#"{ "Version": 1.0, "Pattern": [ { "Event": { "Time": 0.0, "EventType": "AudioCustom", "EventWaveformPath": "hi.wav" } } ] }"#.utf8).write(to: ahap)
        let svgURL = dir.appendingPathComponent("hi.svg")
        let r = hapsync("plot", "--out", svgURL.path, ahap.path)
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        let svg = try String(contentsOf: svgURL, encoding: .utf8)
        let rect = try #require(try Self.voiceRects(svg).first)
        func x(_ t: Double) -> Double { rect.x + t * rect.width }
        let lane = try #require(try Self.waves(svg).first)
        let loud = lane.filter { $0.height > 10 }
        #expect(loud.allSatisfy { $0.x >= x(0.3) - 1.2 && $0.x <= x(0.6) + 1.2 })
        #expect(loud.count > 270 && loud.allSatisfy { $0.height >= 0.8 * 66 && $0.height <= 66 }, "\(loud.map(\.height).min() ?? 0)...\(loud.map(\.height).max() ?? 0)")
    }

    /// Four files: one that decodes, one not found, one whose header is not audio, one that
    /// would decode to more than the decoder's limit a pattern (800 s at 48 kHz is 293.0 MiB of
    /// stereo float; a sparse file). The plot succeeds; the good file has its waveform, each of the
    /// others its bar with the reason; stderr warns about each, the not-found and unreadable ones
    /// once (by loading), the oversized one when decoding.
    @Test func filesThatCannotBeDecodedStillPlotWithANote() throws {
        let dirFolder = try Self.folder()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        try Self.burstWAV(dir.appendingPathComponent("good.wav"), seconds: 1, from: 0.2, to: 0.4)
        try Data("RIFF....WAVEnot really".utf8).write(to: dir.appendingPathComponent("junk.wav"))
        let long = dir.appendingPathComponent("long.wav")
        try Self.sparseWAV(long, seconds: 800)
        let ahap = dir.appendingPathComponent("mixed.ahap")
        try Data("""
            { "Version": 1.0, "Pattern": [
              { "Event": { "Time": 0.0, "EventType": "AudioCustom", "EventWaveformPath": "good.wav" } },
              { "Event": { "Time": 0.1, "EventType": "AudioCustom", "EventWaveformPath": "missing.wav", "EventDuration": 0.5 } },
              { "Event": { "Time": 0.2, "EventType": "AudioCustom", "EventWaveformPath": "junk.wav", "EventDuration": 0.5 } },
              { "Event": { "Time": 0.3, "EventType": "AudioCustom", "EventWaveformPath": "long.wav", "EventDuration": 900 } },
              { "Event": { "Time": 0.4, "EventType": "AudioContinuous", "EventDuration": 0.5 } }
            ] }
            """.utf8).write(to: ahap)
        let svgURL = dir.appendingPathComponent("mixed.svg")
        let r = hapsync("plot", "--out", svgURL.path, ahap.path)
        #expect(r.status == 0, "\(r.err)")
        let warnings = r.err.split(separator: "\n")
        #expect(warnings.count == 3, "\(r.err)")
        #expect(warnings.contains { $0.hasPrefix("warning: Pattern[1].Event.EventWaveformPath: \"missing.wav\" not found") })
        #expect(warnings.contains { $0.hasPrefix("warning: cannot read the header of ") && $0.hasSuffix("junk.wav; its length is unknown") })
        #expect(warnings.contains {
            $0.hasPrefix("warning: no waveform in the plot: audio file \(long.path) would decode to 293.0 MiB (800.0 s of stereo float at 48000 Hz); "
                          + "HapSync decodes at most 256 MiB of audio a pattern, and the pattern's other audio files already take ")
        }, "\(r.err)")
        let svg = try String(contentsOf: svgURL, encoding: .utf8)
        #expect(try Self.voiceRects(svg).map(\.height) == [68, 18, 18, 18, 18], "only the good file is a waveform lane; the tone keeps its bar")
        #expect(try Self.waves(svg).count == 1)
        #expect(svg.contains(">missing.wav<tspan class=\"audio-note\" dx=\"6\" fill=\"#a8322d\">(no waveform: file not found)</tspan>"))
        #expect(svg.contains(">junk.wav<tspan class=\"audio-note\" dx=\"6\" fill=\"#a8322d\">(no waveform: header unreadable)</tspan>"))
        #expect(svg.contains(">long.wav<tspan class=\"audio-note\" dx=\"6\" fill=\"#a8322d\">(no waveform: over the 256 MiB decoding limit)</tspan>"))
    }
}
