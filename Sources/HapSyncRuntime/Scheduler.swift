import HapSyncConcurrency
import HapSyncCore
import Synchronization

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
/// millisecond. Messages act in the order they were sent and at the times they name: a stop or
/// pause whose time has come takes effect before a later message to the same player is applied
/// (`settle`); a seek or rate change while a pause is pending acts now and the pause still comes
/// at its time; a resume for a time after a pending pause waits for it (`resumeAt`).
///
/// Nothing here allocates, locks or blocks after `init`: slot state lives in storage allocated
/// once, timelines are reached through unretained references the control side keeps alive, the
/// rings are lock-free and the audio clock is read through a snapshot that never waits for its
/// writer. This file holds the pass and the time mapping; `Scheduler+Messages.swift` applies
/// control messages, `Scheduler+Release.swift` does what a slot has due.
final class Scheduler: @unchecked Sendable {
    /// One player slot's state, owned by the scheduler thread.
    struct SlotState {
        var active = false
        var player: UInt32 = 0
        /// Engine ns of pattern time 0 (wrapping arithmetic: an offset start may put it "before 0").
        var start: UInt64 = 0
        /// Output frame of pattern time 0 when the player follows the audio clock, else −1.
        var startFrame: Int64 = -1
        /// Whether the run follows the audio clock without audio of its own: it was started on
        /// an output frame (`ControlMessage.frame`), and a seek, resume or move keeps it there.
        var anchored = false
        /// The extra lead (`Scheduler.extraLead`) `start` was moved back by: what a player whose
        /// deadlines come from `start`, not from the audio clock, keeps to the end.
        var startExtraLead: UInt64 = 0
        /// The next pass's frame of pattern time 0 when its audio start went out ahead of the
        /// wrap (`Due.audioWrap`), else −1.
        var nextPassFrame: Int64 = -1
        /// Pattern time (s) at which the player has finished.
        var endTime: Double = 0
        var stopAt: UInt64 = .max
        /// Whether `stopAt` is a pause (remember the offset) rather than a stop.
        var stopIsPause = false
        /// A resume asked for a time after the pending pause: at the pause, playing is scheduled
        /// again from there at this time (`.max`: none).
        var resumeAt: UInt64 = .max
        /// A stop asked for a time after the pending pause: it ends the run that the resume starts
        /// (`.max`: none).
        var stopAfterPause: UInt64 = .max
        var next = 0
        var intensity: Float = 0
        var sharpness: Float = 0
        /// A level to set at `seekOffset` after a start at an offset (the level in force there).
        var seekLevelPending = false
        var seekOffset: Double = 0
        /// The felt time (engine ns) up to which live parameters were evaluated for this slot
        /// (`feltDelay`).
        var liveEvaluated: UInt64 = 0
        // Kept across starts:
        /// Pattern seconds per second.
        var rate: Double = 1
        var loopEnabled = false
        /// Loop end (pattern s); 0 means the pattern's end.
        var loopEnd: Double = 0
        /// The loop's pass count as set (0: until stopped); each start counts it afresh.
        var loopPasses = 0
        /// Passes still to play in this run, the one under way included (each wrap uses one; at 1
        /// the pass under way ends the run); 0: loop until stopped.
        var passesLeft = 0
        /// Where a resume starts (pattern s), set by a pause or a seek while not playing.
        var pausedOffset: Double = 0
        /// A run was paused and has not ended: a stop, a fresh start or the engine's stop ends it
        /// (reported as stopped); a resume carries it on.
        var paused = false
    }

    /// What a slot has to do next.
    enum Due: UInt8 { case command, stop, end, wrap, audioWrap, seekLevel, live }

    let capacity: Int
    /// Transients not sent because they were silent where they fell (intensity 0 after live
    /// parameters, or the player muted); written by the scheduler thread only.
    let skippedTransients = Atomic<Int>(0)
    let control: SPSCRing<ControlMessage>
    let output: SPSCRing<OutputCommand>
    let notifications: SPSCRing<EngineNotification>
    /// Timelines by slot, written by the control side before it sends `start` (the control ring's
    /// release/acquire orders that write before our read) and kept alive by it until `retired`.
    let timelines: UnsafeMutablePointer<Unmanaged<PatternTimeline>?>
    let slots: UnsafeMutablePointer<SlotState>
    /// Called after pushing a notification (the notifier's semaphore post in threaded mode).
    private let notify: @Sendable () -> Void
    /// Called after pushing output commands (in threaded mode: applies them here if the output
    /// stage is free, and posts the output thread). Does not allocate, lock or block.
    private let wakeOutput: @Sendable () -> Void
    /// The audio output players with audio follow, if any.
    let audio: AudioDevice?
    /// Haptic commands of audio-following players are released this much before their frame is
    /// heard: the configured latency, and whatever more the backend has found it needs
    /// (`extraLead`). Does not allocate, lock or block.
    var hapticLatency: UInt64 { configuredLatency &+ extraLead }
    /// What the backend asks for beyond the configured latency (`HapticLeadAdjusting`), read once
    /// at the start of each pass so that every use within a pass agrees (it only grows).
    private(set) var extraLead: UInt64 = 0

    /// The extra lead slot `s`'s commands are released with: the pass's for a player that follows
    /// the audio clock (its deadlines come from `hapticLatency` as it stands), else the one its
    /// start was moved back by. Does not allocate, lock or block.
    @inline(__always) func extraLead(_ s: Int) -> UInt64 {
        slots[s].startFrame >= 0 && !openLoop && audio != nil ? extraLead : slots[s].startExtraLead
    }
    /// How long after its release a command of slot `s` is felt: the configured latency and the
    /// slot's extra lead (`OutputCommand.extraLead`). Live parameters are timed by when they are
    /// felt, as a start's time and the audio's own controls are, so a command released for `t`
    /// reads them at `t` + this, and a breakpoint at `t` goes out this much before `t`. Does not
    /// allocate, lock or block.
    @inline(__always) func feltDelay(_ s: Int) -> UInt64 { feltDelay(extraLead: extraLead(s)) }
    /// How long after its release a command sent with `lead` (`OutputCommand.extraLead`) is
    /// felt: the one place the configured latency and a lead make that delay. Does not allocate,
    /// lock or block.
    @inline(__always) func feltDelay(extraLead lead: UInt64) -> UInt64 { configuredLatency &+ lead }
    /// When what is felt at `felt` is released, `delay` (`feltDelay`) before it; 0 for a felt
    /// time within `delay` of the clock's start. Does not allocate, lock or block.
    @inline(__always) static func release(felt: UInt64, delay: UInt64) -> UInt64 { felt > delay ? felt - delay : 0 }
    /// The engine's configured `hapticLatency`.
    let configuredLatency: UInt64
    /// The backend that may ask for more lead while playing.
    let leadSource: HapticLeadAdjusting?
    /// Whether the player in each slot has audio voices (written by the control side with the timeline).
    let hasAudio: UnsafeMutablePointer<Bool>
    /// Whether deadlines leave the audio clock after the start (`HapticEngine.AudioSync.openLoop`).
    let openLoop: Bool
    /// Live parameters and mutes by slot.
    let live: LiveParameters
    /// How late a level change may go out so that it goes with others (the backend's timing
    /// resolution; 0: each at its deadline).
    let levelSlack: UInt64
    /// The mixed level last pushed (live re-evaluations push only changes).
    var lastMix: (intensity: Float, sharpness: Float) = (0, 0)
    /// This thread's snapshot of the audio clock's fit (nil without audio).
    private var clockSnapshot: SeqLock<AudioClock.Fit>.Snapshot?
    /// Whether haptics wait for their sound through an underrun (`deadline`): only when they are
    /// released less than `underrunHoldLatency` ahead of it.
    private let holdsThroughUnderruns: Bool
    /// The clock's time at the current pass of `service`: a haptic held for its unwritten frame
    /// is looked at again a poll after it.
    private var passNow: UInt64 = 0

    init(capacity: Int, control: SPSCRing<ControlMessage>, output: SPSCRing<OutputCommand>,
         notifications: SPSCRing<EngineNotification>, notify: @escaping @Sendable () -> Void,
         wakeOutput: @escaping @Sendable () -> Void, audio: AudioDevice? = nil, hapticLatency: UInt64 = 0,
         leadSource: HapticLeadAdjusting? = nil, openLoop: Bool = false, live: LiveParameters? = nil, levelSlack: UInt64 = 0) {
        self.levelSlack = levelSlack
        self.audio = audio
        self.openLoop = openLoop
        holdsThroughUnderruns = hapticLatency < Self.underrunHoldLatency
        self.live = live ?? LiveParameters(slots: capacity)
        configuredLatency = hapticLatency
        self.leadSource = leadSource
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
        clockSnapshot = audio?.clock.snapshot()
    }

    deinit {
        timelines.deinitialize(count: capacity)
        timelines.deallocate()
        slots.deinitialize(count: capacity)
        slots.deallocate()
        hasAudio.deallocate()
    }

    // MARK: - Real-time (scheduler thread): the pass

    /// One scheduling pass at the clock's time; returns when the next pass is due (`UInt64.max`
    /// when nothing is scheduled): the next deadline, or for a level change (a level command, a
    /// live re-evaluation) up to `levelSlack` after its deadline, so that level changes close
    /// together go out in one pass. Whatever a pass releases goes out in deadline order. Does not
    /// allocate, lock or block.
    func service(clock: EngineClock) -> UInt64 {
        var pushed = false
        passNow = clock.now()
        if let leadSource {
            let asked = leadSource.extraLead
            if asked > extraLead { extraLead = asked }
        }
        while let message = control.pop() {
            handle(message, now: clock.now(), pushed: &pushed)
        }
        // Release what is due, earliest first across players.
        while true {
            let now = clock.now()
            passNow = now
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
        for s in 0..<capacity where slots[s].active { next = min(next, nextPass(s)) }
        return next
    }

    /// When slot `s` next needs a pass: its next event's time, or, when that only changes the
    /// level, up to `levelSlack` later, but no later than anything else the slot has before then
    /// (a tap among the level changes, its stop, end or wrap). Does not allocate, lock or block.
    private func nextPass(_ s: Int) -> UInt64 {
        let e = nextEvent(s)
        guard levelSlack > 0, isLevelChange(s, e.due) else { return e.time }
        var wake = e.time > .max - levelSlack ? .max : e.time + levelSlack
        let state = slots[s]
        let endPoint = endPoint(s)
        wake = min(wake, state.stopAt, deadline(s, endPoint.time))
        guard let timeline = timelines[s] else { return wake }
        return timeline._withUnsafeGuaranteedRef { tl in
            var i = state.next
            while i < tl.commands.count {
                let c = tl.commands[i]
                if endPoint.wraps, c.time >= endPoint.time { break }
                let t = deadline(s, c.time)
                if t >= wake { break }
                if c.kind == .transient { return t }
                i += 1
            }
            return wake
        }
    }

    /// Whether what slot `s` has due next only changes the level (a level command, a live
    /// re-evaluation). Does not allocate, lock or block.
    private func isLevelChange(_ s: Int, _ due: Due) -> Bool {
        switch due {
        case .live: return true
        case .command:
            guard let timeline = timelines[s] else { return false }
            let next = slots[s].next
            return timeline._withUnsafeGuaranteedRef { next < $0.commands.count && $0.commands[next].kind == .level }
        default: return false
        }
    }

    /// The earliest thing slot `s` has to do and when: the level at a sought offset, its next
    /// command (unless the stop or the loop's end comes first), a live-parameter re-evaluation,
    /// its stop or pause, its completion or its loop wrap. Does not allocate, lock or block.
    func nextEvent(_ s: Int) -> (time: UInt64, due: Due) {
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
            // Released `feltDelay` before the change is to be felt.
            let felt = live.nextHapticChange(slot: s, after: state.liveEvaluated)
            let t = felt == .max ? UInt64.max : Self.release(felt: felt, delay: feltDelay(s))
            if t < best.time { best = (t, .live) }
        }
        // A loop's next pass: its audio start goes out `audioWrapLead` before the wrap, while its
        // first frames are still unwritten (at the wrap itself they already are).
        if endPoint.wraps, state.startFrame >= 0, hasAudio[s], state.nextPassFrame < 0, audio != nil, state.stopAt > end {
            let t = end > Self.audioWrapLead ? end - Self.audioWrapLead : 0
            if t < best.time { best = (t, .audioWrap) }
        }
        return best
    }

    /// How long before a loop's wrap the next pass's audio start goes out, ns: more than any
    /// stream writes ahead (100 ms of buffer at most, `AdaptiveLatency`, and a graph cycle).
    static let audioWrapLead: UInt64 = 150_000_000

    // MARK: - Real-time (scheduler thread): pattern time ↔ engine time

    /// Engine ns that `seconds` of pattern time take at `rate` (wrapping-safe magnitude), 0 for a
    /// negative or NaN span and saturating at `UInt64.max` (a deadline that never comes) instead
    /// of trapping. Does not allocate, lock or block.
    @inline(__always) static func span(_ seconds: Double, rate: Double) -> UInt64 {
        UInt64(nanosecondsOf: seconds / rate)
    }

    /// The audio clock's fit as published now, nil without audio. Does not allocate, lock or block.
    @inline(__always) func audioFit() -> AudioClock.Fit? {
        guard let audio, clockSnapshot != nil else { return nil }
        audio.clock.refresh(&clockSnapshot!)
        return clockSnapshot!.value
    }

    /// The output frame of pattern time `patternTime` of slot `s` (which follows the audio). Does
    /// not allocate, lock or block.
    @inline(__always) func frame(_ s: Int, _ patternTime: Double, sampleRate: Double) -> Int64 {
        slots[s].startFrame + FrameTiming.frames(patternTime, rate: slots[s].rate, sampleRate: sampleRate)
    }

    /// Deadline of a pattern time of slot `s`: on the audio clock (the moment its frame is heard,
    /// less the haptic latency) when the player follows the audio, else on the monotonic clock.
    /// Through an underrun (the sound late by a gap nobody has measured yet), a haptic waits for
    /// its sound, looked at again `underrunPoll` from now:
    /// - while its frame, due within `underrunLead`, is still unwritten on a device that writes
    ///   ahead (`AudioDevice.writesAhead`): the writer is late; at most `underrunPatience` after
    ///   the device ran dry (a stream that stopped for good, the server gone, leaves the haptics
    ///   on the line: they go on without the sound);
    /// - once written late (the clock's floor, `AudioClock.noteWrite`), until a report taken after
    ///   the write places it, at most `underrunReportWait`; meanwhile no earlier than the floor.
    /// Only with a haptic latency under `underrunHoldLatency`: a haptic released further ahead
    /// (a drive mixed into the stream, whose frames carry it sample-locked to its sound) is
    /// committed before an underrun can be seen. Does not allocate, lock or block.
    @inline(__always) func deadline(_ s: Int, _ patternTime: Double) -> UInt64 {
        let state = slots[s]
        if state.startFrame >= 0, !openLoop, let audio {
            // Read before the fit: a floor published with these frames is then seen with them.
            let written = audio.nextWritableFrame
            let f = frame(s, patternTime, sampleRate: audio.sampleRate)
            if let fit = audioFit(), let heard = fit.time(ofFrame: f) {
                let t = heard > hapticLatency ? heard - hapticLatency : 0
                guard holdsThroughUnderruns else { return t }
                if f >= written, audio.writesAhead, t < passNow &+ Self.underrunLead,
                   let dry = fit.time(ofFrame: written), passNow < dry &+ Self.underrunPatience {
                    return passNow &+ Self.underrunPoll
                }
                if f >= fit.lateFrom, fit.observedAt <= fit.lateAt, passNow < fit.lateAt &+ Self.underrunReportWait {
                    return max(t, passNow &+ Self.underrunPoll)
                }
                return t
            }
        }
        return state.start &+ Self.span(patternTime, rate: state.rate)
    }

    /// How close to its deadline a haptic's frame may still be unwritten before the writer is
    /// taken to be late (`deadline`), ns.
    static let underrunLead: UInt64 = 1_000_000
    /// How often a haptic held through an underrun is looked at again, ns.
    static let underrunPoll: UInt64 = 250_000
    /// The haptic latency from which haptics no longer wait for their sound through an underrun, ns.
    static let underrunHoldLatency: UInt64 = 10_000_000
    /// How long after the device ran dry (the line's time of the first unwritten frame) haptics
    /// wait at most for the writer, ns.
    static let underrunPatience: UInt64 = 250_000_000
    /// How long after a late write its haptics wait at most for a report that places it, ns.
    static let underrunReportWait: UInt64 = 100_000_000

    /// The pattern time slot `s` has reached at engine time `time`. Does not allocate, lock or block.
    func offset(_ s: Int, at time: UInt64) -> Double {
        let state = slots[s]
        if state.startFrame >= 0, !openLoop, let audio, let frame = audioFit()?.frame(atTime: time &+ hapticLatency) {
            return Double(frame - state.startFrame) / audio.sampleRate * state.rate
        }
        return Double(Int64(bitPattern: time &- state.start)) / 1e9 * state.rate
    }

    /// The shortest loop that loops (pattern s): a shorter one (taps at 0, `loopEnd` 0) plays once.
    static let shortestLoop = 0.001

    /// Where slot `s` ends or wraps (pattern s), and whether it wraps: a loop wraps at its end,
    /// or later if the pass would take under `HapticPatternPlayer.minimumLoopPeriod` at the
    /// slot's rate (so every wrap moves the slot on by at least that much). Does not allocate,
    /// lock or block.
    @inline(__always) func endPoint(_ s: Int) -> (time: Double, wraps: Bool) {
        let state = slots[s]
        guard state.loopEnabled else { return (state.endTime, false) }
        let end = state.loopEnd > 0 ? state.loopEnd : state.endTime
        guard end >= Self.shortestLoop else { return (state.endTime, false) }
        // The last pass of a counted loop ends where a pass would wrap, and the run with it.
        if state.passesLeft == 1 { return (max(end, state.rate * HapticPatternPlayer.minimumLoopPeriod), false) }
        return (max(end, state.rate * HapticPatternPlayer.minimumLoopPeriod), true)
    }

    /// The output frame heard at `time`, or the first frame a start can still begin at
    /// (`AudioDevice.earliestStartFrame`) if that one has gone by: an immediate start waits for
    /// the output latency, so that what is felt and what is heard stay together. Nil before the
    /// audio clock's first fit. Does not allocate, lock or block.
    func audibleFrame(at time: UInt64) -> Int64? {
        guard let audio, let heard = audioFit()?.frame(atTime: time) else { return nil }
        return max(heard, audio.earliestStartFrame)
    }

    /// Tells the audio thread to stop slot `s`'s voices at its stop time (a stop or pause about to
    /// happen). Does not allocate, lock or block.
    func sendAudioStop(_ s: Int, at time: UInt64) {
        if slots[s].startFrame >= 0, hasAudio[s], let audio, let frame = audioFit()?.frame(atTime: time &+ hapticLatency) {
            audio.messages.push(AudioMessage(kind: .stop, slot: Int32(s), frame: frame))
        }
    }

    /// Pushes a notification and wakes the notifier. Does not allocate, lock or block.
    func post(_ event: EngineNotification.Event, slot s: Int, player: UInt32) {
        notifications.push(EngineNotification(event: event, slot: Int32(s), player: player, outputMark: output.pushedCount))
        notify()
    }
}
