import Foundation

/// Magnitude spectra of Hann-windowed frames by an in-place radix-2 FFT: the one analysis step
/// onset detection, loudness and centroid share. Not real-time code (it allocates its tables once).
public struct Spectrum: Sendable {
    /// Samples per frame (a power of two).
    public let size: Int
    /// Bins kept: 0 (DC) up to `size / 2` (Nyquist) inclusive.
    public var bins: Int { size / 2 + 1 }
    private let window: [Float]
    private let cosines: [Float]
    private let sines: [Float]
    private let reversed: [Int]

    /// Tables for frames of `size` samples (a power of two, at least 16).
    public init(size: Int) {
        precondition(size >= 16 && size & (size - 1) == 0, "a power of two")
        self.size = size
        window = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
        cosines = (0..<size / 2).map { Float(cos(-2 * Double.pi * Double($0) / Double(size))) }
        sines = (0..<size / 2).map { Float(sin(-2 * Double.pi * Double($0) / Double(size))) }
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { i in
            var r = 0, x = i
            for _ in 0..<bits { r = (r << 1) | (x & 1); x >>= 1 }
            return r
        }
    }

    /// The magnitudes (`bins` of them) of the frame of `samples` starting at `start` (zeros
    /// outside the signal), windowed; `real` and `imaginary` are scratch of `size` each.
    public func magnitudes(_ samples: [Float], start: Int, into out: inout [Float], real: inout [Float], imaginary: inout [Float]) {
        for i in 0..<size {
            let j = start + i
            real[reversed[i]] = j >= 0 && j < samples.count ? samples[j] * window[i] : 0
            imaginary[i] = 0
        }
        var half = 1
        while half < size {
            let step = size / (half * 2)
            var group = 0
            while group < size {
                for k in 0..<half {
                    let c = cosines[k * step], s = sines[k * step]
                    let a = group + k, b = a + half
                    let tr = real[b] * c - imaginary[b] * s
                    let ti = real[b] * s + imaginary[b] * c
                    real[b] = real[a] - tr
                    imaginary[b] = imaginary[a] - ti
                    real[a] += tr
                    imaginary[a] += ti
                }
                group += half * 2
            }
            half *= 2
        }
        for k in 0..<bins { out[k] = (real[k] * real[k] + imaginary[k] * imaginary[k]).squareRoot() }
    }
}
