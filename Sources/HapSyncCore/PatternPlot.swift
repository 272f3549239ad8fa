import Foundation

/// Draws a pattern as an SVG picture: intensity and sharpness of the continuous signal over time,
/// transients as stems, audio voices as labelled bars with their gain inside, time axis in ms.
public enum PatternPlot {
    /// The SVG text for a timeline. `title` heads the picture; `label` names a voice's bar
    /// (defaults to its file name, or "tone" for AudioContinuous). With `waveform`, a lane under
    /// the haptics shows the drive signal an actuator with that profile gets (`WaveformSynth`).
    public static func svg(_ timeline: PatternTimeline, title: String, width: Int = 1000,
                           label: ((AudioVoice) -> String)? = nil, waveform: ActuatorProfile? = nil) -> String {
        let left = 56.0, right = 24.0, top = 72.0
        let plotWidth = Double(max(width, 300)) - left - right
        let hapticHeight = 220.0
        let laneHeight = 22.0
        let waveTop = top + hapticHeight + 44, waveHeight = waveform == nil ? 0.0 : 90.0
        let audioTop = waveTop + (waveform == nil ? 0 : waveHeight + 44)
        let height = audioTop + Double(max(timeline.voices.count, 1)) * laneHeight + 48
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
            s += "<line x1=\"\(f(x(tick)))\" x2=\"\(f(x(tick)))\" y1=\"\(f(top))\" y2=\"\(f(audioTop + Double(max(timeline.voices.count, 1)) * laneHeight))\" stroke=\"#eeeeee\"/>"
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
        for (i, v) in timeline.voices.enumerated() {
            let y0 = audioTop + Double(i) * laneHeight
            let stop = v.end ?? timeline.end
            let name = label?(v) ?? {
                if case .file(let p) = v.source { return (p as NSString).lastPathComponent }
                return "tone \(Int(saturating: AudioVoice.toneFrequency(pitch: v.pitch).rounded())) Hz"
            }()
            let fill = v.source == .tone ? "#8e6bbf" : "#3a9a6b"
            s += "<rect class=\"voice\" x=\"\(f(x(v.start)))\" y=\"\(f(y0 + 2))\" width=\"\(f(max(1, x(stop) - x(v.start))))\" height=\"\(f(laneHeight - 4))\" "
            s += "fill=\"\(fill)\" fill-opacity=\"0.25\" stroke=\"\(fill)\"\(v.end == nil ? " stroke-dasharray=\"4 3\"" : "")/>"
            var gain = ""
            let n = 200
            for k in 0...n {
                let t = v.start + (stop - v.start) * Double(k) / Double(n)
                let g = min(1, timeline.voiceState(i, at: min(t, stop - 1e-9)).gain)
                gain += "\(f(x(t))),\(f(y0 + laneHeight - 3 - g * (laneHeight - 6))) "
            }
            s += "<polyline points=\"\(gain)\" fill=\"none\" stroke=\"\(fill)\" stroke-width=\"1\"/>"
            s += "<text x=\"\(f(x(v.start) + 4))\" y=\"\(f(y0 + 15))\" fill=\"#222\">\(escape(name))\(v.loop ? " (loop)" : "")</text>\n"
        }
        s += "</svg>\n"
        return s
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
