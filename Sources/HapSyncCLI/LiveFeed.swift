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
///
/// A capture lost with its server can be made anew (`restartCapture`) by an owner that made the
/// sink again on the server come back (`recoversCapture`): the session carries on, the frames of
/// the new capture numbered on from the last (the detector, the pass-through and the counts see
/// one run).
final class LiveFeed: @unchecked Sendable {
    /// The session: onsets to transients, its counts and profile.
    let session: LiveSession
    /// The capture of the live sink's (or, `--no-delay`, the real sink's) monitor, the number
    /// (in the session's frames) of its frame 0, and the counts of the captures it replaced: one
    /// lock, so that counts read during a restart are those of one moment.
    private let current: Locked<(capture: any LiveCapture, base: Int64, replaced: (frames: Int64, overruns: Int, lost: Int64, filled: Int64, restarts: Int))>
    private let lostText = Locked<String?>(nil)
    /// How long the session's work on each captured fragment took on the capture's thread (the
    /// onset detector, the levels, the hand-off to the sound played on), every capture of the
    /// run: the summary's "analysis" line.
    let analysisTimes = CaptureHandlerTimes()
    /// Where the captures come from: a monitor through PulseAudio's protocol, or the live sink
    /// made natively on PipeWire.
    let source: LiveCaptureSource
    /// The sink whose monitor is captured and its channels (the owner's latest, after a restart).
    private let captureTarget: Locked<(sink: String, channels: Int)>
    /// The capture's fragment, seconds: one of `fragmentSteps`, its index the growths so far.
    private let fragment = Locked<Double>(LiveFeed.fragmentSteps[0])
    /// When the fragment last grew or stepped back, CLOCK_MONOTONIC ns (`.max`: a change failed,
    /// no more this run).
    private let lastGrowth = Atomic<UInt64>(0)
    /// When the sound played on last underran, CLOCK_MONOTONIC ns (0: not yet).
    private let lastUnderrun = Atomic<UInt64>(0)
    /// The played-on stream's underruns when the session last reported one (−1: none yet): a
    /// step back settles the stream's latency only if it has not underrun since (`settleCapture`).
    private let underrunsReported = Atomic<Int>(-1)
    /// The hold each fragment step had when the run last took it (index: the step; the first the
    /// run's own, set by `start`; as many as the furthest step the run reached); how long the
    /// sound must go without an underrun before a grown capture steps back (`settleCapture`),
    /// seconds: `calmSeconds` at first, `failedCalmSeconds` once an underrun came sooner than
    /// that after a step back; when the latest step back came; and the steps back so far. On
    /// `adaptQueue` or inside `replacing`.
    private let steps = Locked<(holds: [Int], calm: Double, steppedBackAt: UInt64?, backs: Int)>(([], 0, nil, 0))
    private var settleTimer: DispatchSourceTimer?
    /// One capture made anew at a time: a growth's and the owner's after a server restart.
    private let replacing = Locked<Int>(0)
    private let adaptQueue = DispatchQueue(label: "hapsync-live-adapt")
    private let lookAhead: Double
    private let rate: Double
    /// The SCHED_FIFO priority the captures' threads ask for: the engine's capture priority when
    /// it runs real-time threads (nil: normal priority).
    private let capturePriority: Int32?
    /// What the latest capture's thread got when it asked: a refusal is not asked again (a
    /// capture made anew would wait on it between two captures, RealtimeKit's round trip).
    private let captureGrant = Locked<RealtimeThread?>(nil)
    /// The engine the feed plays on, for its real-time status.
    private let engine: HapticEngine
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
    /// Told, on a queue of the feed's, what the feed changed by itself and why (the capture's
    /// fragment grown after underruns): for the owner to say. Set before `start`.
    var onNote: (@Sendable (String) -> Void)?

    /// The capture's fragments, shortest first: 5 ms to start with, the longer ones taken after
    /// underruns where the fragment sets the graph's cycle (`growCapture`).
    static let fragmentSteps: [Double] = [0.005, 0.010, 0.020]

    /// How long the sound played on goes without an underrun before a grown capture steps back
    /// to the fragment before (and the sound to that step's hold), seconds.
    static let calmSeconds = 60.0

    /// The calm spell after a step back the graph could not keep (an underrun sooner than
    /// `calmSeconds` after it), seconds, for every step back after it in the run: ten minutes.
    /// Under a load that lasts (4 busy threads on 2 cores), each step back underran again 3-21 s
    /// later; waiting twice as long each time still cost an underrun every few minutes, this at
    /// most one in ten.
    static let failedCalmSeconds = 600.0

    /// A feed for `engine` (started, `audio` its output, `passThrough` in that output's stream)
    /// from `captureSink` (`channels` channels at `rate` Hz) as `source` says: its monitor
    /// through PulseAudio's protocol, the sink made natively on PipeWire (stereo) in a node
    /// group, or its monitor natively on PipeWire. With `recoversCapture`, a capture lost with its server (or its sink)
    /// does not fail the feed: `captureLost` says why, and the owner restarts it or fails the feed.
    init(engine: HapticEngine, audio: SoundServerOutput?, passThrough: PassThroughAudio?, captureSink: String, channels: Int,
         rate: Double, source: LiveCaptureSource, style: LiveStyle = .transients, profile: LiveProfile,
         sensitivity: Double, minimumGap: Double, recoversCapture: Bool = false, calmSeconds: Double = LiveFeed.calmSeconds) {
        let detector = StreamingOnsetDetector(sampleRate: rate, sensitivity: sensitivity, minimumGap: minimumGap)
        lookAhead = detector.lookAhead.seconds
        self.rate = rate
        self.engine = engine
        let capturePriority = engine.configuration.threading == .realtime ? engine.configuration.captureThreadPriority : nil
        self.capturePriority = capturePriority
        captureTarget = Locked((captureSink, channels))
        let session = LiveSession(engine: engine, detector: detector, style: style, profile: profile, passThrough: passThrough, audio: audio,
                                  frameBase: passThrough?.capturedFrames ?? 0)
        self.session = session
        self.source = source
        current = Locked((Self.capture(of: captureSink, channels: channels, rate: rate, base: 0, source: source, session: session,
                                       lost: recoversCapture ? lostText : failureText, fragment: Self.fragmentSteps[0],
                                       priority: capturePriority, times: analysisTimes), 0, (0, 0, 0, 0, 0)))
        self.recoversCapture = recoversCapture
        let current = current
        // A frame from before the capture in force has no time on its clock.
        session.monitorTime = { frame in current.withLock { frame >= $0.base ? $0.capture.playedTime(ofFrame: frame - $0.base) : nil } }
        session.sinkAhead = { current.withLock { $0.capture.sinkLatency }.map { UInt64(max($0, 0)) * 1000 } }
        self.passThrough = passThrough
        self.audio = audio
        before = (passThrough?.lateFrames ?? 0, passThrough?.lateBlocks ?? 0, passThrough?.overwrittenFrames ?? 0, audio?.underruns ?? 0)
        steps.withLock { $0.calm = max(calmSeconds, 0.1) }
    }

    private let recoversCapture: Bool

    /// A capture of `sink` (`channels` channels at `rate` Hz: its monitor, or the sink itself made
    /// natively, as `source` says) in
    /// `fragment`-second fragments handing its frames to `session` numbered from `base`, its
    /// failure recorded in `lost`, its thread at SCHED_FIFO `priority` when given.
    private static func capture(of sink: String, channels: Int, rate: Double, base: Int64, source: LiveCaptureSource, session: LiveSession,
                                lost: Locked<String?>, fragment: Double, priority: Int32?, times: CaptureHandlerTimes) -> any LiveCapture {
        let handler = { (samples: UnsafeBufferPointer<Float>, first: Int64) in
            session.captured(samples, channels: channels, firstFrame: first &+ base)
        }
        // On the capture's thread (PulseAudio's mainloop at SCHED_FIFO, or PipeWire's loop), once,
        // as it fails: a lock the session's thread holds only to read a string.
        let failed = { @Sendable (why: String) in lost.withLock { $0 = $0 ?? why } }
        switch source {
        case .monitor(let server):
            return MonitorCapture(sink: sink, server: server, fragmentSeconds: fragment, realtimePriority: priority, handlerTimes: times,
                                  handler: handler, onFailure: failed)
        case .pipeWireSink(let remote, let group):
            return PipeWireSinkCapture(name: sink, description: LiveCommand.sinkDescription, remote: remote, group: group,
                                       properties: LiveSink.Owner.current.properties, fragmentSeconds: fragment, realtimePriority: priority, handlerTimes: times, handler: handler, onFailure: failed)
        case .pipeWireMonitor(let remote):
            return PipeWireSinkCapture(monitoring: sink, channels: channels, sampleRate: rate, remote: remote, fragmentSeconds: fragment, realtimePriority: priority,
                                       handlerTimes: times, handler: handler, onFailure: failed)
        }
    }

    /// The capture in force.
    private var capture: any LiveCapture { current.withLock { $0.capture } }

    /// Starts the capture, then the session's thread. Throws the capture's error (nothing left
    /// running). Control side.
    func start() throws(LiveCaptureFailure) {
        session.onUnderran = { [weak self] in
            guard let self else { return }
            underrunsReported.store(audio?.underruns ?? 0, ordering: .relaxed)
            lastUnderrun.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
            adaptQueue.async { self.growCapture() }
        }
        steps.withLock { $0.holds = [Int(passThrough?.hold ?? 0)] }
        defer { recordGrant(of: capture) }
        try capture.begin()
        started = MonotonicClock.nanoseconds()
        running = true
        // Every second: may a grown capture step back?
        if passThrough != nil, capture.growth != .none {
            let timer = DispatchSource.makeTimerSource(queue: adaptQueue)
            timer.schedule(deadline: .now() + 1, repeating: 1, leeway: .milliseconds(100))
            timer.setEventHandler { [weak self] in self?.settleCapture() }
            timer.resume()
            settleTimer = timer
        }
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

    /// Whether the capture in force failed because its server went away, as far as it can tell
    /// (`LiveCapture.serverWentAway`). Any thread.
    var captureServerWentAway: Bool { capture.serverWentAway }

    /// Why the capture stopped (its server went away, or its sink did), when the feed recovers
    /// captures and no restart has followed yet; nil while it records. Any thread.
    var captureLost: String? { lostText.withLock { $0 } }

    /// Replaces a lost capture with one of `sink`'s monitor (`channels` channels, at the rate the
    /// feed began with), numbered on from the last frame the old one handed over, and drops the
    /// continuous layer's player (an engine that restarted has forgotten it). The old capture is
    /// stopped first. Throws the new capture's error (the feed stays without one: restart again
    /// or fail it). Control side, while the feed runs.
    func restartCapture(sink: String, channels: Int) throws(LiveCaptureFailure) {
        try replacing.withLock { _ throws(LiveCaptureFailure) in
            captureTarget.withLock { $0 = (sink, channels) }
            session.restartLayer()
            lostText.withLock { $0 = nil }
            try replaceCapture(sink: sink, channels: channels, fragment: fragment.withLock { $0 })
            current.withLock { $0.replaced.restarts += 1 }
        }
    }

    /// Stops the capture in force and starts one of `sink`'s monitor in `fragment`-second
    /// fragments, numbered on from the last frame the old one handed over; `between` runs while
    /// neither captures. Inside `replacing`.
    private func replaceCapture(sink: String, channels: Int, fragment: Double, between: () -> Void = {}) throws(LiveCaptureFailure) {
        let old = capture
        old.stop()
        session.captureThreadChanged()
        between()
        let base = current.withLock { $0.base } &+ old.framesCaptured
        let refused = captureGrant.withLock { $0?.granted == false }
        let fresh = Self.capture(of: sink, channels: channels, rate: rate, base: base, source: source, session: session,
                                 lost: recoversCapture ? lostText : failureText, fragment: fragment, priority: refused ? nil : capturePriority,
                                 times: analysisTimes)
        current.withLock {
            $0.replaced.frames += old.framesCaptured
            $0.replaced.overruns += old.overruns
            $0.replaced.lost += old.lostFrames
            $0.replaced.filled += old.filledFrames
            ($0.capture, $0.base) = (fresh, base)
        }
        // What its thread got, also when the capture then fails to start.
        defer { recordGrant(of: fresh) }
        try fresh.begin()
    }

    /// Keeps what `capture`'s thread got, if it asked (one that did not, after a refusal, leaves
    /// the refusal standing).
    private func recordGrant(of capture: any LiveCapture) {
        if let got = capture.realtimeThread { captureGrant.withLock { $0 = got } }
    }

    /// The capture's next fragment after `fragment` seconds (nil: it is the longest) and the
    /// hold it needs, frames at `rate`: `hold` (what the run had, the user's `--delay-ms`
    /// included), or the look-ahead and that fragment if that is more. Pure.
    static func grown(from fragment: Double, hold: Int, lookAhead: Double, rate: Double) -> (fragment: Double, hold: Int)? {
        guard let next = fragmentSteps.first(where: { $0 > fragment + 1e-9 }) else { return nil }
        return (next, max(hold, Int(((lookAhead + next) * rate).rounded())))
    }

    /// After the sound played on underran, where the capture's fragment sets the cycle of the
    /// graph that plays it (pipewire-pulse: `captureFragmentSetsCycle`; its stream's own longer
    /// latency does not lengthen that cycle): the capture is made anew with the next longer
    /// fragment (5, 10, 20 ms), so that the graph runs cycles long enough to ride out what
    /// starved it, and the sound is held back by the look-ahead and that fragment when that is
    /// more than it was (a fragment arrives up to its length after its first frame). The sound
    /// goes on from the new capture's start (`PassThroughAudio.activate`): what the old one had
    /// not played yet and the move's gap are skipped, once, never played twice (onsets in them
    /// get no transient: `LiveSession`'s unplaced; one placed before is dropped unless its sound had
    /// already been rendered). A new capture that cannot be made is made
    /// again with the old fragment and hold, and the run changes its fragment no more; failing
    /// that, the capture is lost (as when its server goes). The native PipeWire sink, whose cycle
    /// is the graph's too, grows in place instead (`changeInPlace`). At most a step a second;
    /// `onNote` says what happened. Once the sound has gone `calmSeconds` without an underrun,
    /// the capture steps back (`settleCapture`). On `adaptQueue`.
    private func growCapture() {
        let from = fragment.withLock { $0 }
        let last = lastGrowth.load(ordering: .relaxed)
        let now = MonotonicClock.nanoseconds()
        // An underrun sooner than `calm` after a step back (the step's own included): the graph
        // did not keep the shorter cycle. It grows again at once (not a second later, as after a
        // growth), and the next step back waits `failedCalmSeconds`.
        let afterStepBack = steps.withLock { state -> Bool in
            defer { state.steppedBackAt = nil }
            guard let back = state.steppedBackAt, now > back, Double(now - back) / 1e9 < state.calm else { return false }
            state.calm = max(state.calm, Self.failedCalmSeconds)
            return true
        }
        guard let passThrough, last != .max, afterStepBack || now &- last >= 1_000_000_000,
              let (next, grownHold) = Self.grown(from: from, hold: Int(passThrough.hold), lookAhead: lookAhead, rate: rate)
        else { return }
        // The node's cycle is a power of two frames (native sink): the hold covers that, not `next` alone.
        let hold = capture.growth == .inPlace
            ? max(grownHold, Int(((lookAhead + PipeWireSinkCapture.cycle(forSeconds: next, sampleRate: rate)) * rate).rounded())) : grownHold
        let note: String? = replacing.withLock { _ in
            guard let failed = changeFragment(from: from, to: next, hold: max(hold, Int(passThrough.hold)), passThrough: passThrough) else { return nil }
            if !failed.isEmpty { return "the sound played on underran, and " + failed }
            steps.withLock { state in
                // Growth is a step at a time: this step's hold is the next one kept, or replaces it.
                let index = min(Self.fragmentSteps.firstIndex(of: next) ?? state.holds.count, state.holds.count)
                if index < state.holds.count { state.holds[index] = Int(passThrough.hold) } else { state.holds.append(Int(passThrough.hold)) }
            }
            return String(format: "the sound played on underran: %@, the sound %.1f ms behind (growth %d)",
                          fragmentPhrase(next, again: false), Double(passThrough.hold) / rate * 1000, Self.fragmentSteps.firstIndex(of: next) ?? 0)
        }
        if let note { onNote?(note) }
    }

    /// Whether a grown capture steps back now: the sound played on has gone `calm` seconds
    /// without an underrun (`sinceUnderrun`, seconds since the last underrun or fragment change,
    /// whichever came later) and what it would skip is quiet, or twice that long whatever it
    /// would skip. Pure.
    static func stepsBack(sinceUnderrun: Double, calm: Double, quiet: Bool) -> Bool {
        sinceUnderrun >= calm && (quiet || sinceUnderrun >= 2 * calm)
    }

    /// Once the sound played on has gone `calm` seconds without an underrun (`stepsBack`), a
    /// grown capture takes the fragment before again, and the sound the hold it had then: the
    /// lag an underrun added comes off again, so a run that underran once does not keep it. The
    /// shorter hold skips the difference, once, taken in a quiet moment (the newest hold and
    /// fragment and 50 ms of the capture under −50 dBFS: `PassThroughAudio.isQuiet`) when one
    /// comes within another `calm`, else anyway; a transient placed in the skipped sound is
    /// dropped with it (`LiveSession`). An underrun sooner than `calm` after a step back makes
    /// `calm` `failedCalmSeconds`: a graph that cannot keep the shorter cycle is not asked again
    /// and again. Every second, on `adaptQueue`; `onNote` says what happened.
    private func settleCapture() {
        let from = fragment.withLock { $0 }
        guard let passThrough, let index = Self.fragmentSteps.firstIndex(of: from), index > 0 else { return }
        let last = lastGrowth.load(ordering: .relaxed)
        guard last != .max else { return }
        // Both times read before `now`: one stored meanwhile is not taken for the future.
        let underran = lastUnderrun.load(ordering: .relaxed)
        let latest = max(last, underran)
        let now = MonotonicClock.nanoseconds()
        let since = now > latest ? Double(now - latest) / 1e9 : 0
        let (calm, holds) = steps.withLock { ($0.calm, $0.holds) }
        let span = Int64(passThrough.hold) + Int64(((from + 0.05) * rate).rounded())
        let quiet = passThrough.isQuiet(forFrames: span)
        guard index - 1 < holds.count, Self.stepsBack(sinceUnderrun: since, calm: calm, quiet: quiet) else { return }
        let back = Self.fragmentSteps[index - 1]
        let before = Double(passThrough.hold) / rate * 1000
        let note: String? = replacing.withLock { _ in
            // An underrun since the look above: not a calm spell after all.
            guard lastUnderrun.load(ordering: .relaxed) == underran else { return nil }
            // The stream that plays the sound on, whose latency the underrun grew too, steps back
            // with the capture (never below the latency it began with): natively, else the
            // group's graph keeps the longer cycle; through PulseAudio's protocol, else its
            // longer buffer keeps the sound later. Before the capture changes, so that a buffer
            // draining to its shorter length has drained when the new distance is fixed; not if
            // the stream underran since the session last reported an underrun (its growth
            // stands, and the session reports it within 100 ms).
            let seen = underrunsReported.load(ordering: .relaxed)
            if let audio = audio as? LatencySettlingOutput, seen >= 0 { audio.settleLatency(to: back, unlessUnderrunsPast: seen) }
            guard let failed = changeFragment(from: from, to: back, hold: holds[index - 1], passThrough: passThrough) else { return nil }
            if !failed.isEmpty { return String(format: "no underrun for %.0f s, and ", since) + failed }
            steps.withLock {
                $0.steppedBackAt = now
                $0.backs += 1
            }
            return String(format: "no underrun for %.0f s: %@, the sound %.1f ms behind instead of %.1f (%@)",
                          since, fragmentPhrase(back, again: true), Double(passThrough.hold) / rate * 1000, before,
                          quiet ? "the difference skipped while quiet" : "the difference skipped")
        }
        if let note { onNote?(note) }
    }

    /// What a growth's or a step back's note says the capture now takes, `seconds` fragments:
    /// cycles the native sink asks PipeWire for, or a monitor capture's fragments (`again`: a
    /// step back). Inside `replacing`.
    private func fragmentPhrase(_ seconds: Double, again: Bool) -> String {
        let ms = String(format: "%.0f", seconds * 1000)
        if capture.growth == .inPlace { return again ? "the live sink asks PipeWire for \(ms) ms cycles again" : "the live sink now asks PipeWire for \(ms) ms cycles" }
        return again ? "the live sink's capture takes \(ms) ms fragments again" : "the live sink's capture now takes \(ms) ms fragments (PipeWire's graph runs cycles that long)"
    }

    /// Takes the capture from `from`- to `to`-second fragments, the sound held `hold` frames
    /// behind it: in place where the capture's cycle is the graph's (`changeInPlace`), else by
    /// making the capture anew (the sound goes on from the new capture's start: what the old one
    /// had not played and the move's gap are skipped, never played twice). Nil when nothing
    /// changed and nothing is to be said (stopping, failed, or a capture that does not change);
    /// "" when it changed; else the note saying why it did not (the run then changes its fragment
    /// no more; a capture that cannot be made again with `from` either is lost). Inside `replacing`.
    private func changeFragment(from: Double, to next: Double, hold: Int, passThrough: PassThroughAudio) -> String? {
        guard !stopping.load(ordering: .acquiring), failure == nil, captureLost == nil else { return nil }
        switch capture.growth {
        case .none: return nil
        case .inPlace: return changeInPlace(from: from, to: next, hold: hold, passThrough: passThrough)
        case .replace: break
        }
        let target = captureTarget.withLock { $0 }
        let held = Int(passThrough.hold)
        do throws(LiveCaptureFailure) {
            try replaceCapture(sink: target.sink, channels: target.channels, fragment: next, between: { passThrough.activate(hold: hold) })
        } catch {
            // Back to the fragment and the hold it had, and no more changes this run (each try
            // skips sound); failing that too, the capture is lost.
            let why = "making the live sink's capture anew with \(Int(next * 1000)) ms fragments failed (\(error))"
            do throws(LiveCaptureFailure) {
                try replaceCapture(sink: target.sink, channels: target.channels, fragment: from, between: { passThrough.activate(hold: held) })
            } catch {
                (recoversCapture ? lostText : failureText).withLock { $0 = $0 ?? "\(why), and again with \(Int(from * 1000)) ms (\(error))" }
                return nil
            }
            lastGrowth.store(.max, ordering: .relaxed)
            return why + String(format: "; it captures on in %.0f ms fragments and does not try again this run", from * 1000)
        }
        lastGrowth.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
        fragment.withLock { $0 = next }
        return ""
    }

    /// `changeFragment` for a capture that changes in place (the native PipeWire sink): it asks
    /// the graph for `next`-second cycles and the sound is held `hold` frames behind from the next
    /// block on (`PassThroughAudio.rehold`: nothing played twice; a longer hold plays silence for
    /// the difference once, a shorter one skips it); the capture goes on. Refused, the run
    /// changes its fragment no more. Inside `replacing`.
    private func changeInPlace(from: Double, to next: Double, hold: Int, passThrough: PassThroughAudio) -> String {
        guard capture.setFragment(next) else {
            lastGrowth.store(.max, ordering: .relaxed)
            return String(format: "PipeWire refused the live sink %.0f ms cycles; it runs on with %.0f ms and does not change them again this run",
                          next * 1000, from * 1000)
        }
        if hold != Int(passThrough.hold) { passThrough.rehold(hold) }
        lastGrowth.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
        fragment.withLock { $0 = next }
        return ""
    }

    /// The engine's real-time threads and, once a capture started, the capture's thread with
    /// what it got (the latest that asked): the summary's "real-time" line.
    var realtimeStatus: RealtimeStatus {
        var status = engine.realtimeStatus
        if let thread = captureGrant.withLock({ $0 }) { status.threads.append(thread) }
        return status
    }

    /// The real-time scheduling the capture in force asked for and got (nil: it did not ask).
    var captureThread: RealtimeThread? { capture.realtimeThread }

    /// The fragment the capture in force was granted, frames (0 before it started).
    var captureFragmentFrames: Int { capture.fragmentFrames }

    /// The frames of sound captured (the replaced captures' too; the silence handed over in
    /// place of lost frames not among them), the overruns and the frames lost: captured and
    /// lost add up to the run. Any thread.
    var captureCounts: (frames: Int64, overruns: Int, lost: Int64) {
        current.withLock { c in
            let handed: Int64 = c.replaced.frames + c.capture.framesCaptured
            let filled: Int64 = c.replaced.filled + c.capture.filledFrames
            return (handed - filled, c.replaced.overruns + c.capture.overruns, c.replaced.lost + c.capture.lostFrames)
        }
    }

    /// Stops the session's thread (after the onsets already found; it may have ended already,
    /// on a failure) and the capture. Control side; waits for the thread (at most one pass of its
    /// loop, 50 ms, and what it plays).
    /// A capture that is the live sink itself (the native PipeWire sink) first asks the streams
    /// playing into it to play to `sink` (nil: the default sink), and what became of them is
    /// returned (`LiveCapture.handOver`; nil for a monitor's capture).
    @discardableResult
    func stop(handingOverTo sink: String? = nil) -> String? {
        guard running else { return nil }
        running = false
        stopping.store(true, ordering: .releasing)
        ended.wait()
        settleTimer?.cancel()
        // A growth or step back under way finishes first (one queued after it sees `stopping`).
        adaptQueue.sync {}
        return replacing.withLock { _ in
            let note = capture.handOver(to: sink)
            capture.stop()
            return note
        }
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
        if counts.merged > 0 { t += ", \(counts.merged) merged into the one before by the engine's rate limit" }
        if counts.unplaced > 0 { t += ", \(counts.unplaced) in sound not played on (before it began, or skipped)" }
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
        let captured = captureCounts
        var capturePart = "capture: \(captured.frames) frames, \(plural(captured.overruns, "overrun"))"
        if captured.lost > 0 { capturePart += ", \(captured.lost) frames lost" }
        let restarts = current.withLock { $0.replaced.restarts }
        if restarts > 0 { capturePart += "; made anew \(plural(restarts, "time")) after the sound server came back" }
        lines.append(capturePart)
        let per = analysisTimes.perFragment
        if let p50 = per.percentile(50), let p99 = per.percentile(99) {
            let busy = seconds > 0 ? Double(per.totalNanoseconds) / (seconds * 1e9) * 100 : 0
            lines.append(String(format: "analysis on the capture's thread: per fragment p50 %.2f ms, p99 %.2f ms, max %.2f ms (%.1f %% of the run); at most %.2f ms in 100 ms",
                                p50 / 1e6, p99 / 1e6, Double(per.maximum) / 1e6, busy, Double(analysisTimes.busiestWindow) / 1e6))
        }
        lines.append("real-time: \(realtimeStatus.description)")
        if passThrough != nil, audio != nil {
            let p = playedOn
            var played = "sound played on: \(plural(p.underruns, "underrun")) at the real sink, \(p.lateFrames) frames not captured in time (\(plural(p.lateBlocks, "block"))), \(p.overwritten) overrun"
            if let lean = passThrough?.rateErrorPPM, lean != 0 {
                played += "; read \(abs(lean)) ppm \(lean > 0 ? "fast" : "slow") at the end, following the real sink's clock"
            }
            if counts.refixes > 0 { played += "; its distance behind the capture set anew \(plural(counts.refixes, "time")) (an underrun, a stall, or clocks further apart than it follows)" }
            if counts.moved + counts.droppedAfterFix > 0 {
                played += "; transients placed before a new distance: \(counts.moved) moved to their sound, \(counts.droppedAfterFix) dropped with their skipped sound"
            }
            let ending = fragment.withLock { $0 }, held = passThrough.map { Double($0.hold) / rate * 1000 } ?? 0
            let (backs, reached) = steps.withLock { ($0.backs, $0.holds.count) }
            if backs == 0, ending > Self.fragmentSteps[0] {
                played += String(format: "; after underruns the capture took %.0f ms fragments (PipeWire's graph cycle) and the sound was held %.1f ms behind", ending * 1000, held)
            } else if backs > 0 {
                // The furthest step reached: the holds kept, one per step.
                let furthest = Self.fragmentSteps[min(max(reached - 1, 0), Self.fragmentSteps.count - 1)]
                played += String(format: "; after underruns the capture took fragments of up to %.0f ms (PipeWire's graph cycle) and stepped back %@ once the sound went without one, ending with %.0f ms fragments, the sound %.1f ms behind",
                                  furthest * 1000, plural(backs, "time"), ending * 1000, held)
            }
            lines.append(played)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
