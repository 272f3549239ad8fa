import Foundation

/// A second-order IIR filter (Robert Bristow-Johnson's cookbook), direct form I, in Double.
struct Biquad {
    private var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    /// A high-pass at `cutoff` Hz.
    static func highPass(_ cutoff: Double, q: Double, sampleRate: Double) -> Biquad {
        let w = 2 * Double.pi * cutoff / sampleRate, alpha = sin(w) / (2 * q), c = cos(w)
        return Biquad(b: [(1 + c) / 2, -(1 + c), (1 + c) / 2], a: [1 + alpha, -2 * c, 1 - alpha])
    }

    /// A band-pass at `centre` Hz with a peak gain of 1.
    static func bandPass(_ centre: Double, q: Double, sampleRate: Double) -> Biquad {
        let w = 2 * Double.pi * centre / sampleRate, alpha = sin(w) / (2 * q), c = cos(w)
        return Biquad(b: [alpha, 0, -alpha], a: [1 + alpha, -2 * c, 1 - alpha])
    }

    private init(b: [Double], a: [Double]) {
        b0 = b[0] / a[0]
        b1 = b[1] / a[0]
        b2 = b[2] / a[0]
        a1 = a[1] / a[0]
        a2 = a[2] / a[0]
    }

    /// Filters one sample.
    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        x2 = x1
        x1 = x
        y2 = y1
        y1 = y
        return y
    }
}
