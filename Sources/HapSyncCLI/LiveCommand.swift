import Dispatch
import Foundation
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncCore
import HapSyncGeneration
import HapSyncHapticOutput
import HapSyncOutputs
import HapSyncRuntime

/// `hapsync live`: haptics from any sound as it plays. A virtual sink takes what applications
/// play, its monitor is analysed as it comes, and the sound is played on to the real sink a
/// bounded look-ahead later, with a transient at each onset on the same audio clock.
enum LiveCommand {
    static let delay = Option<Double?>("delay-ms", "N", .decimal("milliseconds", .from(1, to: 500)),
                                       help: "how far behind the live sink the sound plays on (default: the analysis' look-ahead + 5 ms, at most 20; no less than the look-ahead; on PipeWire it may grow after underruns, docs/live.md)")
    static let noDelay = Option(flag: "no-delay", help: "no virtual sink: follow the real sink's monitor as it plays, leave the sound alone, and report how far the haptics lag it")
    static let profile = Option<String>("profile", "NAME|FILE", .text, default: LiveProfile.dualsense.name,
                                        help: "how loud hits feel: dualsense (default), rumble, shaker, or a JSON file (docs/live.md)")
    static let style = Option<LiveStyle>("style", "STYLE", .choice, default: .transients,
                                         help: "transients (default): a tap at each hit; percussive, balanced: taps over a continuous layer that follows the sound's felt loudness (quiet, half); ambient: the layer alone")
    static let seconds = Option<Double?>("seconds", "S", .decimal("seconds", .above(0, upTo: 86_400)),
                                         help: "stop after S seconds (default: run until Ctrl-C)")
    static let onsets = Option<String?>("onsets", "FILE", .text,
                                        help: "write each onset found to FILE as a JSON line: its frame and time in the capture, loudness, what became of it and when its transient was placed (docs/live.md; --force replaces FILE)")
    /// The name of the virtual sink applications play into.
    static let sinkName = "hapsync-live"
    /// What desktops show for it.
    static let sinkDescription = "HapSync Live"

    static let command = Command(
        name: "live", summary: "haptics from any sound as it plays: a 'HapSync Live' sink that applications play into",
        about: """
            Makes a sink 'hapsync-live' ("HapSync Live") on your sound server (on PipeWire a
            node of its own, natively; on PulseAudio, or with --audio pulse, a null sink) for
            applications to play into
            (PULSE_SINK=hapsync-live game, or move them with pavucontrol or pactl), finds the
            onsets in what they play as it comes (the generator's detector, streaming, with a
            bounded look-ahead), and plays the sound on to the real sink (--sink) that
            look-ahead later, with a transient at each onset on the same audio clock: mixed
            into the sound's own stream for a waveform output on the same sink (a DualSense's
            rear channels), following the audio clock for a rumble pad. Runs until Ctrl-C (or
            --seconds), then removes the sink, moving what played into it back to the real
            sink, and prints a summary. A sink left by a killed run is taken over (natively,
            nothing is left: the node goes with the run).
            With --no-delay there is no virtual sink: the real sink's monitor is followed as it
            plays and the summary says how far the haptics lagged.
            """,
        groups: [OptionGroup([delay, noDelay, profile, style, GenerateCommand.sensitivity, seconds, onsets]),
                 OptionGroup("OUTPUT OPTIONS (as for 'hapsync play')", [PlaybackOptions.haptics, PlaybackOptions.audio, PlaybackOptions.sink,
                                                                       PlaybackOptions.latency, PlaybackOptions.hapticLatency,
                                                                       PlaybackOptions.rumbleInterval, PlaybackOptions.rumbleBurst, PlaybackOptions.force])],
        positionals: .none,
        synopsis: ["hapsync live [--haptics TARGET]... [--sink REAL_SINK] [--delay-ms N | --no-delay] [--profile NAME|FILE] [--style STYLE] [--sensitivity X]"],
        run: run)

    /// How far behind the live sink the sound plays on unless told, ms: the analysis' look-ahead
    /// (`lookAhead` seconds) and 5 ms for the capture's fragments to arrive, at most 20.
    static func defaultDelayMs(lookAhead: Double) -> Double { min(20, lookAhead * 1000 + 5) }

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let options = try PlaybackOptions(parsed, environment: context.environment)
        let profile: LiveProfile
        do throws(LiveProfile.LoadError) {
            profile = try LiveProfile.named(parsed[Self.profile])
        } catch {
            throw .usage(error.description)
        }
        if parsed[noDelay], let d = parsed[delay] { throw .usage("--delay-ms \(number(d)) and --no-delay: one or the other") }
        let detector = StreamingOnsetDetector(sampleRate: 48_000, sensitivity: parsed[GenerateCommand.sensitivity])
        let lookAheadMs = detector.lookAhead.seconds * 1000
        let delayMs = parsed[delay] ?? defaultDelayMs(lookAhead: detector.lookAhead.seconds)
        guard parsed[noDelay] || delayMs >= lookAheadMs else {
            throw .usage("--delay-ms \(number(delayMs)) is shorter than the analysis' look-ahead (\(String(format: "%.1f", lookAheadMs)) ms): onsets would be found after their sound played on")
        }
        try LiveRun(options: options, profile: profile, style: parsed[style], detector: detector, delayMs: parsed[noDelay] ? nil : delayMs,
                    seconds: parsed[seconds], onsetsPath: parsed[onsets], latencyGiven: parsed.isGiven(PlaybackOptions.latency),
                    console: context.console).go()
    }
}

/// One `hapsync live` run, set up and torn down in order: the real sink found before the live
/// sink exists (a server may make a new sink its default), the live sink, the engine with the
/// pass-through in its stream, the capture last; at the end the capture first, the engine, then
/// the sink removed with what played into it moved back to the real sink, whatever ended the run.
struct LiveRun {
    let options: PlaybackOptions
    let profile: LiveProfile
    let style: LiveStyle
    let detector: StreamingOnsetDetector
    /// The pass-through's distance, ms; nil: `--no-delay`.
    let delayMs: Double?
    let seconds: Double?
    /// `--onsets`: where each onset is written (`LiveOnsetLog`); nil: nowhere.
    let onsetsPath: String?
    /// Whether `--latency-ms` was given (the native PipeWire sink does not use it, and says so).
    var latencyGiven = false
    let console: HapSyncCLI.Console

    func go() throws(CLIError) {
        try PlayCommand.checkTrace(options)
        if let onsetsPath {
            if let tracePath = options.tracePath, OutputFile.sameFile(onsetsPath, tracePath)
                || URL(fileURLWithPath: onsetsPath).standardizedFileURL == URL(fileURLWithPath: tracePath).standardizedFileURL {
                throw .usage("--onsets \(onsetsPath) is the trace's file too; name another")
            }
            try PlayCommand.checkOutput(onsetsPath, replacing: options.replacesTrace, what: "--onsets path")
        }
        let signals = SignalWatch()
        defer { signals.cancel() }
        // On PipeWire, when the sound is played on natively, the live sink is made natively too.
        let choice = delayMs == nil ? options.audioChoice : options.audioChoice.resolved(environment: options.environment)
        // With --no-delay, the real sink's monitor is recorded natively on PipeWire unless
        // --audio pulse says otherwise (--audio none: no sound is played, whichever server).
        let nativeMonitor = delayMs == nil && (options.audioChoice == .none ? .auto : options.audioChoice).resolved(environment: options.environment) == .pipewire
        if (delayMs != nil && choice == .pipewire) || nativeMonitor {
            let (summary, failure) = if let delayMs { try runNative(delayMs: delayMs, signals: signals) } else { try runNativeMonitor(signals: signals) }
            console.out(summary)
            if let failure { throw failure }
            if let signal = signals.caughtSignal { throw CLIError(.ended(by: signal)) }
            return
        }
        let server = options.environment["PULSE_SERVER"]
        let hold = try ServerHold(server: server)
        defer { hold.control.close() }
        // The real sink, named before the live sink exists.
        let real = try Self.realSink(options.sinkName, on: hold.control)
        if delayMs == nil { try Self.checkFollowable(real.name, channels: real.channels) }
        if delayMs != nil {
            hold.liveSink = try Self.makeLiveSink(on: hold.control, playingOnTo: real)
            if let taken = hold.liveSink?.takenOver { console.err("note: took over \(taken)\n") }
        }
        var failure: CLIError?
        var summary = ""
        do throws(CLIError) {
            (summary, failure) = try run(real: real, hold: hold, choice: choice, signals: signals)
        } catch {
            failure = error
        }
        // Whatever happened: the sink goes, and what played into it goes back to the real sink
        // (unless it went with its server).
        if let liveSink = hold.liveSink {
            if hold.isGone {
                console.err("note: the sink '\(liveSink.name)' went with the sound server; nothing is left to remove\n")
            } else {
                Self.remove(liveSink, console: console)
            }
        }
        if !summary.isEmpty { console.out(summary) }
        if let failure { throw failure }
        if let signal = signals.caughtSignal { throw CLIError(.ended(by: signal)) }
    }

    /// The pass-through's distance behind the capture, frames: `delayMs` at `rate` Hz.
    static func holdFrames(delayMs: Double, rate: Double) -> Int { Int((delayMs / 1000 * rate).rounded()) }

    /// The stream that plays the sound on must run at the live sink's rate (the real sink's): the
    /// pass-through does not resample.
    static func checkRates(stream audio: SoundServerOutput, sink real: PulseConnection.SinkInfo) throws(CLIError) {
        let rate = audio.clock.fit.sampleRate
        guard rate == Double(real.rate) else {
            throw .failure("the output stream runs at \(Int(rate)) Hz, the live sink at \(real.rate) Hz (the sink '\(real.name)''s rate): live haptics need them equal",
                           hint: "set the sink's rate, or pass --audio pulse")
        }
    }

    /// A control connection to the server applications play to (`PULSE_SERVER`, else the
    /// default); `onFailure` hears the connection fail (the server went away).
    static func connect(server: String?, onFailure: ((String) -> Void)? = nil) throws(CLIError) -> PulseConnection {
        do {
            return try PulseConnection(clientName: "HapSync Live", server: server, threadName: "hapsync-livectl", onFailure: onFailure)
        } catch {
            throw .failure("\(error)", hint: "live haptics need a PulseAudio server or PipeWire's pipewire-pulse")
        }
    }

    /// The sink the sound plays on to (`name`, else the server's default), checked for what the
    /// analysis takes and for not being the live sink itself.
    static func realSink(_ name: String?, on control: PulseConnection) throws(CLIError) -> PulseConnection.SinkInfo {
        let real: PulseConnection.SinkInfo
        do {
            real = try control.withLock { () throws(PulseAudioOutput.PulseError) -> PulseConnection.SinkInfo in
                try control.sinkInfo(named: name ?? "@DEFAULT_SINK@")
            }
        } catch {
            throw .failure("\(error)")
        }
        guard StreamingOnsetDetector.sampleRates.contains(Double(real.rate)) else {
            throw .failure("the sink '\(real.name)' runs at \(real.rate) Hz; live haptics analyse 8 to 192 kHz", hint: "set the sink's rate, or name another sink")
        }
        if real.name == LiveCommand.sinkName {
            throw .usage("the real sink is '\(real.name)' itself\(name == nil ? " (the server's default)" : ""); name the sink to play on to")
        }
        return real
    }

    /// The live sink, at the real sink's rate, a leftover of a killed run taken over.
    static func makeLiveSink(on control: PulseConnection, playingOnTo real: PulseConnection.SinkInfo) throws(CLIError) -> LiveSink {
        do throws(LiveSinkError) {
            return try LiveSink.create(on: control, name: LiveCommand.sinkName, description: LiveCommand.sinkDescription,
                                       rate: real.rate, channels: 2, realSink: real.name)
        } catch {
            throw .failure(error.description)
        }
    }

    /// Removes the live sink, what played into it moved to the real sink, saying so on `console`.
    /// Returns what it said.
    @discardableResult
    static func remove(_ liveSink: LiveSink, console: HapSyncCLI.Console) -> String? {
        do throws(LiveSinkError) {
            guard let removal = try liveSink.remove(), !removal.moved.isEmpty else { return nil }
            console.err("note: \(removal)\n")
            return removal.description
        } catch {
            console.err("warning: \(error.description)\n")
            return error.description
        }
    }

    /// The engine and the feed, until a signal, `--seconds` or a failure; the summary, and the
    /// failure that ended the run if one did. A sound server that goes away and comes back is
    /// waited for, and what the run had on it made anew (`recover`). `choice`: the sound server
    /// `--audio` came to (`resolved`).
    private func run(real: PulseConnection.SinkInfo, hold: ServerHold, choice: AudioServerChoice,
                     signals: SignalWatch) throws(CLIError) -> (summary: String, failure: CLIError?) {
        let liveSink = hold.liveSink, server = hold.server
        let rate = Double(real.rate)
        let passThrough = delayMs.map { Self.passThrough(delayMs: $0, rate: rate) }
        let audio = passThrough.flatMap {
            choice.output(sink: real.name, latency: options.audioLatency, environment: options.environment, passThrough: $0)
        }
        if passThrough != nil, audio == nil {
            throw .usage("--audio none: hapsync live plays the sound on; without audio use --no-delay")
        }
        let engine = try startEngine(audio: audio)
        defer { _ = engine.stop() }
        if let audio { try Self.checkRates(stream: audio, sink: real) }
        if passThrough == nil {
            try Self.checkNotOwnDrive(engine, following: real.name) { name in
                try? hold.control.withLock { () throws(PulseAudioOutput.PulseError) -> String in try hold.control.sinkInfo(named: name).name }
            }
        }
        let feed = LiveFeed(engine: engine, audio: audio, passThrough: passThrough, captureSink: liveSink?.name ?? real.name,
                            channels: liveSink?.channels ?? real.channels, rate: rate, source: .monitor(server: server), style: style, profile: profile,
                            sensitivity: detector.sensitivity, minimumGap: detector.minimumGap, recoversCapture: true)
        let mode = passThrough == nil ? "following \(real.name)'s monitor (--no-delay)" : "'\(LiveCommand.sinkName)' → \(real.name), the sound \(String(format: "%.1f", delayMs ?? 0)) ms behind"
        return try drive(feed, engine: engine, audio: audio, rate: rate, mode: mode, signals: signals) { why, stopAsked, outputBack throws(CLIError) in
            // The server went away (its control connection fails too, within a second), or
            // only the sink did (removed by hand): that ends the run.
            guard hold.waitUntilGone(atMost: 1_000_000_000) else { return nil }
            console.err("warning: the sound server went away (\(why)); live haptics wait for it to come back\n")
            while true {
                do throws(CLIError) {
                    guard try recover(hold, real: real, feed: feed, passThrough: passThrough, outputBack: outputBack, stop: stopAsked) else { return false }
                    break
                } catch {
                    // Gone again while its sink was being made anew: wait again.
                    if hold.isGone || !PulseConnection.answers(server: hold.server) {
                        console.err("warning: the sound server went away again (\((error.messages).joined(separator: "; "))); waiting for it\n")
                        continue
                    }
                    throw error
                }
            }
            console.err("note: the sound server is back: \(hold.liveSink.map { "'\($0.name)' made anew on it, playing on to \(real.name) (applications that played into the old one are where their server put them: move them to it again)" } ?? "following \(real.name)'s monitor again"); the run carries on\n")
            return true
        }
    }

    /// The run on PipeWire natively: the live sink is a node of the run's own
    /// (`PipeWireSinkCapture`: it goes with the run, whatever ends it, and the session manager
    /// moves what played into it to the default sink), in one node group with the stream that
    /// plays the sound on to `--sink` (or the default sink), so that both run in that sink's
    /// driver's cycles: the capture and the sound played on sample-locked. The rate is the
    /// graph's. A server that goes away and comes back is waited for, and the sink made anew.
    private func runNative(delayMs: Double, signals: SignalWatch) throws(CLIError) -> (summary: String, failure: CLIError?) {
        let remote = options.environment["PIPEWIRE_REMOTE"]
        // The real sink named before the live sink exists: the stream that plays on is held to
        // it, never following a default that became the live sink (it would capture itself).
        let realName = try Self.nativeRealSink(options, console: console, notePrefix: "note")
        let group = "hapsync-live-\(getpid())"
        // The graph's rate is known once the stream that plays the sound on runs; the pass-through
        // holds the delay at any rate the analysis takes.
        let assumed = 48_000.0
        // One driver runs the sink and the stream (the node group): no drift to follow.
        let passThrough = Self.passThrough(delayMs: delayMs, rate: assumed, capacityRate: StreamingOnsetDetector.sampleRates.upperBound,
                                           followsDrift: false)
        // The stream asks for the live sink's first cycle (both rounded up to a power of two
        // frames, as grouped nodes): the graph runs the shortest cycle its nodes ask for, and a
        // change of it when the sink joins would cost an underrun (PipeWire 0.3.65 wakes once on
        // the old cycle).
        guard let audio = AudioServerChoice.pipewire.output(sink: realName, latency: LiveFeed.fragmentSteps[0], environment: options.environment,
                                                            passThrough: passThrough, group: group) else {
            throw .usage("--audio none: hapsync live plays the sound on; without audio use --no-delay")
        }
        let engine = try startEngine(audio: audio)
        defer { _ = engine.stop() }
        let rate = audio.clock.fit.sampleRate
        try Self.checkGraphRate(rate)
        if rate != assumed { passThrough.activate(hold: Self.holdFrames(delayMs: delayMs, rate: rate), sampleRate: rate) }
        if latencyGiven {
            let cycle = PipeWireSinkCapture.cycle(forSeconds: LiveFeed.fragmentSteps[0], sampleRate: rate)
            console.err(String(format: "note: --latency-ms is not used with the live sink made natively: PipeWire runs the sink's cycle, %.1f ms, longer after underruns\n", cycle * 1000))
        }
        let feed = LiveFeed(engine: engine, audio: audio, passThrough: passThrough, captureSink: LiveCommand.sinkName, channels: 2, rate: rate,
                            source: .pipeWireSink(remote: remote, group: group), style: style, profile: profile, sensitivity: detector.sensitivity,
                            minimumGap: detector.minimumGap, recoversCapture: true)
        let real = realName ?? "the default sink"
        let mode = "'\(LiveCommand.sinkName)' (PipeWire, natively) → \(real), the sound \(String(format: "%.1f", delayMs)) ms behind"
        return try drive(feed, engine: engine, audio: audio, rate: rate, mode: mode, signals: signals, handOverTo: realName) { why, stopAsked, outputBack throws(CLIError) in
            // The node alone failed (removed by hand), its server still there: that ends the run.
            // A server that went away may answer again at once (a socket-activated one).
            guard feed.captureServerWentAway || PipeWireOutput.probe(remote: remote) != .answers else { return nil }
            console.err("warning: the sound server went away (\(why)); live haptics wait for it to come back\n")
            guard Self.awaitPipeWire(remote: remote, stop: stopAsked) else { return false }
            guard try Self.awaitOutput(outputBack, stop: stopAsked) else { return false }
            guard audio.clock.fit.sampleRate == rate else {
                throw .failure("PipeWire came back at \(Int(audio.clock.fit.sampleRate)) Hz, the run began at \(Int(rate)) Hz (live haptics do not follow a rate change)",
                               hint: "start hapsync live again")
            }
            // The same rate: the same hold.
            passThrough.activate(hold: Int(passThrough.hold))
            do throws(LiveCaptureFailure) {
                try feed.restartCapture(sink: LiveCommand.sinkName, channels: 2)
            } catch {
                throw .failure(error.description)
            }
            console.err("note: the sound server is back: '\(LiveCommand.sinkName)' made anew on it, playing on to \(real) (applications that played into the old one are where their server put them: move them to it again); the run carries on\n")
            return true
        }
    }

    /// `--no-delay` on PipeWire natively: the real sink's monitor (`--sink`, else PipeWire's
    /// default sink when the run starts) recorded by a capture stream in that sink's graph
    /// (`PipeWireSinkCapture(monitoring:)`), with the sink's channels at the graph's rate; the
    /// sound is left alone; the sink followed by its node.name from the start. A frame is heard
    /// when the sink took it plus the latency the sink reports (`PipeWireSinkCapture`). The sink
    /// going away ends the run, naming it; a server that goes away (within 2 s of the sink) and
    /// comes back is waited for and the sink looked for again by its name (within 10 s).
    private func runNativeMonitor(signals: SignalWatch) throws(CLIError) -> (summary: String, failure: CLIError?) {
        let remote = options.environment["PIPEWIRE_REMOTE"]
        let asked: String
        if let name = options.sinkName {
            asked = name
        } else {
            switch PipeWireOutput.defaultSink(remote: remote) {
            case .success(let name): asked = name
            case .failure(let why): throw .failure("--no-delay follows a sink's monitor, and \(why)", hint: "name the sink to follow with --sink")
            }
        }
        let refuseLiveSink = { (name: String) throws(CLIError) in
            guard name == LiveCommand.sinkName else { return }
            throw .usage("the real sink is '\(name)' itself\(options.sinkName == nil ? " (PipeWire's default)" : ""); name the sink to follow with --sink")
        }
        try refuseLiveSink(asked)
        // Followed by its node.name from here on (a number may be another sink's after a restart).
        let format = try Self.monitorFormat(of: asked, remote: remote)
        let sink = format.name
        try refuseLiveSink(sink)
        let engine = try startEngine(audio: nil)
        defer { _ = engine.stop() }
        try Self.checkNotOwnDrive(engine, following: sink) { name in try? PipeWireSinkCapture.monitorFormat(of: name, remote: remote).get().name }
        let feed = LiveFeed(engine: engine, audio: nil, passThrough: nil, captureSink: sink, channels: format.channels, rate: format.sampleRate,
                            source: .pipeWireMonitor(remote: remote), style: style, profile: profile, sensitivity: detector.sensitivity,
                            minimumGap: detector.minimumGap, recoversCapture: true)
        let mode = "following \(sink)'s monitor (PipeWire, natively; --no-delay)"
        return try drive(feed, engine: engine, audio: nil, rate: format.sampleRate, mode: mode, signals: signals) { why, stopAsked, _ throws(CLIError) in
            // The sink alone went (removed, unplugged), its server still there after 2 s: that
            // ends the run. (A server restarting takes the sink's owner, the session manager or
            // pipewire-pulse, down first: the sink goes a moment before the server does.)
            let patience = MonotonicClock.nanoseconds() + 2_000_000_000
            while !feed.captureServerWentAway, PipeWireOutput.probe(remote: remote) == .answers {
                if stopAsked() { return false }
                if MonotonicClock.nanoseconds() >= patience { return nil }
                usleep(100_000)
            }
            console.err("warning: the sound server went away (\(why)); live haptics wait for it to come back\n")
            guard Self.awaitPipeWire(remote: remote, stop: stopAsked) else { return false }
            // A server sets its sinks up a moment after it answers.
            let giveUp = MonotonicClock.nanoseconds() + 10_000_000_000
            var again: (name: String, channels: Int, sampleRate: Double)?
            while again == nil {
                if stopAsked() { return false }
                do throws(CLIError) {
                    again = try Self.monitorFormat(of: sink, remote: remote)
                } catch {
                    guard MonotonicClock.nanoseconds() < giveUp else { throw error }
                    usleep(250_000)
                }
            }
            guard let again, again.channels == format.channels, again.sampleRate == format.sampleRate else {
                throw .failure("the sink '\(sink)' came back with \(again?.channels ?? 0) channels at \(Int(again?.sampleRate ?? 0)) Hz, the run began with \(format.channels) at \(Int(format.sampleRate)) Hz (live haptics do not follow a change)",
                               hint: "start hapsync live again")
            }
            do throws(LiveCaptureFailure) {
                try feed.restartCapture(sink: sink, channels: format.channels)
            } catch {
                throw .failure(error.description)
            }
            console.err("note: the sound server is back: following \(sink)'s monitor again; the run carries on\n")
            return true
        }
    }

    /// `--no-delay` follows `sink` (its name): refused when `engine`'s waveform drive plays on
    /// that sink too (`--haptics waveform:SINK`, or `auto` found it; a number or another name for
    /// it turned into its name by `resolve`, nil when it cannot be): its monitor would carry the
    /// drive, and the analysis would find the haptics' own bursts as onsets and answer them.
    static func checkNotOwnDrive(_ engine: HapticEngine, following sink: String, resolve: (String) -> String?) throws(CLIError) {
        guard let waveform = PlaySummary.waveform(in: engine.configuration.backend),
              waveform.configuration.sink == sink || resolve(waveform.configuration.sink) == sink else { return }
        throw .usage("--no-delay follows '\(sink)', which also carries the waveform drive (--haptics waveform): the analysis would take the haptics for the sound",
                     hint: "follow another sink with --sink, or leave out --no-delay (the live sink carries the sound alone)")
    }

    /// The sink's node.name, and the channels and rate `--no-delay` records `sink`'s monitor
    /// natively with, checked for what the analysis takes.
    private static func monitorFormat(of sink: String, remote: String?) throws(CLIError) -> (name: String, channels: Int, sampleRate: Double) {
        let format: (name: String, channels: Int, sampleRate: Double)
        switch PipeWireSinkCapture.monitorFormat(of: sink, remote: remote) {
        case .success(let found): format = found
        case .failure(let why): throw .failure(why.description)
        }
        try checkFollowable(format.name, channels: format.channels)
        try checkGraphRate(format.sampleRate)
        return format
    }

    /// `--no-delay` follows sinks of as many channels as the analysis takes: `sink` of `channels`
    /// refused otherwise (`cameBack`: as found when its server came back).
    static func checkFollowable(_ sink: String, channels: Int, cameBack: Bool = false) throws(CLIError) {
        guard !StreamingOnsetDetector.channelCounts.contains(channels) else { return }
        throw .failure("the sink '\(sink)' \(cameBack ? "came back with" : "has") \(channels) channels; --no-delay follows sinks of 1 to 8",
                       hint: "leave out --no-delay: the live sink is stereo")
    }

    /// PipeWire's graph must run at a rate the analysis takes: `rate` refused otherwise.
    static func checkGraphRate(_ rate: Double) throws(CLIError) {
        guard !StreamingOnsetDetector.sampleRates.contains(rate) else { return }
        throw .failure("PipeWire's graph runs at \(Int(rate)) Hz; live haptics analyse 8 to 192 kHz", hint: "set PipeWire's default.clock.rate")
    }

    /// Before the live sink is made natively on PipeWire (`hapsync live`, `serve`'s
    /// `/hapsync/live`): `--sink` is refused if it is 'hapsync-live', a leftover of a killed
    /// `--audio pulse` run is removed (`removeLeftover`; it may be the default sink), asked of
    /// pipewire-pulse only where that is this PipeWire's (`PULSE_SERVER` and `PIPEWIRE_REMOTE`
    /// both set or both unset), and the real sink is named: `--sink`, else PipeWire's default now
    /// (refused if that is 'hapsync-live'), else nil, with a note on `console` (prefixed
    /// `notePrefix`) saying why. For `service` (serve) the refusals say to start the service
    /// with another `--sink`, the option being the service's.
    static func nativeRealSink(_ options: PlaybackOptions, console: HapSyncCLI.Console, notePrefix: String, service: Bool = false) throws(CLIError) -> String? {
        let nameIt = service ? "start the service with --sink naming another" : "name the sink to play on to with --sink"
        if options.sinkName == LiveCommand.sinkName {
            throw .usage("the real sink is '\(LiveCommand.sinkName)' itself; \(service ? "start the service with another --sink" : "name the sink to play on to")")
        }
        let remote = options.environment["PIPEWIRE_REMOTE"], pulseServer = options.environment["PULSE_SERVER"]
        if (remote == nil) == (pulseServer == nil) {
            try removeLeftover(server: pulseServer, realSink: options.sinkName, console: console)
        }
        if let name = options.sinkName { return name }
        switch PipeWireOutput.defaultSink(remote: remote) {
        case .success(let name) where name == LiveCommand.sinkName:
            throw .usage("the real sink is '\(name)' itself (PipeWire's default); make another sink the default, or \(nameIt)")
        case .success(let name): return name
        case .failure(let why):
            console.err("\(notePrefix): \(why); the sound plays on to whichever sink is the default\n")
            return nil
        }
    }

    /// Before a native run: a sink 'hapsync-live' left by a killed run that made it through
    /// pipewire-pulse (`--audio pulse`), removed as such a run takes it over (its streams moved to
    /// `realSink`, else the default sink) when pipewire-pulse answers on `server`; a sink of that
    /// name that is not such a leftover is refused, naming it. No PulseAudio server: nothing can
    /// be left.
    static func removeLeftover(server: String?, realSink: String?, console: HapSyncCLI.Console) throws(CLIError) {
        guard let control = try? connect(server: server) else { return }
        defer { control.close() }
        do throws(LiveSinkError) {
            if let removal = try LiveSink.removeLeftover(on: control, name: LiveCommand.sinkName, realSink: realSink) {
                console.err("note: took over the sink a killed run left: \(removal)\n")
            }
        } catch {
            throw .failure(error.description)
        }
    }

    /// Waits for a PipeWire server to answer on `remote` again (asked every 250 ms); false when
    /// `stop` came first.
    private static func awaitPipeWire(remote: String?, stop: () -> Bool) -> Bool {
        while PipeWireOutput.probe(remote: remote) != .answers {
            if stop() { return false }
            usleep(250_000)
        }
        return true
    }

    /// Waits for the engine's output to be back on a server that came back (`outputBack`), at
    /// most 15 s; false when `stop` came first. Throws after 15 s, naming what did not come back.
    private static func awaitOutput(_ outputBack: () -> Bool, stop: () -> Bool) throws(CLIError) -> Bool {
        let giveUp = MonotonicClock.nanoseconds() + 15_000_000_000
        while !outputBack() {
            if stop() { return false }
            guard MonotonicClock.nanoseconds() < giveUp else { throw .failure("the audio output did not come back on the server within 15 s") }
            usleep(50_000)
        }
        return true
    }

    /// The pass-through for a run `delayMs` behind the live sink at `rate` Hz, holding enough for
    /// that delay at `capacityRate` (a rate known only later: the pass-through is activated anew
    /// for it).
    private static func passThrough(delayMs: Double, rate: Double, capacityRate: Double? = nil, followsDrift: Bool = true) -> PassThroughAudio {
        let hold = holdFrames(delayMs: delayMs, rate: rate)
        let most = holdFrames(delayMs: delayMs, rate: max(rate, capacityRate ?? rate))
        return PassThroughAudio(capacityFrames: max(1 << 16, 4 * most), hold: hold, sampleRate: rate, followsDrift: followsDrift)
    }

    /// The engine on `audio` with the haptic outputs the options name, started.
    private func startEngine(audio: SoundServerOutput?) throws(CLIError) -> HapticEngine {
        let trace = options.tracePath.map { TraceBackend(path: $0, replacing: options.replacesTrace) }
        let backend = try PlayCommand.hapticBackend(options, trace: trace, audio: audio, console: console, profile: profile)
        do {
            let engine = try HapticEngine(configuration: options.engineConfiguration(backend: backend, audio: audio))
            try engine.start()
            return engine
        } catch {
            throw .failure("\(error)")
        }
    }

    /// Runs `feed` on `engine` until a signal, `--seconds` or a failure, saying `mode` as it
    /// starts; the summary and the failure that ended the run, if one did. When the capture is
    /// lost, `recover(why, stopAsked, outputBack)` decides: nil, the run ends with `why`; false,
    /// a stop came while it waited; true, the capture is made anew and the run carries on; a
    /// throw ends the run with that. At the end a native PipeWire sink asks the streams playing
    /// into it to play to `handOverTo` (nil: the default sink) before it goes, and the run says
    /// so (`LiveFeed.stop`). For the native sink, whose capture and output are on one PipeWire
    /// server, the output counts as back only once it went down with that server and came back,
    /// so that a server answering again at once (socket-activated) is not taken for one whose
    /// output never left.
    private func drive(_ feed: LiveFeed, engine: HapticEngine, audio: SoundServerOutput?, rate: Double, mode: String, signals: SignalWatch,
                       handOverTo: String? = nil,
                       recover: (String, () -> Bool, () -> Bool) throws(CLIError) -> Bool?) throws(CLIError) -> (summary: String, failure: CLIError?) {
        let log: LiveOnsetLog?
        do throws(OutputFile.Failure) {
            log = try onsetsPath.map { path throws(OutputFile.Failure) in try LiveOnsetLog(path: path, replacing: options.replacesTrace, rate: rate) }
        } catch {
            throw .failure("--onsets: \(error.description)")
        }
        feed.session.onsetLog = log
        feed.onNote = { [console] note in console.err("note: \(note)\n") }
        // The engine restarts on a server that comes back (`recover` waits for the output).
        let output = LiveOutputWatch(engine: engine, failed: { feed.fail($0) }, reset: { feed.session.restartLayer() })
        do throws(LiveCaptureFailure) {
            try feed.start()
        } catch {
            log?.removeCreated()
            throw .failure(error.description)
        }
        let deadline = seconds.map { feed.started + UInt64($0 * 1e9) }
        console.err("live: \(mode); analysis look-ahead \(String(format: "%.1f", detector.lookAhead.seconds * 1000)) ms; "
                    + "audio \(audio?.serverDescription ?? "none"); Ctrl-C stops\n")
        let stopAsked = { signals.received || feed.failure != nil || deadline.map({ MonotonicClock.nanoseconds() >= $0 }) ?? false }
        // The output's losses when the run began or last carried on after one.
        var lossesSeen = output.status.losses
        let outputSharesTheServer = if case .pipeWireSink = feed.source { true } else { false }
        let outputBack = {
            let status = output.status
            return status.isBack(sharesTheServer: outputSharesTheServer, lossesBefore: lossesSeen)
        }
        while !stopAsked() {
            if let why = feed.captureLost {
                do throws(CLIError) {
                    guard let carriedOn = try recover(why, stopAsked, outputBack) else { feed.fail(why); break }
                    if !carriedOn { break }
                    lossesSeen = output.status.losses
                } catch {
                    feed.fail("the sound server came back, but the run could not carry on: \((error.messages + error.hints).joined(separator: "; "))")
                    break
                }
            }
            usleep(20_000)
        }
        if let note = feed.stop(handingOverTo: handOverTo) { console.err("note: \(note)\n") }
        guard let log else { return (feed.summary, feed.failure.map { .failure($0) }) }
        let logFailure = log.close()
        return (feed.summary + log.summaryLine + "\n", feed.failure.map { .failure($0) } ?? logFailure.map { .failure("--onsets: \($0)") })
    }

    /// After the sound server went away: waits for it to answer again (until `stop` says so),
    /// then makes what the run had on it anew: the control connection, the real sink found by
    /// its name (within 10 s: a server sets its sinks up a moment after it answers) at the rate
    /// the run began with, the engine's output back on it (`outputBack`; a pass-through only,
    /// within 15 s), the live sink with the pass-through's distance fixed anew, and the capture.
    /// False if `stop` came first. Throws what cannot be made again, naming it.
    private func recover(_ hold: ServerHold, real: PulseConnection.SinkInfo, feed: LiveFeed, passThrough: PassThroughAudio?,
                         outputBack: () -> Bool, stop: () -> Bool) throws(CLIError) -> Bool {
        while !PulseConnection.answers(server: hold.server) {
            if stop() { return false }
            usleep(250_000)
        }
        // The live sink went with the server's modules: nothing of it is left to remove.
        hold.liveSink = nil
        let giveUp = MonotonicClock.nanoseconds() + 10_000_000_000
        var found: PulseConnection.SinkInfo?
        while found == nil {
            if stop() { return false }
            do throws(CLIError) {
                if hold.isGone { try hold.reconnect() }
                found = try Self.realSink(real.name, on: hold.control)
            } catch {
                guard MonotonicClock.nanoseconds() < giveUp else { throw error }
                usleep(250_000)
            }
        }
        guard let found else { return false }
        guard found.rate == real.rate else {
            throw .failure("the sink '\(real.name)' came back at \(found.rate) Hz, the run began at \(real.rate) Hz (live haptics do not follow a rate change)",
                           hint: "start hapsync live again")
        }
        if passThrough == nil { try Self.checkFollowable(real.name, channels: found.channels, cameBack: true) }
        if let passThrough {
            guard try Self.awaitOutput(outputBack, stop: stop) else { return false }
            hold.liveSink = try Self.makeLiveSink(on: hold.control, playingOnTo: found)
            // The same rate as before (checked above): the same hold.
            passThrough.activate(hold: Int(passThrough.hold))
        }
        do {
            try feed.restartCapture(sink: hold.liveSink?.name ?? found.name, channels: hold.liveSink?.channels ?? found.channels)
        } catch {
            throw .failure("\(error)")
        }
        return true
    }

    /// The run's hold on the server the live sink is made on: the control connection, the live
    /// sink, and whether that connection failed (the server went away, not only a sink). Made
    /// anew when the server comes back (`reconnect`). Control side; `isGone` any thread.
    final class ServerHold {
        /// The server (`PULSE_SERVER`; nil: the default).
        let server: String?
        private(set) var control: PulseConnection
        /// The live sink on it (nil: `--no-delay`).
        var liveSink: LiveSink?
        private var gone: Locked<Bool>

        /// Connects to `server`.
        init(server: String?) throws(CLIError) {
            self.server = server
            (control, gone) = try Self.connect(server: server)
        }

        /// A control connection to `server` and the flag its failure sets.
        private static func connect(server: String?) throws(CLIError) -> (PulseConnection, Locked<Bool>) {
            let gone = Locked(false)
            return (try LiveRun.connect(server: server, onFailure: { _ in gone.withLock { $0 = true } }), gone)
        }

        /// Whether the control connection failed: the server went away.
        var isGone: Bool { gone.withLock { $0 } }

        /// Waits at most `nanoseconds` for the control connection to fail; whether it did.
        func waitUntilGone(atMost nanoseconds: UInt64) -> Bool {
            let giveUp = MonotonicClock.nanoseconds() + nanoseconds
            while !isGone, MonotonicClock.nanoseconds() < giveUp { usleep(20_000) }
            return isGone
        }

        /// A new control connection in place of the failed one (closed).
        func reconnect() throws(CLIError) {
            let (connection, fresh) = try Self.connect(server: server)
            control.close()
            (control, gone) = (connection, fresh)
        }
    }
}
