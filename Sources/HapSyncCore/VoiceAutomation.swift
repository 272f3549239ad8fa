/// One change of an audio voice's settings, for the offline voice plan.
public struct VoiceAutomationPoint: Sendable, Equatable {
    /// Index into `PatternTimeline.voices`.
    public var voice: Int
    /// Pattern time, seconds.
    public var time: Double
    /// The voice's settings from this time on.
    public var state: AudioVoiceState
}

extension PatternTimeline {
    /// The settings of every voice sampled on the control grid from its start to its end (or to the
    /// timeline's end when its end is unknown), emitted at the start and whenever gain, pan, pitch
    /// or brightness moved more than `epsilon`, plus a final gain-0 point at the end. Sorted by time.
    ///
    /// The walk visits the grid only where a voice's settings can change (fades, envelope
    /// segments, curves between points of different values) and jumps over stretches where they
    /// hold still, so a voice of a day with nothing moving costs a few samples. Throws
    /// `RenderError.tooManyVoiceSamples` rather than sampling more than `RenderOptions.maxCommands`
    /// grid points in all. Allocates: for offline rendering, not for the real-time path.
    public func voiceAutomation() throws(RenderError) -> [VoiceAutomationPoint] {
        var points: [VoiceAutomationPoint] = []
        let rate = options.controlRate, eps = options.epsilon
        var samples = 0
        for (i, v) in voices.enumerated() {
            let stop = v.end ?? end
            var last: AudioVoiceState?
            var t = v.start
            // Grid indices as Doubles (exact integers far beyond any pattern's reach): no
            // conversion to an integer type that could trap.
            var k = (v.start * rate).rounded(.up)
            while t < stop {
                samples += 1
                guard samples <= options.maxCommands else { throw .tooManyVoiceSamples(limit: options.maxCommands) }
                let s = voiceState(i, at: t)
                if let l = last, abs(s.gain - l.gain) <= eps, abs(s.pan - l.pan) <= eps, abs(s.pitch - l.pitch) <= eps,
                   abs(s.brightness - l.brightness) <= eps {
                } else {
                    points.append(VoiceAutomationPoint(voice: i, time: t, state: s))
                    last = s
                }
                if k / rate <= t { k += 1 }
                // Jump to the first grid point at or after the next time the settings can change:
                // the grid points in between would sample the same settings.
                let steady = voiceSteady(i, from: t)
                if steady >= stop { break }
                if steady > t {
                    var j = (steady * rate).rounded(.up)
                    if (j - 1) / rate >= steady { j -= 1 }
                    k = max(k, j)
                }
                t = k / rate
            }
            var final = voiceState(i, at: stop)
            final.gain = 0
            points.append(VoiceAutomationPoint(voice: i, time: stop, state: final))
        }
        return points.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }
}
