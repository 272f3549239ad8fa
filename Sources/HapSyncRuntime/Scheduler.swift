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
/// Nothing here allocates, locks or blocks after `init`: slot state lives in storage allocated
/// once, timelines are reached through unretained references the control side keeps alive, and
/// the rings are lock-free.
final class Scheduler: @unchecked Sendable {
    /// One player slot's state, owned by the scheduler thread.
    struct SlotState {
        var active = false
        var player: UInt32 = 0
        var start: UInt64 = 0
        /// Output frame of pattern time 0 when the player follows the audio clock, else −1.
        var startFrame: Int64 = -1
        /// Pattern time (s) at which the player has finished.
        var endTime: Double = 0
        var stopAt: UInt64 = .max
        var next = 0
        var intensity: Float = 0
        var sharpness: Float = 0
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

    init(capacity: Int, control: SPSCRing<ControlMessage>, output: SPSCRing<OutputCommand>,
         notifications: SPSCRing<EngineNotification>, notify: @escaping @Sendable () -> Void,
         wakeOutput: @escaping @Sendable () -> Void, audio: AudioDevice? = nil, hapticLatency: UInt64 = 0, openLoop: Bool = false) {
        self.audio = audio
        self.openLoop = openLoop
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

    /// Deadline of a pattern time of slot `s`: on the audio clock (the moment its frame is heard,
    /// less the haptic latency) when the player follows the audio, else on the monotonic clock.
    /// Does not allocate, lock or block.
    @inline(__always) private func deadline(_ s: Int, _ patternTime: Double) -> UInt64 {
        let state = slots[s]
        if state.startFrame >= 0, !openLoop, let audio,
           let heard = audio.clock.time(ofFrame: state.startFrame + Int64((patternTime * audio.sampleRate).rounded())) {
            return heard > hapticLatency ? heard - hapticLatency : 0
        }
        return Self.deadline(start: state.start, patternTime: patternTime)
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
    enum Due: UInt8 { case command, stop, end }

    /// The earliest thing slot `s` has to do and when: its next command (unless the stop comes
    /// first), its stop, or its completion. Does not allocate, lock or block.
    private func nextEvent(_ s: Int) -> (time: UInt64, due: Due) {
        let state = slots[s]
        let end = deadline(s, state.endTime)
        var best: (time: UInt64, due: Due) = state.stopAt <= end ? (state.stopAt, .stop) : (end, .end)
        if let timeline = timelines[s] {
            let next: Double? = timeline._withUnsafeGuaranteedRef { tl in
                state.next < tl.commands.count ? tl.commands[state.next].time : nil
            }
            if let next {
                let t = deadline(s, next)
                if t < state.stopAt, t <= best.time { best = (t, .command) }
            }
        }
        return best
    }

    private func handle(_ m: ControlMessage, now: UInt64, pushed: inout Bool) {
        let s = Int(m.slot)
        switch m.kind {
        case .start:
            guard s >= 0, s < capacity, let timeline = timelines[s] else { return }
            if slots[s].active { finish(s, at: now, now: now, kind: .stopped, pushed: &pushed) }
            let endTime = timeline._withUnsafeGuaranteedRef { $0.end }
            var state = SlotState(active: true, player: m.player, start: m.time, startFrame: -1, endTime: endTime, stopAt: .max, next: 0)
            if hasAudio[s], let audio, let heard = audio.clock.frame(atTime: m.time) {
                // Pattern time 0 is the frame heard at the start time, or the first frame that can
                // still be written if that one has gone by (an immediate start waits for the output
                // latency, so that what is felt and what is heard stay together).
                let frame = max(heard, audio.nextWritableFrame + Int64(audio.sampleRate * 0.005))
                state.startFrame = frame
                state.start = audio.clock.time(ofFrame: frame) ?? m.time
                if openLoop, state.start > hapticLatency { state.start -= hapticLatency }
                audio.messages.push(AudioMessage(kind: .start, slot: m.slot, frame: frame))
                post(EngineNotification(kind: .startedOnAudio, slot: m.slot, player: m.player, time: UInt64(frame)))
            }
            slots[s] = state
        case .stop:
            guard s >= 0, s < capacity, slots[s].active, slots[s].player == m.player else { return }
            slots[s].stopAt = min(slots[s].stopAt, m.time)
            if slots[s].startFrame >= 0, let audio, let frame = audio.clock.frame(atTime: slots[s].stopAt) {
                audio.messages.push(AudioMessage(kind: .stop, slot: m.slot, frame: frame))
            }
        case .retire:
            guard s >= 0, s < capacity else { return }
            if slots[s].active { finish(s, at: now, now: now, kind: .stopped, pushed: &pushed) }
            post(EngineNotification(kind: .retired, slot: m.slot, player: m.player, time: now))
        case .stopAll:
            for i in 0..<capacity where slots[i].active {
                slots[i].intensity = 0
                finish(i, at: now, now: now, kind: .stopped, pushed: &pushed, emitLevel: false)
            }
            pushed = output.push(OutputCommand(scheduled: now, released: now, player: 0, kind: .stopAll,
                                               intensity: 0, sharpness: 0, patternTime: -1)) || pushed
            audio?.messages.push(AudioMessage(kind: .stopAll, slot: -1, frame: 0))
        }
    }

    /// Does what slot `s` has due (its next command, its stop or its completion).
    private func fire(_ s: Int, _ event: (time: UInt64, due: Due), now: UInt64, pushed: inout Bool) {
        let state = slots[s]
        guard let timeline = timelines[s] else { slots[s].active = false; return }
        switch event.due {
        case .stop:
            finish(s, at: state.stopAt, now: now, kind: .stopped, pushed: &pushed)
        case .end:
            finish(s, at: event.time, now: now, kind: .finished, pushed: &pushed)
        case .command:
            let c: HapticCommand = timeline._withUnsafeGuaranteedRef { $0.commands[state.next] }
            slots[s].next += 1
            switch c.kind {
            case .transient:
                pushed = output.push(OutputCommand(scheduled: event.time, released: now, player: state.player, kind: .transient,
                                                   intensity: Float(c.intensity), sharpness: Float(c.sharpness), patternTime: c.time)) || pushed
            case .level:
                slots[s].intensity = Float(c.intensity)
                slots[s].sharpness = Float(c.sharpness)
                pushMixedLevel(scheduled: event.time, released: now, player: state.player, patternTime: c.time, pushed: &pushed)
            }
        }
    }

    /// Ends slot `s`: silences its level (re-mixing the others) and reports it.
    private func finish(_ s: Int, at time: UInt64, now: UInt64, kind: EngineNotification.Kind, pushed: inout Bool, emitLevel: Bool = true) {
        let state = slots[s]
        slots[s].active = false
        if kind == .stopped, state.startFrame >= 0, let audio, let frame = audio.clock.frame(atTime: time) {
            audio.messages.push(AudioMessage(kind: .stop, slot: Int32(s), frame: frame))
        }
        if emitLevel, state.intensity != 0 {
            slots[s].intensity = 0
            let patternTime = Double(Int64(bitPattern: time &- state.start)) / 1e9
            pushMixedLevel(scheduled: time, released: now, player: state.player, patternTime: patternTime, pushed: &pushed)
        }
        slots[s].intensity = 0
        post(EngineNotification(kind: kind, slot: Int32(s), player: state.player, time: time))
    }

    /// Pushes the mix of every active player's level (and the one just silenced). A lone
    /// contributor passes through unchanged, so a single player's stream equals its render.
    private func pushMixedLevel(scheduled: UInt64, released: UInt64, player: UInt32, patternTime: Double, pushed: inout Bool) {
        var sum = 0.0, weighted = 0.0, contributors = 0, lone = 0
        for i in 0..<capacity where slots[i].intensity > 0 {
            sum += Double(slots[i].intensity)
            weighted += Double(slots[i].intensity) * Double(slots[i].sharpness)
            contributors += 1
            lone = i
        }
        let intensity: Float, sharpness: Float
        switch contributors {
        case 0: (intensity, sharpness) = (0, 0)
        case 1: (intensity, sharpness) = (slots[lone].intensity, slots[lone].sharpness)
        default: (intensity, sharpness) = (Float(min(1, sum)), Float(min(1, weighted / sum)))
        }
        pushed = output.push(OutputCommand(scheduled: scheduled, released: released, player: player, kind: .level,
                                           intensity: intensity, sharpness: sharpness, patternTime: patternTime)) || pushed
    }

    private func post(_ n: EngineNotification) {
        notifications.push(n)
        notify()
    }
}
