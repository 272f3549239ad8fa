import Dispatch
import Foundation
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncGeneration
import HapSyncOSC
import HapSyncRuntime

/// `serve`'s live haptics, driven by `/hapsync/live`: on, the 'HapSync Live' sink is made on the
/// server applications play to, its monitor analysed as in `hapsync live`, and the sound played
/// on to the service's own audio sink a look-ahead later through the service's audio stream
/// (whose pass-through is dormant until then), with a transient at each onset on that stream's
/// clock; off (or the service ending), the sink removed and what played into it moved back.
///
/// A profile set here changes how hits feel (gain, curve, floor), a style what is played; a
/// profile's rumble and voice-coil
/// levels and low-pass are the outputs' and would change every pattern the service plays, so
/// they are not applied. `turnOn` and `turnOff` come one at a time off the service's thread
/// (and `turnOff` at its end) and hold `changing` while the sound server answers; the settings
/// and `status` come on the service's thread meanwhile and take only `state`, briefly.
final class ServeLive: LiveControl, @unchecked Sendable {
    /// One live run: the control connection, the sink, the feed, the real sink's name.
    private struct Running {
        let control: PulseConnection
        let sink: LiveSink
        let feed: LiveFeed
        let real: String
    }

    private struct State {
        var running: Running?
        /// Whether a run is being made (`turnOn` under way), for `/hapsync/status`.
        var starting = false
        var profile: LiveProfile
        var style = LiveStyle.transients
        /// Why the last run could not go on, kept for `/hapsync/status` after it ended.
        var lastFailure: String?
    }

    private let engine: HapticEngine
    private let audio: SoundServerOutput
    private let passThrough: PassThroughAudio
    private let options: PlaybackOptions
    private let console: HapSyncCLI.Console
    private let state: Locked<State>
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
        state = Locked(State(running: nil, profile: profile))
        // An output that failed for good ends a live run (its sink removed, its streams moved
        // back) rather than leave applications playing into a sink nobody hears.
        engine.stoppedHandler = { [weak self] reason in
            if case .systemError(let why) = reason { self?.state.withLock { $0.running?.feed.fail("the haptic or audio output failed: \(why)") } }
        }
    }

    /// A run's feed failed (its capture's server went away, the output failed): the run is
    /// torn down as `/hapsync/live 0` would, the reason kept for `/hapsync/status`. On a thread
    /// of its own, never the feed's.
    private func failed(_ feed: LiveFeed, _ why: String) {
        changing.withLock { _ in
            let ended = state.withLock { (state: inout State) -> Running? in
                guard let running = state.running, running.feed === feed else { return nil }
                state.running = nil
                state.lastFailure = why
                return running
            }
            guard let ended else { return }
            console.err("live: ended: \(why)\n")
            stop(ended)
        }
    }

    func turnOn() throws(OSCCommands.CommandError) -> String {
        try changing.withLock { _ throws(OSCCommands.CommandError) -> String in
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
            case .failed(let running): stop(running)
            case .off: break
            }
            let (profile, style) = state.withLock { (state: inout State) in
                state.starting = true
                return (state.profile, state.style)
            }
            do throws(CLIError) {
                let (running, said) = try start(profile: profile, style: style)
                state.withLock { (state: inout State) in
                    state.starting = false
                    state.running = running
                    state.lastFailure = nil
                    // Settings changed while the run was being made hold from now on.
                    running.feed.session.profile = state.profile
                    running.feed.session.style = state.style
                }
                return said
            } catch {
                state.withLock { $0.starting = false }
                throw OSCCommands.CommandError((error.messages + error.hints).joined(separator: "; "))
            }
        }
    }

    /// Makes the sink and starts the feed, undoing what it made if a step fails.
    private func start(profile: LiveProfile, style: LiveStyle) throws(CLIError) -> (Running, String) {
        let server = options.environment["PULSE_SERVER"]
        let control = try LiveRun.connect(server: server)
        var sink: LiveSink?
        do throws(CLIError) {
            let real = try LiveRun.realSink(options.sinkName, on: control)
            try LiveRun.checkRates(stream: audio, sink: real)
            let rate = audio.clock.fit.sampleRate
            let made = try LiveRun.makeLiveSink(on: control, playingOnTo: real)
            sink = made
            let detector = StreamingOnsetDetector(sampleRate: rate)
            let delayMs = LiveCommand.defaultDelayMs(lookAhead: detector.lookAhead.seconds)
            // The stream awake first (a paused one is resumed and realigned), then the pass-through.
            audio.willPlay()
            passThrough.activate(hold: LiveRun.holdFrames(delayMs: delayMs, rate: rate))
            let feed = LiveFeed(engine: engine, audio: audio, passThrough: passThrough, captureSink: made.name, channels: made.channels,
                                rate: rate, server: server, style: style, profile: profile, sensitivity: detector.sensitivity,
                                minimumGap: detector.minimumGap)
            feed.onFailure = { [weak self, weak feed] why in
                guard let self, let feed else { return }
                DispatchQueue.global().async { self.failed(feed, why) }
            }
            do {
                try feed.start()
            } catch {
                passThrough.deactivate()
                throw .failure("\(error)")
            }
            var said = "'\(made.name)' → \(real.name), the sound \(String(format: "%.1f", delayMs)) ms behind"
            if let taken = made.takenOver { said += "; took over \(taken)" }
            console.err("live: \(said)\n")
            return (Running(control: control, sink: made, feed: feed, real: real.name), said)
        } catch {
            if let sink { LiveRun.remove(sink, console: console) }
            control.close()
            throw error
        }
    }

    /// Stops a run: the feed, the pass-through, the sink (its streams moved back), the connection.
    /// Returns the run's summary on one line.
    @discardableResult
    private func stop(_ running: Running) -> String {
        running.feed.stop()
        passThrough.deactivate()
        let moved = LiveRun.remove(running.sink, console: console)
        running.control.close()
        let summary = running.feed.summary
        console.err(summary)
        return (summary.split(separator: "\n").joined(separator: "; ") + (moved.map { "; \($0)" } ?? ""))
    }

    func turnOff() -> String? {
        changing.withLock { _ -> String? in
            let ended = state.withLock { (state: inout State) -> Running? in
                guard let running = state.running else { return nil }
                state.running = nil
                if let why = running.feed.failure { state.lastFailure = why }
                return running
            }
            return ended.map { stop($0) }
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
                ("live", .string(state.starting ? "starting" : failure.map { "failed: \($0)" } ?? (state.running == nil ? "off" : "on"))),
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
