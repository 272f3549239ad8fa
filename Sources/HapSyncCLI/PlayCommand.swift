import AHAP
import AudioOutput
import Dispatch
import Foundation
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapticOutput
import Synchronization

/// `hapsync play FILE`: plays a pattern on the real-time engine and reports how well it kept time.
enum PlayCommand {
    static let help = """
        USAGE: hapsync play [--haptics evdev:PATH|evdev:auto|trace:PATH|none]... [--force] [--at +MS] [--loop N]
                            [--audio pulse|none] [--sink NAME] [--latency-ms N] [--haptic-latency-ms N]
                            [--rate HZ] [--rumble-interval MS] [--rumble-burst MS] [--resources DIR]...
                            [--playback-rate X] [--from S] [--no-haptics] [--intensity-scale X] [--rate-limit-ms N] FILE

        Plays a pattern on the real-time engine: a scheduler thread on CLOCK_MONOTONIC
        (SCHED_FIFO where the system allows) releases each haptic command at its deadline
        into a lock-free ring, an output thread hands it to the backend. A pattern with
        audio events plays them through PulseAudio, and its haptics follow the audio
        clock: pattern time t is the moment its audio frame is heard.

        At the end it prints a summary: commands played, dispatch error (released −
        scheduled) and apply latency (applied − released) percentiles, ring overflows,
        and whether real-time priority was granted. Ctrl-C stops at once, silences the
        backend and still writes the trace (exit status 130).

        OPTIONS:
          --haptics evdev:PATH  rumble a gamepad (/dev/input/eventN; see 'hapsync devices')
          --haptics evdev:auto  the first rumble-capable device this user can open
          --haptics trace:PATH  record every command with its scheduled, released and
                                applied times (CLOCK_MONOTONIC ns): PATH.jsonl gives JSON
                                Lines, PATH.json Chrome trace events (open in Perfetto)
          --haptics none        no haptic output (default; timing is still measured)
                                --haptics may be given more than once: evdev and a trace together
          --audio pulse|none    play audio events through PulseAudio (default when the
                                pattern has any) or not at all
          --sink NAME           the PulseAudio sink (default: the server's default)
          --latency-ms N        target latency of the audio stream (default 20)
          --haptic-latency-ms N release haptics this much before their audio is heard,
                                to make up for the haptic device's delay (default 0)
          --rumble-interval MS  shortest time between two rumble updates (default 10)
          --rumble-burst MS     shortest rumble a transient makes (default 30)
          --force               replace the trace file if it exists
          --at +MS              start MS milliseconds from now (default +50)
          --loop N              play N times back to back (default 1)
          --rate HZ             control rate of the continuous signal (default 1000)
          --resources DIR       also look for audio files here (repeatable)
          --playback-rate X     play X times faster (0.01-100; times and durations scale,
                                audio pitch does not)
          --from S              start S seconds into the pattern (audio starts part-way)
          -h, --help            show this help

        ACCESSIBILITY (also from the environment; flags win):
          --no-haptics          haptics off (HAPSYNC_HAPTICS=off); audio still plays
          --intensity-scale X   scale every haptic intensity, 0-1 (HAPSYNC_INTENSITY_SCALE);
                                reduced-motion settings commonly use 0.4-0.5
          --rate-limit-ms N     merge starts from one source closer than N ms (default
                                100; HAPSYNC_RATE_LIMIT_MS)

        """

    /// The policy from the environment, then the flags; a bad value is a usage error naming it.
    static func policy(_ parsed: CommandLineArguments, environment: [String: String]) throws(CommandLineArguments.UsageError) -> HapticPolicy {
        var policy: HapticPolicy
        do { policy = try HapticPolicy().applying(environment: environment) } catch { throw .init(message: error.description) }
        if parsed.has("no-haptics") { policy.hapticsEnabled = false }
        if let text = parsed.all("intensity-scale").first {
            guard let x = Double(text), x.isFinite, (0...1).contains(x) else {
                throw .init(message: "--intensity-scale must be a number from 0 to 1, not '\(text)'")
            }
            policy.intensityScale = x
        }
        if let text = parsed.all("rate-limit-ms").first {
            guard let x = Double(text), x.isFinite, (0...60_000).contains(x) else {
                throw .init(message: "--rate-limit-ms must be a number of milliseconds from 0 to 60000, not '\(text)'")
            }
            policy.rateLimitInterval = x / 1000
        }
        return policy
    }

    /// Options shared with `hapsync feedback`.
    static let options: [CommandLineArguments.Option] = [
        .init(name: "haptics", takesValue: true, repeatable: true), .init(name: "force", takesValue: false), .init(name: "at", takesValue: true),
        .init(name: "rumble-interval", takesValue: true), .init(name: "rumble-burst", takesValue: true),
        .init(name: "audio", takesValue: true), .init(name: "sink", takesValue: true), .init(name: "latency-ms", takesValue: true),
        .init(name: "haptic-latency-ms", takesValue: true),
        .init(name: "loop", takesValue: true), .init(name: "rate", takesValue: true),
        .init(name: "resources", takesValue: true, repeatable: true),
        .init(name: "playback-rate", takesValue: true), .init(name: "from", takesValue: true),
        .init(name: "no-haptics", takesValue: false), .init(name: "intensity-scale", takesValue: true), .init(name: "rate-limit-ms", takesValue: true),
    ]

    /// Runs `play` on FILE, or (from `hapsync feedback`) on a built-in pattern.
    static func run(_ args: [String], console: HapSyncCLI.Console, builtIn: (name: String, pattern: AHAPPattern)? = nil,
                    environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandLineArguments.UsageError) -> Int32 {
        let command = builtIn == nil ? "hapsync play" : "hapsync feedback"
        let parsed = try CommandLineArguments(args, options: options, command: command)
        if parsed.has("help") { console.out(builtIn == nil ? help : FeedbackCommand.help); return HapSyncCLI.ExitCode.success }
        let policy = try policy(parsed, environment: environment)
        let playbackRateText = parsed.all("playback-rate").first ?? "1"
        guard let playbackRate = Double(playbackRateText), playbackRate.isFinite, (0.01...100).contains(playbackRate) else {
            throw .init(message: "--playback-rate must be a number from 0.01 to 100, not '\(playbackRateText)'")
        }
        let fromText = parsed.all("from").first ?? "0"
        guard let from = Double(fromText), from.isFinite, from >= 0 else {
            throw .init(message: "--from must be 0 or more seconds, not '\(fromText)'")
        }
        let file: String
        if let builtIn {
            guard parsed.positional.isEmpty else { throw .init(message: "feedback takes one NAME (got also '\(parsed.positional[0])')") }
            file = builtIn.name
        } else {
            guard parsed.positional.count == 1, let f = parsed.positional.first else {
                throw .init(message: parsed.positional.isEmpty ? "play needs a FILE" : "play takes one FILE (got \(parsed.positional.count))")
            }
            file = f
        }
        var tracePath: String?
        var evdevPath: String?
        for h in parsed.all("haptics") {
            switch h {
            case "none": break
            case let h where h.hasPrefix("trace:") && h.count > 6:
                guard tracePath == nil else { throw .init(message: "--haptics trace: given twice") }
                tracePath = String(h.dropFirst(6))
            case let h where h.hasPrefix("evdev:") && h.count > 6:
                guard evdevPath == nil else { throw .init(message: "--haptics evdev: given twice") }
                evdevPath = String(h.dropFirst(6))
            default: throw .init(message: "--haptics must be evdev:PATH, evdev:auto, trace:PATH or none, not '\(h)'")
            }
        }
        func milliseconds(_ name: String, default d: UInt64) throws(CommandLineArguments.UsageError) -> UInt64 {
            guard let text = parsed.all(name).first else { return d * 1_000_000 }
            guard let v = Double(text), v >= 1, v <= 10_000 else { throw .init(message: "--\(name) must be a number of milliseconds from 1 to 10000, not '\(text)'") }
            return UInt64(v * 1_000_000)
        }
        let audioChoice = parsed.all("audio").first
        guard audioChoice == nil || audioChoice == "pulse" || audioChoice == "none" else {
            throw .init(message: "--audio must be pulse or none, not '\(audioChoice!)'")
        }
        let latencyText = parsed.all("latency-ms").first ?? "20"
        guard let latencyMs = Double(latencyText), latencyMs >= 1, latencyMs <= 2000 else {
            throw .init(message: "--latency-ms must be a number of milliseconds from 1 to 2000, not '\(latencyText)'")
        }
        let hapticLatencyText = parsed.all("haptic-latency-ms").first ?? "0"
        guard let hapticLatencyMs = Double(hapticLatencyText), hapticLatencyMs >= 0, hapticLatencyMs <= 1000 else {
            throw .init(message: "--haptic-latency-ms must be a number of milliseconds from 0 to 1000, not '\(hapticLatencyText)'")
        }
        let rumbleInterval = try milliseconds("rumble-interval", default: 10)
        let rumbleBurst = try milliseconds("rumble-burst", default: 30)
        let atText = parsed.all("at").first ?? "+50"
        guard let atMs = Double(atText.hasPrefix("+") ? String(atText.dropFirst()) : atText), atMs >= 0, atMs <= 3_600_000 else {
            throw .init(message: "--at must be +MS, a number of milliseconds from now, not '\(atText)'")
        }
        let loopText = parsed.all("loop").first ?? "1"
        guard let loops = Int(loopText), loops >= 1, loops <= 1_000_000 else { throw .init(message: "--loop must be a whole number ≥ 1, not '\(loopText)'") }
        let rate = try RenderCommand.parseRate(parsed.all("rate").first)
        let roots = try HapSyncCLI.resourceRoots(parsed.all("resources"))
        if let tracePath, FileManager.default.fileExists(atPath: tracePath), !parsed.has("force") {
            console.err("error: \(tracePath) already exists; not overwriting it\nhint: pass --force to replace it, or choose another trace path\n")
            return HapSyncCLI.ExitCode.failure
        }

        // Ctrl-C and SIGTERM are ours from here on, so one that comes during start-up is not lost.
        let signals = SignalWatch()
        defer { signals.cancel() }

        let loaded: LoadedTimeline
        if let builtIn {
            do {
                loaded = LoadedTimeline(check: nil, timeline: try PatternTimeline(pattern: builtIn.pattern, options: RenderOptions(controlRate: rate)), audio: [:])
            } catch {
                console.err("error: \(builtIn.name): \(error)\n")
                return HapSyncCLI.ExitCode.failure
            }
        } else {
            switch LoadedTimeline.load(file, resources: roots, options: RenderOptions(controlRate: rate), console: console) {
            case .success(let l): loaded = l
            case .failure(let status): return status.code
            }
        }
        guard from < loaded.timeline.end || from == 0 else {
            throw .init(message: "--from \(fromText) is past the pattern's end (\(seconds(loaded.timeline.end)))")
        }
        let timeline = loaded.timeline
        var audioDevice: PulseAudioOutput?
        if !timeline.voices.isEmpty, audioChoice != "none" {
            let unresolved = (loaded.check?.diagnostics ?? []).filter { $0.code == .resourceNotFound }
            if !unresolved.isEmpty {
                for d in unresolved { console.err("error: \(d.path): \(d.message)\n") }
                console.err("hint: pass --resources DIR, or play without audio with --audio none\n")
                return HapSyncCLI.ExitCode.failure
            }
            audioDevice = PulseAudioOutput(configuration: .init(sink: parsed.all("sink").first, latency: latencyMs / 1000))
        } else if !timeline.voices.isEmpty {
            console.err("note: \(plural(timeline.voices.count, "audio event")) not played (--audio none); haptics run on the monotonic clock\n")
        }
        let trace = tracePath.map { TraceBackend(path: $0, capacity: max(1024, (timeline.commands.count + 1) * loops + 16)) }
        var backends: [HapticBackend] = []
        if var path = evdevPath {
            if path == "auto" {
                guard let found = InputDeviceProbe.firstRumbleDevice() else {
                    console.err("error: \(EvdevError.noRumbleDevice)\n")
                    return HapSyncCLI.ExitCode.failure
                }
                path = found.path
                console.err("note: evdev:auto chose \(found.path) (\(found.name))\n")
            }
            backends.append(EvdevBackend(configuration: .init(path: path, minimumUpdateInterval: rumbleInterval, burstLength: rumbleBurst)))
        }
        if let trace { backends.append(trace) }
        let backend: HapticBackend = backends.isEmpty ? NullHapticBackend() : backends.count == 1 ? backends[0] : FanOutBackend(backends)
        let engine: HapticEngine
        let disconnected = Locked(false)
        let audioLost = Locked<String?>(nil)
        do {
            engine = try HapticEngine(configuration: .init(backend: backend, audio: audioDevice,
                                                           hapticLatency: UInt64(hapticLatencyMs * 1_000_000), policy: policy))
            // Handlers before start: the audio server can go away while the stream is starting.
            engine.stoppedHandler = { reason in
                if reason == .deviceDisconnected { disconnected.withLock { $0 = true } }
                if case .audioServerLost(let why) = reason { audioLost.withLock { $0 = why } }
            }
            try engine.start()
        } catch HapticEngine.EngineError.backendUnavailable(let why) {
            console.err("error: \(why)\n")
            return HapSyncCLI.ExitCode.failure
        } catch HapticEngine.EngineError.audioUnavailable(let why) {
            console.err("error: \(why)\n")
            return HapSyncCLI.ExitCode.failure
        } catch {
            console.err("error: \(error)\n")
            return HapSyncCLI.ExitCode.failure
        }
        let session = Session(engine: engine, timeline: timeline, audioFiles: audioDevice == nil ? [:] : loaded.audio, loops: loops,
                              console: console, signals: signals, playbackRate: playbackRate, from: from)
        let outcome = signals.received ? .interrupted : session.run(startIn: atMs / 1000)
        engine.stop()
        if case .failure(let message) = outcome {
            console.err("error: \(message)\n")
            return HapSyncCLI.ExitCode.failure
        }
        console.out(summary(file: file, loops: loops, engine: engine, timeline: timeline, trace: trace, interrupted: outcome == .interrupted,
                            audio: audioDevice, startFrames: session.startFrames, playbackRate: playbackRate, from: from))
        if let why = audioLost.withLock({ $0 }) {
            console.err("warning: the PulseAudio server went away during playback (\(why)); haptics went on\n")
        }
        if disconnected.withLock({ $0 }) {
            console.err("warning: the rumble device disconnected during playback; \(trace == nil ? "playback stopped" : "the trace went on without it")\n")
        }
        return outcome == .interrupted ? 130 : HapSyncCLI.ExitCode.success
    }

    /// How a playback session ended.
    enum Outcome: Equatable {
        case completed
        case interrupted
        case failure(String)
    }

    /// One `play` run: loops back to back, played by up to four players taking turns (player k
    /// plays loops k, k+4, ...; each completion starts that player's next loop at its exact time,
    /// known in advance), a progress line on a terminal, and Ctrl-C / SIGTERM handling.
    final class Session: @unchecked Sendable {
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
            if let next { try? player.start(atTime: t0 + Double(next) * period) }
            if finished { done.signal() }
        }
    }

    /// Catches SIGINT and SIGTERM for the whole `play` run (from before the engine starts), so a
    /// Ctrl-C at any moment ends playback cleanly instead of being lost or killing the process.
    final class SignalWatch: @unchecked Sendable {
        private let sources: [DispatchSourceSignal]
        private let flag = Locked(false)
        private let handler = Locked<(@Sendable () -> Void)?>(nil)

        init() {
            var made: [DispatchSourceSignal] = []
            for sig in [SIGINT, SIGTERM] {
                signal(sig, SIG_IGN)
                made.append(DispatchSource.makeSignalSource(signal: sig, queue: .global()))
            }
            sources = made
            for source in sources {
                source.setEventHandler { [weak self] in
                    guard let self else { return }
                    flag.withLock { $0 = true }
                    handler.withLock { $0 }?()
                }
                source.resume()
            }
        }

        /// Whether a signal came.
        var received: Bool { flag.withLock { $0 } }
        /// Called (on a dispatch queue) when one comes.
        var onSignal: (@Sendable () -> Void)? {
            get { handler.withLock { $0 } }
            set { handler.withLock { $0 = newValue } }
        }

        func cancel() {
            for (sig, source) in zip([SIGINT, SIGTERM], sources) {
                source.cancel()
                signal(sig, SIG_DFL)
            }
        }
    }

    static func percentile(_ sorted: [Int64], _ p: Double) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func micro(_ ns: Int64) -> String {
        let us = Double(ns) / 1000
        return abs(us) < 100 ? "\((us * 10).rounded() / 10) µs" : "\(Int(us.rounded())) µs"
    }

    static func summary(file: String, loops: Int, engine: HapticEngine, timeline: PatternTimeline, trace: TraceBackend?, interrupted: Bool,
                        audio: PulseAudioOutput?, startFrames: [UInt32: [Int64]], playbackRate: Double = 1, from: Double = 0) -> String {
        let stats = engine.statistics
        let dispatch = stats.dispatchErrors.sorted(), apply = stats.applyLatencies.sorted()
        var out = ""
        func line(_ label: String, _ value: String) { out += label.padding(toLength: 12, withPad: " ", startingAt: 0) + value + "\n" }
        line("played", "\(file)" + (loops > 1 ? " ×\(loops)" : "") + " on \(engine.configuration.backend.name)"
             + (interrupted ? " (interrupted: stopped at once, backend silenced)" : ""))
        line("commands", "\(stats.applied) applied of \(timeline.commands.count * loops) scheduled (+ the final stop), \(stats.outputOverflows) ring overflows")
        line("dispatch", "p50 \(micro(percentile(dispatch, 50))), p99 \(micro(percentile(dispatch, 99))), max \(micro(dispatch.last ?? 0)) (released − scheduled)")
        line("apply", "p50 \(micro(percentile(apply, 50))), p99 \(micro(percentile(apply, 99))), max \(micro(apply.last ?? 0)) (applied − released)")
        line("real-time", engine.realtimeStatus.description)
        let policy = engine.policy
        if !policy.hapticsEnabled || policy.intensityScale != 1 || playbackRate != 1 || from != 0 {
            var parts: [String] = []
            if !policy.hapticsEnabled { parts.append("haptics off") }
            if policy.intensityScale != 1 { parts.append("intensity × \(policy.intensityScale)") }
            if playbackRate != 1 { parts.append("playback rate \(playbackRate)") }
            if from != 0 { parts.append("from \(seconds(from))") }
            line("settings", parts.joined(separator: ", "))
        }
        if let audio {
            line("audio", "pulse at \(Int(audio.sampleRate)) Hz, \(Int((audio.configuration.latency * 1000).rounded())) ms target latency, \(stats.audioUnderruns) underruns, sink clock \(String(format: "%+.1f", audio.clock.rateErrorPPM)) ppm against CLOCK_MONOTONIC"
                 + (audio.droppedVoices > 0 ? ", \(audio.droppedVoices) voices dropped (more than \(PulseAudioOutput.voiceCapacity) at once)" : ""))
            // Each haptic command against the moment its audio frame is heard (the final clock fit).
            var offsets: [Int64] = []
            let fit = audio.clock.fit
            for c in stats.commands where c.patternTime >= 0 {
                guard let starts = startFrames[c.player], !starts.isEmpty else { continue }
                // The run this command belongs to: the latest start whose frame is heard before it.
                let frame = starts.last { (fit.time(ofFrame: $0) ?? 0) <= c.applied + 50_000_000 } ?? starts[0]
                if let offset = AudioHapticOffset.offset(hapticAt: c.applied, patternTime: c.patternTime, startFrame: frame, rate: playbackRate,
                                                         sampleRate: audio.sampleRate, heard: { fit.time(ofFrame: $0) }) {
                    offsets.append(offset)
                }
            }
            let sorted = offsets.sorted()
            if !sorted.isEmpty {
                line("sync", "haptic applied − audio heard: p50 \(micro(percentile(sorted, 50))), p99 \(micro(percentile(sorted, 99))), max |\(micro(sorted.map { abs($0) }.max()!))| over \(sorted.count) commands (engine's audio clock)")
            }
        }
        if let trace {
            line("trace", "\(trace.path) (\(trace.format == .chrome ? "Chrome trace events" : "JSON Lines"), \(trace.records.count) records)")
        }
        return out
    }
}
