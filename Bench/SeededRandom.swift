import Foundation

/// SplitMix64 (Steele, Lea and Flood 2014): a small seeded generator, so that the generate
/// benchmark's labelled set is the same on every run and every machine (Swift's own
/// `SystemRandomNumberGenerator` cannot be seeded).
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits (the same on every platform, unlike
    /// `Double.random(in:using:)`, whose mapping the standard library does not promise).
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Uniform in `range`.
    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * unit()
    }

    /// Uniform integer in `range`.
    mutating func integer(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// Standard normal (Box–Muller).
    mutating func gaussian() -> Double {
        let u = max(unit(), 1e-300), v = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }

    /// An index into `weights`, drawn in proportion to them.
    mutating func pick(_ weights: [Double]) -> Int {
        var r = unit() * weights.reduce(0, +)
        for (i, w) in weights.enumerated() {
            r -= w
            if r < 0 { return i }
        }
        return weights.count - 1
    }
}
