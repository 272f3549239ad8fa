/// The one rule from pattern time to audio output frames.
///
/// A span of `seconds` of pattern time, played at `rate` pattern seconds per second, lasts
/// `seconds / rate` seconds of output, which at `sampleRate` frames per second is that many
/// frames, rounded to the nearest frame. Every place that puts pattern time on the audio output
/// (the scheduler's deadlines, the mixer's voice starts and ends, sync measurements) uses it, so
/// they agree to the frame.
public enum FrameTiming {
    // MARK: - Real-time (any thread)

    /// Output frames that `seconds` of pattern time take at `rate`, saturating (`Int64(saturating:)`)
    /// rather than trapping on a time out of range. Does not allocate, lock or block.
    @inline(__always)
    public static func frames(_ seconds: Double, rate: Double = 1, sampleRate: Double) -> Int64 {
        Int64(saturating: (seconds / rate * sampleRate).rounded())
    }

    /// The pattern time (seconds) that `frames` output frames span at `rate`: the inverse of
    /// `frames(_:rate:sampleRate:)`, unrounded. Does not allocate, lock or block.
    @inline(__always)
    public static func patternTime(ofFrames frames: Int64, rate: Double = 1, sampleRate: Double) -> Double {
        Double(frames) / sampleRate * rate
    }
}
