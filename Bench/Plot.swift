import Foundation

/// A small SVG line chart for `--plot DIR`: linear or log axes, several series, a legend.
struct Chart {
    struct Series {
        var name: String
        var color: String
        var points: [(Double, Double)]
        /// Draw as steps (histograms) instead of straight segments.
        var steps = false
        var dashed = false
    }
    var title: String
    var xLabel: String
    var yLabel: String
    var xLog = false
    var yLog = false
    var series: [Series] = []
    var note: String = ""

    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"]

    func svg(width: Double = 900, height: Double = 480) -> String {
        let left = 80.0, right = 20.0, top = 50.0, bottom = 60.0
        let legendHeight = Double(series.count) * 18 + 8
        let plotW = width - left - right, plotH = height - top - bottom - legendHeight
        let all = series.flatMap(\.points).filter { (!xLog || $0.0 > 0) && (!yLog || $0.1 > 0) }
        func tx(_ v: Double) -> Double { xLog ? log10(v) : v }
        func ty(_ v: Double) -> Double { yLog ? log10(v) : v }
        var x0 = all.map { tx($0.0) }.min() ?? 0, x1 = all.map { tx($0.0) }.max() ?? 1
        var y0 = all.map { ty($0.1) }.min() ?? 0, y1 = all.map { ty($0.1) }.max() ?? 1
        if xLog { x0 = x0.rounded(.down); x1 = x1.rounded(.up) }
        if yLog { y0 = y0.rounded(.down); y1 = y1.rounded(.up) } else {
            let pad = max((y1 - y0) * 0.08, 1e-9)
            y0 -= pad; y1 += pad
        }
        if x1 <= x0 { x1 = x0 + 1 }
        if y1 <= y0 { y1 = y0 + 1 }
        func px(_ v: Double) -> Double { left + (tx(v) - x0) / (x1 - x0) * plotW }
        func py(_ v: Double) -> Double { top + plotH - (ty(v) - y0) / (y1 - y0) * plotH }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        func esc(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        func label(_ v: Double) -> String {
            if abs(v) < 1e-9 { return "0" }
            if abs(v) >= 1000 || (abs(v) < 0.01 && v != 0) { return String(format: "%g", v) }
            return String(format: "%g", (v * 1000).rounded() / 1000)
        }
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        out += "<text x=\"\(f(width / 2))\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">\(esc(title))</text>\n"
        if !note.isEmpty { out += "<text x=\"\(f(width / 2))\" y=\"40\" text-anchor=\"middle\" fill=\"#555\">\(esc(note))</text>\n" }
        // Ticks: decades on log axes, 6 even steps on linear ones.
        func ticks(_ a: Double, _ b: Double, log: Bool) -> [Double] {
            if log { return stride(from: a, through: b, by: 1).map { pow(10, $0) } }
            let raw = (b - a) / 6, mag = pow(10, floor(log10(raw)))
            let step = [1.0, 2, 5, 10].map { $0 * mag }.first { $0 >= raw } ?? raw
            return stride(from: (a / step).rounded(.up) * step, through: b, by: step).map { $0 }
        }
        for v in ticks(x0, x1, log: xLog) {
            let x = px(v)
            out += "<line x1=\"\(f(x))\" y1=\"\(f(top))\" x2=\"\(f(x))\" y2=\"\(f(top + plotH))\" stroke=\"#e5e5e5\"/>\n"
            out += "<text x=\"\(f(x))\" y=\"\(f(top + plotH + 16))\" text-anchor=\"middle\">\(label(v))</text>\n"
        }
        for v in ticks(y0, y1, log: yLog) {
            let y = py(v)
            out += "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(left + plotW))\" y2=\"\(f(y))\" stroke=\"#e5e5e5\"/>\n"
            out += "<text x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(label(v))</text>\n"
        }
        if !yLog, y0 < 0, y1 > 0 {
            out += "<line x1=\"\(f(left))\" y1=\"\(f(py(0)))\" x2=\"\(f(left + plotW))\" y2=\"\(f(py(0)))\" stroke=\"#999\"/>\n"
        }
        out += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotW))\" height=\"\(f(plotH))\" fill=\"none\" stroke=\"#333\"/>\n"
        out += "<text x=\"\(f(left + plotW / 2))\" y=\"\(f(top + plotH + 36))\" text-anchor=\"middle\">\(esc(xLabel))</text>\n"
        out += "<text transform=\"translate(18 \(f(top + plotH / 2))) rotate(-90)\" text-anchor=\"middle\">\(esc(yLabel))</text>\n"
        for s in series {
            let pts = s.points.filter { (!xLog || $0.0 > 0) && (!yLog || $0.1 > 0) }
            guard !pts.isEmpty else { continue }
            var d = ""
            for (i, p) in pts.enumerated() {
                if i == 0 { d += "M\(f(px(p.0))),\(f(py(p.1)))" } else if s.steps {
                    d += " H\(f(px(p.0))) V\(f(py(p.1)))"
                } else {
                    d += " L\(f(px(p.0))),\(f(py(p.1)))"
                }
            }
            out += "<path d=\"\(d)\" fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"1.6\"\(s.dashed ? " stroke-dasharray=\"6 4\"" : "")/>\n"
        }
        var ly = top + plotH + 50
        for s in series {
            out += "<line x1=\"\(f(left))\" y1=\"\(f(ly))\" x2=\"\(f(left + 26))\" y2=\"\(f(ly))\" stroke=\"\(s.color)\" stroke-width=\"2.5\"\(s.dashed ? " stroke-dasharray=\"6 4\"" : "")/>\n"
            out += "<text x=\"\(f(left + 34))\" y=\"\(f(ly + 4))\">\(esc(s.name))</text>\n"
            ly += 18
        }
        return out + "</svg>\n"
    }
}

/// A log-binned histogram of latencies (µs): 10 bins per decade from 0.1 µs; values below 0.1 µs
/// count in the first bin. Points are (bin's lower edge, count), closed at the end for steps.
func logHistogram(_ values: [Double]) -> [(Double, Double)] {
    guard !values.isEmpty else { return [] }
    var counts: [Int: Int] = [:]
    for v in values { counts[max(-10, Int(floor(log10(max(v, 0.1)) * 10))), default: 0] += 1 }
    let lo = counts.keys.min()!, hi = counts.keys.max()!
    var points: [(Double, Double)] = []
    for b in lo...hi { points.append((pow(10, Double(b) / 10), Double(counts[b] ?? 0))) }
    points.append((pow(10, Double(hi + 1) / 10), Double(counts[hi] ?? 0)))
    // Empty bins drawn at 0.5 so the log axis can show them as "none".
    return points.map { ($0.0, max($0.1, 0.5)) }
}
