import Dispatch
import Foundation
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncGeneration
import HapSyncRuntime
import Synchronization

/// Live haptics over a running engine: the capture of a sink's monitor, the streaming onset
/// detector on it and the session that plays a transient at each onset, on a thread of its own
/// ("hapsync-live"). `hapsync live` runs one for its whole run; `serve` one per
/// `/hapsync/live 1`. What it made (the capture, the thread) it undoes in `stop`; the live sink
/// and the engine are its owner's.
final class LiveFeed: @unchecked Sendable {
    /// The session: onsets to transients, its counts and profile.
    let session: LiveSession
    /// The capture of the live sink's (or, `--no-delay`, the real sink's) monitor.
    let capture: MonitorCapture
    /// The captured audio played on (nil: `--no-delay`).
    let passThrough: PassThroughAudio?
    /// The engine's audio output.
    let audio: SoundServerOutput?
    /// When `start` returned, CLOCK_MONOTONIC ns (0 before).
    private(set) var started: UInt64 = 0
    /// The pass-through's and the output's counts when the feed began: what came before is not its.
    private let before: (lateFrames: Int, lateBlocks: Int, overwritten: Int, underruns: Int)
    private let failureText = Locked<String?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)
    private var running = false
    /// Called on the session's thread once it has ended because the feed failed (not when
    /// stopped), with why: for an owner that must tear the run down by itself. Set before `start`.
    var onFailure: (@Sendable (String) -> Void)?

    /// A feed for `engine` (started, `audio` its output, `passThrough` in that output's stream)
    /// from the monitor of `captureSink` (`channels` channels at `rate` Hz) on `server`.
    init(engine: HapticEngine, audio: SoundServerOutput?, passThrough: PassThroughAudio?, captureSink: String, channels: Int,
         rate: Double, server: String?, style: LiveStyle = .transients, profile: LiveProfile, sensitivity: Double, minimumGap: Double) {
        let detector = StreamingOnsetDetector(sampleRate: rate, sensitivity: sensitivity, minimumGap: minimumGap)
        let session = LiveSession(engine: engine, detector: detector, style: style, profile: profile, passThrough: passThrough, audio: audio,
                                  frameBase: passThrough?.capturedFrames ?? 0)
        let failureText = failureText
        let capture = MonitorCapture(sink: captureSink, server: server, handler: { samples, first in
            session.captured(samples, channels: channels, firstFrame: first)
        }, onFailure: { why in failureText.withLock { $0 = $0 ?? why } })
        session.monitorTime = { capture.playedTime(ofFrame: $0) }
        session.sinkAhead = { capture.sinkLatency.map { UInt64(max($0, 0)) * 1000 } }
        self.session = session
        self.capture = capture
        self.passThrough = passThrough
        self.audio = audio
        before = (passThrough?.lateFrames ?? 0, passThrough?.lateBlocks ?? 0, passThrough?.overwrittenFrames ?? 0, audio?.underruns ?? 0)
    }

    /// Starts the capture, then the session's thread. Throws the capture's error (nothing left
    /// running). Control side.
    func start() throws(PulseConnection.PulseError) {
        try capture.start()
        started = MonotonicClock.nanoseconds()
        running = true
        let thread = Thread { [self] in
            session.run { stopping.load(ordering: .acquiring) || failureText.withLock { $0 != nil } }
            ended.signal()
            if !stopping.load(ordering: .acquiring), let why = failure { onFailure?(why) }
        }
        thread.name = "hapsync-live"
        thread.start()
    }

    /// Why the feed cannot go on (its capture's server went away, the engine's output failed),
    /// or nil. Any thread.
    var failure: String? { failureText.withLock { $0 } }

    /// Records why the feed cannot go on (the first reason stays). Any thread.
    func fail(_ why: String) { failureText.withLock { $0 = $0 ?? why } }

    /// Stops the session's thread (after the onsets already found; it may have ended already,
    /// on a failure) and the capture. Control side; waits for the thread (at most one pass of its
    /// loop, 50 ms, and what it plays).
    func stop() {
        guard running else { return }
        running = false
        stopping.store(true, ordering: .releasing)
        ended.wait()
        capture.stop()
    }

    /// Seconds since `start`.
    var seconds: Double { started == 0 ? 0 : Double(MonotonicClock.nanoseconds() &- started) / 1e9 }

    /// The pass-through's frames not captured in time, blocks with such frames and frames lost
    /// to overrun, and the output's underruns, since the feed began.
    var playedOn: (lateFrames: Int, lateBlocks: Int, overwritten: Int, underruns: Int) {
        ((passThrough?.lateFrames ?? 0) - before.lateFrames, (passThrough?.lateBlocks ?? 0) - before.lateBlocks,
         (passThrough?.overwrittenFrames ?? 0) - before.overwritten, (audio?.underruns ?? 0) - before.underruns)
    }

    /// The summary `hapsync live` prints at exit (and `/hapsync/live 0` answers in short):
    /// transients, underruns, overruns, the lag.
    var summary: String {
        let counts = session.counts
        var lines = ["live: \(String(format: "%.1f", seconds)) s, profile \(session.profile.name), style \(session.style.rawValue)"]
        var t = "transients: \(counts.transients)"
        if counts.belowFloor > 0 { t += ", \(counts.belowFloor) under the profile's floor" }
        if counts.late > 0 { t += ", \(counts.late) found after their moment (played late)" }
        if counts.unplaced > 0 { t += ", \(counts.unplaced) before the sound played on" }
        if counts.dropped > 0 { t += ", \(counts.dropped) lost" }
        lines.append(t)
        if session.style.generation != nil {
            lines.append("continuous layer: \(plural(counts.levelChanges, "level change")) sent" + (counts.levelsLost > 0 ? ", \(counts.levelsLost) lost" : ""))
        }
        if let p50 = counts.lags.percentileMs(50), let p99 = counts.lags.percentileMs(99) {
            let what = passThrough == nil ? "haptics felt after their sound was heard" : "sound played on after it reached the live sink"
            let over = counts.lags.count > counts.lags.latest.count ? " (p50, p99 of the latest \(counts.lags.latest.count))" : ""
            lines.append(String(format: "lag (%@): p50 %.1f ms, p99 %.1f ms, max %.1f ms%@", what, p50, p99, counts.lags.max / 1e6, over))
        }
        var capturePart = "capture: \(capture.framesCaptured) frames, \(plural(capture.overruns, "overrun"))"
        if capture.lostFrames > 0 { capturePart += ", \(capture.lostFrames) frames lost" }
        lines.append(capturePart)
        if passThrough != nil, audio != nil {
            let p = playedOn
            var played = "sound played on: \(plural(p.underruns, "underrun")) at the real sink, \(p.lateFrames) frames not captured in time (\(plural(p.lateBlocks, "block"))), \(p.overwritten) overrun"
            if counts.refixes > 0 { played += "; its distance behind the capture set anew \(plural(counts.refixes, "time")) (the clocks drifting apart, or a stall)" }
            lines.append(played)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
