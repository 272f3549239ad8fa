import Foundation

/// SplitMix64 (Steele, Lea and Flood 2014): the one seeded generator of tests and benchmarks, so
/// that their "random" input (the generate benchmark's labelled set, a simulated device's jitter)
/// is the same on every run and every machine (Swift's own `SystemRandomNumberGenerator` cannot
/// be seeded). Does not allocate, lock or block.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The generator's state (advanced by every draw).
    public private(set) var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in −1...1 (for jitter around a value).
    public mutating func signedUnit() -> Double { unit() * 2 - 1 }

    /// Uniform in [0, 1), from the top 53 bits (the same on every platform, unlike
    /// `Double.random(in:using:)`, whose mapping the standard library does not promise).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Uniform in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * unit()
    }

    /// Uniform integer in `range`.
    public mutating func integer(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// Standard normal (Box–Muller).
    public mutating func gaussian() -> Double {
        let u = max(unit(), 1e-300), v = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }

    /// An index into `weights`, drawn in proportion to them.
    public mutating func pick(_ weights: [Double]) -> Int {
        var r = unit() * weights.reduce(0, +)
        for (i, w) in weights.enumerated() {
            r -= w
            if r < 0 { return i }
        }
        return weights.count - 1
    }
}
