import HapSyncCore

/// Control messages: starts, stops, pauses, seeks and settings, applied on the scheduler thread.
extension Scheduler {
    // MARK: - Real-time (scheduler thread)

    /// Applies one control message. Does not allocate, lock or block.
    func handle(_ m: ControlMessage, now: UInt64, pushed: inout Bool) {
        let s = Int(m.slot)
        if m.kind == .refresh, s == -1 {
            // Policy or engine mute changed: send the current mix again (the output stage applies them).
            pushMixedLevel(scheduled: now, released: now, player: 0, patternTime: -1, pushed: &pushed)
            return
        }
        if m.kind == .stopAll {
            stopAll(now: now, pushed: &pushed)
            return
        }
        guard s >= 0, s < capacity else { return }
        // Messages that act "now" (a seek, a rate, loop or live change) act on the player as it
        // was when they were sent: what it had due by then is done first.
        let actsWhenSent = m.kind == .seek || m.kind == .setRate || m.kind == .setLoop || m.kind == .refresh
        settle(s, now: now, sentAt: actsWhenSent ? min(m.time, now) : nil, pushed: &pushed)
        switch m.kind {
        case .start:
            // A new run plays the loop's whole count again.
            slots[s].passesLeft = slots[s].loopPasses
            slots[s].anchored = m.frame >= 0 && !hasAudio[s]
            begin(s, player: m.player, at: m.time, offset: m.value, frame: m.frame, now: now, pushed: &pushed, reportRestart: true)
            post(.began(playing: slots[s].active), slot: s, player: m.player)
        case .resume:
            // Resuming a paused run keeps its passes left; a resume that begins a run counts afresh.
            // A new run is by time, as a plain start's is (an anchored run's resume carries it on).
            if !slots[s].active, !slots[s].paused {
                slots[s].passesLeft = slots[s].loopPasses
                slots[s].anchored = false
            }
            if !slots[s].active {
                begin(s, player: m.player, at: m.time, offset: slots[s].pausedOffset, now: now, pushed: &pushed)
            } else if slots[s].stopIsPause, slots[s].stopAt != .max, m.time >= slots[s].stopAt {
                // Playing, with a pause still to come before the resume's time: the pause comes at
                // its time, and playing starts again from where it paused at the resume's time.
                slots[s].resumeAt = m.time
            }
            // Otherwise it plays at the resume's time already: nothing to do.
            post(.began(playing: slots[s].active), slot: s, player: m.player)
        case .stop, .pause:
            if slots[s].active, slots[s].player == m.player {
                if m.time <= slots[s].stopAt {
                    slots[s].stopIsPause = m.kind == .pause
                    if m.kind == .stop { slots[s].resumeAt = .max; slots[s].stopAfterPause = .max }
                } else if m.kind == .stop, slots[s].stopIsPause {
                    // A stop after a pending pause is not lost: it ends what the resume plays.
                    slots[s].stopAfterPause = min(slots[s].stopAfterPause, m.time)
                }
                slots[s].stopAt = min(slots[s].stopAt, m.time)
                sendAudioStop(s, at: slots[s].stopAt)
            } else if m.kind == .stop {
                slots[s].pausedOffset = 0
                endPausedRun(s, at: now)
            }
        case .seek:
            if slots[s].active {
                // Playing now (a stop or pause may be pending later): jump at once; the pending
                // stop or pause still comes at its time, from the new place.
                keepingPendingStop(s) { begin(s, player: m.player, at: now, offset: m.value, now: now, pushed: &pushed) }
            } else {
                slots[s].pausedOffset = max(0, m.value)
            }
        case .setRate:
            let rate = m.value.clamped(to: HapticPatternPlayer.playbackRates)
            if slots[s].active {
                keepingPendingStop(s) { reanchor(s, rate: rate, now: now) }
            } else {
                slots[s].rate = rate
            }
        case .setLoop:
            slots[s].loopEnabled = m.flag
            slots[s].loopEnd = m.value.isNaN ? 0 : m.value.clamped(to: HapticPatternPlayer.loopEnds)
            slots[s].loopPasses = Int(m.count)
            slots[s].passesLeft = Int(m.count)
            cancelNextPassAudio(s)
        case .refresh:
            // What is released now is felt `feltDelay` from now: the controls as they stand then.
            if slots[s].active {
                slots[s].liveEvaluated = now &+ feltDelay(s)
                pushLiveLevel(at: now, now: now, player: slots[s].player, extraLead: extraLead(s), pushed: &pushed)
            }
        case .move:
            // Only a run that has released nothing, has no audio and does not loop (a pass that
            // wrapped starts at command 0 again): a later start would play what went out a
            // second time. A command due but not yet released when the message comes moves with
            // the run: it has not gone out. One started on an output frame moves to the
            // message's frame (or, without one, to the frame heard at its time).
            guard slots[s].active, slots[s].player == m.player, slots[s].next == 0, !slots[s].seekLevelPending, !slots[s].loopEnabled,
                  !hasAudio[s], slots[s].stopAt == .max else { break }
            if m.flag {
                finish(s, at: now, now: now, kind: .stopped, pushed: &pushed, emitLevel: false)
            } else {
                if m.frame >= 0 { slots[s].anchored = true }
                begin(s, player: m.player, at: m.time, offset: 0, frame: m.frame, now: now, pushed: &pushed)
            }
        case .retire:
            if slots[s].active { finish(s, at: now, now: now, kind: .stopped, pushed: &pushed) }
            slots[s] = SlotState()
            post(.retired, slot: s, player: m.player)
        case .stopAll:
            break
        }
    }

    /// Stops every player now and tells the backend and the audio thread to stop everything.
    /// Does not allocate, lock or block.
    private func stopAll(now: UInt64, pushed: inout Bool) {
        for i in 0..<capacity where slots[i].active {
            slots[i].intensity = 0
            finish(i, at: now, now: now, kind: .stopped, pushed: &pushed, emitLevel: false)
        }
        for i in 0..<capacity { endPausedRun(i, at: now) }
        lastMix = (0, 0)
        pushed = output.push(OutputCommand(scheduled: now, released: now, player: 0, kind: .stopAll,
                                           intensity: 0, sharpness: 0, patternTime: -1)) || pushed
        audio?.messages.push(AudioMessage(kind: .stopAll, slot: -1, frame: 0))
    }

    /// Makes the next message to slot `s` act on the player as it is when it takes effect, even
    /// when this pass has not reached that yet:
    /// - always: a stop or pause due by `now` is done, with what the slot has due before it, in
    ///   time order, so a `seek` or `resume` sent right after `pause(atTime: now)` acts on the
    ///   paused player;
    /// - for a message that acts when sent (`sentAt`): everything due by then is done first, so a
    ///   `seek` sent right after `start(atTime: timeImmediate)` jumps after the start's first
    ///   commands.
    /// Does not allocate, lock or block.
    func settle(_ s: Int, now: UInt64, sentAt: UInt64? = nil, pushed: inout Bool) {
        // Each pass releases one due thing; a stop ends the slot.
        while slots[s].active {
            let event = nextEvent(s)
            guard slots[s].stopAt <= now || sentAt.map({ event.time <= $0 }) == true else { break }
            fire(s, event, now: now, pushed: &pushed)
        }
    }

    /// Ends slot `s`'s paused run, if it has one, reporting it as stopped at `time`: every run
    /// that began ends with one report, paused in between or not. Does not allocate, lock or block.
    func endPausedRun(_ s: Int, at time: UInt64) {
        guard slots[s].paused else { return }
        slots[s].paused = false
        post(.stopped(at: time), slot: s, player: slots[s].player)
    }

    /// Runs `change` (which restarts slot `s`'s timing) and then schedules again the stop or
    /// pause that was pending (and a resume waiting for it), with its audio stop for the voices the
    /// change started. Does not allocate, lock or block.
    private func keepingPendingStop(_ s: Int, _ change: () -> Void) {
        let (stopAt, isPause, resumeAt, later) = (slots[s].stopAt, slots[s].stopIsPause, slots[s].resumeAt, slots[s].stopAfterPause)
        change()
        guard stopAt != .max, slots[s].active else { return }
        slots[s].stopAt = stopAt
        slots[s].stopIsPause = isPause
        slots[s].resumeAt = resumeAt
        slots[s].stopAfterPause = later
        sendAudioStop(s, at: stopAt)
    }

    /// Starts slot `s` so that pattern offset `offset` falls at `time` (the player's settings
    /// — rate, loop — are kept). Does not allocate, lock or block.
    /// A player that follows the audio clock (its own audio, or `anchored`) has `offset` fall on
    /// output frame `frame` when given (≥ 0, an anchored player's), else on the frame heard at
    /// `time`; only one with audio has its voices started there.
    /// A fresh start of a playing player reports the run it ends as stopped (`reportRestart`); a
    /// seek or a rate change continues the same run and reports nothing.
    func begin(_ s: Int, player: UInt32, at time: UInt64, offset: Double, frame anchor: Int64 = -1, now: UInt64, pushed: inout Bool,
               reportRestart: Bool = false) {
        guard let timeline = timelines[s] else { return }
        if slots[s].active { finish(s, at: now, now: now, kind: .stopped, pushed: &pushed, report: reportRestart) }
        // A fresh start ends a paused run (reported); a resume or seek carries it on.
        if reportRestart { endPausedRun(s, at: now) }
        slots[s].paused = false
        let endTime = timeline._withUnsafeGuaranteedRef { $0.end }
        let o = min(max(0, offset), max(endTime, endPoint(s).time))
        var state = slots[s]
        state.active = true
        state.player = player
        state.startFrame = -1
        state.nextPassFrame = -1
        state.endTime = endTime
        state.stopAt = .max
        state.stopIsPause = false
        state.resumeAt = .max
        state.stopAfterPause = .max
        state.intensity = 0
        state.sharpness = 0
        state.pausedOffset = 0
        state.liveEvaluated = max(time, now)
        state.start = time &- Self.span(o, rate: state.rate)
        // Released the haptic latency early, as audio followers are (their deadlines below): what
        // the haptic output needs to be felt on time (a waveform stream's buffer, a pad's delay).
        state.start = state.start > hapticLatency ? state.start - hapticLatency : 0
        state.startExtraLead = extraLead
        state.next = timeline._withUnsafeGuaranteedRef { firstCommand($0, atOrAfter: o) }
        state.seekLevelPending = o > 0
        state.seekOffset = o
        let anchored = state.anchored && !hasAudio[s]
        if hasAudio[s] || anchored, let audio, let frame = anchored && anchor >= 0 ? anchor : audibleFrame(at: time) {
            let zero = frame - FrameTiming.frames(o, rate: state.rate, sampleRate: audio.sampleRate)
            state.startFrame = zero
            // Without a fit yet (an anchored start), the start by time above stands.
            if let heard = audioFit()?.time(ofFrame: frame) {
                state.start = heard &- Self.span(o, rate: state.rate)
                if openLoop, state.start > hapticLatency { state.start -= hapticLatency }
            }
            if hasAudio[s] { audio.messages.push(AudioMessage(kind: .start, slot: Int32(s), frame: zero, from: frame, rate: state.rate)) }
            post(.startedOnAudio(frame: zero), slot: s, player: player)
        }
        slots[s] = state
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

    /// Changes the rate of playing slot `s` at `now`, keeping the offset reached: what was
    /// released stays released, the level holds, the rest follows at the new rate. Audio voices
    /// restart part-way at the new timing. Does not allocate, lock or block.
    private func reanchor(_ s: Int, rate: Double, now: UInt64) {
        let o = offset(s, at: now)
        slots[s].rate = rate
        slots[s].start = now &- Self.span(o, rate: rate)
        if slots[s].startFrame >= 0, let audio, let frame = audibleFrame(at: now &+ hapticLatency) {
            let zero = frame - FrameTiming.frames(o, rate: rate, sampleRate: audio.sampleRate)
            slots[s].startFrame = zero
            // This start ends whatever the slot had sent ahead.
            slots[s].nextPassFrame = -1
            if hasAudio[s] { audio.messages.push(AudioMessage(kind: .start, slot: Int32(s), frame: zero, from: frame, rate: rate)) }
            post(.startedOnAudio(frame: zero), slot: s, player: slots[s].player)
        }
    }

    /// The loop changed after the next pass's audio went out ahead (`Due.audioWrap`): unless the
    /// pass still wraps at that frame, this pass's voices are started again from there (ending
    /// the next pass's, which never sound) and the next pass is sent again when due. Does not
    /// allocate, lock or block.
    private func cancelNextPassAudio(_ s: Int) {
        let state = slots[s]
        guard state.nextPassFrame >= 0, hasAudio[s], let audio else { return }
        let end = endPoint(s)
        if end.wraps, frame(s, end.time, sampleRate: audio.sampleRate) == state.nextPassFrame { return }
        audio.messages.push(AudioMessage(kind: .start, slot: Int32(s), frame: state.startFrame, from: state.nextPassFrame, rate: state.rate))
        slots[s].nextPassFrame = -1
    }
}
