import AHAP
import AudioOutput
import Foundation
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapticOutput

/// `hapsync play FILE`: plays a pattern on the real-time engine and reports how well it kept time.
enum PlayCommand {
    static let command = Command(
        name: "play", summary: "play a pattern's haptics on the real-time engine (rumble pad, trace) with a timing summary",
        about: """
            Plays a pattern on the real-time engine: a scheduler thread on CLOCK_MONOTONIC
            (SCHED_FIFO where the system allows) releases each haptic command at its deadline
            into a lock-free ring, an output thread hands it to the backend. A pattern with
            audio events plays them through PulseAudio, and its haptics follow the audio
            clock: pattern time t is the moment its audio frame is heard.

            At the end it prints a summary: commands played, dispatch error (released −
            scheduled) and apply latency (applied − released) percentiles, ring overflows,
            and whether real-time priority was granted. Ctrl-C stops at once, silences the
            backend and still writes the trace (exit status 130).
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
        if let tracePath = options.tracePath {
            // Before loading and decoding: a trace that cannot be written fails at once.
            do {
                try OutputFile.check(tracePath, replacing: options.replacesTrace)
            } catch .exists {
                throw .failure("\(OutputFile.Failure.exists(path: tracePath))", hint: "pass --force to replace it, or choose another trace path")
            } catch {
                throw .failure(error.description)
            }
        }
        let signals = SignalWatch()
        defer { signals.cancel() }

        let playable = try load()
        let timeline = playable.timeline
        guard options.startOffset < timeline.end || options.startOffset == 0 else {
            throw .usage("--from \(number(options.startOffset)) is past the pattern's end (\(seconds(timeline.end)))")
        }
        var audioDevice: PulseAudioOutput?
        if !timeline.voices.isEmpty, options.audioChoice != PlaybackOptions.AudioChoice.none {
            let unresolved = playable.diagnostics.filter { $0.code == .resourceNotFound }
            if !unresolved.isEmpty {
                throw CLIError(.failure, unresolved.map { "\($0.path): \($0.message)" },
                               hints: ["pass --resources DIR, or play without audio with --audio none"])
            }
            audioDevice = PulseAudioOutput(configuration: .init(sink: options.sinkName, latency: options.audioLatency))
        } else if !timeline.voices.isEmpty {
            console.err("note: \(plural(timeline.voices.count, "audio event")) not played (--audio none); haptics run on the monotonic clock\n")
        }
        let trace = options.tracePath.map { TraceBackend(path: $0, replacing: options.replacesTrace) }
        let backend = try hapticBackend(options, trace: trace, console: console)

        let disconnected = Locked(false)
        let audioLost = Locked<String?>(nil)
        let engine: HapticEngine
        do {
            engine = try HapticEngine(configuration: .init(backend: backend, audio: audioDevice,
                                                           hapticLatency: options.hapticLatencyNanoseconds, policy: options.policy))
            // Handlers before start: the audio server can go away while the stream is starting.
            engine.stoppedHandler = { reason in
                if reason == .deviceDisconnected { disconnected.withLock { $0 = true } }
                if case .audioServerLost(let why) = reason { audioLost.withLock { $0 = why } }
            }
            try engine.start()
        } catch HapticEngine.EngineError.backendUnavailable(let why) {
            throw .failure(why)
        } catch HapticEngine.EngineError.audioUnavailable(let why) {
            throw .failure(why)
        } catch {
            throw .failure("\(error)")
        }
        let session = PlaySession(engine: engine, timeline: timeline, audioFiles: audioDevice == nil ? [:] : playable.audioFiles,
                                  loops: options.loops, console: console, signals: signals, playbackRate: options.playbackRate, from: options.startOffset)
        let outcome = signals.received ? .interrupted : session.run(startIn: options.startDelay)
        let closeError = engine.stop()
        if case .failure(let message) = outcome { throw .failure(message) }
        console.out(PlaySummary(name: playable.name, loops: options.loops, engine: engine, timeline: timeline, trace: trace,
                                interrupted: outcome == .interrupted, audio: audioDevice, startFrames: session.startFrames,
                                playbackRate: options.playbackRate, from: options.startOffset).text)
        if let why = audioLost.withLock({ $0 }) {
            console.err("warning: the PulseAudio server went away during playback (\(why)); haptics went on\n")
        }
        if disconnected.withLock({ $0 }) {
            console.err("warning: the rumble device disconnected during playback; \(trace == nil ? "playback stopped" : "the trace went on without it")\n")
        }
        // A trace that could not be written fully fails the run, whatever else happened.
        if let closeError { throw .failure("\(closeError)") }
        if outcome == .interrupted { throw CLIError(.interrupted) }
    }

    /// The backend `--haptics` asks for: a rumble pad, a trace, both, or none.
    private static func hapticBackend(_ options: PlaybackOptions, trace: TraceBackend?, console: HapSyncCLI.Console) throws(CLIError) -> HapticBackend {
        var backends: [HapticBackend] = []
        if var path = options.evdevPath {
            if path == "auto" {
                guard let found = InputDeviceProbe.firstRumbleDevice() else { throw .failure("\(EvdevError.noRumbleDevice)") }
                path = found.path
                console.err("note: evdev:auto chose \(found.path) (\(found.name))\n")
            }
            backends.append(EvdevBackend(configuration: .init(path: path, minimumUpdateInterval: options.rumbleIntervalNanoseconds,
                                                              burstLength: options.rumbleBurstNanoseconds)))
        }
        if let trace { backends.append(trace) }
        return backends.isEmpty ? NullHapticBackend() : backends.count == 1 ? backends[0] : FanOutBackend(backends)
    }
}
