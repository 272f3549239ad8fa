import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncGeneration
import HapSyncHapticOutput
import HapSyncOutputs
import HapSyncRuntime

/// `hapsync play FILE`: plays a pattern on the real-time engine and reports how well it kept time.
enum PlayCommand {
    static let command = Command(
        name: "play", summary: "play a pattern's haptics on the real-time engine (rumble pad, trace) with a timing summary",
        about: """
            Plays a pattern on the real-time engine: a scheduler thread on CLOCK_MONOTONIC
            (SCHED_FIFO where the system allows) releases each haptic command at its deadline
            into a lock-free ring, an output thread hands it to the backend. A pattern with
            audio events plays them through PipeWire or PulseAudio (--audio), and its haptics
            follow the audio clock: pattern time t is the moment its audio frame is heard.

            At the end it prints a summary: commands played, dispatch error (released −
            scheduled) and apply latency (applied − released) percentiles, ring overflows,
            and whether real-time priority was granted. Ctrl-C (SIGINT), SIGTERM, SIGHUP and
            SIGQUIT stop it at once, silence the backend and still write the trace (exit
            status 128 + the signal's number: 130 for Ctrl-C). If the audio server goes away,
            haptics go on; when it comes back the engine restarts on it and playback carries on
            from where the pattern had got to.
            """,
        groups: PlaybackOptions.groups(), positionals: .one("FILE"), run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let options = try PlaybackOptions(parsed, environment: context.environment)
        let file = parsed.positional[0]
        try play(options, console: context.console) { () throws(CLIError) in
            try PlayablePattern.load(file, resources: options.resources, options: options.render, console: context.console)
        }
    }

    /// Plays what `load` gives (a file for `play`, a built-in style for `feedback`) and prints the
    /// summary. Ctrl-C and SIGTERM are caught from before loading, so none is lost during start-up.
    static func play(_ options: PlaybackOptions, console: HapSyncCLI.Console,
                     load: () throws(CLIError) -> PlayablePattern) throws(CLIError) {
        // Before loading and decoding: a trace that cannot be written fails at once.
        try checkTrace(options)
        let signals = SignalWatch()
        defer { signals.cancel() }

        let playable = try load()
        let timeline = playable.timeline
        guard options.startOffset < timeline.end || options.startOffset == 0 else {
            throw .usage("--from \(number(options.startOffset)) is past the pattern's end (\(seconds(timeline.end)))")
        }
        var audioDevice: SoundServerOutput?
        if !timeline.voices.isEmpty, options.audioChoice != PlaybackOptions.AudioChoice.none {
            let unresolved = playable.diagnostics.filter { $0.code == .resourceNotFound }
            if !unresolved.isEmpty {
                throw CLIError(.failure, unresolved.map { "\($0.path): \($0.message)" },
                               hints: ["pass --resources DIR, or play without audio with --audio none"])
            }
            audioDevice = options.makeAudioOutput()
        } else if !timeline.voices.isEmpty {
            console.err("note: \(plural(timeline.voices.count, "audio event")) not played (--audio none); haptics run on the monotonic clock\n")
        }
        let trace = options.tracePath.map { TraceBackend(path: $0, replacing: options.replacesTrace) }
        let backend = try hapticBackend(options, trace: trace, audio: audioDevice, console: console)

        let engine: HapticEngine
        let session: PlaySession
        do {
            engine = try HapticEngine(configuration: options.engineConfiguration(backend: backend, audio: audioDevice))
            // The session installs the engine's handlers before it starts: the audio server can go
            // away while the stream is starting.
            session = PlaySession(engine: engine, timeline: timeline, audioFiles: audioDevice == nil ? [:] : playable.audioFiles,
                                  loops: options.loops, console: console, signals: signals,
                                  playbackRate: options.playbackRate, from: options.startOffset)
            try engine.start()
        } catch HapticEngine.EngineError.backendUnavailable(let why) {
            throw .failure(why)
        } catch HapticEngine.EngineError.audioUnavailable(let why) {
            // Asked again (at most 1 s more, on this failure only) to say which it was.
            let tried = options.audioChoice == .auto && audioDevice is PulseAudioOutput
                ? (PipeWireOutput.probe(remote: ProcessInfo.processInfo.environment["PIPEWIRE_REMOTE"]) == .silent
                    ? "--audio auto: a PipeWire server took the connection but did not answer within 1 s (is it stopped?), so PulseAudio's protocol was tried"
                    : "--audio auto: no PipeWire server answered, so PulseAudio's protocol was tried") : nil
            let none = "to play without audio, pass --audio none"
            let hints = [tried, none].compactMap { $0 }
            throw .failure(why, hint: hints.isEmpty ? nil : hints.joined(separator: "; "))
        } catch {
            throw .failure("\(error)")
        }
        // Where each frame was heard, read afterwards from the fit that stood then (after an
        // underrun the final fit misplaces every frame before it).
        let history = audioDevice.map { AudioClockHistory($0.clock) }
        let outcome = session.run(startIn: options.startDelay)
        history?.stop()
        let closeError = engine.stop()
        var signal: Int32?
        switch outcome {
        case .failure(let message): throw .failure(message)
        case .interrupted(let sig): signal = sig
        case .completed: break
        }
        console.out(PlaySummary(name: playable.name, loops: options.loops, engine: engine, timeline: timeline, trace: trace,
                                interruptedBy: signal, audio: audioDevice, history: history, startFrames: session.startFrames,
                                playbackRate: options.playbackRate, from: options.startOffset).text)
        if let (why, resets) = session.audioServerLost {
            console.err(resets > 0
                ? "note: the audio server went away during playback (\(why)) and came back; playback carried on (\(plural(resets, "engine reset")))\n"
                : "warning: the audio server went away during playback (\(why)); haptics went on without audio\n")
        }
        if session.deviceDisconnected {
            console.err("warning: the rumble device disconnected during playback; the trace went on without it\n")
        }
        // A trace that could not be written fully fails the run, whatever else happened.
        if let closeError { throw .failure("\(closeError)") }
        if let signal { throw CLIError(.ended(by: signal)) }
    }

    /// Fails at once when the `--haptics trace:` file cannot be written (it exists without
    /// `--force`, or is something never written to), before anything starts.
    static func checkTrace(_ options: PlaybackOptions) throws(CLIError) {
        guard let tracePath = options.tracePath else { return }
        try checkOutput(tracePath, replacing: options.replacesTrace, what: "trace path")
    }

    /// `OutputFile`'s rules for a file a run will write (`what`: "trace path"), checked before
    /// anything starts: an existing file without `replacing` (`--force`) and what is never
    /// written are named, with what to do.
    static func checkOutput(_ path: String, replacing: Bool, what: String) throws(CLIError) {
        do {
            try OutputFile.check(path, replacing: replacing)
        } catch .exists {
            throw .failure("\(OutputFile.Failure.exists(path: path))", hint: "pass --force to replace it, or choose another \(what)")
        } catch {
            throw .failure(error.description)
        }
    }

    /// The backend `--haptics` asks for (`HapticOutputRequest`, as every front end's): a rumble
    /// pad, a waveform output (mixed into `audio`'s stream when that plays to the same sink; the
    /// trace, if any, gets its block records), a trace, several of them, or none; with a live
    /// `profile`, its shares for rumble and voice coils and its low-pass.
    static func hapticBackend(_ options: PlaybackOptions, trace: TraceBackend?, audio: SoundServerOutput?,
                              console: HapSyncCLI.Console, profile: LiveProfile? = nil) throws(CLIError) -> HapticBackend {
        var request = HapticOutputRequest()
        if let profile {
            request.rumbleLevel = profile.rumble
            request.voiceCoilLevel = Float(profile.voiceCoil)
            request.voiceCoilLowPassHz = profile.lowPassHz
        }
        request.evdev = options.evdevPath
        request.rumbleInterval = options.rumbleIntervalNanoseconds
        request.rumbleBurst = options.rumbleBurstNanoseconds
        request.waveform = options.waveform
        request.waveformLatency = options.audioLatency
        request.waveformAdvance = options.userHapticLatencyNanoseconds
        request.traces = trace.map { [$0] } ?? []
        let made: HapticOutputRequest.Made
        do throws(EvdevError) {
            made = try request.makeBackend(audio: audio, environment: options.environment)
        } catch {
            throw .failure("\(error)")
        }
        if let chosen = made.chosenDevice { console.err("note: evdev:auto chose \(chosen.path) (\(chosen.name))\n") }
        if let chosen = made.chosenSink { console.err("note: waveform:auto chose \(chosen.sink.name) (\(chosen.reason))\n") }
        // Where the pad's driver plays rumble its own way, say how HapSync plays it there.
        if let path = made.chosenDevice?.path ?? options.evdevPath, let driver = LinuxEvdevSystem().driver(ofEventDevice: path) {
            let rumble = PadRumble.of(driver: driver)
            if !rumble.note.isEmpty { console.err("note: \(path), driver \(driver): \(rumble.note)\n") }
        }
        return made.backend
    }
}
