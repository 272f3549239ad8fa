import Dispatch
import Foundation
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime

/// One `play` run: loops back to back, played by up to four players taking turns (player k
/// plays loops k, k+4, ...; each completion starts that player's next loop at its exact time,
/// known in advance), a progress line on a terminal, and Ctrl-C / SIGTERM handling.
final class PlaySession: @unchecked Sendable {
    /// How a playback session ended.
    enum Outcome: Equatable {
        case completed
        case interrupted
        case failure(String)
    }

    let engine: HapticEngine
    let timeline: PatternTimeline
    let audioFiles: [String: URL]
    let loops: Int
    let console: HapSyncCLI.Console
    private let done = DispatchSemaphore(value: 0)
    private let state = Locked((loopOf: [UInt32: Int](), completed: 0, interrupted: false))
    private var players: [HapticPatternPlayer] = []

    /// Where each player's runs started on the audio output (player id → loop starts), for the summary.
    private let frames = Locked<[UInt32: [Int64]]>([:])
    var startFrames: [UInt32: [Int64]] { frames.withLock { $0 } }

    let signals: SignalWatch
    /// Pattern seconds per second, and where the first loop starts (pattern s).
    let playbackRate: Double
    let from: Double

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
    }

    func run(startIn delay: Double) -> Outcome {
        // Loops after the first are whole passes; the first skips `from` of the pattern.
        let period = timeline.end / playbackRate
        let turns = min(loops, 4)
        let t0 = engine.currentTime + delay - from / playbackRate
        do {
            for k in 0..<turns {
                let player = try engine.makePlayer(timeline: timeline, audioFiles: audioFiles)
                player.playbackRate = playbackRate
                state.withLock { $0.loopOf[player.id] = k }
                player.completionHandler = { [unowned self, unowned player] completion in
                    self.completed(player, completion, t0: t0, period: period, turns: turns)
                }
                players.append(player)
            }
            for (k, player) in players.enumerated() {
                if k == 0, from > 0 {
                    // A start at an offset: seek a paused-at-0 player, then resume at the start time.
                    try player.seek(toOffset: from)
                    try player.resume(atTime: t0 + from / playbackRate)
                } else {
                    try player.start(atTime: t0 + Double(k) * period)
                }
            }
        } catch {
            return .failure("\(error)")
        }

        signals.onSignal = { [self] in
            state.withLock { $0.interrupted = true }
            done.signal()
        }
        if signals.received { state.withLock { $0.interrupted = true } }

        let total = Double(loops) * period - from / playbackRate
        let giveUp = t0 + total + 10
        let terminal = isatty(STDERR_FILENO) == 1
        while done.wait(timeout: .now() + 0.1) == .timedOut {
            let now = engine.currentTime
            if terminal {
                let s = state.withLock { $0 }
                let elapsed = max(0, min(total, now - t0 - from / playbackRate))
                console.err("\r\u{1B}[Kplaying \(seconds(elapsed)) / \(seconds(total)), loop \(min(loops, s.completed + 1))/\(loops)")
            }
            if now > giveUp { return .failure("playback did not finish \(seconds(now - t0 - total)) after its end; the engine may have stopped") }
        }
        if terminal { console.err("\r\u{1B}[K") }
        if state.withLock({ $0.interrupted }) {
            engine.stop()
            return .interrupted
        }
        return .completed
    }

    /// A player finished a loop: start its next one, or signal the end. Notifier thread.
    private func completed(_ player: HapticPatternPlayer, _ completion: HapticPatternPlayer.Completion, t0: Double, period: Double, turns: Int) {
        if let frame = player.audioStartFrame { frames.withLock { $0[player.id, default: []].append(frame) } }
        let (next, finished) = state.withLock { s -> (Int?, Bool) in
            s.completed += 1
            if completion == .stopped { s.interrupted = true }
            var next: Int?
            if !s.interrupted, let current = s.loopOf[player.id], current + turns < loops {
                next = current + turns
                s.loopOf[player.id] = next
            }
            return (next, s.completed >= loops || s.interrupted)
        }
        if let next { _ = try? player.start(atTime: t0 + Double(next) * period) }
        if finished { done.signal() }
    }
}
