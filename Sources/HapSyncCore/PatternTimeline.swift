import HapSyncAHAP

/// What an AHAP pattern means over time, compiled once: the haptic actuator's state at any moment,
/// the haptic command stream at a control rate, and the audio voices with their automation.
///
/// Building allocates; every query afterwards (`hapticState(at:)`, `commands(from:to:)`,
/// `voiceState(_:at:)`, `value(of:at:)`) only reads immutable arrays, so the real-time threads can
/// call them: they do not allocate, lock or block.
///
/// Semantics (also in docs/rendering.md):
/// - A transient is a tap of fixed logical length (`RenderOptions.transientLength`, 25 ms) with its
///   intensity × HapticIntensityControl and sharpness + HapticSharpnessControl taken at its start;
///   its EventDuration only pads the pattern.
/// - A continuous event holds for EventDuration (30 s when the file gives none, the most Core
///   Haptics allows) under its `Envelope`; its release runs after EventDuration. Attack and decay
///   take Haptic/AudioAttackTimeControl and ...DecayTimeControl at the event's start, the release
///   takes ...ReleaseTimeControl at the release's start (normalized values added, then clamped to 0...1).
/// - Dynamic parameters (`ParameterTrack`) act on every event active at that time: intensity and
///   volume controls multiply; sharpness, pan, pitch and brightness controls add and the result is
///   clamped to the parameter's range. An event is active from its Time up to, not including,
///   Time + EventDuration (end-exclusive): its release tail after that is shaped by the entries
///   that took effect while it was active, and an entry starting at or after its end does not act
///   on it (Apple's Sparkle.ahap starts a curve exactly where its continuous event ends).
/// - Overlap: contributions (intensity × envelope × control) of all active haptic events are summed
///   and saturate at 1; sharpness is the intensity-weighted mean of their sharpnesses.
/// - Level commands sample the continuous events at the control rate on a fixed grid (k / rate) and
///   are emitted only when intensity or sharpness moved more than `epsilon`, and always when the
///   level returns to exactly 0; transient commands sit at their event's exact time.
public final class PatternTimeline: Sendable {
    /// A control's rule (multiply or add, then clamp): `LiveParameters.Control.apply`, written once.
    typealias Control = LiveParameters.Control

    /// The pattern this timeline was compiled from.
    public let pattern: AHAPPattern
    /// The options it was compiled with.
    public let options: RenderOptions
    /// Duration as Core Haptics defines it (see `AHAPPattern.duration`).
    public let duration: Double
    /// When everything has stopped: the last release, tap, audio voice or command (the final zero
    /// level sits on the first grid point after the last release); at least `duration`.
    public let end: Double
    /// The haptic command stream, sorted by time (level before transient at equal times).
    public let commands: [HapticCommand]
    /// The audio voices in pattern order.
    public let voices: [AudioVoice]

    struct ContinuousRecord: Sendable {
        var start: Double
        var end: Double
        var intensity: Double
        var sharpness: Double
        var envelope: Envelope
    }

    struct TransientRecord: Sendable {
        var start: Double
        var end: Double
        var intensity: Double
        var sharpness: Double
    }

    private let tracks: [ParameterTrack]
    private let continuous: [ContinuousRecord]
    private let longestContinuous: Double
    private let transients: [TransientRecord]

    /// Compiles a pattern. `audioLength` gives the length in seconds of an `EventWaveformPath`'s
    /// file at its natural rate (nil when unknown).
    public init(pattern: AHAPPattern, options: RenderOptions = RenderOptions(),
                audioLength: (String) -> Double? = { _ in nil }) throws(RenderError) {
        guard options.controlRate.isFinite, options.controlRate > 0, options.controlRate <= 100_000 else {
            throw .invalidOption("control rate must be between 0 and 100000 Hz, got \(options.controlRate)")
        }
        guard options.epsilon >= 0, options.epsilon < 1 else { throw .invalidOption("epsilon must be in 0..<1, got \(options.epsilon)") }
        guard options.transientLength > 0, options.transientLength <= 1 else {
            throw .invalidOption("transient length must be in (0, 1] s, got \(options.transientLength)")
        }
        try Self.checkTimes(pattern, limit: options.maxTime)
        self.pattern = pattern
        self.options = options
        let tracks = AHAPDynamicParameterID.allCases.map { ParameterTrack($0, entries: pattern.entries) }
        self.tracks = tracks
        func control(_ id: AHAPDynamicParameterID, _ t: Double) -> Double { tracks[id.ordinal].value(at: t) }

        var continuous: [ContinuousRecord] = []
        var transients: [TransientRecord] = []
        var voices: [AudioVoice] = []
        for (index, entry) in pattern.entries.enumerated() {
            guard case .event(let e) = entry else { continue }
            switch e.type {
            case .hapticTransient:
                transients.append(TransientRecord(
                    start: e.time, end: e.time + options.transientLength,
                    intensity: Control.hapticIntensity.apply(control(.hapticIntensityControl, e.time), to: e.value(.hapticIntensity)),
                    sharpness: Control.hapticSharpness.apply(control(.hapticSharpnessControl, e.time), to: e.value(.hapticSharpness))))
            case .hapticContinuous:
                let env = Self.envelope(e, attack: .hapticAttackTimeControl, decay: .hapticDecayTimeControl,
                                        release: .hapticReleaseTimeControl, control: control)
                continuous.append(ContinuousRecord(start: e.time, end: e.time + env.end, intensity: e.value(.hapticIntensity),
                                                   sharpness: e.value(.hapticSharpness), envelope: env))
            case .audioContinuous:
                let env = Self.envelope(e, attack: .audioAttackTimeControl, decay: .audioDecayTimeControl,
                                        release: .audioReleaseTimeControl, control: control)
                voices.append(AudioVoice(entryIndex: index, source: .tone, start: e.time, end: e.time + env.end, fileLength: nil,
                                         loop: false, useVolumeEnvelope: true, volume: e.value(.audioVolume), pan: e.value(.audioPan),
                                         pitch: e.value(.audioPitch), brightness: e.value(.audioBrightness), envelope: env))
            case .audioCustom:
                let path = e.waveformPath ?? ""
                // A length that is not a finite number ≥ 0 (a broken header) counts as unknown.
                let length = audioLength(path).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
                let rate = AudioVoice.playbackRate(pitch: Control.audioPitch.apply(control(.audioPitchControl, e.time), to: e.value(.audioPitch)))
                let end: Double? = e.duration.map { e.time + $0 } ?? length.map { e.time + $0 / rate }
                voices.append(AudioVoice(entryIndex: index, source: .file(path), start: e.time, end: end, fileLength: length,
                                         loop: e.loopEnabled, useVolumeEnvelope: e.useVolumeEnvelope, volume: e.value(.audioVolume),
                                         pan: e.value(.audioPan), pitch: e.value(.audioPitch), brightness: e.value(.audioBrightness),
                                         envelope: nil))
            }
        }
        continuous.sort { $0.start < $1.start }
        transients.sort { $0.start < $1.start }
        self.continuous = continuous
        self.transients = transients
        self.longestContinuous = continuous.map { $0.end - $0.start }.max() ?? 0
        self.voices = voices
        let duration = pattern.duration { path in audioLength(path).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } }
        self.duration = duration

        // The command stream: taps at their times, and the continuous level on the control grid
        // over every stretch where a continuous event sounds.
        var stretches: [(start: Double, end: Double)] = []
        for r in continuous {
            if let last = stretches.last, r.start <= last.end {
                stretches[stretches.count - 1].end = max(last.end, r.end)
            } else {
                stretches.append((r.start, r.end))
            }
        }
        let rate = options.controlRate
        // Grid indices past 2^53 are not exact in a Double (only with `RenderOptions.maxTime` raised
        // far beyond its default): no grid can be laid there.
        if let last = stretches.last, last.end * rate >= 9_007_199_254_740_992 {
            throw .tooManyCommands(needed: .max, limit: options.maxCommands)
        }
        let grid = stretches.map { (first: Int(saturating: ($0.start * rate).rounded(.up)), last: Int(saturating: ($0.end * rate).rounded(.up))) }
        // Counted in Double: no sum of grid spans can overflow on the way to the check.
        let neededExactly = grid.reduce(Double(transients.count)) { $0 + Double($1.last) - Double($1.first) + 1 }
        let needed = Int(saturating: neededExactly)
        guard neededExactly <= Double(options.maxCommands) else { throw .tooManyCommands(needed: needed, limit: options.maxCommands) }

        var commands: [HapticCommand] = []
        commands.reserveCapacity(min(needed, 1 << 16))
        for t in transients {
            commands.append(HapticCommand(time: t.start, kind: .transient, intensity: t.intensity, sharpness: t.sharpness))
        }
        var last = (intensity: 0.0, sharpness: 0.0)
        for g in grid {
            for k in g.first...g.last {
                let t = Double(k) / rate
                let sums = Self.continuousSums(at: t, continuous, longest: longestContinuous, tracks: tracks)
                let level = Self.combine(sums.sum, sums.weighted)
                let moved = abs(level.intensity - last.intensity) > options.epsilon
                    || (level.intensity > 0 && abs(level.sharpness - last.sharpness) > options.epsilon)
                    || (level.intensity == 0 && last.intensity != 0)
                if moved {
                    commands.append(HapticCommand(time: t, kind: .level, intensity: level.intensity, sharpness: level.sharpness))
                    last = level
                }
            }
        }
        commands.sort { ($0.time, $0.kind.rawValue) < ($1.time, $1.kind.rawValue) }
        self.commands = commands
        self.end = max(duration, continuous.map(\.end).max() ?? 0, transients.map(\.end).max() ?? 0,
                       voices.compactMap(\.end).max() ?? 0, commands.last?.time ?? 0)
    }

    /// Refuses a pattern with a time, duration or control point that is not a finite number from 0
    /// to `limit` (possible in a pattern built in code; the reader refuses such files): every time
    /// the timeline computes then stays far inside integer nanoseconds, frames and grid steps.
    private static func checkTimes(_ pattern: AHAPPattern, limit: Double) throws(RenderError) {
        func check(_ x: Double, _ path: @autoclosure () -> AHAPPath) throws(RenderError) {
            guard x.isFinite, x >= 0, x <= limit else { throw .timeOutOfRange(path: path(), seconds: x, limit: limit) }
        }
        let patternPath = AHAPPath.root.key("Pattern")
        for (i, entry) in pattern.entries.enumerated() {
            switch entry {
            case .event(let e):
                try check(e.time, patternPath.index(i).key("Event").key("Time"))
                if let d = e.duration { try check(d, patternPath.index(i).key("Event").key("EventDuration")) }
            case .parameter(let p):
                try check(p.time, patternPath.index(i).key("Parameter").key("Time"))
            case .curve(let c):
                let path = patternPath.index(i).key("ParameterCurve")
                try check(c.time, path.key("Time"))
                for (j, point) in c.controlPoints.enumerated() {
                    try check(point.time, path.key("ParameterCurveControlPoints").index(j).key("Time"))
                }
            }
        }
    }

    private static func envelope(_ e: AHAPEvent, attack: AHAPDynamicParameterID, decay: AHAPDynamicParameterID,
                                 release: AHAPDynamicParameterID, control: (AHAPDynamicParameterID, Double) -> Double) -> Envelope {
        let hold = e.duration ?? AHAPEvent.maximumContinuousDuration
        return Envelope(attack: Envelope.seconds(e.value(.attackTime) + control(attack, e.time)),
                        decay: Envelope.seconds(e.value(.decayTime) + control(decay, e.time)),
                        release: Envelope.seconds(e.value(.releaseTime) + control(release, e.time + hold)),
                        hold: hold, sustained: e.value(.sustained) >= 0.5)
    }

    /// First index whose start is after `t`, in an array sorted by start.
    private static func upperBound<T>(_ items: [T], _ t: Double, start: (T) -> Double) -> Int {
        var lo = 0, hi = items.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if start(items[mid]) <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Sum of the continuous events' contributions at `t`, and that sum weighted by sharpness.
    /// Does not allocate, lock or block.
    private static func continuousSums(at t: Double, _ records: [ContinuousRecord], longest: Double,
                                       tracks: [ParameterTrack]) -> (sum: Double, weighted: Double) {
        let hi = upperBound(records, t) { $0.start }
        var lo = upperBound(records, t - longest) { $0.start }
        if lo > 0 { lo -= 1 }
        guard lo < hi else { return (0, 0) }
        let intensityTrack = tracks[AHAPDynamicParameterID.hapticIntensityControl.ordinal]
        let sharpnessTrack = tracks[AHAPDynamicParameterID.hapticSharpnessControl.ordinal]
        let intensityControl = intensityTrack.value(at: t)
        let sharpnessControl = sharpnessTrack.value(at: t)
        var sum = 0.0, weighted = 0.0
        for i in lo..<hi where t < records[i].end {
            let r = records[i]
            var intensity = intensityControl, sharpness = sharpnessControl
            let ended = r.start + r.envelope.hold - Self.endTolerance
            if t >= ended {
                // The release tail of an event that has ended: entries starting from its end on
                // do not act on it (a curve that begins as it ends would otherwise lift its tail).
                intensity = intensityTrack.value(at: t, enteredBefore: ended)
                sharpness = sharpnessTrack.value(at: t, enteredBefore: ended)
            }
            let a = r.intensity * r.envelope.level(at: t - r.start) * intensity
            sum += a
            weighted += a * Control.hapticSharpness.apply(sharpness, to: r.sharpness)
        }
        return (sum, weighted)
    }

    /// How close two times must be to count as the same instant when deciding whether an event
    /// has ended: 1 ns, the engine's resolution. `Time + EventDuration` computed in binary can
    /// differ from the same instant written in the file by one unit in the last place.
    static let endTolerance = 1e-9

    /// The overlap rule, for events within a pattern and for players mixed by the scheduler:
    /// intensities summed and saturated at 1, sharpness the intensity-weighted mean (`weighted`:
    /// the sum of intensity × sharpness), in 0...1. Does not allocate, lock or block.
    @inlinable @inline(__always)
    public static func combine(_ sum: Double, _ weighted: Double) -> (intensity: Double, sharpness: Double) {
        (min(1, sum), sum > 0 ? min(1, max(0, weighted / sum)) : 0)
    }

    // MARK: - Real-time (any thread): queries

    /// What the haptic actuator should do at pattern time `t`. Does not allocate, lock or block.
    public func hapticState(at t: Double) -> HapticState {
        let c = Self.continuousSums(at: t, continuous, longest: longestContinuous, tracks: tracks)
        var sum = c.sum, weighted = c.weighted
        let hi = Self.upperBound(transients, t) { $0.start }
        var lo = Self.upperBound(transients, t - options.transientLength) { $0.start }
        if lo > 0 { lo -= 1 }
        if lo < hi {
            for i in lo..<hi where t < transients[i].end {
                sum += transients[i].intensity
                weighted += transients[i].intensity * transients[i].sharpness
            }
        }
        let all = Self.combine(sum, weighted), continuousOnly = Self.combine(c.sum, c.weighted)
        return HapticState(intensity: all.intensity, sharpness: all.sharpness,
                           continuousIntensity: continuousOnly.intensity, continuousSharpness: continuousOnly.sharpness)
    }

    /// About how many bytes this timeline holds: its command stream, its event and parameter
    /// records and its voices (the command stream dominates: at most `RenderOptions.maxCommands` ×
    /// `MemoryLayout<HapticCommand>.stride`). What a service holding many patterns counts.
    public var memoryFootprint: Int {
        commands.count * MemoryLayout<HapticCommand>.stride
            + continuous.count * MemoryLayout<ContinuousRecord>.stride + transients.count * MemoryLayout<TransientRecord>.stride
            + voices.count * MemoryLayout<AudioVoice>.stride + tracks.reduce(0) { $0 + $1.memoryFootprint }
            + pattern.entries.count * MemoryLayout<AHAPEntry>.stride
    }

    /// The commands with `t0 <= time < t1`, as a view into `commands`. Does not allocate, lock or block.
    public func commands(from t0: Double, to t1: Double) -> ArraySlice<HapticCommand> {
        func lowerBound(_ t: Double) -> Int {
            var lo = 0, hi = commands.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if commands[mid].time < t { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
        let a = lowerBound(t0)
        return commands[a..<max(a, lowerBound(t1))]
    }

    /// The value of a dynamic parameter at pattern time `t`. Does not allocate, lock or block.
    public func value(of id: AHAPDynamicParameterID, at t: Double) -> Double {
        tracks[id.ordinal].value(at: t)
    }

    /// The settings of voice `index` at pattern time `t` (gain 0 outside the voice, and for an
    /// index that names no voice: silence, never a trap). Does not allocate, lock or block.
    public func voiceState(_ index: Int, at t: Double) -> AudioVoiceState {
        // Plain comparisons: `voices.indices.contains` instantiated Range's metadata on the audio
        // thread's first call in a debug build, an allocation (.ci/rt-alloc-check).
        guard index >= 0, index < voices.count else { return AudioVoiceState(gain: 0, pan: 0, pitch: 0, brightness: 0) }
        let v = voices[index]
        // A tone's release tail, like a haptic one, is not acted on by entries starting after its
        // event ended.
        var ended: Double?
        if let env = v.envelope, t >= v.start + env.hold - Self.endTolerance { ended = v.start + env.hold - Self.endTolerance }
        let pan = Control.audioPan.apply(control(.audioPanControl, at: t, endedAt: ended), to: v.pan)
        let pitch = Control.audioPitch.apply(control(.audioPitchControl, at: t, endedAt: ended), to: v.pitch)
        let brightness = Control.audioBrightness.apply(control(.audioBrightnessControl, at: t, endedAt: ended), to: v.brightness)
        guard t >= v.start, t < (v.end ?? .infinity) else { return AudioVoiceState(gain: 0, pan: pan, pitch: pitch, brightness: brightness) }
        var shape = 1.0
        if let env = v.envelope {
            shape = env.level(at: t - v.start)
        } else if v.useVolumeEnvelope {
            // Fades at the voice's start and at the end of what it plays: its end, or where a
            // non-looping file runs out first.
            let soundEnd = self.soundEnd(of: v)
            let fade = min(options.audioFadeLength, (soundEnd - v.start) / 2)
            if fade > 0 {
                shape = min(1, (t - v.start) / fade, max(0, (soundEnd - t) / fade))
            }
        }
        return AudioVoiceState(gain: v.volume * control(.audioVolumeControl, at: t, endedAt: ended) * shape, pan: pan, pitch: pitch, brightness: brightness)
    }

    /// Where voice `v`'s sound ends, for its volume fades: its end, or where a non-looping file
    /// runs out first at the pitch it starts with. Does not allocate, lock or block.
    @inline(__always) private func soundEnd(of v: AudioVoice) -> Double {
        var end = v.end ?? .infinity
        if !v.loop, let length = v.fileLength {
            end = min(end, v.start + length / AudioVoice.playbackRate(pitch: Control.audioPitch.apply(value(of: .audioPitchControl, at: v.start), to: v.pitch)))
        }
        return end
    }

    /// A dynamic parameter at `t` as it acts on an event: as the entries that took effect before
    /// `ended` make it when the event has ended (its release tail), else as all do. Does not
    /// allocate, lock or block.
    @inline(__always) private func control(_ id: AHAPDynamicParameterID, at t: Double, endedAt ended: Double?) -> Double {
        guard let ended else { return tracks[id.ordinal].value(at: t) }
        return tracks[id.ordinal].value(at: t, enteredBefore: ended)
    }
}

extension PatternTimeline {
    /// A time until which voice `index`'s settings stay what they are at `t`: `voiceState(index,
    /// at:)` is the same for every time in [t, result). `t` itself when they are changing at `t`
    /// (a fade, an envelope segment, a curve between points of different values); infinity when
    /// they never change again. For the offline voice plan (`voiceAutomation`).
    func voiceSteady(_ index: Int, from t: Double) -> Double {
        let v = voices[index]
        var until = Double.infinity
        for id in [AHAPDynamicParameterID.audioVolumeControl, .audioPanControl, .audioPitchControl, .audioBrightnessControl] {
            until = min(until, tracks[id.ordinal].steady(from: t))
            if until <= t { return t }
        }
        if t < v.start { return min(until, v.start) }
        let end = v.end ?? .infinity
        if t >= end { return until }
        until = min(until, end)
        let tau = t - v.start
        if let env = v.envelope {
            // Only the plateaus hold still: at 1 until the hold ends (sustained), at 0 after the
            // decay until then (not sustained).
            let plateau = env.sustained ? env.attack : env.attack + env.decay
            guard tau >= plateau, tau < env.hold else { return t }
            return min(until, v.start + env.hold)
        }
        guard v.useVolumeEnvelope else { return until }
        let soundEnd = self.soundEnd(of: v)
        let fade = min(options.audioFadeLength, (soundEnd - v.start) / 2)
        guard fade > 0 else { return until }
        if tau < fade { return t }
        if t < soundEnd - fade { return min(until, soundEnd - fade) }
        if t < soundEnd { return t }
        return until
    }
}

/// `x` limited to `range`.

extension AHAPDynamicParameterID {
    /// Position in `allCases`, for table lookups without searching.
    var ordinal: Int {
        switch self {
        case .hapticIntensityControl: return 0
        case .hapticSharpnessControl: return 1
        case .hapticAttackTimeControl: return 2
        case .hapticDecayTimeControl: return 3
        case .hapticReleaseTimeControl: return 4
        case .audioVolumeControl: return 5
        case .audioPanControl: return 6
        case .audioPitchControl: return 7
        case .audioBrightnessControl: return 8
        case .audioAttackTimeControl: return 9
        case .audioDecayTimeControl: return 10
        case .audioReleaseTimeControl: return 11
        }
    }
}
