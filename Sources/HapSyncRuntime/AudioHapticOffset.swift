import HapSyncCore

/// How far a haptic command was from the sound it goes with: the haptic's time minus the moment
/// the audio frame of the same pattern time was heard, ns (positive: the haptic came late).
///
/// The one measurement of sync: `hapsync play`'s summary, the sync and drift benchmarks and the
/// sync test all use it. `heard` says when an output frame was heard: an audio clock's fit
/// (`clock.time(ofFrame:)`), or the fit as it stood around that moment (the benchmarks' history).
public enum AudioHapticOffset {
    /// The offset of a haptic applied or released at `time` (engine ns) for pattern time
    /// `patternTime` of a run whose pattern time 0 is output frame `startFrame`, played at `rate`;
    /// nil when `heard` does not know the frame.
    public static func offset(hapticAt time: UInt64, patternTime: Double, startFrame: Int64, rate: Double = 1,
                              sampleRate: Double, heard: (Int64) -> UInt64?) -> Int64? {
        let frame = startFrame + FrameTiming.frames(patternTime, rate: rate, sampleRate: sampleRate)
        return heard(frame).map { Int64(bitPattern: time &- $0) }
    }
}
