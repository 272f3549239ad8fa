import Foundation
import HapSyncAHAP
import HapSyncCore

/// Players: making them, playing patterns and feedback once, and the calls players make.
extension HapticEngine {
    /// Makes a player for a pattern (compiled here: allocation happens now, not when it starts).
    /// `audioFiles` maps each `EventWaveformPath` to its resolved file; with an audio device the
    /// files are decoded now and the player follows the audio clock.
    public func makePlayer(with pattern: AHAPPattern, options: RenderOptions = RenderOptions(),
                           audioFiles: [String: URL] = [:]) throws -> HapticPatternPlayer {
        let playable = try PlayablePattern(.init(pattern: pattern, name: "pattern", audioFiles: audioFiles), options: options)
        return try makePlayer(timeline: playable.timeline, audioFiles: audioFiles)
    }

    /// Makes a player for a compiled timeline; with an audio device and audio voices, its files
    /// (`audioFiles`: waveform path → file) are decoded now and the player follows the audio clock.
    public func makePlayer(timeline: PatternTimeline, audioFiles: [String: URL] = [:]) throws -> HapticPatternPlayer {
        var audio: PlayerAudio?
        if let device = configuration.audio, !timeline.voices.isEmpty, !configuration.playsHapticsOnly {
            audio = try device.load(timeline, files: audioFiles)
        }
        let (slot, id) = try control.withLock { state throws(EngineError) -> (Int, UInt32) in
            guard let slot = state.freeSlots.popLast() else { throw .tooManyPlayers(limit: configuration.maxPlayers) }
            let id = state.nextPlayerID
            state.nextPlayerID &+= 1
            return (slot, id)
        }
        // The scheduler reads this slot only after a start message, which the ring orders after these writes.
        scheduler.timelines[slot] = Unmanaged.passRetained(timeline)
        scheduler.hasAudio[slot] = audio != nil
        if let audio, let device = configuration.audio {
            let retained = Unmanaged.passRetained(audio)
            control.withLock { state in
                state.audioBySlot[slot] = retained
                state.audible.insert(id)
            }
            device.setSource(slot: slot, retained)
        }
        live.clear(slot: slot, unmute: true)
        let player = HapticPatternPlayer(engine: self, slot: slot, id: id, timeline: timeline)
        control.withLock { $0.players[slot] = WeakPlayer(player: player) }
        return player
    }

    /// Reads an AHAP file, compiles it and plays it once, now (Core Haptics' `playPattern(from:)`).
    /// Audio files are looked up in the file's folder, then in `resources`. A file with errors
    /// throws `PlayablePattern.LoadError` with every finding.
    public func playPattern(from url: URL, resources: [URL] = []) throws {
        let playable = try PlayablePattern(contentsOf: url, resources: resources)
        try playOnce(try makePlayer(timeline: playable.timeline, audioFiles: playable.audioFiles))
    }

    /// Compiles a pattern and plays it once, now (checked as `makePlayer(with:)` checks it; audio
    /// events' files from `audioFiles`).
    public func playPattern(_ pattern: AHAPPattern, audioFiles: [String: URL] = [:]) throws {
        try playOnce(try makePlayer(with: pattern, audioFiles: audioFiles))
    }

    /// Makes a player with pause, resume, seek, looping and playback rate (Core Haptics'
    /// `makeAdvancedPlayer(with:)`; every HapSync player has them).
    public func makeAdvancedPlayer(with pattern: AHAPPattern, options: RenderOptions = RenderOptions(),
                                   audioFiles: [String: URL] = [:]) throws -> HapticAdvancedPatternPlayer {
        try makePlayer(with: pattern, options: options, audioFiles: audioFiles)
    }

    /// Plays a built-in feedback style now (SwiftUI's `sensoryFeedback`, `hapsync feedback NAME`).
    /// With a `source`, the policy's per-source rate limit applies: a second call from the same
    /// source within the interval merges into the first (returns false) instead of stacking.
    @discardableResult
    public func play(_ feedback: SensoryFeedback, source: String? = nil) throws -> Bool {
        let player = try makePlayer(with: feedback.pattern)
        player.source = source
        return try playOnce(player)
    }

    /// Starts `player` now as a one-shot: the engine keeps it alive until it ends (the notifier
    /// drops it after its completion), and drops it at once if it never starts (merged by the
    /// rate limit, or the start threw), so its slot is freed.
    @discardableResult
    private func playOnce(_ player: HapticPatternPlayer) throws -> Bool {
        // Kept before the start: a start can end (and be reported) before `start` returns.
        control.withLock { $0.oneShots[player.id] = player }
        let started: Bool
        do { started = try player.start(atTime: HapticEngine.timeImmediate) } catch {
            _ = control.withLock { $0.oneShots.removeValue(forKey: player.id) }
            throw error
        }
        if !started { _ = control.withLock { $0.oneShots.removeValue(forKey: player.id) } }
        return started
    }

    // MARK: - Player support

    /// The latest engine time a call can name (2^62 ns, 146 years of uptime): later times are
    /// this one, a moment that never comes, and deadlines computed from it (plus a pattern's span)
    /// cannot wrap around the scheduler's 64-bit arithmetic.
    static let farFuture: UInt64 = 1 << 62

    /// Engine ns for a Core Haptics-style time: `timeImmediate` (or any past time) means now; a
    /// time past `farFuture` (or infinite) is `farFuture`.
    func engineNanoseconds(_ time: TimeInterval) -> UInt64 {
        let now = configuration.clock.now()
        guard time > 0, !time.isNaN else { return now }
        return max(min(UInt64(nanosecondsOf: time), Self.farFuture), now)
    }

    /// Posts a message to the scheduler and wakes it; never waits for it. False when the control
    /// queue was full (the message lost, and counted as an overflow).
    @discardableResult
    func send(_ message: ControlMessage) -> Bool {
        // Producers (any API thread) take turns; the scheduler consumes without a lock.
        let pushed = control.withLock { _ in controlRing.push(message) }
        schedulerWake.post()
        return pushed
    }

    /// Starts the engine again if the idle timer stopped it; else requires it to be running.
    private func ensureRunning() throws(EngineError) {
        if isRunning { return }
        if control.withLock({ $0.idleStopped }) { try start(); return }
        throw .notRunning
    }

    /// Whether player `id` plays or a start or resume of it waits for the scheduler.
    func isPlaying(_ id: UInt32) -> Bool {
        control.withLock { $0.active.contains(id) || $0.pendingStarts[id] != nil }
    }

    /// Starts (or resumes) a player: the per-source rate limit may merge it (returns false).
    func startPlayer(slot: Int, id: UInt32, at time: TimeInterval, kind: ControlMessage.Kind = .start, offset: Double = 0,
                     source: String? = nil, frame: Int64 = -1) throws(EngineError) -> Bool {
        try ensureRunning()
        let when = engineNanoseconds(time)
        let (accepted, audible) = control.withLock { state -> (Bool, Bool) in
            let audible = state.audioBySlot[slot] != nil
            if let source, state.policy.rateLimitInterval > 0 {
                if let last = state.lastStartBySource[source], when >= last, when - last < UInt64(nanosecondsOf: state.policy.rateLimitInterval) {
                    state.merged += 1
                    return (false, audible)
                }
                state.lastStartBySource[source] = when
            }
            state.pendingStarts[id, default: 0] += 1
            state.lastActivity = configuration.clock.now()
            if audible { configuration.audio?.audiblePlayersActive(true) }
            return (true, audible)
        }
        guard accepted else { return false }
        // A stream paused while nothing sounded runs again before the scheduler places the start.
        if audible { configuration.audio?.willPlay() }
        if kind == .start { live.clear(slot: slot) }
        guard send(ControlMessage(kind: kind, slot: Int32(slot), player: id, time: when, value: offset, frame: frame)) else { throw .controlQueueFull }
        return true
    }

    /// Stops or pauses a player at `time`.
    func stopPlayer(slot: Int, id: UInt32, at time: TimeInterval, pause: Bool = false) throws(EngineError) {
        guard isRunning else { throw .notRunning }
        send(ControlMessage(kind: pause ? .pause : .stop, slot: Int32(slot), player: id, time: engineNanoseconds(time)))
    }

    /// Moves a player's run that has released nothing yet to start at `time`, or drops it
    /// (`drop`); a run that released something, or has ended, is left as it is (`ControlMessage.Kind.move`).
    /// With a `frame` (≥ 0), the run starts on that audio output frame (`ControlMessage.frame`).
    func movePendingRun(slot: Int, id: UInt32, to time: TimeInterval, frame: Int64 = -1, drop: Bool) throws(EngineError) {
        guard isRunning else { throw .notRunning }
        guard send(ControlMessage(kind: .move, slot: Int32(slot), player: id, time: engineNanoseconds(time), flag: drop, frame: frame)) else {
            throw .controlQueueFull
        }
    }

    /// Sends a player setting (seek, rate, loop, refresh) to the scheduler; on a stopped engine it
    /// waits in the control ring for the next start (the scheduler keeps settings across starts).
    func sendPlayer(_ kind: ControlMessage.Kind, slot: Int, id: UInt32, value: Double = 0, flag: Bool = false, count: UInt32 = 0) {
        send(ControlMessage(kind: kind, slot: Int32(slot), player: id, time: configuration.clock.now(), value: value, flag: flag, count: count))
    }

    /// A player object went away: its slot is given back (after the scheduler has let go of it).
    func retire(slot: Int, id: UInt32) {
        let running = control.withLock { state -> Bool in
            state.players[slot] = nil
            state.audible.remove(id)
            return state.running
        }
        if running {
            send(ControlMessage(kind: .retire, slot: Int32(slot), player: id, time: configuration.clock.now()))
            if configuration.threading == .manual { pump() }
        } else {
            freeSlot(slot)
        }
    }

    /// Gives a slot back: its timeline and audio are released (audio when the engine stops, as
    /// the audio thread may still be fading it out).
    func freeSlot(_ slot: Int) {
        scheduler.timelines[slot]?.release()
        scheduler.timelines[slot] = nil
        scheduler.hasAudio[slot] = false
        configuration.audio?.setSource(slot: slot, nil)
        control.withLock { state in
            if let audio = state.audioBySlot.removeValue(forKey: slot) { state.retiredAudio.append(audio) }
            state.freeSlots.append(slot)
        }
    }
}
