import Foundation

/// Draws a pattern as an SVG picture: intensity and sharpness of the continuous signal over time,
/// transients as stems, audio voices as labelled bars with their gain inside, time axis in ms.
/// An `AudioCustom` voice whose decoded file is given gets a taller lane showing its waveform.
public enum PatternPlot {
    /// What a plot knows of one voice's file, for its audio lane.
    public enum VoiceAudio: Sendable {
        /// The file decoded from its start, stereo float at `sampleRate` frames a second: the lane
        /// shows the waveform the voice plays. A looping voice wraps at the last frame given, so
        /// give it the whole file.
        case samples(AudioSamples, sampleRate: Double)
        /// The file could not be decoded, for this reason: the lane keeps its bar and says why.
        case unavailable(String)
    }

    /// Height of a voice's bar lane, and of a waveform lane, in pixels.
    static let laneHeight = 22.0, waveformLaneHeight = 72.0

    /// The SVG text for a timeline. `title` heads the picture; `label` names a voice's bar
    /// (defaults to its file name, or "tone" for AudioContinuous). With `waveform`, a lane under
    /// the haptics shows the drive signal an actuator with that profile gets (`WaveformSynth`).
    ///
    /// `audio` is indexed like `timeline.voices` (empty, the default: every voice is a bar). An
    /// `AudioCustom` voice given `.samples` is drawn as a waveform lane: per pixel column, the
    /// lowest and highest sample of both channels among the frames the voice plays in that column
    /// (from its start, at the rate its pitch gives, wrapping when it loops, silent after a
    /// non-looping file runs out, cut at its end), times its gain, full scale filling the lane;
    /// thin lines mark the transients across it. A voice given `.unavailable` keeps its bar with
    /// the note. Tones always keep their bar. Cost: one pass over the frames the voices play.
    public static func svg(_ timeline: PatternTimeline, title: String, width: Int = 1000,
                           label: ((AudioVoice) -> String)? = nil, waveform: ActuatorProfile? = nil,
                           audio: [VoiceAudio?] = []) -> String {
        precondition(audio.isEmpty || audio.count == timeline.voices.count, "one audio entry per voice")
        let left = 56.0, right = 24.0, top = 72.0
        let plotWidth = Double(max(width, 300)) - left - right
        let hapticHeight = 220.0
        let waveTop = top + hapticHeight + 44, waveHeight = waveform == nil ? 0.0 : 90.0
        let audioTop = waveTop + (waveform == nil ? 0 : waveHeight + 44)
        // Each voice's samples when it is drawn as a waveform, and its lane's top.
        let drawn: [(samples: AudioSamples, rate: Double)?] = timeline.voices.indices.map { i in
            guard i < audio.count, case .file = timeline.voices[i].source, case .samples(let s, let rate)? = audio[i],
                  rate > 0, rate.isFinite else { return nil }
            return (s, rate)
        }
        var laneTops: [Double] = []
        var audioBottom = audioTop
        for d in drawn {
            laneTops.append(audioBottom)
            audioBottom += d == nil ? laneHeight : waveformLaneHeight
        }
        if timeline.voices.isEmpty { audioBottom += laneHeight }
        let height = audioBottom + 48
        let span = max(timeline.end, 0.001)
        func x(_ t: Double) -> Double { left + t / span * plotWidth }
        func y(_ v: Double) -> Double { top + (1 - v) * hapticHeight }
        func f(_ v: Double) -> String { String((v * 10).rounded() / 10) }

        var s = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(max(width, 300))" height="\(Int(saturating: height))" \
            viewBox="0 0 \(max(width, 300)) \(Int(saturating: height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(left))" y="22" font-size="15" font-weight="bold">\(escape(title))</text>
            <text x="\(f(left))" y="40" fill="#555">duration \(ms(timeline.duration)) ms (Core Haptics), sounds until \(ms(timeline.end)) ms; \
            \(timeline.commands.count) commands at \(rate(timeline.options.controlRate)) Hz</text>

            """
        // Haptic panel frame and grid.
        s += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(hapticHeight))\" fill=\"#fafafa\" stroke=\"#999\"/>\n"
        for v in stride(from: 0.0, through: 1.0, by: 0.25) {
            s += "<line x1=\"\(f(left))\" x2=\"\(f(left + plotWidth))\" y1=\"\(f(y(v)))\" y2=\"\(f(y(v)))\" stroke=\"#e3e3e3\"/>"
            s += "<text x=\"\(f(left - 6))\" y=\"\(f(y(v) + 4))\" text-anchor=\"end\" fill=\"#555\">\(v)</text>\n"
        }
        let step = tickStep(span)
        for tick in stride(from: 0.0, through: span + 1e-9, by: step) {
            s += "<line x1=\"\(f(x(tick)))\" x2=\"\(f(x(tick)))\" y1=\"\(f(top))\" y2=\"\(f(audioBottom))\" stroke=\"#eeeeee\"/>"
            s += "<text x=\"\(f(x(tick)))\" y=\"\(f(height - 26))\" text-anchor=\"middle\" fill=\"#555\">\(ms(tick))</text>\n"
        }
        s += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 8))\" text-anchor=\"middle\" fill=\"#333\">time (ms)</text>\n"

        // Continuous signal, sampled finely enough to show 1 ms attacks on short patterns.
        let samples = min(4000, max(400, Int(saturating: span * 2000)))
        var intensity = "", sharpness = ""
        for i in 0...samples {
            let t = span * Double(i) / Double(samples)
            let st = timeline.hapticState(at: t)
            intensity += "\(f(x(t))),\(f(y(st.continuousIntensity))) "
            if st.continuousIntensity > 0 { sharpness += "\(f(x(t))),\(f(y(st.continuousSharpness))) " } else if !sharpness.hasSuffix("|") { sharpness += "|" }
        }
        s += "<polygon points=\"\(f(x(0))),\(f(y(0))) \(intensity)\(f(x(span))),\(f(y(0)))\" fill=\"#4a7fd4\" fill-opacity=\"0.35\" stroke=\"#2f5fb0\" stroke-width=\"1.2\"/>\n"
        for run in sharpness.split(separator: "|") where run.contains(" ") {
            s += "<polyline points=\"\(run)\" fill=\"none\" stroke=\"#e07b1a\" stroke-width=\"1.5\"/>\n"
        }
        // Transients: stems to their intensity, dot colour from sharpness (dull brown → sharp red).
        for c in timeline.commands where c.kind == .transient {
            let color = "rgb(\(Int(saturating: 120 + 135 * c.sharpness)),\(Int(saturating: 60 - 40 * c.sharpness)),\(Int(saturating: 40 - 20 * c.sharpness)))"
            s += "<line class=\"transient\" x1=\"\(f(x(c.time)))\" x2=\"\(f(x(c.time)))\" y1=\"\(f(y(0)))\" y2=\"\(f(y(c.intensity)))\" stroke=\"\(color)\" stroke-width=\"1.5\"/>"
            s += "<circle cx=\"\(f(x(c.time)))\" cy=\"\(f(y(c.intensity)))\" r=\"3\" fill=\"\(color)\"/>\n"
        }
        // Legend, above the panel on the right; panel name on the left.
        let lx = left + plotWidth - 292, ly = top - 10
        s += "<rect x=\"\(f(lx + 6))\" y=\"\(f(ly - 9))\" width=\"14\" height=\"10\" fill=\"#4a7fd4\" fill-opacity=\"0.6\"/><text x=\"\(f(lx + 24))\" y=\"\(f(ly))\">intensity</text>"
        s += "<line x1=\"\(f(lx + 92))\" x2=\"\(f(lx + 106))\" y1=\"\(f(ly - 4))\" y2=\"\(f(ly - 4))\" stroke=\"#e07b1a\" stroke-width=\"2\"/><text x=\"\(f(lx + 110))\" y=\"\(f(ly))\">sharpness</text>"
        s += "<line x1=\"\(f(lx + 190))\" x2=\"\(f(lx + 190))\" y1=\"\(f(ly - 10))\" y2=\"\(f(ly + 1))\" stroke=\"#c0302a\" stroke-width=\"2\"/><text x=\"\(f(lx + 196))\" y=\"\(f(ly))\">transient</text>\n"
        s += "<text x=\"\(f(left))\" y=\"\(f(ly))\" fill=\"#333\" font-weight=\"bold\">haptics</text>\n"

        // The drive signal: per pixel column, the lowest and highest sample.
        if let profile = waveform {
            let sampleRate = 48_000.0
            let drive = WaveformSynth.render(timeline, profile: profile, sampleRate: sampleRate, tail: 0)
            let mid = waveTop + waveHeight / 2
            s += "<text x=\"\(f(left))\" y=\"\(f(waveTop - 6))\" fill=\"#333\" font-weight=\"bold\">drive signal</text>"
            s += "<text x=\"\(f(left + 90))\" y=\"\(f(waveTop - 6))\" fill=\"#555\">\(escape(profile.name)) profile: \(rate(profile.frequencies.lowerBound))-\(rate(profile.frequencies.upperBound)) Hz by sharpness, peak \(profile.peakLimit), RMS ≤ \(profile.maxRMS) of full scale</text>\n"
            s += "<rect x=\"\(f(left))\" y=\"\(f(waveTop))\" width=\"\(f(plotWidth))\" height=\"\(f(waveHeight))\" fill=\"#fafafa\" stroke=\"#999\"/>"
            s += "<line x1=\"\(f(left))\" x2=\"\(f(left + plotWidth))\" y1=\"\(f(mid))\" y2=\"\(f(mid))\" stroke=\"#e3e3e3\"/>\n"
            let columns = max(1, Int(plotWidth))
            var path = ""
            for col in 0..<columns where !drive.isEmpty {
                let a = min(drive.count - 1, Int(Double(col) / Double(columns) * span * sampleRate))
                let b = min(drive.count, max(a + 1, Int(Double(col + 1) / Double(columns) * span * sampleRate)))
                var lo: Float = 0, hi: Float = 0
                for k in a..<b { lo = min(lo, drive[k]); hi = max(hi, drive[k]) }
                guard hi - lo > 0.002 else { continue }
                let px = left + Double(col) + 0.5
                path += "M\(f(px)) \(f(mid - Double(hi) * waveHeight / 2))V\(f(mid - Double(lo) * waveHeight / 2))"
            }
            s += "<path class=\"drive\" d=\"\(path)\" stroke=\"#6a4c93\" stroke-width=\"1\" fill=\"none\"/>\n"
        }

        // Audio lanes.
        s += "<text x=\"\(f(left))\" y=\"\(f(audioTop - 6))\" fill=\"#333\" font-weight=\"bold\">audio</text>\n"
        if timeline.voices.isEmpty {
            s += "<text x=\"\(f(left + 8))\" y=\"\(f(audioTop + 15))\" fill=\"#888\">no audio events</text>\n"
        }
        // Voice i's gain (at most 1) at 201 times from its start to `stop`, as polyline points.
        func gainLine(_ i: Int, _ stop: Double, _ y: (Double) -> Double) -> String {
            let start = timeline.voices[i].start, n = 200
            var points = ""
            for k in 0...n {
                let t = start + (stop - start) * Double(k) / Double(n)
                let g = min(1, timeline.voiceState(i, at: min(t, stop - 1e-9)).gain)
                points += "\(f(x(t))),\(f(y(g))) "
            }
            return points
        }
        let columns = max(1, Int(plotWidth))
        for (i, v) in timeline.voices.enumerated() {
            let y0 = laneTops[i]
            let stop = v.end ?? timeline.end
            let name = label?(v) ?? {
                if case .file(let p) = v.source { return (p as NSString).lastPathComponent }
                return "tone \(Int(saturating: AudioVoice.toneFrequency(pitch: v.pitch).rounded())) Hz"
            }()
            let fill = v.source == .tone ? "#8e6bbf" : "#3a9a6b"
            if let (samples, sampleRate) = drawn[i] {
                // Waveform lane: full scale ±1 fills it around its middle.
                let h = waveformLaneHeight, mid = y0 + h / 2, half = h / 2 - 3
                s += "<rect class=\"voice\" x=\"\(f(x(v.start)))\" y=\"\(f(y0 + 2))\" width=\"\(f(max(1, x(stop) - x(v.start))))\" height=\"\(f(h - 4))\" "
                s += "fill=\"\(fill)\" fill-opacity=\"0.08\" stroke=\"\(fill)\"\(v.end == nil ? " stroke-dasharray=\"4 3\"" : "")/>"
                s += "<line x1=\"\(f(x(v.start)))\" x2=\"\(f(x(stop)))\" y1=\"\(f(mid))\" y2=\"\(f(mid))\" stroke=\"#d5e6dc\"/>\n"
                // Where the transients fall, under the waveform, to see them against the hits.
                var guides = ""
                for c in timeline.commands where c.kind == .transient {
                    guides += "M\(f(x(c.time))) \(f(y0 + 2))V\(f(y0 + h - 2))"
                }
                if !guides.isEmpty {
                    s += "<path class=\"transient-guide\" d=\"\(guides)\" stroke=\"#c0302a\" stroke-opacity=\"0.55\" stroke-width=\"0.8\" fill=\"none\"/>\n"
                }
                var path = ""
                for c in envelope(samples, sampleRate: sampleRate, voice: i, of: timeline, until: stop, columns: columns, span: span) {
                    let px = left + (Double(c.column) + 0.5) * plotWidth / Double(columns)
                    path += "M\(f(px)) \(f(mid - Double(c.high) * half))V\(f(mid - Double(c.low) * half))"
                }
                s += "<path class=\"audio-wave\" d=\"\(path)\" stroke=\"#4f5d56\" stroke-width=\"\(f(max(1, plotWidth / Double(columns))))\" fill=\"none\"/>\n"
                // The gain: the bounds the waveform may reach.
                s += "<polyline points=\"\(gainLine(i, stop) { mid - $0 * half })\" fill=\"none\" stroke=\"\(fill)\" stroke-width=\"1\" stroke-opacity=\"0.7\"/>"
                s += "<polyline points=\"\(gainLine(i, stop) { mid + $0 * half })\" fill=\"none\" stroke=\"\(fill)\" stroke-width=\"1\" stroke-opacity=\"0.7\"/>\n"
                s += "<text x=\"\(f(x(v.start) + 4))\" y=\"\(f(y0 + 15))\" fill=\"#222\" stroke=\"white\" stroke-width=\"3\" stroke-opacity=\"0.8\" "
                s += "paint-order=\"stroke\">\(escape(name))\(v.loop ? " (loop)" : "")</text>\n"
                continue
            }
            s += "<rect class=\"voice\" x=\"\(f(x(v.start)))\" y=\"\(f(y0 + 2))\" width=\"\(f(max(1, x(stop) - x(v.start))))\" height=\"\(f(laneHeight - 4))\" "
            s += "fill=\"\(fill)\" fill-opacity=\"0.25\" stroke=\"\(fill)\"\(v.end == nil ? " stroke-dasharray=\"4 3\"" : "")/>"
            s += "<polyline points=\"\(gainLine(i, stop) { y0 + laneHeight - 3 - $0 * (laneHeight - 6) })\" fill=\"none\" stroke=\"\(fill)\" stroke-width=\"1\"/>"
            var note = ""
            if i < audio.count, case .file = v.source, case .unavailable(let why)? = audio[i] {
                note = "<tspan class=\"audio-note\" dx=\"6\" fill=\"#a8322d\">(no waveform: \(escape(why)))</tspan>"
            }
            s += "<text x=\"\(f(x(v.start) + 4))\" y=\"\(f(y0 + 15))\" fill=\"#222\">\(escape(name))\(v.loop ? " (loop)" : "")\(note)</text>\n"
        }
        s += "</svg>\n"
        return s
    }

    /// One pixel column of a waveform: the lowest and highest sample played in it, times the gain.
    struct EnvelopeColumn: Equatable {
        /// The column, from 0 at the plot's left edge.
        var column: Int
        /// Lowest sample, −1...0.
        var low: Float
        /// Highest sample, 0...1.
        var high: Float
    }

    /// The waveform of file voice `index` over `columns` equal columns of `span` pattern seconds:
    /// the columns from its start to `stop` while it has something to play. The file position
    /// moves at 2^pitch file seconds a pattern second (pitch and gain read once a column, at its
    /// start and middle); a looping voice wraps at the last frame, another stops there. Each frame
    /// is read at most once unless a column spans the whole of a looping file (then the file's own
    /// extremes, found once, are used).
    static func envelope(_ samples: AudioSamples, sampleRate: Double, voice index: Int, of timeline: PatternTimeline,
                         until stop: Double, columns: Int, span: Double) -> [EnvelopeColumn] {
        let v = timeline.voices[index], frames = samples.frames
        guard frames > 0, stop > v.start, span > 0 else { return [] }
        let width = span / Double(columns)
        let first = max(0, min(columns, Int(saturating: (v.start / width).rounded(.down))))
        let last = max(first, min(columns, Int(saturating: (stop / width).rounded(.up))))
        var out: [EnvelopeColumn] = []
        out.reserveCapacity(last - first)
        return samples.left.withUnsafeBufferPointer { l in
            samples.right.withUnsafeBufferPointer { r in
                // Lowest and highest of both channels over frames a..<b, one comparison pass.
                func extremes(_ a: Int, _ b: Int, _ low: inout Float, _ high: inout Float) {
                    for k in a..<b {
                        let x = l[k], y = r[k]
                        if x < low { low = x }
                        if x > high { high = x }
                        if y < low { low = y }
                        if y > high { high = y }
                    }
                }
                var whole: (low: Float, high: Float)?
                var position = 0.0
                for column in first..<last {
                    let t0 = max(v.start, Double(column) * width), t1 = min(stop, Double(column + 1) * width)
                    guard t1 > t0 else { continue }
                    let from = position
                    position += (t1 - t0) * AudioVoice.playbackRate(pitch: timeline.voiceState(index, at: t0).pitch)
                    // Frames as far as 2^52 (far past any pattern's end) so that a + 1 never overflows.
                    let a = Int(saturating: min(from * sampleRate, 0x1p52).rounded(.down))
                    let b = max(a + 1, Int(saturating: min(position * sampleRate, 0x1p52).rounded(.down)))
                    var low: Float = 0, high: Float = 0
                    if !v.loop {
                        guard a < frames else { break }
                        extremes(a, min(b, frames), &low, &high)
                    } else if b - a >= frames {
                        if whole == nil {
                            var wl: Float = 0, wh: Float = 0
                            extremes(0, frames, &wl, &wh)
                            whole = (wl, wh)
                        }
                        (low, high) = whole ?? (0, 0)
                    } else {
                        let start = a % frames, end = start + (b - a)
                        extremes(start, min(end, frames), &low, &high)
                        if end > frames { extremes(0, end - frames, &low, &high) }
                    }
                    let g = timeline.voiceState(index, at: (t0 + t1) / 2).gain
                    let gain = g.isFinite ? Float(min(1, max(0, g))) : 0
                    out.append(EnvelopeColumn(column: column, low: max(-1, low) * gain, high: min(1, high) * gain))
                }
                return out
            }
        }
    }

    /// A rate without a needless ".0".
    static func rate(_ hz: Double) -> String { hz == hz.rounded() && abs(hz) < 1e15 ? String(Int(saturating: hz)) : String(hz) }

    /// Milliseconds as text: whole when ≥ 10 ms, one decimal below.
    static func ms(_ seconds: Double) -> String {
        let m = seconds * 1000
        guard m.isFinite, abs(m) < 1e15 else { return String(m) }
        return m >= 10 || m == 0 ? String(Int(saturating: m.rounded())) : String((m * 10).rounded() / 10)
    }

    /// A 1-2-5 tick step giving about ten ticks over `span` seconds.
    static func tickStep(_ span: Double) -> Double {
        let raw = span / 10
        let decade = pow(10, (log10(raw)).rounded(.down))
        for m in [1.0, 2, 5, 10] where decade * m >= raw { return decade * m }
        return decade * 10
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
