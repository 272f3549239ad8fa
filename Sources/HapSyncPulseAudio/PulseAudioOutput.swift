import CPulse
import Foundation
import Glibc
import HapSyncAudioFiles
import HapSyncAudioStream
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import Synchronization

/// Audio through PulseAudio's asynchronous API, on its own clock.
///
/// One playback stream, float32 stereo at the sink's own rate, asking for a small target latency
/// (`latency`, default 20 ms), started corked with prebuf 0 and fed silence whenever nothing plays,
/// so its clock never stops. Every write comes from `AudioMixer`. After each write (at most every
/// 10 ms once the clock has settled; after every write until then, and always on PipeWire) it asks
/// the server for timing info; `PlaybackTiming` turns the read index, sink and transport latency
/// into which frame was heard when, for the server it talks to (PulseAudio or PipeWire's
/// pipewire-pulse, which count differently), and feeds that to `clock`, which the scheduler uses
/// to put haptics where the audio is heard. Underruns are counted; if the server goes away
/// mid-play, `onServerLost` is called (the engine reports it and its haptics go on).
///
/// When a waveform haptic output plays to the same sink, it attaches its drive signal here
/// (`attach`) and the stream carries both: the channel layout of the waveform's channels (for
/// `rear`: front-left, front-right, rear-left, rear-right), the audio on the front pair (both
/// channels' mean on a mono layout), the drive signal added on the driven channels. Haptics and
/// audio then share one stream and one clock: a tap and a sound at the same pattern time start
/// at the same frame (`OutputCommand.frame`), sample-locked by construction.
public final class PulseAudioOutput: AudioDevice, RealtimeThreaded, @unchecked Sendable {
    /// Settings.
    public struct Configuration: Sendable {
        /// The sink to play to (nil: the server's default).
        public var sink: String?
        /// Target latency of the stream, seconds (default 0.020).
        public var latency: Double
        /// Largest player slot the engine uses (its `maxPlayers`, default 32).
        public var maxPlayers: Int
        /// The server to connect to ("unix:/path/native"; nil: the default, as PULSE_SERVER says).
        public var server: String?
        /// How often to ask PulseAudio for timing while only silence plays, once the clock has
        /// settled, seconds (default 0.1; 0.01 while sound plays; PipeWire: after every write).
        public var idleTimingInterval: Double
        /// How long the stream plays only silence, with no player start asked for, before it is
        /// corked, seconds (default `IdlePause.defaultSeconds`; nil: never). Corked, it costs
        /// nothing; the next start with audio uncorks it first (`willPlay`).
        public var pauseWhenIdle: Double?
        /// Captured audio the stream plays on (`hapsync live`, `serve`'s `/hapsync/live`; nil:
        /// none). While it is active the stream never pauses for silence: what it plays on is
        /// not the engine's to know.
        package var passThrough: PassThroughAudio?

        /// Makes settings; defaults as described on each property.
        public init(sink: String? = nil, latency: Double = 0.020, maxPlayers: Int = 32, server: String? = nil,
                    idleTimingInterval: Double = 0.1, pauseWhenIdle: Double? = IdlePause.defaultSeconds) {
            self.idleTimingInterval = idleTimingInterval
            self.pauseWhenIdle = pauseWhenIdle
            self.server = server
            self.sink = sink
            self.latency = latency
            self.maxPlayers = maxPlayers
        }
    }

    /// Why the output could not start.
    public enum PulseError: Error, Sendable, CustomStringConvertible {
        /// No server answered.
        case noServer(String)
        /// A server accepted the connection and then did not answer within the time allowed, seconds
        /// (stopped, or pipewire-pulse in front of a PipeWire that is).
        case noAnswer(seconds: Int)
        /// The sink does not exist.
        case noSink(String)
        /// The stream failed.
        case stream(String)
        /// No timing information arrived.
        case noClock
        /// The server would not load a module (`PulseConnection.loadModule`: measuring instruments).
        case moduleRefused(String)

        /// A sentence with a way out.
        public var description: String {
            switch self {
            case .noServer(let why): return "no PulseAudio server (\(why)); start one, or play without audio"
            case .noAnswer(let seconds): return "the PulseAudio server accepted the connection but did not answer within \(seconds) s (is it, or the PipeWire behind pipewire-pulse, stopped?)"
            case .noSink(let name): return "PulseAudio has no sink named '\(name)'; 'pactl list short sinks' lists them"
            case .stream(let why): return "the PulseAudio stream failed: \(why)"
            case .noClock: return "the PulseAudio stream gave no timing information within 5 s"
            case .moduleRefused(let why): return "the PulseAudio server refused to load \(why)"
            }
        }
    }

    /// The settings.
    public let configuration: Configuration
    /// "pulse".
    public var name: String { "pulse" }
    /// The sink's rate (known after `open`).
    public private(set) var sampleRate: Double = AudioDecodingBudget.assumedOutputRate
    /// The server's name as it gives it (known after `open`): "pulseaudio", or
    /// "PulseAudio (on PipeWire 0.3.65)" from pipewire-pulse.
    public private(set) var serverName = ""
    /// Frame ↔ CLOCK_MONOTONIC, fitted from the server's timing info (one clock for the output's
    /// whole life: `open` resets it).
    public let clock = AudioClock(sampleRate: AudioDecodingBudget.assumedOutputRate)
    /// Scheduler → audio thread.
    public var messages: SPSCRing<AudioMessage> { renderer.messages }
    /// Called on the mainloop thread if the server goes away.
    public var onServerLost: (@Sendable (String) -> Void)? {
        get { lostHandler.withLock { $0 } }
        set { lostHandler.withLock { $0 = newValue } }
    }

    /// Live parameters and player mutes (set by the engine before `open`).
    public var liveParameters: LiveParameters? {
        get { liveStore.withLock { $0 } }
        set { liveStore.withLock { $0 = newValue } }
    }
    /// Silences the output (voices keep advancing).
    public var isMuted: Bool {
        get { renderer.isMuted }
        set { renderer.isMuted = newValue }
    }

    /// The SCHED_FIFO priority the mainloop thread (`threadName`, which mixes and writes) asks
    /// for when the stream opens; the engine sets it below its own threads' (nil: normal priority).
    public var threadPriority: Int32? {
        get { mainloopPriority.asked }
        set { mainloopPriority.asked = newValue }
    }
    /// The mainloop thread and what it got (the latest stream's, kept after it closes).
    public var realtimeThreads: [RealtimeThread] { mainloopPriority.threads }

    private let mainloopPriority = MainloopPriority()
    private let liveStore = Locked<LiveParameters?>(nil)
    private let lostHandler = Locked<(@Sendable (String) -> Void)?>(nil)
    private var connection: PulseConnection?
    private var stream: OpaquePointer?
    private var timing = PlaybackTiming(server: .pulseAudio, sampleRate: AudioDecodingBudget.assumedOutputRate)
    private let renderer: AudioStreamRenderer
    /// Voices the mixer can hold at once (a started player reserves all its voices).
    public static let voiceCapacity = AudioStreamRenderer.voiceCapacity
    /// The name of the PulseAudio mainloop thread, which mixes (what `.ci/rt-alloc-check` watches).
    package static let threadName = AudioStreamRenderer.threadName
    private let underrunCount = Atomic<Int>(0)
    private let adaptation: Locked<AdaptiveLatency>
    /// The running stream's bytes per frame (for a new tlength).
    private var streamFrameBytes = 8
    private let running = Atomic<Bool>(false)
    private let cache = AudioSampleCache()
    /// A waveform output's drive signal to mix into the stream the next `open` makes (`attach`).
    private var haptics: WaveformDrive?
    /// Whether a frame still unwritten as its haptic falls due is heard late by the writer's
    /// delay: on PulseAudio, except while the stream is corked or being put back on the clock's
    /// line after (`willPlay`), when frames not yet written are not the writer being late. Never
    /// through pipewire-pulse, which skips frames written after its stream ran dry rather than
    /// delaying them (`PulseConnection.Server.delaysLateWrites`): there the haptics follow the
    /// line alone, as the sound does.
    public var writesAhead: Bool {
        delaysLateWrites.load(ordering: .relaxed) && !paused.load(ordering: .relaxed) && !realigning.load(ordering: .relaxed)
    }
    /// The server's `delaysLateWrites`, set at each open.
    private let delaysLateWrites = Atomic<Bool>(true)
    /// Whether the stream is corked now for want of sound (`Configuration.pauseWhenIdle`).
    public var isPaused: Bool { paused.load(ordering: .relaxed) }
    /// Times the stream was corked for want of sound so far.
    public var pauses: Int { pauseCount.load(ordering: .relaxed) }
    private let paused = Atomic<Bool>(false)
    private let pauseCount = Atomic<Int>(0)
    /// Set by `willPlay` as it uncorks, cleared by the mainloop thread once a timing reply has put
    /// the stream's frames back on the clock's line (`observeTiming`).
    private let realigning = Atomic<Bool>(false)
    /// Whether a player with audio plays or is about to (`audiblePlayersActive`): no cork then.
    private let awake = Atomic<Bool>(false)
    /// Held by `willPlay` while it uncorks and by `close` while it lets go of the connection, so
    /// that a resume never reaches a connection being freed (never taken by the mainloop thread).
    private let lifetime = Locked<Void>(())
    /// When a start last asked for the stream (`willPlay`, ns): stored before `paused` is read,
    /// and read again by `corkIfIdle` after it sets `paused`, both sequentially consistent, so
    /// that a start either sees the cork and uncorks, or stops it.
    private let demandAt = Atomic<UInt64>(0)
    /// Mainloop thread: since when (ns) only silence has been written with no voice waiting (0:
    /// something sounds).
    private var silentSince: UInt64 = 0
    /// Mainloop thread: the clock's frame of the stream's frame 0. The renderer counts frames on
    /// the clock's line; the server counts its read index from the stream's start; they part when
    /// a cork stops the stream while the line runs on, by what `observeTiming` finds after.
    private var lineOffset: Int64 = 0
    /// `configuration.idleTimingInterval` in ns.
    private var idleTimingInterval: UInt64 { UInt64(nanosecondsOf: configuration.idleTimingInterval) }

    /// Makes an output; nothing connects until `open`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        renderer = AudioStreamRenderer(maxPlayers: configuration.maxPlayers)
        adaptation = Locked(AdaptiveLatency(initial: configuration.latency))
    }

    /// The target latency the stream runs with now, seconds: `configuration.latency`, grown by
    /// half (to 100 ms at most) after each underrun (`AdaptiveLatency`), its tlength set anew.
    public var currentLatency: Double { adaptation.withLock { $0.current } }

    deinit { close() }

    /// The first frame not yet handed to the server. Does not allocate, lock or block.
    public var nextWritableFrame: Int64 { renderer.nextFrame }

    /// Buffer underruns reported by the server.
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }

    /// Voices not played because the mixer was full (more than `voiceCapacity` at once).
    public var droppedVoices: Int { renderer.droppedVoices }

    /// Registers a player's audio (control thread, before its start message reaches the audio thread).
    public func setSource(slot: Int, _ source: Unmanaged<PlayerAudio>?) { renderer.setSource(slot: slot, source) }

    /// Mixes a waveform output's drive signal into the stream the next `open` makes (nil: no
    /// longer). Control side; a running stream keeps what it was opened with.
    package func attach(_ drive: WaveformDrive?) { haptics = drive }

    /// Whether a waveform output's drive signal is mixed into the running stream.
    public var carriesHaptics: Bool { renderer.drive != nil }

    /// Decodes a timeline's files at the sink's rate, sharing samples between players of the same
    /// file: only what its voices can play, within `AudioFileDecoder.maxDecodedBytes` a pattern
    /// (`PatternAudioLoader`).
    public func load(_ timeline: PatternTimeline, files: [String: URL]) throws -> PlayerAudio {
        PlayerAudio(timeline: timeline, samples: try PatternAudioLoader.samples(for: timeline, files: files, sampleRate: sampleRate, cache: cache))
    }

    // MARK: - Lifecycle

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Connects, creates the stream at the sink's rate, starts it, and waits until players can
    /// follow the clock (`AudioClock.readyObservations`).
    public func open() throws {
        guard connection == nil else { return }
        let connection = try PulseConnection(clientName: "HapSync", server: configuration.server, threadName: Self.threadName,
                                             realtimePriority: mainloopPriority.asked,
                                             onFailure: { [weak self] why in self?.serverLost(why) })
        lifetime.withLock { _ in self.connection = connection }
        mainloopPriority.record(connection)
        // A stream made anew is not held (`hold`); the old connection's callbacks are gone.
        connection.withLock { heldTo = nil }
        do {
            // `stream` is set under the mainloop lock, before the stream is uncorked (callbacks
            // while it connects, when `connectCorkedPlayback` waits, may still find it nil).
            try connection.withLock { () throws(PulseError) in
                serverName = connection.serverName()
                let sink = try connection.sinkInfo(named: configuration.sink ?? "@DEFAULT_SINK@")
                sampleRate = Double(sink.rate)
                timing = PlaybackTiming(server: PulseConnection.Server(serverName: serverName), sampleRate: sampleRate)
                delaysLateWrites.store(timing.server.delaysLateWrites, ordering: .relaxed)
                clock.reset(sampleRate: sampleRate)
                var positions: [AudioChannelPosition]?
                var frameBytes = 8
                if let haptics {
                    let layout = haptics.channels.layout
                    positions = layout.positions
                    frameBytes = 4 * layout.positions.count
                    timing = PlaybackTiming(server: timing.server, sampleRate: sampleRate, frameBytes: Int64(frameBytes))
                }
                renderer.prepare(sampleRate: sampleRate, live: liveParameters, drive: haptics, passThrough: configuration.passThrough)
                streamFrameBytes = frameBytes
                // A reopen (the server came back) keeps what underruns taught.
                let latency = currentLatency
                paused.store(false, ordering: .relaxed)
                realigning.store(false, ordering: .relaxed)
                (silentSince, lineOffset) = (0, 0)
                demandAt.store(0, ordering: .relaxed)
                let s = try connection.openStream(name: haptics == nil ? "HapSync playback" : "HapSync playback and haptics (\(haptics!.channels.rawValue))",
                                                  rate: sink.rate, channels: positions, onTiming: { [unowned self] info, at in
                    observeTiming(info, at: at)
                }) { s in
                    pa_stream_set_write_callback(s, { _, bytes, userdata in
                        Unmanaged<PulseAudioOutput>.fromOpaque(userdata!).takeUnretainedValue().write(bytes)
                    }, me)
                    pa_stream_set_moved_callback(s, { s, userdata in
                        Unmanaged<PulseAudioOutput>.fromOpaque(userdata!).takeUnretainedValue().moved(s)
                    }, me)
                    pa_stream_set_underflow_callback(s, { _, userdata in
                        let output = Unmanaged<PulseAudioOutput>.fromOpaque(userdata!).takeUnretainedValue()
                        let total = output.underrunCount.add(1, ordering: .relaxed).newValue
                        // A longer buffer, so that the next stall is covered (AdaptiveLatency).
                        if let grown = output.adaptation.withLock({ $0.underruns(total) }), let s = output.stream {
                            PulseConnection.setPlaybackLatency(s, latency: grown, rate: output.sampleRate, frameBytes: output.streamFrameBytes)
                            output.timing.quantumMayGrow()
                        }
                        // Where frames are heard may have moved: fit afresh rather than slewing 25 µs at a time.
                        output.clock.restart()
                    }, me)
                    return PulseConnection.connectCorkedPlayback(s, sink: configuration.sink, latency: latency,
                                                                 rate: sampleRate, frameBytes: frameBytes)
                }
                stream = s
                running.store(true, ordering: .releasing)
                connection.uncork(s, on: sink, latency: latency, server: timing.server)
            }
            // Players follow the clock only once its fit is ready (once per engine start, not per trigger).
            try PulseConnection.awaitReady(clock) { running.load(ordering: .acquiring) }
        } catch {
            close()
            throw error
        }
    }

    /// Whether a server answers now: connects a throwaway context (at most 1 s) and disconnects.
    public func canConnect() -> Bool { PulseConnection.answers(server: configuration.server) }

    /// A player with audio is about to start: a corked stream is uncorked, and this returns once a
    /// timing reply has put its frames back on the clock's line (at most `IdlePause.resumeWait`;
    /// a sink waking from suspend may take longer, and a start placed before then may be late by
    /// how long the stream was corked). A running stream's start takes no lock (the mainloop
    /// thread must not wait for this one); a corked one's takes the mainloop's lock. Control
    /// side; may block.
    public func willPlay() {
        guard configuration.pauseWhenIdle != nil, configuration.passThrough?.isActive != true else { return }
        let now = MonotonicClock.nanoseconds()
        demandAt.store(now, ordering: .sequentiallyConsistent)
        guard paused.load(ordering: .sequentiallyConsistent) else { return }
        let resumed = lifetime.withLock { _ -> Bool in
            guard let connection else { return false }
            return connection.withLock { () -> Bool in
                guard let s = stream, paused.load(ordering: .relaxed) else { return false }
                realigning.store(true, ordering: .releasing)
                paused.store(false, ordering: .releasing)
                if let op = pa_stream_cork(s, 0, nil, nil) { pa_operation_unref(op) }
                connection.requestTimingInfo(every: 0)
                return true
            }
        }
        guard resumed else { return }
        IdlePause.awaitResume(from: now, done: { !realigning.load(ordering: .acquiring) }, running: { running.load(ordering: .relaxed) })
    }

    /// Holds the stream to the sink `sink`: moved there, and moved back at once whenever it is
    /// moved elsewhere meanwhile (`moved`: PulseAudio does nothing when asked to move a stream
    /// to the sink it is on, so a stream already there would still follow the default; moved
    /// back explicitly, it stays). Nil: the hold ends, and the stream is moved to the default
    /// sink, which makes it follow the default again on PulseAudio and pipewire-pulse alike,
    /// except a stream that had to be moved back and sits on the default sink already:
    /// PulseAudio keeps it where it was put (and stream-restore remembers that). Nil when done,
    /// else why not (the hold then is not taken). The stream a reopen makes is not held.
    /// Control side; waits for the server's answer.
    package func hold(to sink: String?) -> String? {
        let target = sink ?? "@DEFAULT_SINK@"
        return lifetime.withLock { _ -> String? in
            guard let connection else { return "the stream is not open" }
            return connection.withLock { () -> String? in
                guard let s = stream else { return "the stream is not open" }
                // Let go first, so that the move below is not undone by `moved`.
                heldTo = nil
                guard connection.moveSinkInput(pa_stream_get_index(s), toSinkNamed: target) else { return "the server did not move the stream to '\(target)'" }
                heldTo = sink.map { Array($0.utf8CString) }
                return nil
            }
        }
    }

    /// After a calm spell without underrun: the stream's tlength back to `seconds`, never below
    /// the latency it began with, when underruns grew it past that (`AdaptiveLatency.settle`),
    /// so that what it plays is heard that much sooner again; nothing when it underran since the
    /// caller saw `underruns` (the underflow callback's growth stands). Frames already written
    /// play out as they are (the server asks for less from then on); the clock's line is not
    /// moved. Control side; takes the mainloop's lock (the underflow callback, which grows the
    /// latency, runs under it too) and does not wait for the server's answer.
    package func settleLatency(to seconds: Double, unlessUnderrunsPast underruns: Int) {
        lifetime.withLock { _ in
            guard let connection else { return }
            connection.withLock {
                guard let s = stream, underrunCount.load(ordering: .relaxed) == underruns,
                      let settled = adaptation.withLock({ $0.settle(to: seconds) }) else { return }
                PulseConnection.setPlaybackLatency(s, latency: settled, rate: sampleRate, frameBytes: streamFrameBytes)
            }
        }
    }

    /// The latency the server granted the stream as its buffer's target length (tlength, at the
    /// stream's rate), seconds; nil while no stream is open. Control side; takes the mainloop's
    /// lock.
    package var grantedLatency: Double? {
        lifetime.withLock { _ in
            guard let connection else { return nil }
            return connection.withLock { () -> Double? in
                guard let s = stream, let attr = pa_stream_get_buffer_attr(s), streamFrameBytes > 0 else { return nil }
                return Double(attr.pointee.tlength) / Double(streamFrameBytes) / sampleRate
            }
        }
    }

    /// Starves the writer until the server reports an underrun: holds the mainloop's lock for
    /// 0.3 s (nothing is written meanwhile, as when a busy machine starves the writer), then
    /// waits up to a second for the server's report, at most `tries` times. Whether an underrun
    /// came. For tests of what an underrun does. Control side; blocks.
    package func runDry(tries: Int = 5) -> Bool {
        let before = underruns
        for _ in 0..<max(tries, 0) {
            lifetime.withLock { _ in connection?.withLock { _ = usleep(300_000) } }
            for _ in 0..<100 where underruns == before { usleep(10_000) }
            if underruns > before { return true }
        }
        return false
    }

    /// The sink the stream is held to (`hold`; nil: none), as a C string for `moved`'s compare.
    /// Written and read under the mainloop's lock; cleared by `open` and `close`.
    private var heldTo: [CChar]?

    /// The stream was moved (the default sink changed, or someone moved it): one held to a sink
    /// (`hold`) and moved elsewhere is moved back, without waiting for the answer. On the
    /// mainloop thread, under its lock; a rare control event, not the audio path: it asks the
    /// server (libpulse allocates the request), takes no lock and does not wait.
    private func moved(_ s: OpaquePointer?) {
        guard let s, let held = heldTo, let device = pa_stream_get_device_name(s), let context = pa_stream_get_context(s) else { return }
        held.withUnsafeBufferPointer { name in
            guard let name = name.baseAddress, strcmp(device, name) != 0 else { return }
            if let op = pa_context_move_sink_input_by_name(context, pa_stream_get_index(s), name, nil, nil) { pa_operation_unref(op) }
        }
    }

    /// Whether a player with audio plays or is about to: the stream is not corked while one does.
    public func audiblePlayersActive(_ active: Bool) { awake.store(active, ordering: .releasing) }

    /// Stops the stream and disconnects.
    public func close() {
        running.store(false, ordering: .releasing)
        let closing = lifetime.withLock { _ -> PulseConnection? in
            defer { connection = nil }
            return connection
        }
        closing?.close()
        // The mainloop is stopped: no callback reads it now.
        stream = nil
        heldTo = nil
        renderer.finish()
    }

    // MARK: - Mainloop thread

    /// The context or the stream failed: once playing, the server is reported lost (once).
    private func serverLost(_ why: String) {
        guard running.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged else { return }
        onServerLost?(why)
    }

    // MARK: - Real-time (hapsync-audio, the PulseAudio mainloop thread)

    /// The server wants `bytes` more: between `pa_stream_begin_write` and `pa_stream_write`, the
    /// renderer takes the scheduler's messages and mixes into the server's buffer; then now and
    /// then ask for timing info. Our code here does not allocate, lock or block
    /// (`.ci/rt-alloc-check` counts allocations in that window); libpulse's own calls around it
    /// do, as its mainloop always does.
    private func write(_ bytes: Int) {
        guard let s = stream else { return }
        let frameBytes = 4 * renderer.channels
        var data: UnsafeMutableRawPointer?
        var size = min(bytes, renderer.maxFrames == .max ? bytes : renderer.maxFrames * frameBytes)
        guard pa_stream_begin_write(s, &data, &size) >= 0, let data else { return }
        guard size >= frameBytes else { pa_stream_cancel_write(s); return }
        let frames = renderer.render(into: data.assumingMemoryBound(to: Float.self), frames: size / frameBytes, clock: clock, writesAhead: writesAhead)
        pa_stream_write(s, data, frames * frameBytes, nil, 0, PA_SEEK_RELATIVE)
        let silent = renderer.drive == nil && renderer.passThrough?.isActive != true && !renderer.isPlaying
        if realigning.load(ordering: .relaxed) {
            connection?.requestTimingInfo(every: 0)
        } else {
            connection?.requestTimingInfo(clock: clock, server: timing.server, idleInterval: silent ? idleTimingInterval : nil)
        }
        let now = MonotonicClock.nanoseconds()
        if !silent {
            silentSince = 0
        } else if silentSince == 0 {
            silentSince = now
        } else {
            corkIfIdle(s, now: now)
        }
    }

    /// Corks the stream once it has written only silence for `pauseWhenIdle` with no start asked
    /// for meanwhile (never with a drive riding in it: the waveform output's haptics are its
    /// sound). Mainloop thread, after a write (libpulse allocates the request).
    private func corkIfIdle(_ s: OpaquePointer, now: UInt64) {
        guard let after = configuration.pauseWhenIdle, renderer.drive == nil, renderer.passThrough?.isActive != true, !realigning.load(ordering: .relaxed),
              !awake.load(ordering: .acquiring) else { return }
        guard IdlePause.hasPassed(after, since: silentSince, now: now),
              IdlePause.hasPassed(after, since: demandAt.load(ordering: .relaxed), now: now) else { return }
        paused.store(true, ordering: .sequentiallyConsistent)
        // A start that came meanwhile saw `paused` false and goes on: the stream stays running.
        guard IdlePause.hasPassed(after, since: demandAt.load(ordering: .sequentiallyConsistent), now: now) else {
            paused.store(false, ordering: .sequentiallyConsistent)
            return
        }
        pauseCount.add(1, ordering: .relaxed)
        if let op = pa_stream_cork(s, 1, nil, nil) { pa_operation_unref(op) }
    }

    /// A timing reply taken at `at`: which frame of the clock's line was heard then
    /// (`PlaybackTiming`, moved by `lineOffset`), for `clock`. The first reply from a playing
    /// stream after `willPlay` uncorked it finds the stream's frames off the line by about as
    /// long as it was corked: while nothing sounds, the renderer skips that much silence (or
    /// repeats it) and `lineOffset` follows, so that starts placed on the line keep their times,
    /// and the fit starts over from that reply. Replies while corked place nothing; on PipeWire
    /// a late jump waits for the next reply to agree (`PlaybackTiming.believe`). Mainloop thread.
    private func observeTiming(_ info: pa_timing_info, at: UInt64) {
        guard !paused.load(ordering: .relaxed), let heard = timing.heardFrame(info) else { return }
        var frame = heard + lineOffset
        if realigning.load(ordering: .relaxed) {
            guard info.playing != 0 else { return }
            if let onLine = clock.fit.frame(atTime: at), abs(onLine - frame) > Int64(sampleRate * 0.0005),
               renderer.realignSilence(to: renderer.nextFrame + (onLine - frame)) {
                lineOffset += onLine - frame
                frame = onLine
            }
            // One reply placed the frames; it may be off by a few ms (taken late, or PulseAudio's
            // first timing after a cork). The fit starts over from it, so the replies after
            // correct it at once rather than slewing 25 µs at a time (seen: taps 4 ms early
            // a second after a resume under load).
            clock.restart()
            realigning.store(false, ordering: .releasing)
        } else if let onLine = clock.fit.frame(atTime: at), !timing.believe(lineAhead: onLine - frame) {
            return
        }
        clock.observe(frame: frame, heardAt: at)
    }
}
