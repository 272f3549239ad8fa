import HapSyncCore

/// Doing what a slot has due: releasing commands (mixed across players, live parameters applied),
/// stops, pauses, completions, loop wraps and live re-evaluations.
extension Scheduler {
    // MARK: - Real-time (scheduler thread)

    /// Does what slot `s` has due. Does not allocate, lock or block.
    func fire(_ s: Int, _ event: (time: UInt64, due: Due), now: UInt64, pushed: inout Bool) {
        let state = slots[s]
        guard let timeline = timelines[s] else { slots[s].active = false; return }
        switch event.due {
        case .stop:
            if state.stopIsPause {
                let reached = min(max(0, offset(s, at: state.stopAt)), endPoint(s).time)
                finish(s, at: state.stopAt, now: now, kind: .paused, pushed: &pushed)
                slots[s].pausedOffset = reached
                slots[s].paused = true
                post(.paused(offset: reached), slot: s, player: state.player)
                // A stop asked for a time after this pause: before the resume (or with none), it
                // stops the paused player (the resume then plays from the top); after it, it ends
                // the run the resume starts.
                let stopWhilePaused = state.stopAfterPause != .max && state.stopAfterPause <= state.resumeAt
                if stopWhilePaused {
                    slots[s].pausedOffset = 0
                    endPausedRun(s, at: state.stopAfterPause)
                    // The resume then begins a new run: by time, as `.resume`'s new runs are.
                    slots[s].anchored = false
                }
                if state.resumeAt != .max {
                    // A resume was asked for a time after this pause.
                    begin(s, player: state.player, at: state.resumeAt, offset: stopWhilePaused ? 0 : reached, now: now, pushed: &pushed)
                    post(.began(playing: slots[s].active), slot: s, player: state.player)
                    if !stopWhilePaused, state.stopAfterPause != .max, slots[s].active {
                        slots[s].stopAt = state.stopAfterPause
                        sendAudioStop(s, at: state.stopAfterPause)
                    }
                }
            } else {
                finish(s, at: state.stopAt, now: now, kind: .stopped, pushed: &pushed)
            }
        case .end:
            finish(s, at: event.time, now: now, kind: .finished, pushed: &pushed)
        case .wrap:
            // The loop's end: pattern time `end` becomes pattern time 0 of the next pass, at
            // least `minimumLoopPeriod` on (`endPoint`). A pass that would not move the slot on
            // (which bounded loop ends and rates rule out) ends the run instead of spinning.
            let end = endPoint(s).time
            let pass = Self.span(end, rate: state.rate)
            guard pass > 0, pass < HapticEngine.farFuture else {
                finish(s, at: event.time, now: now, kind: .finished, pushed: &pushed)
                return
            }
            slots[s].start = state.start &+ pass
            slots[s].next = 0
            if state.passesLeft > 1 { slots[s].passesLeft = state.passesLeft - 1 }
            slots[s].seekLevelPending = false
            if state.intensity != 0 {
                slots[s].intensity = 0
                pushMixedLevel(scheduled: event.time, released: now, player: state.player, patternTime: end, extraLead: extraLead(s),
                               pushed: &pushed)
            }
            if state.startFrame >= 0, let audio {
                let zero = frame(s, end, sampleRate: audio.sampleRate)
                slots[s].startFrame = zero
                // Sent ahead (`audioWrap`) unless the pass moved since; none for a slot without voices.
                if hasAudio[s], state.nextPassFrame != zero {
                    audio.messages.push(AudioMessage(kind: .start, slot: Int32(s), frame: zero, from: zero, rate: state.rate))
                }
                slots[s].nextPassFrame = -1
                post(.startedOnAudio(frame: zero), slot: s, player: state.player)
            }
        case .audioWrap:
            // The next pass's voices, starting at the wrap's frame (the mixer ends this pass's
            // there); the wrap itself then only moves the slot on.
            if let audio {
                let zero = frame(s, endPoint(s).time, sampleRate: audio.sampleRate)
                audio.messages.push(AudioMessage(kind: .start, slot: Int32(s), frame: zero, from: zero, rate: state.rate))
                slots[s].nextPassFrame = zero
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
                pushMixedLevel(scheduled: event.time, released: now, player: state.player, patternTime: state.seekOffset,
                               extraLead: extraLead(s), pushed: &pushed)
            }
        case .live:
            // Released `feltDelay` before the breakpoint (`nextEvent`), which is felt then.
            let delay = feltDelay(s)
            var felt = event.time &+ delay
            if now > event.time &+ levelSlack {
                // Behind (a start or seek inside the latency while a curve runs, a late pass):
                // the changes whose release has passed as well go out as one level, the last,
                // rather than one each (a curve's every millisecond) all at once.
                var steps = 0
                while steps < Self.liveCatchUpSteps {
                    let next = live.nextHapticChange(slot: s, after: felt)
                    guard next != .max, next > felt, next <= now &+ delay else { break }
                    felt = next
                    steps += 1
                }
            }
            slots[s].liveEvaluated = felt
            pushLiveLevel(at: Self.release(felt: felt, delay: delay), now: now, player: state.player, extraLead: extraLead(s), pushed: &pushed)
        case .command:
            let c: HapticCommand = timeline._withUnsafeGuaranteedRef { $0.commands[state.next] }
            slots[s].next += 1
            switch c.kind {
            case .transient:
                let felt = event.time &+ feltDelay(s)
                let intensity = live.isMuted(slot: s) ? 0 : Float(live.applied(.hapticIntensity, slot: s, at: felt, to: c.intensity))
                guard intensity > 0 else {
                    // Relaxed: a statistic, read after the run.
                    skippedTransients.add(1, ordering: .relaxed)
                    break
                }
                let sharpness = Float(live.applied(.hapticSharpness, slot: s, at: felt, to: c.sharpness))
                pushed = output.push(OutputCommand(scheduled: event.time, released: now, player: state.player, kind: .transient,
                                                   intensity: intensity, sharpness: sharpness, patternTime: c.time,
                                                   frame: audioFrame(s, c.time), extraLead: extraLead(s))) || pushed
            case .level:
                slots[s].intensity = Float(c.intensity)
                slots[s].sharpness = Float(c.sharpness)
                pushMixedLevel(scheduled: event.time, released: now, player: state.player, patternTime: c.time,
                               frame: audioFrame(s, c.time), extraLead: extraLead(s), pushed: &pushed)
            }
        }
    }

    /// The audio output frame of pattern time `patternTime` of slot `s`, or −1 when the slot does
    /// not follow the audio (`OutputCommand.frame`). Does not allocate, lock or block.
    @inline(__always) func audioFrame(_ s: Int, _ patternTime: Double) -> Int64 {
        guard slots[s].startFrame >= 0, let audio else { return -1 }
        return frame(s, patternTime, sampleRate: audio.sampleRate)
    }

    /// At most how many live changes one late `.live` event passes over (a curve's 1 ms steps:
    /// 100 s behind), so that a pass stays bounded.
    static let liveCatchUpSteps = 100_000

    /// How a slot's run ends.
    enum Ending { case finished, stopped, paused }

    /// Ends slot `s`: silences its level (re-mixing the others) and reports it (unless `report`
    /// is false: a restart, which is not an ending the caller asked about; a pause is reported by
    /// its caller with the offset reached). Does not allocate, lock or block.
    func finish(_ s: Int, at time: UInt64, now: UInt64, kind: Ending, pushed: inout Bool,
                emitLevel: Bool = true, report: Bool = true) {
        let state = slots[s]
        slots[s].active = false
        slots[s].seekLevelPending = false
        if kind != .finished { sendAudioStop(s, at: time) }
        if emitLevel, state.intensity != 0 {
            slots[s].intensity = 0
            let patternTime = Double(Int64(bitPattern: time &- state.start)) / 1e9 * state.rate
            pushMixedLevel(scheduled: time, released: now, player: state.player, patternTime: patternTime, extraLead: extraLead(s),
                           pushed: &pushed)
        }
        slots[s].intensity = 0
        guard report else { return }
        switch kind {
        case .finished: post(.finished(at: time), slot: s, player: state.player)
        case .stopped: post(.stopped(at: time), slot: s, player: state.player)
        case .paused: break
        }
    }

    /// The mix of every active player's level, with live parameters as they stand at `time` (a
    /// felt time, `feltDelay`) and mutes applied. Does not allocate, lock or block.
    private func mix(felt time: UInt64) -> (intensity: Float, sharpness: Float) {
        var sum = 0.0, weighted = 0.0, contributors = 0, lone = (0.0, 0.0)
        for i in 0..<capacity where slots[i].intensity > 0 {
            if live.isMuted(slot: i) { continue }
            let intensity = live.applied(.hapticIntensity, slot: i, at: time, to: Double(slots[i].intensity))
            let sharpness = live.applied(.hapticSharpness, slot: i, at: time, to: Double(slots[i].sharpness))
            guard intensity > 0 else { continue }
            sum += intensity
            weighted += intensity * sharpness
            contributors += 1
            lone = (intensity, sharpness)
        }
        switch contributors {
        case 0: return (0, 0)
        case 1: return (Float(lone.0), Float(lone.1))
        default:
            let mixed = PatternTimeline.combine(sum, weighted)
            return (Float(mixed.intensity), Float(mixed.sharpness))
        }
    }

    /// Pushes the mix of every active player's level (and the one just silenced). A lone
    /// contributor passes through unchanged, so a single player's stream equals its render.
    /// `frame`: the audio frame of the event that caused it (`OutputCommand.frame`), −1 if none;
    /// `extraLead`: that event's slot's (`extraLead(_:)`), the pass's when nil. Does not
    /// allocate, lock or block.
    func pushMixedLevel(scheduled: UInt64, released: UInt64, player: UInt32, patternTime: Double, frame: Int64 = -1,
                        extraLead: UInt64? = nil, pushed: inout Bool) {
        let lead = extraLead ?? self.extraLead
        let m = mix(felt: scheduled &+ feltDelay(extraLead: lead))
        lastMix = m
        pushed = output.push(OutputCommand(scheduled: scheduled, released: released, player: player, kind: .level,
                                           intensity: m.intensity, sharpness: m.sharpness, patternTime: patternTime, frame: frame,
                                           extraLead: lead)) || pushed
    }

    /// Pushes the mix again, released for `time` with `extraLead`, if live parameters or mutes
    /// changed it. Does not allocate, lock or block.
    func pushLiveLevel(at time: UInt64, now: UInt64, player: UInt32, extraLead: UInt64, pushed: inout Bool) {
        let m = mix(felt: time &+ feltDelay(extraLead: extraLead))
        // Field by field: `!=` on a tuple is generic and instantiates tuple metadata (debug builds).
        guard m.intensity != lastMix.intensity || m.sharpness != lastMix.sharpness else { return }
        lastMix = m
        pushed = output.push(OutputCommand(scheduled: time, released: now, player: player, kind: .level,
                                           intensity: m.intensity, sharpness: m.sharpness, patternTime: -1, extraLead: extraLead)) || pushed
    }
}
