import Dispatch
import Foundation
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime

/// One `play` run: its loops played by one player that the engine's scheduler loops
/// (`setLoop(_:end:passes:)`: each pass starts where the last ends, on the audio's own frames), a
/// progress line on a terminal, and the signals that end a run.
///
/// The engine's own events are not interruptions: when the audio server goes away haptics go on,
/// and when it comes back (desktops restart PulseAudio and pipewire-pulse on their own) the engine
/// restarts, which stops the player; the session then carries on from where the pattern had got
/// to, with a new player on the new stream. A backend that fails, or a rumble pad unplugged with
/// nothing else to play to, ends the run as a failure saying so.
final class PlaySession: @unchecked Sendable {
    /// How a playback session ended.
    enum Outcome: Equatable {
        case completed
        /// A signal ended it (its number).
        case interrupted(signal: Int32)
        case failure(String)
    }

    let engine: HapticEngine
    let timeline: PatternTimeline
    let audioFiles: [String: URL]
    let loops: Int
    let console: HapSyncCLI.Console
    let signals: SignalWatch
    /// Pattern seconds per second, and where the first loop starts (pattern s).
    let playbackRate: Double
    let from: Double
    /// Engine seconds of one loop.
    private var period: Double { timeline.end / playbackRate }

    private let done = DispatchSemaphore(value: 0)

    /// What the threads that report to the session (notifier, audio watcher, signals) share.
    private struct State {
        /// Bumped at each restart after a reset: the completion of an older player is ignored.
        var generation = 0
        /// Engine time at which loop 0's pattern time 0 is (or would have been) played.
        var t0 = 0.0
        /// The last loop played to its end.
        var finished = false
        var signal: Int32?
        var failure: String?
        /// The audio server went away and has not come back yet.
        var audioGone = false
        /// Why the audio server went away, if it did; how often the engine reset and the session carried on.
        var audioLost: String?
        var resets = 0
        /// The rumble device went away.
        var disconnected = false
        var ended = false
    }
    private let state = Locked(State())
    /// The current generation's player.
    private let current = Locked<HapticPatternPlayer?>(nil)

    /// Where the current player's passes started on the audio output (player id → pass starts),
    /// for the summary: the current stream's player only (frames of a stream before a reset are
    /// not comparable with the new stream's clock).
    private let frames = Locked<[UInt32: [Int64]]>([:])
    var startFrames: [UInt32: [Int64]] { frames.withLock { $0 } }

    /// Why the audio server went away during the run (nil if it did not), and how often the
    /// engine reset onto a server that came back.
    var audioServerLost: (reason: String, resets: Int)? {
        state.withLock { s in s.audioLost.map { ($0, s.resets) } }
    }
    /// Whether the rumble device went away during the run.
    var deviceDisconnected: Bool { state.withLock { $0.disconnected } }

    /// Makes the session and installs the engine's stopped and reset handlers (before the engine
    /// starts: the audio server can go away while the stream is starting).
    init(engine: HapticEngine, timeline: PatternTimeline, audioFiles: [String: URL], loops: Int, console: HapSyncCLI.Console,
         signals: SignalWatch, playbackRate: Double = 1, from: Double = 0) {
        self.signals = signals
        self.playbackRate = playbackRate
        self.from = from
        self.engine = engine
        self.timeline = timeline
        self.audioFiles = audioFiles
        self.loops = loops
        self.console = console
        engine.stoppedHandler = { [weak self] reason in self?.engineStopped(reason) }
        engine.resetHandler = { [weak self] in self?.engineReset() }
    }

    /// What keeps `loops` from being played as a loop that the engine would take, nil when nothing
    /// does: a pattern of no length (the engine plays such a loop once). A pass shorter than the
    /// engine's shortest loop period is the engine's own rule: `setLoop` refuses it, and `start`
    /// says so with the `--loop` it came from.
    static func loopProblem(loops: Int, timeline: PatternTimeline) -> String? {
        guard loops > 1, timeline.end < HapticPatternPlayer.shortestLoop else { return nil }
        return "--loop \(loops): the pattern lasts \(seconds(timeline.end)); there is nothing to repeat"
    }

    /// The engine refused the loop `--loop` asked for; its reason, prefixed with the option.
    private struct LoopRefused: Error, CustomStringConvertible {
        let description: String
    }

    /// Plays every loop, starting `delay` s from now; returns when all have played, a signal came
    /// or the engine failed.
    func run(startIn delay: Double) -> Outcome {
        signals.onSignal = { [self] in
            state.withLock { $0.signal = $0.signal ?? signals.caughtSignal }
            done.signal()
        }
        if let sig = signals.caughtSignal { return .interrupted(signal: sig) }
        if let problem = Self.loopProblem(loops: loops, timeline: timeline) { return .failure(problem) }
        // Loops after the first are whole passes; the first skips `from` of the pattern.
        let t0 = engine.currentTime + delay - from / playbackRate
        state.withLock { $0.t0 = t0 }
        do {
            try start(try makePlayer(generation: 0), firstLoop: 0, offset: from, t0: t0)
        } catch {
            return .failure("\(error)")
        }

        let terminal = isatty(STDERR_FILENO) == 1
        // Output problems are said when they happen, once each (a full disk under a trace,
        // records lost): the run goes on, and its end says them again with the exit status.
        var warned = (failure: false, lost: false)
        while done.wait(timeout: .now() + 0.1) == .timedOut {
            let now = engine.currentTime
            let s = state.withLock { $0 }
            if s.signal != nil || s.failure != nil || s.ended || s.finished { break }
            let health = engine.outputHealth
            if let failure = health.failure, !warned.failure {
                warned.failure = true
                console.err((terminal ? "\r\u{1B}[K" : "") + "warning: \(failure); playing goes on\n")
            }
            if health.lost > 0, !warned.lost {
                warned.lost = true
                console.err((terminal ? "\r\u{1B}[K" : "") + "warning: records are being lost (\(health.lost) so far): the trace's disk does not keep up; playing goes on\n")
            }
            // The end: loop `loops` starts (pattern time 0 of a pass that is not played).
            let end = s.t0 + Double(loops) * period
            let total = end - (t0 + from / playbackRate)
            if terminal {
                let elapsed = max(0, min(total, total - (end - now)))
                let loop = min(loops, max(1, Int(((now - s.t0) / period).rounded(.down)) + 1))
                console.err("\r\u{1B}[Kplaying \(seconds(elapsed)) / \(seconds(total)), loop \(loop)/\(loops)"
                            + (s.audioGone ? " (audio server gone, haptics go on)" : ""))
            }
            // A watchdog for a broken run; an engine waiting for its audio server is not one, nor
            // is a player still playing (its passes follow the audio's frames, which underruns
            // and the sink's clock can carry past the monotonic estimate of `end`).
            if now > end + 10, !s.audioGone, current.withLock({ $0?.isPlaying }) != true {
                return .failure("playback did not finish \(seconds(now - end)) after its end; the engine may have stopped")
            }
        }
        if terminal { console.err("\r\u{1B}[K") }
        // The caller stops the engine (at once: a signal's stop silences the backend there) and
        // hears from that stop whether the trace was written.
        let s = state.withLock { s -> State in s.ended = true; return s }
        if let sig = s.signal { return .interrupted(signal: sig) }
        if let failure = s.failure { return .failure(failure) }
        return .completed
    }

    /// Makes `generation`'s player and holds it (before it starts: its completion must find it
    /// alive); its pass starts on the audio output are kept for the summary.
    private func makePlayer(generation: Int) throws -> HapticPatternPlayer {
        let player = try engine.makePlayer(timeline: timeline, audioFiles: audioFiles)
        player.playbackRate = playbackRate
        let id = player.id
        player.audioStartHandler = { [unowned self] frame in
            guard state.withLock({ $0.generation == generation }) else { return }
            frames.withLock { $0[id, default: []].append(frame) }
        }
        player.completionHandler = { [unowned self] completion in self.completed(completion, generation: generation) }
        current.withLock { $0 = player }
        return player
    }

    /// Starts `player` on loop `firstLoop`, looping through the last: at pattern offset `offset`
    /// (seeking there first), pattern time 0 of loop k at `t0` + k passes.
    private func start(_ player: HapticPatternPlayer, firstLoop: Int, offset: Double, t0: Double) throws {
        let passes = loops - firstLoop
        if passes > 1 {
            do { try player.setLoop(true, end: 0, passes: passes) } catch { throw LoopRefused(description: "--loop \(loops): \(error)") }
        }
        if offset > 0 {
            // A start at an offset: seek a paused-at-0 player, then resume at the start time.
            try player.seek(toOffset: offset)
            try player.resume(atTime: t0 + Double(firstLoop) * period + offset / playbackRate)
        } else {
            try player.start(atTime: t0 + Double(firstLoop) * period)
        }
    }

    /// The player's run ended. Notifier thread.
    private func completed(_ completion: HapticPatternPlayer.Completion, generation: Int) {
        let finished = state.withLock { s -> Bool in
            // An older generation's player (stopped by a reset) or a run already over.
            guard s.generation == generation, !s.ended else { return false }
            // Stopped, not by us: the engine is resetting (it carries on in engineReset) or has
            // failed (engineStopped reports it).
            guard completion == .finished, s.signal == nil else { return false }
            s.finished = true
            return true
        }
        if finished { done.signal() }
    }

    /// The engine's stopped handler (notifier thread, or the thread that lost the audio server).
    private func engineStopped(_ reason: HapticEngine.StoppedReason) {
        switch reason {
        case .audioServerLost(let why):
            state.withLock { $0.audioGone = true; $0.audioLost = why }
            console.err("\nwarning: the audio server went away (\(why)); haptics go on, and playback carries on when it is back\n")
        case .deviceDisconnected:
            let stopped = !engine.isRunning
            state.withLock { s in
                s.disconnected = true
                if stopped { s.failure = s.failure ?? "the rumble device disconnected during playback; playback stopped" }
            }
            if stopped { done.signal() }
        case .systemError(let why):
            fail("the engine stopped during playback: \(why)")
        case .engineDestroyed, .idleTimeout, .finished:
            break
        }
    }

    /// The engine restarted onto an audio server that came back (the audio watcher's thread): the
    /// player was stopped, so carry on from where the pattern is now, with a new player. A reset
    /// without the server having gone away (the haptic backend reopened) leaves the player playing.
    private func engineReset() {
        let generation = state.withLock { s -> Int? in
            guard s.audioGone else { return nil }
            s.audioGone = false
            guard !s.ended, s.signal == nil, s.failure == nil else { return nil }
            s.resets += 1
            s.generation += 1
            return s.generation
        }
        guard let generation else { done.signal(); return }
        // The old player was stopped by the restart; its completion belongs to an older
        // generation and is ignored.
        if let old = current.withLock({ $0 }) { _ = try? old.stop(atTime: HapticEngine.timeImmediate) }
        frames.withLock { $0 = [:] }
        let made: HapticPatternPlayer
        do {
            made = try makePlayer(generation: generation)
        } catch {
            fail("could not carry on after the engine's reset: \(error)")
            return
        }
        // Where playback is `resume` s from now, worked out once the player is ready.
        let resume = 0.1   // s: the new stream's clock settles meanwhile
        let plan = state.withLock { s -> (loop: Int, offset: Double, t0: Double)? in
            guard s.generation == generation, !s.ended, !s.finished else { return nil }
            let at = engine.currentTime + resume
            let position = max(0, at - s.t0)
            var loop = min(loops - 1, Int((position / period).rounded(.down)))
            var offset = (position - Double(loop) * period) * playbackRate
            if loop == 0, offset < from { offset = from }
            if offset >= timeline.end { loop += 1; offset = 0 }
            guard loop < loops else { s.ended = true; return nil }
            s.t0 = at - Double(loop) * period - max(0, offset) / playbackRate
            return (loop, max(0, offset), s.t0)
        }
        guard let plan else { done.signal(); return }
        console.err("note: the audio server is back; the engine restarted and playback carries on from loop \(plan.loop + 1) at \(seconds(plan.offset))\n")
        do {
            try start(made, firstLoop: plan.loop, offset: plan.offset, t0: plan.t0)
        } catch {
            fail("could not carry on after the engine's reset: \(error)")
        }
    }

    /// Ends the run as a failure (the first reason given wins).
    private func fail(_ message: String) {
        state.withLock { $0.failure = $0.failure ?? message }
        done.signal()
    }
}
