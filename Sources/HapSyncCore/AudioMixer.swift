import Foundation

/// Decoded audio at the output rate, as two channels (mono files are duplicated).
public final class AudioSamples: Sendable {
    /// Frames per channel.
    public let frames: Int
    /// Left channel.
    public let left: [Float]
    /// Right channel.
    public let right: [Float]

    /// Makes samples from two equally long channels.
    public init(left: [Float], right: [Float]) {
        precondition(left.count == right.count, "channels must be equally long")
        self.frames = left.count
        self.left = left
        self.right = right
    }

    /// The same samples in both channels.
    public convenience init(mono: [Float]) { self.init(left: mono, right: mono) }
}

/// What the mixer needs to play one player's audio: its timeline and each voice's samples
/// (nil for synthesized tones and for files that could not be loaded), all prepared at load time.
public final class PlayerAudio: Sendable {
    /// The compiled pattern.
    public let timeline: PatternTimeline
    /// Samples by index into `timeline.voices`.
    public let samples: [AudioSamples?]

    /// Makes the bundle.
    public init(timeline: PatternTimeline, samples: [AudioSamples?]) {
        precondition(samples.count == timeline.voices.count, "one entry per voice")
        self.timeline = timeline
        self.samples = samples
    }
}

/// Renders the audio voices of playing patterns into interleaved stereo float blocks.
///
/// Per voice, every 16 frames (a 3 kHz control rate), it asks the timeline for the voice's gain,
/// pan, pitch and brightness (dynamic parameters applied, envelope and fades included) and ramps
/// the gain linearly to the next control point, so automation never zips. Then:
/// - Files: read at a variable rate 2^pitch with linear interpolation; a looping voice wraps (the
///   seam interpolates from the last frame to the first); a non-looping one is silent after the
///   file's end (EventDuration padding); the voice ends at its end (EventDuration truncation).
/// - Brightness of files: a one-pole low-pass y += a·(x − y), a = 1 − e^(−2π·fc/rate), with
///   fc = 200 Hz × 100^brightness; brightness ≥ 0.999 bypasses it.
/// - Tones (AudioContinuous): 220 Hz × 2^pitch; (1 − b)·sine + b·band-limited sawtooth
///   ((2/π)·Σ_{n=1..8} (−1)^(n+1) sin(2πnφ)/n), b = brightness.
/// - Pan: equal power, unity at the centre: left × √2·cos θ, right × √2·sin θ, θ = (pan + 1)·π/4
///   (so pan 0 leaves both channels as they are; hard left is +3 dB on the left, silence on the
///   right; left² + right² is constant).
/// - A stopped player fades out over 5 ms from its stop frame.
///
/// `start`, `stop` and `render` run on the audio thread: they do not allocate, lock or block
/// (voices live in storage allocated once; sources are reached through unretained references that
/// the control side keeps alive).
public final class AudioMixer: @unchecked Sendable {
    struct Voice {
        var active = false
        var slot: Int32 = 0
        var voice: Int32 = 0
        var source: Unmanaged<PlayerAudio>?
        var playerStart: Int64 = 0
        /// Pattern seconds per second of output.
        var rate = 1.0
        var startFrame: Int64 = 0
        var endFrame: Int64 = .max
        var stopFrame: Int64 = .max
        var position = 0.0
        var phase = 0.0
        var lowL: Float = 0
        var lowR: Float = 0
    }

    /// Output frames per second.
    public let sampleRate: Double
    /// Most voices sounding at once.
    public let capacity: Int
    /// Frames between two control points.
    public static let controlInterval = 16
    private let voices: UnsafeMutablePointer<Voice>
    private let stopFadeFrames: Double

    /// Makes a mixer for `sampleRate` with room for `capacity` voices.
    public init(sampleRate: Double, capacity: Int = 64) {
        self.sampleRate = sampleRate
        self.capacity = capacity
        voices = .allocate(capacity: capacity)
        voices.initialize(repeating: Voice(), count: capacity)
        stopFadeFrames = (0.005 * sampleRate).rounded()
    }

    deinit {
        voices.deinitialize(count: capacity)
        voices.deallocate()
    }

    /// Voices sounding or waiting to sound.
    public var activeVoices: Int { (0..<capacity).reduce(0) { $0 + (voices[$1].active ? 1 : 0) } }

    /// Whether any voice is sounding or waiting to sound. Does not allocate, lock or block.
    public var isPlaying: Bool {
        for i in 0..<capacity where voices[i].active { return true }
        return false
    }

    /// Live parameters and player mutes applied to voices (set before rendering starts).
    public var live: LiveParameters?

    // MARK: - Real-time (audio thread)

    /// Schedules every voice of a player whose pattern time 0 is heard at output frame
    /// `startFrame`, sounding from frame `from` on (a start at an offset: voices that ended before
    /// it are skipped, one under way starts part-way through), at `rate` pattern seconds per second
    /// (event times and lengths scale; a file's own speed and pitch do not). Returns how many
    /// voices did not fit. Does not allocate, lock or block.
    @discardableResult
    public func start(slot: Int32, audio: Unmanaged<PlayerAudio>, startFrame: Int64, from: Int64? = nil, rate: Double = 1) -> Int {
        let from = max(from ?? startFrame, startFrame)
        stop(slot: slot, atFrame: from)
        var dropped = 0
        audio._withUnsafeGuaranteedRef { a in
            // Index loops, not enumerated() or first(where:): unspecialized (debug) generic
            // iteration allocates coroutine frames and metadata on this thread.
            for i in 0..<a.timeline.voices.count {
                let v = a.timeline.voices[i]
                if case .file = v.source, a.samples[i] == nil { continue }
                let first = startFrame + FrameTiming.frames(v.start, rate: rate, sampleRate: sampleRate)
                let end = v.end.map { startFrame + FrameTiming.frames($0, rate: rate, sampleRate: sampleRate) } ?? .max
                if end <= from { continue }
                var free = -1
                for j in 0..<capacity where !voices[j].active { free = j; break }
                guard free >= 0 else { dropped += 1; continue }
                var voice = Voice(active: true, slot: slot, voice: Int32(i), source: audio, playerStart: startFrame, rate: rate,
                                  startFrame: max(first, from), endFrame: end)
                if first < from {
                    // Part-way through: where the file is after (from − first) frames at the pitch in force.
                    let t = FrameTiming.patternTime(ofFrames: from - startFrame, rate: rate, sampleRate: sampleRate)
                    voice.position = Double(from - first) * AudioVoice.playbackRate(pitch: a.timeline.voiceState(i, at: t).pitch)
                }
                voices[free] = voice
            }
        }
        return dropped
    }

    /// Stops a player's voices from output frame `frame` on, with a 5 ms fade; those that would
    /// begin at `frame` or later are dropped. Does not allocate, lock or block.
    public func stop(slot: Int32, atFrame frame: Int64) {
        for i in 0..<capacity where voices[i].active && voices[i].slot == slot {
            // A voice stopped at or before its first frame never sounds (not even a fade).
            if voices[i].startFrame >= frame { voices[i].active = false; continue }
            voices[i].stopFrame = min(voices[i].stopFrame, frame)
        }
    }

    /// Stops everything at once (no fade).
    public func stopAll() {
        for i in 0..<capacity { voices[i].active = false }
    }

    /// Mixes `frames` frames starting at output frame `firstFrame` into `out` (interleaved L R,
    /// overwritten). `blockTime` is when `firstFrame` is heard on the engine's clock and
    /// `nsPerFrame` the clock's rate, for live parameters (sent in engine time); without them live
    /// parameters other than mutes are not applied. Does not allocate, lock or block.
    public func render(into out: UnsafeMutablePointer<Float>, frames: Int, firstFrame: Int64, blockTime: UInt64? = nil, nsPerFrame: Double = 0) {
        out.update(repeating: 0, count: frames * 2)
        for i in 0..<capacity where voices[i].active {
            renderVoice(&voices[i], out, frames, firstFrame, blockTime, nsPerFrame)
        }
    }

    /// A voice's state at pattern time `t` with the live parameters of its player at engine time
    /// `engineTime` applied (volume multiplies, pan/pitch/brightness add, mute silences). Audio
    /// thread; does not allocate, lock or block.
    @inline(__always)
    private func state(_ timeline: PatternTimeline, _ index: Int, _ slot: Int, at t: Double, engineTime: UInt64?) -> AudioVoiceState {
        var s = timeline.voiceState(index, at: t)
        guard let live else { return s }
        if live.isMuted(slot: slot) { s.gain = 0; return s }
        guard let engineTime else { return s }
        s.gain = live.applied(.audioVolume, slot: slot, at: engineTime, to: s.gain)
        s.pan = live.applied(.audioPan, slot: slot, at: engineTime, to: s.pan)
        s.pitch = live.applied(.audioPitch, slot: slot, at: engineTime, to: s.pitch)
        s.brightness = live.applied(.audioBrightness, slot: slot, at: engineTime, to: s.brightness)
        return s
    }

    private func renderVoice(_ v: inout Voice, _ out: UnsafeMutablePointer<Float>, _ frames: Int, _ firstFrame: Int64,
                             _ blockTime: UInt64?, _ nsPerFrame: Double) {
        let blockEnd = firstFrame + Int64(frames)
        let fadeEnd = v.stopFrame == .max ? Int64.max : v.stopFrame + Int64(stopFadeFrames)
        if firstFrame >= min(v.endFrame, fadeEnd) {
            v.active = false
            return
        }
        guard blockEnd > v.startFrame, let source = v.source else { return }
        source._withUnsafeGuaranteedRef { audio in
            let timeline = audio.timeline
            let index = Int(v.voice)
            let samples = audio.samples[index]
            let isTone = samples == nil
            var f = max(firstFrame, v.startFrame)
            while f < blockEnd {
                let chunkEnd = min(blockEnd, (f / Int64(Self.controlInterval) + 1) * Int64(Self.controlInterval))
                let t0 = FrameTiming.patternTime(ofFrames: f - v.playerStart, rate: v.rate, sampleRate: sampleRate)
                // The next control point, but never past the voice's last frame: a voice ends
                // exactly at its end frame instead of ramping towards the silence after it.
                let f1 = min(chunkEnd, v.endFrame == .max ? chunkEnd : v.endFrame - 1)
                let t1 = FrameTiming.patternTime(ofFrames: f1 - v.playerStart, rate: v.rate, sampleRate: sampleRate)
                let e0 = blockTime.map { $0 &+ UInt64(max(0, Double(f - firstFrame) * nsPerFrame)) }
                let e1 = blockTime.map { $0 &+ UInt64(max(0, Double(f1 - firstFrame) * nsPerFrame)) }
                let slot = Int(v.slot)
                let s0 = state(timeline, index, slot, at: t0, engineTime: e0)
                let g1 = state(timeline, index, slot, at: t1, engineTime: e1).gain
                let theta = (s0.pan + 1) * Double.pi / 4
                let gl = Float(2.0.squareRoot() * cos(theta)), gr = Float(2.0.squareRoot() * sin(theta))
                let n = Int(chunkEnd - f)
                var rate = 0.0, lowA: Float = 1, frequency = 0.0
                if isTone {
                    frequency = AudioVoice.toneFrequency(pitch: s0.pitch) / sampleRate
                } else {
                    rate = AudioVoice.playbackRate(pitch: s0.pitch)
                    if s0.brightness < 0.999 { lowA = Float(1 - exp(-2 * Double.pi * AudioVoice.cutoff(brightness: s0.brightness) / sampleRate)) }
                }
                for k in 0..<n {
                    let frame = f + Int64(k)
                    if frame >= v.endFrame { break }
                    var gain = Float(s0.gain + (g1 - s0.gain) * Double(k) / Double(n))
                    if frame >= v.stopFrame { gain *= Float(max(0, 1 - Double(frame - v.stopFrame) / stopFadeFrames)) }
                    var l: Float, r: Float
                    if let samples {
                        (l, r) = read(samples, at: v.position, loop: timeline.voices[index].loop)
                        v.position += rate
                        if lowA < 1 {
                            v.lowL += lowA * (l - v.lowL)
                            v.lowR += lowA * (r - v.lowR)
                            l = v.lowL
                            r = v.lowR
                        } else {
                            v.lowL = l
                            v.lowR = r
                        }
                    } else {
                        let x = Self.tone(phase: v.phase, brightness: s0.brightness)
                        v.phase += frequency
                        if v.phase >= 1 { v.phase -= 1 }
                        (l, r) = (x, x)
                    }
                    let o = Int(frame - firstFrame) * 2
                    out[o] += gain * gl * l
                    out[o + 1] += gain * gr * r
                }
                f = chunkEnd
            }
        }
    }

    /// A frame of a file at a fractional position: linear interpolation, wrapping when looping,
    /// silence past the end otherwise.
    @inline(__always)
    private func read(_ s: AudioSamples, at position: Double, loop: Bool) -> (Float, Float) {
        let count = s.frames
        guard count > 0 else { return (0, 0) }
        var p = position
        if loop {
            // fmod, not truncatingRemainder: unspecialized (debug builds) that goes through a
            // lazily made protocol witness table, an allocation the first time on this thread.
            p = fmod(p, Double(count))
        } else if p > Double(count - 1) {
            return (0, 0)
        }
        let i = Int(p)
        let frac = Float(p - Double(i))
        let j = i + 1 < count ? i + 1 : (loop ? 0 : i)
        return (s.left[i] + frac * (s.left[j] - s.left[i]), s.right[i] + frac * (s.right[j] - s.right[i]))
    }

    /// The synthesized tone at phase 0..<1 (cycles) for a brightness.
    @inline(__always)
    static func tone(phase: Double, brightness: Double) -> Float {
        let w = 2 * Double.pi * phase
        let s1 = sin(w)
        guard brightness > 0 else { return Float(s1) }
        // sin(n·w) for n = 1...8 by the recurrence sin((n+1)w) = 2 cos(w) sin(nw) − sin((n−1)w):
        // one sin and one cos per sample instead of nine sines.
        let twoCos = 2 * cos(w)
        var previous = 0.0, current = s1, saw = 0.0, sign = 1.0
        for n in 1...8 {
            saw += sign * current / Double(n)
            (previous, current) = (current, twoCos * current - previous)
            sign = -sign
        }
        saw *= 2 / Double.pi
        return Float((1 - brightness) * s1 + brightness * saw)
    }
}
