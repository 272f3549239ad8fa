import HapSyncCore

/// The scheduling logic of the engine, independent of threads and of the clock's source.
///
/// `service(clock:)` is one pass: it takes the control messages waiting, releases every command
/// whose deadline has come (in deadline order across players, stamping each with the clock's
/// time at release), handles stops and completions, and returns the next deadline. The real-time
/// thread calls it in a loop and sleeps in between; tests call it with a manual clock.
///
/// Players are mixed by the rendering rule: their levels are summed and saturate at 1, sharpness is
/// the intensity-weighted mean; transients pass through.
///
/// Each slot maps pattern time p to engine time as start + (p / rate) (on the audio clock for a
/// player that follows it): a start at an offset o puts o at the start time; a loop moves the
/// start on by loopEnd / rate at each wrap; a pause remembers the offset reached; a rate change
/// re-anchors so the offset reached is kept. Live parameters (`LiveParameters`) scale and shift
/// every level and tap as they are released, and while they change the slot is re-evaluated every
/// millisecond.
///
/// Nothing here allocates, locks or blocks after `init`: slot state lives in storage allocated
/// once, timelines are reached through unretained references the control side keeps alive, and
/// the rings are lock-free.
final class Scheduler: @unchecked Sendable {
    /// One player slot's state, owned by the scheduler thread.
    struct SlotState {
        var active = false
        var player: UInt32 = 0
        /// Engine ns of pattern time 0 (wrapping arithmetic: an offset start may put it "before 0").
        var start: UInt64 = 0
        /// Output frame of pattern time 0 when the player follows the audio clock, else −1.
        var startFrame: Int64 = -1
        /// Pattern time (s) at which the player has finished.
        var endTime: Double = 0
        var stopAt: UInt64 = .max
        /// Whether `stopAt` is a pause (remember the offset) rather than a stop.
        var stopIsPause = false
        var next = 0
        var intensity: Float = 0
        var sharpness: Float = 0
        /// A level to set at `seekOffset` after a start at an offset (the level in force there).
        var seekLevelPending = false
        var seekOffset: Double = 0
        /// The last time live parameters were evaluated for this slot (engine ns).
        var liveEvaluated: UInt64 = 0
        // Kept across starts:
        /// Pattern seconds per second.
        var rate: Double = 1
        var loopEnabled = false
        /// Loop end (pattern s); 0 means the pattern's end.
        var loopEnd: Double = 0
        /// Where a resume starts (pattern s), set by a pause or a seek while not playing.
        var pausedOffset: Double = 0
    }

    let capacity: Int
    let control: SPSCRing<ControlMessage>
    let output: SPSCRing<OutputCommand>
    let notifications: SPSCRing<EngineNotification>
    /// Timelines by slot, written by the control side before it sends `start` (the control ring's
    /// release/acquire orders that write before our read) and kept alive by it until `retired`.
    let timelines: UnsafeMutablePointer<Unmanaged<PatternTimeline>?>
    private let slots: UnsafeMutablePointer<SlotState>
    /// Called after pushing a notification (the notifier's semaphore post in threaded mode).
    private let notify: @Sendable () -> Void
    /// Called after pushing output commands (the output thread's semaphore post in threaded mode).
    private let wakeOutput: @Sendable () -> Void
    /// The audio output players with audio follow, if any.
    let audio: AudioDevice?
    /// Haptic commands of audio-following players are released this much before their frame is heard.
    let hapticLatency: UInt64
    /// Whether the player in each slot has audio voices (written by the control side with the timeline).
    let hasAudio: UnsafeMutablePointer<Bool>
    /// Whether deadlines leave the audio clock after the start (`HapticEngine.AudioSync.openLoop`).
    let openLoop: Bool
    /// Live parameters and mutes by slot.
    let live: LiveParameters
    /// The mixed level last pushed (live re-evaluations push only changes).
    private var lastMix: (intensity: Float, sharpness: Float) = (0, 0)

    init(capacity: Int, control: SPSCRing<ControlMessage>, output: SPSCRing<OutputCommand>,
         notifications: SPSCRing<EngineNotification>, notify: @escaping @Sendable () -> Void,
         wakeOutput: @escaping @Sendable () -> Void, audio: AudioDevice? = nil, hapticLatency: UInt64 = 0, openLoop: Bool = false,
         live: LiveParameters? = nil) {
        self.audio = audio
        self.openLoop = openLoop
        self.live = live ?? LiveParameters(slots: capacity)
        self.hapticLatency = hapticLatency
        hasAudio = .allocate(capacity: capacity)
        hasAudio.initialize(repeating: false, count: capacity)
        self.capacity = capacity
        self.control = control
        self.output = output
        self.notifications = notifications
        self.notify = notify
        self.wakeOutput = wakeOutput
        timelines = .allocate(capacity: capacity)
        timelines.initialize(repeating: nil, count: capacity)
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: SlotState(), count: capacity)
    }

    deinit {
        timelines.deinitialize(count: capacity)
        timelines.deallocate()
        slots.deinitialize(count: capacity)
        slots.deallocate()
        hasAudio.deallocate()
    }

    /// Deadline (engine ns) of a pattern time relative to a start.
    @inline(__always) static func deadline(start: UInt64, patternTime: Double) -> UInt64 {
        start &+ UInt64((patternTime * 1e9).rounded())
    }

    /// Engine ns that `seconds` of pattern time take at `rate` (wrapping-safe magnitude).
    @inline(__always) private static func span(_ seconds: Double, rate: Double) -> UInt64 {
        UInt64(max(0, (seconds / rate * 1e9).rounded()))
    }

    /// Deadline of a pattern time of slot `s`: on the audio clock (the moment its frame is heard,
    /// less the haptic latency) when the player follows the audio, else on the monotonic clock.
    /// Does not allocate, lock or block.
    @inline(__always) private func deadline(_ s: Int, _ patternTime: Double) -> UInt64 {
        let state = slots[s]
        if state.startFrame >= 0, !openLoop, let audio,
           let heard = audio.clock.time(ofFrame: state.startFrame + Int64((patternTime / state.rate * audio.sampleRate).rounded())) {
            return heard > hapticLatency ? heard - hapticLatency : 0
        }
        return state.start &+ Self.span(patternTime, rate: state.rate)
    }

    /// The pattern time slot `s` has reached at engine time `time`. Does not allocate, lock or block.
    private func offset(_ s: Int, at time: UInt64) -> Double {
        let state = slots[s]
        if state.startFrame >= 0, !openLoop, let audio, let frame = audio.clock.frame(atTime: time &+ hapticLatency) {
            return Double(frame - state.startFrame) / audio.sampleRate * state.rate
        }
        return Double(Int64(bitPattern: time &- state.start)) / 1e9 * state.rate
    }

    /// Where slot `s` ends or wraps (pattern s), and whether it wraps. Does not allocate, lock or block.
    @inline(__always) private func endPoint(_ s: Int) -> (time: Double, wraps: Bool) {
        let state = slots[s]
        guard state.loopEnabled else { return (state.endTime, false) }
        let end = state.loopEnd > 0 ? state.loopEnd : state.endTime
        return end >= 0.001 ? (end, true) : (state.endTime, false)
    }

    /// One scheduling pass at the clock's time; returns the next deadline (`UInt64.max` when
    /// nothing is scheduled). Does not allocate, lock or block.
    func service(clock: EngineClock) -> UInt64 {
        var pushed = false
        while let message = control.pop() {
            handle(message, now: clock.now(), pushed: &pushed)
        }
        // Release what is due, earliest first across players.
        while true {
            let now = clock.now()
            var best = -1
            var bestEvent: (time: UInt64, due: Due) = (.max, .end)
            for s in 0..<capacity where slots[s].active {
                let e = nextEvent(s)
                if e.time < bestEvent.time { bestEvent = e; best = s }
            }
            guard best >= 0, bestEvent.time <= now else { break }
            fire(best, bestEvent, now: now, pushed: &pushed)
        }
        if pushed { wakeOutput() }
        var next = UInt64.max
        for s in 0..<capacity where slots[s].active { next = min(next, nextEvent(s).time) }
        return next
    }

    /// What a slot has to do next.
    enum Due: UInt8 { case command, stop, end, wrap, seekLevel, live }

    /// The earliest thing slot `s` has to do and when: the level at a sought offset, its next
    /// command (unless the stop or the loop's end comes first), a live-parameter re-evaluation,
    /// its stop or pause, its completion or its loop wrap. Does not allocate, lock or block.
    private func nextEvent(_ s: Int) -> (time: UInt64, due: Due) {
        let state = slots[s]
        let endPoint = endPoint(s)
        let end = deadline(s, endPoint.time)
        var best: (time: UInt64, due: Due) = state.stopAt <= end ? (state.stopAt, .stop) : (end, endPoint.wraps ? .wrap : .end)
        if state.seekLevelPending {
            let t = deadline(s, state.seekOffset)
            if t < state.stopAt, t <= best.time { return (t, .seekLevel) }
        }
        if let timeline = timelines[s] {
            let next: Double? = timeline._withUnsafeGuaranteedRef { tl in
                state.next < tl.commands.count ? tl.commands[state.next].time : nil
            }
            if let next, !endPoint.wraps || next < endPoint.time {
                let t = deadline(s, next)
                if t < state.stopAt, t <= best.time { best = (t, .command) }
            }
        }
        if live.isSet(slot: s, .hapticIntensity) || live.isSet(slot: s, .hapticSharpness) {
            let t = live.nextHapticChange(slot: s, after: state.liveEvaluated)
            if t < best.time { best = (t, .live) }
        }
        return best
    }

    /// First command index at or after pattern time `offset`. Does not allocate, lock or block.
    private func firstCommand(_ timeline: PatternTimeline, atOrAfter offset: Double) -> Int {
        var lo = 0, hi = timeline.commands.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if timeline.commands[mid].time < offset { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Starts slot `s` so that pattern offset `offset` falls at `time` (the player's settings
    /// — rate, loop — are kept). Does not allocate, lock or block.
    /// A fresh start of a playing player reports the run it ends as stopped (`reportRestart`); a
    /// seek or a rate change continues the same run and reports nothing.
    private func begin(_ s: Int, player: UInt32, at time: UInt64, offset: Double, now: UInt64, pushed: inout Bool,
                       reportRestart: Bool = false) {
        guard let timeline = timelines[s] else { return }
        if slots[s].active { finish(s, at: now, now: now, kind: .stopped, pushed: &pushed, report: reportRestart) }
        let endTime = timeline._withUnsafeGuaranteedRef { $0.end }
        let o = min(max(0, offset), max(endTime, endPoint(s).time))
        var state = slots[s]
        state.active = true
        state.player = player
        state.startFrame = -1
        state.endTime = endTime
        state.stopAt = .max
        state.stopIsPause = false
        state.intensity = 0
        state.sharpness = 0
        state.pausedOffset = 0
        state.liveEvaluated = max(time, now)
        state.start = time &- Self.span(o, rate: state.rate)
        state.next = timeline._withUnsafeGuaranteedRef { firstCommand($0, atOrAfter: o) }
        state.seekLevelPending = o > 0
        state.seekOffset = o
        if hasAudio[s], let audio, let frame = audibleFrame(at: time) {
            let zero = frame - Int64((o / state.rate * audio.sampleRate).rounded())
            state.startFrame = zero
            state.start = (audio.clock.time(ofFrame: frame) ?? time) &- Self.span(o, rate: state.rate)
            if openLoop, state.start > hapticLatency { state.start -= hapticLatency }
            audio.messages.push(AudioMessage(kind: .start, slot: Int32(s), frame: zero, from: frame, rate: state.rate))
            post(EngineNotification(kind: .startedOnAudio, slot: Int32(s), player: player, time: UInt64(zero)))
        }
        slots[s] = state
    }

    /// The output frame heard at `time`, or the first frame that can still be written (plus 5 ms)
    /// if that one has gone by: an immediate start waits for the output latency, so that what is
    /// felt and what is heard stay together. Nil before the audio clock's first fit. Does not
    /// allocate, lock or block.
    private func audibleFrame(at time: UInt64) -> Int64? {
        guard let audio, let heard = audio.clock.frame(atTime: time) else { return nil }
        return max(heard, audio.nextWritableFrame + Int64(audio.sampleRate * 0.005))
    }

    /// Changes the rate of playing slot `s` at `now`, keeping the offset reached: what was
    /// released stays released, the level holds, the rest follows at the new rate. Audio voices
    /// restart part-way at the new timing. Does not allocate, lock or block.
    private func reanchor(_ s: Int, rate: Double, now: UInt64) {
        let o = offset(s, at: now)
        slots[s].rate = rate
        slots[s].start = now &- Self.span(o, rate: rate)
        if slots[s].startFrame >= 0, let audio, let frame = audibleFrame(at: now &+ hapticLatency) {
            let zero = frame - Int64((o / rate * audio.sampleRate).rounded())
            slots[s].startFrame = zero
            audio.messages.push(AudioMessage(kind: .start, slot: Int32(s), frame: zero, from: frame, rate: rate))
            post(EngineNotification(kind: .startedOnAudio, slot: Int32(s), player: slots[s].player, time: UInt64(zero)))
        }
    }

    /// Applies one control message. Does not allocate, lock or block.
    private func handle(_ m: ControlMessage, now: UInt64, pushed: inout Bool) {
        let s = Int(m.slot)
        if m.kind == .refresh, s == -1 {
            // Policy or engine mute changed: send the current mix again (the output stage applies them).
            pushMixedLevel(scheduled: now, released: now, player: 0, patternTime: -1, pushed: &pushed)
            return
        }
        guard m.kind == .stopAll || (s >= 0 && s < capacity) else { return }
        switch m.kind {
        case .start:
            begin(s, player: m.player, at: m.time, offset: m.value, now: now, pushed: &pushed, reportRestart: true)
            post(EngineNotification(kind: .began, slot: m.slot, player: m.player, time: slots[s].active ? 1 : 0))
        case .resume:
            // Already playing (no pause pending): nothing to do.
            if !slots[s].active || (slots[s].stopIsPause && slots[s].stopAt != .max) {
                let from = slots[s].active ? offset(s, at: min(now, slots[s].stopAt)) : slots[s].pausedOffset
                begin(s, player: m.player, at: m.time, offset: from, now: now, pushed: &pushed)
            }
            post(EngineNotification(kind: .began, slot: m.slot, player: m.player, time: slots[s].active ? 1 : 0))
        case .stop, .pause:
            if slots[s].active, slots[s].player == m.player {
                if m.time <= slots[s].stopAt { slots[s].stopIsPause = m.kind == .pause }
                slots[s].stopAt = min(slots[s].stopAt, m.time)
                if slots[s].startFrame >= 0, let audio, let frame = audio.clock.frame(atTime: slots[s].stopAt &+ hapticLatency) {
                    audio.messages.push(AudioMessage(kind: .stop, slot: m.slot, frame: frame))
                }
            } else if m.kind == .stop {
                slots[s].pausedOffset = 0
            }
        case .seek:
            if slots[s].active, slots[s].stopAt == .max {
                begin(s, player: m.player, at: now, offset: m.value, now: now, pushed: &pushed)
            } else {
                slots[s].pausedOffset = max(0, m.value)
            }
        case .setRate:
            let rate = min(max(m.value, 0.01), 100)
            if slots[s].active, slots[s].stopAt == .max {
                reanchor(s, rate: rate, now: now)
            } else {
                slots[s].rate = rate
            }
        case .setLoop:
            slots[s].loopEnabled = m.flag
            slots[s].loopEnd = max(0, m.value)
        case .refresh:
            if slots[s].active { slots[s].liveEvaluated = now; pushLiveLevel(at: now, now: now, player: slots[s].player, pushed: &pushed) }
        case .retire:
            if slots[s].active { finish(s, at: now, now: now, kind: .stopped, pushed: &pushed) }
            slots[s] = SlotState()
            post(EngineNotification(kind: .retired, slot: m.slot, player: m.player, time: now))
        case .stopAll:
            for i in 0..<capacity where slots[i].active {
                slots[i].intensity = 0
                finish(i, at: now, now: now, kind: .stopped, pushed: &pushed, emitLevel: false)
            }
            lastMix = (0, 0)
            pushed = output.push(OutputCommand(scheduled: now, released: now, player: 0, kind: .stopAll,
                                               intensity: 0, sharpness: 0, patternTime: -1)) || pushed
            audio?.messages.push(AudioMessage(kind: .stopAll, slot: -1, frame: 0))
        }
    }

    /// Does what slot `s` has due. Does not allocate, lock or block.
    private func fire(_ s: Int, _ event: (time: UInt64, due: Due), now: UInt64, pushed: inout Bool) {
        let state = slots[s]
        guard let timeline = timelines[s] else { slots[s].active = false; return }
        switch event.due {
        case .stop:
            if state.stopIsPause {
                let reached = min(max(0, offset(s, at: state.stopAt)), endPoint(s).time)
                finish(s, at: state.stopAt, now: now, kind: .paused, pushed: &pushed)
                slots[s].pausedOffset = reached
                post(EngineNotification(kind: .paused, slot: Int32(s), player: state.player, time: UInt64(reached * 1e9)))
            } else {
                finish(s, at: state.stopAt, now: now, kind: .stopped, pushed: &pushed)
            }
        case .end:
            finish(s, at: event.time, now: now, kind: .finished, pushed: &pushed)
        case .wrap:
            // The loop's end: pattern time `end` becomes pattern time 0 of the next pass.
            let end = endPoint(s).time
            slots[s].start = state.start &+ Self.span(end, rate: state.rate)
            slots[s].next = 0
            slots[s].seekLevelPending = false
            if state.intensity != 0 {
                slots[s].intensity = 0
                pushMixedLevel(scheduled: event.time, released: now, player: state.player, patternTime: end, pushed: &pushed)
            }
            if state.startFrame >= 0, let audio {
                let zero = state.startFrame + Int64((end / state.rate * audio.sampleRate).rounded())
                slots[s].startFrame = zero
                audio.messages.push(AudioMessage(kind: .start, slot: Int32(s), frame: zero, from: zero, rate: state.rate))
                post(EngineNotification(kind: .startedOnAudio, slot: Int32(s), player: state.player, time: UInt64(zero)))
            }
        case .seekLevel:
            // The continuous level in force at the offset: the last level command before it.
            slots[s].seekLevelPending = false
            let level: HapticCommand? = timeline._withUnsafeGuaranteedRef { tl in
                var i = state.next - 1
                while i >= 0, tl.commands[i].kind != .level { i -= 1 }
                return i >= 0 ? tl.commands[i] : nil
            }
            if let level, level.intensity > 0 {
                slots[s].intensity = Float(level.intensity)
                slots[s].sharpness = Float(level.sharpness)
                pushMixedLevel(scheduled: event.time, released: now, player: state.player, patternTime: state.seekOffset, pushed: &pushed)
            }
        case .live:
            slots[s].liveEvaluated = event.time
            pushLiveLevel(at: event.time, now: now, player: state.player, pushed: &pushed)
        case .command:
            let c: HapticCommand = timeline._withUnsafeGuaranteedRef { $0.commands[state.next] }
            slots[s].next += 1
            switch c.kind {
            case .transient:
                guard !live.isMuted(slot: s) else { break }
                let gain = live.isSet(slot: s, .hapticIntensity) ? live.value(slot: s, .hapticIntensity, at: event.time) : 1
                let shift = live.isSet(slot: s, .hapticSharpness) ? live.value(slot: s, .hapticSharpness, at: event.time) : 0
                let intensity = Float(min(max(c.intensity * gain, 0), 1))
                guard intensity > 0 else { break }
                pushed = output.push(OutputCommand(scheduled: event.time, released: now, player: state.player, kind: .transient,
                                                   intensity: intensity, sharpness: Float(min(max(c.sharpness + shift, 0), 1)),
                                                   patternTime: c.time)) || pushed
            case .level:
                slots[s].intensity = Float(c.intensity)
                slots[s].sharpness = Float(c.sharpness)
                pushMixedLevel(scheduled: event.time, released: now, player: state.player, patternTime: c.time, pushed: &pushed)
            }
        }
    }

    /// Ends slot `s`: silences its level (re-mixing the others) and reports it (unless `report`
    /// is false: a restart, which is not an ending the caller asked about).
    private func finish(_ s: Int, at time: UInt64, now: UInt64, kind: EngineNotification.Kind, pushed: inout Bool,
                        emitLevel: Bool = true, report: Bool = true) {
        let state = slots[s]
        slots[s].active = false
        slots[s].seekLevelPending = false
        if kind != .finished, state.startFrame >= 0, let audio, let frame = audio.clock.frame(atTime: time &+ hapticLatency) {
            audio.messages.push(AudioMessage(kind: .stop, slot: Int32(s), frame: frame))
        }
        if emitLevel, state.intensity != 0 {
            slots[s].intensity = 0
            let patternTime = Double(Int64(bitPattern: time &- state.start)) / 1e9 * state.rate
            pushMixedLevel(scheduled: time, released: now, player: state.player, patternTime: patternTime, pushed: &pushed)
        }
        slots[s].intensity = 0
        if report, kind != .paused { post(EngineNotification(kind: kind, slot: Int32(s), player: state.player, time: time)) }
    }

    /// The mix of every active player's level at `time`, live parameters and mutes applied.
    /// Does not allocate, lock or block.
    private func mix(at time: UInt64) -> (intensity: Float, sharpness: Float) {
        var sum = 0.0, weighted = 0.0, contributors = 0, lone = (0.0, 0.0)
        for i in 0..<capacity where slots[i].intensity > 0 {
            if live.isMuted(slot: i) { continue }
            var intensity = Double(slots[i].intensity), sharpness = Double(slots[i].sharpness)
            if live.isSet(slot: i, .hapticIntensity) { intensity = min(max(intensity * live.value(slot: i, .hapticIntensity, at: time), 0), 1) }
            if live.isSet(slot: i, .hapticSharpness) { sharpness = min(max(sharpness + live.value(slot: i, .hapticSharpness, at: time), 0), 1) }
            guard intensity > 0 else { continue }
            sum += intensity
            weighted += intensity * sharpness
            contributors += 1
            lone = (intensity, sharpness)
        }
        switch contributors {
        case 0: return (0, 0)
        case 1: return (Float(lone.0), Float(lone.1))
        default: return (Float(min(1, sum)), Float(min(1, weighted / sum)))
        }
    }

    /// Pushes the mix of every active player's level (and the one just silenced). A lone
    /// contributor passes through unchanged, so a single player's stream equals its render.
    private func pushMixedLevel(scheduled: UInt64, released: UInt64, player: UInt32, patternTime: Double, pushed: inout Bool) {
        let m = mix(at: scheduled)
        lastMix = m
        pushed = output.push(OutputCommand(scheduled: scheduled, released: released, player: player, kind: .level,
                                           intensity: m.intensity, sharpness: m.sharpness, patternTime: patternTime)) || pushed
    }

    /// Pushes the mix again if live parameters or mutes changed it. Does not allocate, lock or block.
    private func pushLiveLevel(at time: UInt64, now: UInt64, player: UInt32, pushed: inout Bool) {
        let m = mix(at: time)
        guard m != lastMix else { return }
        lastMix = m
        pushed = output.push(OutputCommand(scheduled: time, released: now, player: player, kind: .level,
                                           intensity: m.intensity, sharpness: m.sharpness, patternTime: -1)) || pushed
    }

    private func post(_ n: EngineNotification) {
        notifications.push(n)
        notify()
    }
}
