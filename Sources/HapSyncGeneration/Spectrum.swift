import Foundation

/// Magnitude spectra of Hann-windowed frames: the one analysis step onset detection, loudness and
/// centroid share. A real FFT of `size` samples done as a complex radix-2 FFT of `size / 2`
/// (even samples real, odd imaginary) and one untangling pass. Not real-time code (it allocates
/// its tables once).
public struct Spectrum: Sendable {
    /// Samples per frame (a power of two).
    public let size: Int
    /// Bins kept: 0 (DC) up to `size / 2` (Nyquist) inclusive.
    public var bins: Int { size / 2 + 1 }
    private let window: [Float]
    /// Twiddles of the half-size complex FFT, e^(-2πik/(size/2)).
    private let cosines: [Float], sines: [Float]
    /// e^(-2πik/size), k < size/2, for the untangling pass.
    private let untangleCos: [Float], untangleSin: [Float]
    private let reversed: [Int]

    /// Tables for frames of `size` samples (a power of two, at least 16).
    public init(size: Int) {
        precondition(size >= 16 && size & (size - 1) == 0, "a power of two")
        self.size = size
        let half = size / 2
        window = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
        cosines = (0..<half / 2).map { Float(cos(-2 * Double.pi * Double($0) / Double(half))) }
        sines = (0..<half / 2).map { Float(sin(-2 * Double.pi * Double($0) / Double(half))) }
        untangleCos = (0..<half).map { Float(cos(-2 * Double.pi * Double($0) / Double(size))) }
        untangleSin = (0..<half).map { Float(sin(-2 * Double.pi * Double($0) / Double(size))) }
        let bits = half.trailingZeroBitCount
        reversed = (0..<half).map { i in
            var r = 0, x = i
            for _ in 0..<bits { r = (r << 1) | (x & 1); x >>= 1 }
            return r
        }
    }

    /// The magnitudes (`bins` of them) of the frame of `samples` starting at `start` (zeros
    /// outside the signal), windowed; `real` and `imaginary` are scratch of at least `size / 2`.
    public func magnitudes(_ samples: [Float], start: Int, into out: inout [Float], real: inout [Float], imaginary: inout [Float]) {
        let half = size / 2
        precondition(out.count >= bins && real.count >= half && imaginary.count >= half)
        samples.withUnsafeBufferPointer { x in
        window.withUnsafeBufferPointer { w in
        reversed.withUnsafeBufferPointer { rev in
        real.withUnsafeMutableBufferPointer { re in
        imaginary.withUnsafeMutableBufferPointer { im in
            // Pack: even samples real, odd imaginary, in bit-reversed order.
            let whole = start >= 0 && start + size <= x.count
            for n in 0..<half {
                let a = start + 2 * n, b = a + 1
                let xa: Float = whole || (a >= 0 && a < x.count) ? x[a] : 0
                let xb: Float = whole || (b >= 0 && b < x.count) ? x[b] : 0
                re[rev[n]] = xa * w[2 * n]
                im[rev[n]] = xb * w[2 * n + 1]
            }
            cosines.withUnsafeBufferPointer { c in
            sines.withUnsafeBufferPointer { s in
                var span = 1
                while span < half {
                    let step = half / (span * 2)
                    var group = 0
                    while group < half {
                        for k in 0..<span {
                            let cr = c[k * step], ci = s[k * step]
                            let a = group + k, b = a + span
                            let tr = re[b] * cr - im[b] * ci
                            let ti = re[b] * ci + im[b] * cr
                            re[b] = re[a] - tr
                            im[b] = im[a] - ti
                            re[a] += tr
                            im[a] += ti
                        }
                        group += span * 2
                    }
                    span *= 2
                }
            }
            }
            // Untangle: X[k] = E[k] + e^(-2πik/size)·O[k], E and O the even and odd samples' spectra.
            untangleCos.withUnsafeBufferPointer { uc in
            untangleSin.withUnsafeBufferPointer { us in
            out.withUnsafeMutableBufferPointer { o in
                for k in 0...half {
                    let i = k % half, j = (half - k) % half
                    let er = 0.5 * (re[i] + re[j]), ei = 0.5 * (im[i] - im[j])
                    let or = 0.5 * (im[i] + im[j]), oi = -0.5 * (re[i] - re[j])
                    let c: Float = k < half ? uc[k] : -1, s: Float = k < half ? us[k] : 0
                    let xr = er + c * or - s * oi, xi = ei + c * oi + s * or
                    o[k] = (xr * xr + xi * xi).squareRoot()
                }
            }
            }
            }
        }
        }
        }
        }
        }
    }
}
