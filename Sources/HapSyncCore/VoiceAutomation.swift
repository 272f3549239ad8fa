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
    /// Allocates: for offline rendering, not for the real-time path.
    public func voiceAutomation() -> [VoiceAutomationPoint] {
        var points: [VoiceAutomationPoint] = []
        let rate = options.controlRate, eps = options.epsilon
        for (i, v) in voices.enumerated() {
            let stop = v.end ?? end
            var last: AudioVoiceState?
            var t = v.start
            var k = Int(saturating: (v.start * rate).rounded(.up))
            while t < stop {
                let s = voiceState(i, at: t)
                if let l = last, abs(s.gain - l.gain) <= eps, abs(s.pan - l.pan) <= eps, abs(s.pitch - l.pitch) <= eps,
                   abs(s.brightness - l.brightness) <= eps {
                } else {
                    points.append(VoiceAutomationPoint(voice: i, time: t, state: s))
                    last = s
                }
                if Double(k) / rate <= t { k += 1 }
                t = Double(k) / rate
            }
            var final = voiceState(i, at: stop)
            final.gain = 0
            points.append(VoiceAutomationPoint(voice: i, time: stop, state: final))
        }
        return points.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }
}
