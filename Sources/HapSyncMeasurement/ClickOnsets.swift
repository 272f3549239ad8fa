/// Finding clicks in a recording: where the level rises after a quiet stretch.
public enum ClickOnsets {
    /// Frames where a click starts: `|x|` reaches `threshold` after at least `quiet` seconds below
    /// it. The quiet stretch counts from the start of `x`, so a click in its first `quiet` seconds
    /// is not an onset.
    public static func frames(in x: [Float], threshold: Float = 0.1, quiet: Double = 0.05, sampleRate: Double = 48_000) -> [Int] {
        var result: [Int] = []
        var silent = 0
        let need = Int(quiet * sampleRate)
        for (i, v) in x.enumerated() {
            if abs(v) >= threshold {
                if silent >= need { result.append(i) }
                silent = 0
            } else {
                silent += 1
            }
        }
        return result
    }
}
