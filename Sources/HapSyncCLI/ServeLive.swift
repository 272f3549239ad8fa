import Dispatch
import Foundation
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncGeneration
import HapSyncOSC
import HapSyncPipeWire
import HapSyncRuntime

/// `serve`'s live haptics, driven by `/hapsync/live`: on, the 'HapSync Live' sink is made on the
/// server applications play to, what plays into it analysed as in `hapsync live`, and the sound
/// played on to the service's own audio sink a look-ahead later through the service's audio
/// stream (whose pass-through is dormant until then), with a transient at each onset on that
/// stream's clock; off (or the service ending), the sink removed and what played into it moved
/// back. As in `hapsync live`, where the service plays its sound natively on PipeWire the sink
/// is made natively too (a node of the service's own, in its stream's node group: the capture
/// and the sound played on sample-locked); elsewhere through PulseAudio's protocol (a
/// PulseAudio server, or pipewire-pulse), its monitor captured.
///
/// A profile set here changes how hits feel (gain, curve, floor), a style what is played; a
/// profile's rumble and voice-coil
/// levels and low-pass are the outputs' and would change every pattern the service plays, so
/// they are not applied.
///
/// A sound server that goes away mid-run (its control connection fails with the capture) ends
/// the run as a failure would, and a thread of its own then waits for the server to answer and
/// the service's output to be back on it, and starts a new run as `/hapsync/live 1` would (its
/// counts from zero): applications find 'HapSync Live' again. `/hapsync/live 0` stops the wait,
/// and so does the engine's output failing for good.
///
/// Threads: `turnOn` and `turnOff` come off the service's thread (on `OSCCommands`' queue of live
/// changes, `turnOff` also at the service's end), `turnOn` also from the wait's thread, and a
/// failed run's teardown (`failed`) on a queue of its own; each holds `changing` while it talks
/// to the sound server, so they come one at a time. The settings and `status` come on the
/// service's thread meanwhile, and the engine's handlers on its threads: they take only `state`,
/// briefly (never `changing`: the order is `changing`, then `state`).
final class ServeLive: LiveControl, @unchecked Sendable {
    /// One live run: the hold on the PulseAudio server (control connection, live sink; nil for
    /// the sink made natively, which is the feed's capture), the feed, the real sink's name (or
    /// what stands for it), the sink the native sink's streams are handed over to at the end
    /// (nil: the default sink), the output's losses when the run began, and the native output
    /// held to the real sink for the run (its hold cleared at the end).
    private struct Running {
        let hold: LiveRun.ServerHold?
        let feed: LiveFeed
        let real: String
        var handOverTo: String? = nil
        var outputLosses = 0
        var heldOutput: (any SinkHoldingOutput)? = nil
    }

    /// Where the live sink is made: through PulseAudio's protocol on `server` (nil: the default),
    /// or natively on the PipeWire server `remote` in the service's stream's node `group`.
    private enum SinkServer {
        case pulse(server: String?)
        case pipeWire(remote: String?, group: String)
    }

    private struct State {
        var running: Running?
        /// Whether a run is being made (`turnOn` under way), for `/hapsync/status`.
        var starting = false
        var profile: LiveProfile
        var style = LiveStyle.transients
        /// Why the last run could not go on, kept for `/hapsync/status` after it ended.
        var lastFailure: String?
        /// The wait for a sound server come back under way (`awaitServer`), by number; 0: none.
        /// A waiter acts only while its own number is here, so a wait stopped and a later one
        /// begun never share a waiter.
        var wait = 0
        /// Waits begun so far (the next one's number).
        var waits = 0
        /// Whether a run that ended with its sound server waits for the server to come back.
        var waitingForServer: Bool { wait != 0 }
    }

    private let engine: HapticEngine
    private let audio: SoundServerOutput
    private let sinkServer: SinkServer
    private let passThrough: PassThroughAudio
    private let options: PlaybackOptions
    private let console: HapSyncCLI.Console
    private let state: Locked<State>
    /// What the engine's output went through (failed for good, down, reset), read by a run
    /// being made under `state` (the watch's callbacks take `state` after updating it).
    private let output: LiveOutputWatch
    /// Held by `turnOn`, `turnOff` and a failed run's teardown while they talk to the sound
    /// server: one change at a time, never under `state`.
    private let changing = Locked(())

    /// Live haptics for `engine`, whose output `audio` carries the dormant `passThrough`.
    init(engine: HapticEngine, audio: SoundServerOutput, passThrough: PassThroughAudio, options: PlaybackOptions,
         console: HapSyncCLI.Console, profile: LiveProfile = .dualsense) {
        self.engine = engine
        self.audio = audio
        self.passThrough = passThrough
        self.options = options
        self.console = console
        if let native = audio as? PipeWireOutput, let group = native.configuration.group {
            sinkServer = .pipeWire(remote: native.configuration.remote, group: group)
        } else {
            sinkServer = .pulse(server: options.environment["PULSE_SERVER"])
        }
        let state = Locked(State(running: nil, profile: profile))
        self.state = state
        // A failure for good ends the run and stops a wait for the server; a run being made
        // meanwhile (`turnOn`) reads the watch once it is on.
        output = LiveOutputWatch(engine: engine, failed: { failure in
            state.withLock { state in
                state.running?.feed.fail(failure)
                if state.waitingForServer {
                    state.wait = 0
                    state.lastFailure = failure
                }
            }
        }, reset: { [changing] in
            let rehold = state.withLock { state -> (feed: LiveFeed, output: any SinkHoldingOutput, to: String)? in
                state.running?.feed.session.restartLayer()
                guard let running = state.running, let held = running.heldOutput else { return nil }
                return (running.feed, held, running.real)
            }
            // The stream the engine made anew (after it failed, or its server came back) is not
            // held: held again, off the engine's thread, while the run it was held for goes on.
            guard let rehold else { return }
            DispatchQueue.global().async {
                changing.withLock { _ in
                    guard state.withLock({ $0.running?.feed === rehold.feed }) else { return }
                    Self.holdAgain(rehold.output, to: rehold.to, console: console)
                }
            }
        })
    }

    /// A run's feed failed (its capture's server went away, the output failed): the run is
    /// torn down as `/hapsync/live 0` would, the reason kept for `/hapsync/status`; when its
    /// server went away (and the output has not failed for good), the wait for the server begins
    /// (`awaitServer`). On a queue of its own, never the feed's thread.
    private func failed(_ feed: LiveFeed, _ why: String) {
        changing.withLock { _ in
            let ended = state.withLock { (state: inout State) -> Running? in
                guard let running = state.running, running.feed === feed else { return nil }
                state.running = nil
                state.lastFailure = why
                return running
            }
            guard let ended else { return }
            let serverGone = serverWentAway(ended)
            console.err(serverGone ? "live: the sound server went away (\(why)); live haptics wait for it to come back\n" : "live: ended: \(why)\n")
            stop(ended, serverGone: serverGone)
            guard serverGone else { return }
            let lossesBefore = ended.outputLosses
            let wait = state.withLock { (state: inout State) -> Int in
                guard output.status.failure == nil else { return 0 }
                state.waits += 1
                state.wait = state.waits
                return state.wait
            }
            guard wait != 0 else { return }
            let waiter = Thread { [weak self] in self?.awaitServer(wait, outputLossesBefore: lossesBefore) }
            waiter.name = "hapsync-lvwait"
            waiter.start()
        }
    }

    /// Whether a run whose feed failed lost its sound server, not only its sink (its control
    /// connection fails too, within a second; a native sink's capture says so, or the server no
    /// longer answers); if so its live sink went with the server and is not removed. A run whose
    /// feed has not failed: false at once. Holding `changing`.
    private func serverWentAway(_ running: Running) -> Bool {
        guard running.feed.failure != nil else { return false }
        guard let hold = running.hold else {
            guard case .pipeWire(let remote, _) = sinkServer else { return false }
            return running.feed.captureServerWentAway || PipeWireOutput.probe(remote: remote) != .answers
        }
        guard hold.waitUntilGone(atMost: 1_000_000_000) else { return false }
        hold.liveSink = nil
        return true
    }

    /// Whether the server the live sink is made on answers now.
    private var sinkServerAnswers: Bool {
        switch sinkServer {
        case .pulse(let server): PulseConnection.answers(server: server)
        case .pipeWire(let remote, _): PipeWireOutput.probe(remote: remote) == .answers
        }
    }

    /// Wait number `wait`: waits for the sound server a run ended with to answer again and the
    /// service's output to be back on it, then starts a new run; tries for `restartPatience` (a
    /// server sets its sinks up a moment after it answers), then gives up, saying why. Returns
    /// once a run is on, it gave up, or the wait was stopped (`/hapsync/live 0`, the service's
    /// end, the output failing for good, another run turned on). Where the sink is made natively,
    /// on the output's own server, the output counts as back only once it went down with that
    /// server (its losses past `outputLossesBefore`) and came back: a server answering again at
    /// once (socket-activated) is not taken for one the output never left. Its own thread.
    private func awaitServer(_ wait: Int, outputLossesBefore: Int) {
        let sharesTheServer = if case .pipeWire = sinkServer { true } else { false }
        var giveUp: UInt64?
        while state.withLock({ $0.wait == wait }) {
            if sinkServerAnswers {
                // The patience counts from the server's first answer, whether or not the output
                // came back (a server taken for gone that never was: the output never goes down).
                let now = MonotonicClock.nanoseconds()
                if giveUp == nil { giveUp = now + Self.restartPatience }
                let status = output.status
                var why = "the service's audio output did not come back on it"
                if status.isBack(sharesTheServer: sharesTheServer, lossesBefore: outputLossesBefore) {
                    do throws(OSCCommands.CommandError) {
                        guard let said = try turnOn(resuming: wait) else { return }
                        console.err("live: the sound server is back: \(said) (applications that played into the old sink are where their server put them: move them to it again)\n")
                        return
                    } catch {
                        why = error.description
                    }
                }
                if let giveUp, now >= giveUp {
                    let why = "the sound server came back, but live haptics could not start again: \(why)"
                    console.err("live: \(why)\n")
                    state.withLock { state in
                        guard state.wait == wait else { return }
                        state.wait = 0
                        state.lastFailure = why
                    }
                    return
                }
            }
            usleep(250_000)
        }
    }

    /// How long a server come back is tried before live haptics give up on it, ns.
    static let restartPatience: UInt64 = 15_000_000_000

    func turnOn() throws(OSCCommands.CommandError) -> String {
        // Not resuming a wait: never nil.
        try turnOn(resuming: nil) ?? ""
    }

    /// `turnOn`; `resuming` a wait (by its number): only while that wait is still the one under
    /// way, nil when it was stopped first.
    private func turnOn(resuming wait: Int?) throws(OSCCommands.CommandError) -> String? {
        try changing.withLock { _ throws(OSCCommands.CommandError) -> String? in
            if let wait, state.withLock({ $0.wait != wait }) { return nil }
            enum Found {
                case on(String)
                case failed(Running)
                case off
            }
            let found = state.withLock { (state: inout State) -> Found in
                guard let running = state.running else { return .off }
                guard let why = running.feed.failure else { return .on(running.real) }
                // A run that cannot go on is cleared first, then started anew.
                state.lastFailure = why
                state.running = nil
                return .failed(running)
            }
            switch found {
            case .on(let real): return "already on: '\(LiveCommand.sinkName)' → \(real)"
            case .failed(let running):
                stop(running, serverGone: serverWentAway(running))
            case .off: break
            }
            let begun = state.withLock { (state: inout State) -> (LiveProfile, LiveStyle, LiveOutputWatch.Status) in
                let output = output.status
                if output.failure == nil { state.starting = true }
                return (state.profile, state.style, output)
            }
            if let failure = begun.2.failure { throw OSCCommands.CommandError("\(failure); live haptics play the sound on through it") }
            do throws(CLIError) {
                let (running, said) = try start(profile: begun.0, style: begun.1)
                let reopened = state.withLock { (state: inout State) -> Bool in
                    state.starting = false
                    state.wait = 0
                    state.running = running
                    state.lastFailure = nil
                    // Settings changed while the run was being made hold from now on, and what
                    // the engine went through meanwhile reaches the run.
                    running.feed.session.profile = state.profile
                    running.feed.session.style = state.style
                    let output = output.status
                    if let failure = output.failure { running.feed.fail(failure) }
                    guard output.resets != begun.2.resets else { return false }
                    running.feed.session.restartLayer()
                    return true
                }
                // A stream the engine made anew while the run was being made is not held (the
                // reset handler found no run to hold it for): held here.
                if reopened, let held = running.heldOutput { Self.holdAgain(held, to: running.real, console: console) }
                return said
            } catch {
                state.withLock { $0.starting = false }
                throw OSCCommands.CommandError((error.messages + error.hints).joined(separator: "; "))
            }
        }
    }

    /// Makes the sink and starts the feed, undoing what it made if a step fails.
    private func start(profile: LiveProfile, style: LiveStyle) throws(CLIError) -> (Running, String) {
        switch sinkServer {
        case .pulse(let server): try startMonitored(server: server, profile: profile, style: style)
        case .pipeWire(let remote, let group): try startNative(remote: remote, group: group, profile: profile, style: style)
        }
    }

    /// `start` through PulseAudio's protocol on `server`: the sink made there, its monitor
    /// captured; the service's stream held to the real sink for the run (`holdOutput`).
    private func startMonitored(server: String?, profile: LiveProfile, style: LiveStyle) throws(CLIError) -> (Running, String) {
        let hold = try LiveRun.ServerHold(server: server)
        var held: (output: any SinkHoldingOutput, to: String)?
        do throws(CLIError) {
            let real = try LiveRun.realSink(options.sinkName, on: hold.control)
            try LiveRun.checkRates(stream: audio, sink: real)
            held = holdOutput(to: real.name).map { ($0, real.name) }
            let made = try LiveRun.makeLiveSink(on: hold.control, playingOnTo: real)
            hold.liveSink = made
            let feed = try startFeed(captureSink: made.name, channels: made.channels, source: .monitor(server: server), profile: profile, style: style)
            var said = "'\(made.name)' → \(real.name), the sound \(String(format: "%.1f", feed.delayMs)) ms behind"
            if let taken = made.takenOver { said += "; took over \(taken)" }
            console.err("live: \(said)\n")
            return (Running(hold: hold, feed: feed.feed, real: real.name, heldOutput: held?.output), said)
        } catch {
            if let sink = hold.liveSink { LiveRun.remove(sink, console: console) }
            if let held { release(held.output, from: held.to) }
            hold.control.close()
            throw error
        }
    }

    /// `start` natively on the PipeWire server `remote`: the sink a node of the service's own in
    /// `group`, the service's stream's, after a leftover of a killed run made through
    /// pipewire-pulse is removed (as `hapsync live` does). The real sink is `--sink`, else
    /// PipeWire's default named now (where the streams playing into the sink go at the end); the
    /// service's stream, which follows the default sink without `--sink`, is held to it for the
    /// run, so that it never plays into the sink it feeds were that made the default.
    private func startNative(remote: String?, group: String, profile: LiveProfile, style: LiveStyle) throws(CLIError) -> (Running, String) {
        let realName = try LiveRun.nativeRealSink(options, console: console, notePrefix: "live: note", service: true)
        if realName == nil {
            console.err("live: warning: the service's stream is not held to a sink: do not make '\(LiveCommand.sinkName)' the default sink while live haptics are on\n")
        }
        let losses = output.status.losses
        let held = realName.flatMap { holdOutput(to: $0) }
        let feed: (feed: LiveFeed, delayMs: Double)
        do throws(CLIError) {
            feed = try startFeed(captureSink: LiveCommand.sinkName, channels: 2, source: .pipeWireSink(remote: remote, group: group), profile: profile, style: style)
        } catch {
            if let held, let realName { release(held, from: realName) }
            throw error
        }
        let real = realName ?? "the default sink"
        let said = "'\(LiveCommand.sinkName)' → \(real), the sound \(String(format: "%.1f", feed.delayMs)) ms behind (the sink made natively on PipeWire)"
        console.err("live: \(said)\n")
        return (Running(hold: nil, feed: feed.feed, real: real, handOverTo: realName, outputLosses: losses, heldOutput: held), said)
    }

    /// Without `--sink` the service's stream follows the default sink, and were 'hapsync-live'
    /// made the default it would play into the sink it feeds (an echo that never ends): for the
    /// run it is held to `real`, the real sink, and let go at the end (`stop`). The output held,
    /// or nil: `--sink` given (the stream is held to it already), or the hold refused (a warning
    /// says so).
    private func holdOutput(to real: String) -> (any SinkHoldingOutput)? {
        guard options.sinkName == nil, let output = audio as? any SinkHoldingOutput else { return nil }
        if let why = output.hold(to: real) {
            console.err("live: warning: the service's stream could not be held to \(real) (\(why)): do not make '\(LiveCommand.sinkName)' the default sink while live haptics are on\n")
            return nil
        }
        return output
    }

    /// Holds `output`, a stream the engine made anew during a run it was held for, to `real`
    /// again, warning on `console` when that fails. Holding `changing`.
    private static func holdAgain(_ output: any SinkHoldingOutput, to real: String, console: HapSyncCLI.Console) {
        if let why = output.hold(to: real) {
            console.err("live: warning: the service's stream, made anew, could not be held to \(real) (\(why))\n")
        }
    }

    /// Ends `output`'s hold (`holdOutput`) to `real`, warning when that fails (unless `quietly`:
    /// its server is taken for gone, and the stream with it).
    private func release(_ output: any SinkHoldingOutput, from real: String, quietly: Bool = false) {
        if let why = output.hold(to: nil), !quietly {
            console.err("live: warning: the service's stream is still held to \(real) (\(why))\n")
        }
    }

    /// The feed from `captureSink` (`channels` channels; its monitor on `server`, or the sink
    /// made natively with `pipeWire`) at the output's rate, its pass-through woken, started; the
    /// sound's delay behind the sink, ms. Nothing left running when it throws.
    private func startFeed(captureSink: String, channels: Int, source: LiveCaptureSource,
                           profile: LiveProfile, style: LiveStyle) throws(CLIError) -> (feed: LiveFeed, delayMs: Double) {
        let rate = audio.clock.fit.sampleRate
        guard StreamingOnsetDetector.sampleRates.contains(rate) else {
            throw .failure("the service's audio runs at \(Int(rate)) Hz; live haptics analyse 8 to 192 kHz", hint: "set the sink's (PipeWire's graph's) rate")
        }
        let detector = StreamingOnsetDetector(sampleRate: rate)
        let delayMs = LiveCommand.defaultDelayMs(lookAhead: detector.lookAhead.seconds)
        // The stream awake first (a paused one is resumed and realigned), then the pass-through.
        audio.willPlay()
        // The native sink shares the stream's driver (its node group): no drift to follow.
        passThrough.activate(hold: LiveRun.holdFrames(delayMs: delayMs, rate: rate), sampleRate: rate, followsDrift: !source.isNative)
        let feed = LiveFeed(engine: engine, audio: audio, passThrough: passThrough, captureSink: captureSink, channels: channels,
                            rate: rate, source: source, style: style, profile: profile, sensitivity: detector.sensitivity,
                            minimumGap: detector.minimumGap)
        feed.onFailure = { [weak self, weak feed] why in
            guard let self, let feed else { return }
            DispatchQueue.global().async { self.failed(feed, why) }
        }
        feed.onNote = { [console] note in console.err("live: \(note)\n") }
        do throws(LiveCaptureFailure) {
            try feed.start()
        } catch {
            passThrough.deactivate()
            throw .failure(error.description)
        }
        return (feed, delayMs)
    }

    /// Stops a run: the feed (a native sink first hands what plays into it over to the real
    /// sink), the pass-through, the sink made through PulseAudio's protocol (its streams moved
    /// back), the connection, and then, the live sink gone, the service's stream's hold (unless
    /// the server went away with it). Returns the run's summary on one line.
    @discardableResult
    private func stop(_ running: Running, serverGone: Bool = false) -> String {
        let handedOver = running.feed.stop(handingOverTo: running.handOverTo)
        if let handedOver { console.err("note: \(handedOver)\n") }
        passThrough.deactivate()
        let moved = running.hold?.liveSink.flatMap { LiveRun.remove($0, console: console) } ?? handedOver
        running.hold?.control.close()
        // The service's stream follows the default sink again (a stream made anew since was
        // never held: nothing to clear). Its server taken for gone, the stream went with it, or,
        // the output still up, the server was not gone after all: tried, without a warning.
        if let output = running.heldOutput, !serverGone || !self.output.status.isDown {
            release(output, from: running.real, quietly: serverGone)
        }
        let summary = running.feed.summary
        console.err(summary)
        return (summary.split(separator: "\n").joined(separator: "; ") + (moved.map { "; \($0)" } ?? ""))
    }

    func turnOff() -> String? {
        changing.withLock { _ -> String? in
            var waited = false
            let ended = state.withLock { (state: inout State) -> Running? in
                waited = state.waitingForServer
                state.wait = 0
                guard let running = state.running else { return nil }
                state.running = nil
                if let why = running.feed.failure { state.lastFailure = why }
                return running
            }
            guard let ended else { return waited ? "live haptics were off, waiting for the sound server to come back: no longer" : nil }
            return stop(ended, serverGone: serverWentAway(ended))
        }
    }

    func setGain(_ gain: Double) throws(OSCCommands.CommandError) -> Double {
        let range = LiveProfile.gainRange
        guard range.contains(gain) else {
            throw OSCCommands.CommandError("gain \(gain) is not within \(number(range.lowerBound))-\(number(range.upperBound))")
        }
        state.withLock { state in
            state.profile.gain = gain
            state.running?.feed.session.profile.gain = gain
        }
        return gain
    }

    func setProfile(named name: String, file: URL?) throws(OSCCommands.CommandError) -> String {
        var profile: LiveProfile
        do throws(LiveProfile.LoadError) {
            profile = try LiveProfile.named(file?.path ?? name)
        } catch {
            throw OSCCommands.CommandError(error.description)
        }
        profile.name = name
        state.withLock { state in
            state.profile = profile
            state.running?.feed.session.profile = profile
        }
        return profile.name
    }

    func setStyle(_ name: String) throws(OSCCommands.CommandError) -> String {
        guard let style = LiveStyle(rawValue: name) else {
            throw OSCCommands.CommandError("style '\(name)' is not one of \(LiveStyle.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        state.withLock { state in
            state.style = style
            state.running?.feed.session.style = style
        }
        return style.rawValue
    }

    var status: [(key: String, value: OSCValue)] {
        state.withLock { state -> [(key: String, value: OSCValue)] in
            let failure = state.running.map { $0.feed.failure } ?? state.lastFailure
            let settings: [(key: String, value: OSCValue)] = [
                ("live", .string(state.starting ? "starting" : state.waitingForServer ? "waiting for the sound server" : failure.map { "failed: \($0)" } ?? (state.running == nil ? "off" : "on"))),
                ("live-profile", .string(state.profile.name)), ("live-gain", .float(state.profile.gain)), ("live-style", .string(state.style.rawValue)),
            ]
            guard let running = state.running else { return settings }
            let counts = running.feed.session.counts
            let played = running.feed.playedOn
            return settings + [
                ("live-seconds", .float(running.feed.seconds)), ("live-level-changes", .int(Int64(counts.levelChanges))),
                ("live-transients", .int(Int64(counts.transients))), ("live-late", .int(Int64(counts.late))),
                ("live-lost", .int(Int64(counts.dropped))), ("live-lag-p50-ms", .float(counts.lags.percentileMs(50) ?? 0)),
                ("live-lag-max-ms", .float(counts.lags.max / 1e6)),
                ("live-capture-overruns", .int(Int64(running.feed.captureCounts.overruns))),
                ("live-underruns", .int(Int64(played.underruns))), ("live-late-frames", .int(Int64(played.lateFrames))),
            ]
        }
    }
}
