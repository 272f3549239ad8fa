import CPipeWire
import Foundation
import Glibc
import HapSyncAudioFiles
import HapSyncAudioStream
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapSyncSystem
import Synchronization

/// Audio through PipeWire natively (libpipewire-0.3), on the graph's own clock.
///
/// One playback stream (`pw_stream`), float32 stereo at the server's clock rate, asking for
/// `node.latency` = `latency` (default 20 ms), linked to `sink` (a node name, or a node id or
/// object.serial) or the default sink.
/// Its process callback runs in PipeWire's real-time data thread, renamed `hapsync-audio` and set
/// to SCHED_FIFO at `threadPriority` (below the engine's threads) on its first cycle; there
/// `AudioStreamRenderer` mixes the players' voices, and the stream's timing for that very cycle
/// (`pw_stream_get_time_n`) says when the buffer's first frame is heard:
///
///     heard = now + delay / graph rate + (buffered + queued) / stream rate
///
/// (the documented formula in PipeWire's stream.h: `delay` is the graph's and the device's
/// latency, `buffered` what the resampler holds, `queued` the frames of our buffers the graph has
/// not taken yet). Each cycle gives one observation to `clock`, which the scheduler places haptics
/// by; no quantum is guessed, as it must be through pipewire-pulse. A cycle whose graph clock
/// moved on further than the frames we gave it is counted as an underrun (the observation itself
/// moves the clock; counted only while something sounds). After `pauseWhenIdle` of silence the
/// stream pauses (`IdlePause`). If the server goes away, `onServerLost` is called.
///
/// When a waveform haptic output plays to the same sink, its drive signal rides in this stream
/// (`attach`), laid out as on PulseAudio (`AudioStreamRenderer`): sample-locked with the audio.
public final class PipeWireOutput: AudioDevice, RealtimeThreaded, @unchecked Sendable {
    /// Settings.
    public struct Configuration: Sendable {
        /// The sink to play to: a node name, or a node id or object.serial (nil: the default sink).
        public var sink: String?
        /// Latency to ask the graph for (`node.latency`), seconds (default 0.020).
        public var latency: Double
        /// Largest player slot the engine uses (its `maxPlayers`, default 32).
        public var maxPlayers: Int
        /// The server ("pipewire-0" or a socket path; nil: the default, as PIPEWIRE_REMOTE says).
        public var remote: String?
        /// How long the stream plays only silence, with no player start asked for, before it
        /// pauses, seconds (default 2; nil: never). Paused, it costs nothing and keeps no device
        /// awake; the next start with audio runs it again first (`willPlay`).
        public var pauseWhenIdle: Double?
        /// Captured audio the stream plays on (`hapsync live`, `serve`'s `/hapsync/live`; nil:
        /// none). While it is active the stream never pauses for silence: what it plays on is
        /// not the engine's to know.
        package var passThrough: PassThroughAudio?
        /// `node.group` (nil: none): the stream runs in the same driver's cycles as the other
        /// nodes of that group (`hapsync live`'s sink node: sample-locked with its capture).
        package var group: String?
        /// Whether the stream tells its clock of the step a quantum change makes on a server
        /// that needs it (`expectQuantumStep`; default true). False only for the benchmark's
        /// baseline, which measures what it is for.
        package var expectsQuantumSteps = true

        /// Makes settings; defaults as described on each property.
        public init(sink: String? = nil, latency: Double = 0.020, maxPlayers: Int = 32, remote: String? = nil, pauseWhenIdle: Double? = IdlePause.defaultSeconds) {
            self.sink = sink
            self.latency = latency
            self.maxPlayers = maxPlayers
            self.remote = remote
            self.pauseWhenIdle = pauseWhenIdle
        }
    }

    /// Why the output could not start.
    public enum PipeWireError: Error, Sendable, CustomStringConvertible {
        /// The server, sink or stream refused (PipeWire's own sentence).
        case refused(String)
        /// No cycle gave timing within 5 s.
        case noClock
        /// The server went away while the stream was starting.
        case lost(String)

        /// A sentence naming the server and what to do.
        public var description: String {
            switch self {
            case .refused(let why): return why
            case .noClock: return "the PipeWire stream ran no cycle within 5 s (is the graph's driver suspended?)"
            case .lost(let why): return "\(why) while the stream was starting"
            }
        }
    }

    /// The settings.
    public let configuration: Configuration
    /// "pipewire".
    public var name: String { "pipewire" }
    /// The stream's rate (the server's clock rate, known after `open`).
    public private(set) var sampleRate: Double = AudioDecodingBudget.assumedOutputRate
    /// The server's version (known after `open`: "0.3.65").
    public private(set) var serverVersion = ""
    /// Frame ↔ CLOCK_MONOTONIC, from each cycle's timing (`open` resets it).
    public let clock = AudioClock(sampleRate: AudioDecodingBudget.assumedOutputRate)
    /// Scheduler → audio thread.
    public var messages: SPSCRing<AudioMessage> { renderer.messages }
    /// Called on PipeWire's loop thread if the server or the stream goes away.
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
    /// The SCHED_FIFO priority PipeWire's data thread (`threadName`, which mixes) takes on its
    /// first cycle; the engine sets it below its own threads' (nil: as PipeWire set it).
    public var threadPriority: Int32? {
        get { priority.withLock { $0.asked } }
        set { priority.withLock { $0.asked = newValue } }
    }
    /// The data thread and what it got (the latest stream's, kept after it closes).
    public var realtimeThreads: [RealtimeThread] { priority.withLock { $0.got.map { [$0] } ?? [] } }
    /// The name the data thread takes (what `.ci/rt-alloc-check` watches, as on PulseAudio).
    package static let threadName = AudioStreamRenderer.threadName

    /// The first frame not yet handed to the graph. Does not allocate, lock or block.
    public var nextWritableFrame: Int64 { renderer.nextFrame }
    /// The next cycle's first frame, or, when that cycle begins within `startGuard` (its start
    /// message could miss it), the one after's: cycles come every quantum from the last one's
    /// start. No padding beyond that, since each cycle renders its whole buffer at its start.
    /// Does not allocate, lock or block.
    public var earliestStartFrame: Int64 {
        // The cycle's start before its frames: `process` stores it after rendering, so a read
        // torn across a cycle errs a quantum late, never into the cycle under way.
        let began = lastCycleStart.load(ordering: .acquiring)
        let next = renderer.nextFrame, quantum = Int64(requested.load(ordering: .relaxed))
        guard quantum > 0, began > 0 else { return next + Int64(sampleRate * 0.005) }
        let nextCycle = began &+ UInt64(nanosecondsOf: Double(quantum) / sampleRate)
        return MonotonicClock.nanoseconds() &+ Self.startGuard < nextCycle ? next : next + quantum
    }
    /// How long before a cycle begins a start is placed in the cycle after instead, ns: the
    /// scheduler's message crosses to the data thread in far less.
    static let startGuard: UInt64 = 1_000_000
    /// Cycles whose graph clock moved on further than the frames this stream gave it, counted
    /// while something sounds (a resume's first cycle after a pause is not an underrun).
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }
    /// False: each cycle's frames are rendered in that cycle's process callback.
    public var writesAhead: Bool { false }
    /// Whether the stream is paused now (`Configuration.pauseWhenIdle`).
    public var isPaused: Bool { idle.withLock { $0.paused } }
    /// Times the stream paused while idle so far.
    public var pauses: Int { idle.withLock { $0.pauses } }
    /// Frames the latest cycle asked for (`pw_buffer.requested`: the graph's quantum at the
    /// stream's rate; 0 before a cycle said).
    public var requestedFrames: Int { requested.load(ordering: .relaxed) }
    /// Voices not played because the mixer was full.
    public var droppedVoices: Int { renderer.droppedVoices }
    /// The node.latency the stream runs with now, seconds: `configuration.latency`, grown by half
    /// (to 100 ms at most) each 100 ms in which it underran (`AdaptiveLatency`).
    public var currentLatency: Double { adaptation.withLock { $0.current } }

    private let renderer: AudioStreamRenderer
    private let liveStore = Locked<LiveParameters?>(nil)
    private let lostHandler = Locked<(@Sendable (String) -> Void)?>(nil)
    private let priority = Locked<(asked: Int32?, got: RealtimeThread?)>((nil, nil))
    private let cache = AudioSampleCache()
    private let underrunCount = Atomic<Int>(0)
    private let requested = Atomic<Int>(0)
    /// When the latest cycle began (`pw_time.now`, CLOCK_MONOTONIC ns; 0 before the first).
    private let lastCycleStart = Atomic<UInt64>(0)
    /// Cycles run so far (data thread), for `willPlay`'s wait.
    private let cycles = Atomic<Int>(0)
    /// Data thread: since when (heard time, ns) it has rendered only silence with no voice
    /// waiting; 0 while something sounds.
    private let silentSince = Atomic<UInt64>(0)
    /// Whether the stream is paused, when a start last asked for it, and the pauses so far:
    /// decided under this lock by the loop thread's `pauseIfIdle` and the control side's
    /// `willPlay`, each calling `hs_pw_set_active` after letting go of it (the loop thread holds
    /// PipeWire's loop lock, which `hs_pw_set_active` takes).
    private let idle = Locked<(paused: Bool, demandAt: UInt64, pauses: Int)>((false, 0, 0))
    /// Resumes so far (`willPlay`, counted before the stream runs again) and when the latest
    /// was asked for; the data thread's last one it has put its frames back on the line after.
    private let resumeEpoch = Atomic<Int>(0)
    /// Whether a player with audio plays or is about to (`audiblePlayersActive`): no pause then.
    private let awake = Atomic<Bool>(false)
    /// Held by `willPlay` across `hs_pw_set_active` and by `close` while it lets go of the
    /// stream, so that a resume never reaches a stream being freed (never taken by the loop
    /// thread, which holds PipeWire's loop lock that `hs_pw_set_active` takes).
    private let lifetime = Locked<Void>(())
    private let resumedAt = Atomic<UInt64>(0)
    private var alignedEpoch = 0
    private let adaptation: Locked<AdaptiveLatency>
    private let running = Atomic<Bool>(false)
    private var stream: OpaquePointer?
    /// A waveform output's drive signal to mix into the stream the next `open` makes (`attach`).
    private var haptics: WaveformDrive?
    /// Data thread: the graph clock (ns) and frames of the previous cycle, for underruns.
    private var lastGraphTime: Int64 = -1
    /// The data thread's own: the last cycle's start (`pw_time.now`), ns.
    private var lastCycleNow: Int64 = 0
    private var lastFrames = 0
    /// The data thread's own: the last cycle's quantum and graph ticks (0: none yet).
    private var lastQuantum: UInt64 = 0
    private var lastTicks: UInt64 = 0
    /// Whether the server's timer drivers start the cycle after a quantum change an old quantum
    /// on (`timesOldQuantum`): set once the server's version is known.
    private let oldQuantumAfterChange = Atomic<Bool>(false)

    /// Makes an output; nothing connects until `open`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        renderer = AudioStreamRenderer(maxPlayers: configuration.maxPlayers)
        adaptation = Locked(AdaptiveLatency(initial: configuration.latency))
    }

    deinit { close() }

    /// Mixes a waveform output's drive signal into the stream the next `open` makes (nil: no
    /// longer). Control side; a running stream keeps what it was opened with.
    package func attach(_ drive: WaveformDrive?) { haptics = drive }

    /// Makes the next `open`'s stream a waveform output's own (`drive` alone, no players): named
    /// "HapSync haptics", its data thread `hapsync-wave`, as on PulseAudio. Control side.
    package func carryOnly(_ drive: WaveformDrive) {
        haptics = drive
        hapticsOnly = true
    }
    private var hapticsOnly = false
    /// The data thread's name: `hapsync-audio`, or `hapsync-wave` for a waveform output's own stream.
    private var dataThreadName: String { hapticsOnly ? "hapsync-wave" : Self.threadName }

    /// Whether a waveform output's drive signal is mixed into the running stream.
    public var carriesHaptics: Bool { renderer.drive != nil }

    /// Registers a player's audio (control thread, before its start message reaches the audio thread).
    public func setSource(slot: Int, _ source: Unmanaged<PlayerAudio>?) { renderer.setSource(slot: slot, source) }

    /// Decodes a timeline's files at the stream's rate, sharing samples between players of the
    /// same file (`PatternAudioLoader`).
    public func load(_ timeline: PatternTimeline, files: [String: URL]) throws -> PlayerAudio {
        PlayerAudio(timeline: timeline, samples: try PatternAudioLoader.samples(for: timeline, files: files, sampleRate: sampleRate, cache: cache))
    }

    /// Whether a PipeWire server answers now with this output's sink (or, without one, any audio
    /// sink) to play to (at most 1 s): what the engine's watcher asks before it restarts on a
    /// server that came back, whose sinks appear a moment after it answers.
    public func canConnect() -> Bool { hs_pw_answers(configuration.remote, 1, configuration.sink, 1000) == 1 }

    /// The name of the default sink of the PipeWire server on `remote` (nil: the default), as its
    /// session manager says (at most 1 s), or why not.
    package static func defaultSink(remote: String? = nil) -> Result<String, PipeWireError> {
        var name = [CChar](repeating: 0, count: 256)
        let result = hs_pw_default_sink(remote, &name, name.count, 1000)
        guard result == 0 else {
            let why = switch -result {
            case Int32(EHOSTDOWN): "no PipeWire server answers on \(remote ?? "the default socket")"
            case Int32(ENOTSUP): "PipeWire has no session manager's metadata to say its default sink (is WirePlumber running?)"
            case Int32(ENOENT): "PipeWire has no default sink"
            case Int32(ETIMEDOUT): "the PipeWire server did not answer within 1 s"
            default: "asking PipeWire for its default sink failed (\(SystemErrno(-result)))"
            }
            return .failure(.refused(why))
        }
        return .success(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Holds the stream to the sink `sink` (its name, serial or id) through the session
    /// manager's metadata, as `pactl move-sink-input` does, so that it no longer follows the
    /// default sink (nil: the hold cleared, it follows the default sink again): `serve`'s output
    /// while live haptics have made `hapsync-live`, which could be made the default and would
    /// then be played into by the stream that plays what it captured. Nil when done, else why
    /// not. A stream made anew (the server came back) is not held. Control side; at most 2 s.
    package func hold(to sink: String?) -> String? {
        lifetime.withLock { _ -> String? in
            guard let stream else { return "the PipeWire stream is not open" }
            let result = sink.withOptionalCString { hs_pw_hold_to(stream, $0) }
            return result < 0 ? Self.retargetFailure(-result, target: sink) : nil
        }
    }

    /// Why the session manager's metadata could not name `target` (nil: the default sink) as a
    /// stream's: `errno` from `hs_pw_hold_to` or `hs_pw_hand_over`, as a phrase.
    package static func retargetFailure(_ errno: Int32, target: String?) -> String {
        switch errno {
        case ENOENT: "PipeWire has no sink named '\(target ?? "")' now"
        case ENOTSUP: "no session manager's metadata to ask it by (is WirePlumber running?)"
        case ETIMEDOUT: "PipeWire did not answer within 2 s"
        case EPIPE: "the PipeWire server is gone"
        default: SystemErrno(errno).description
        }
    }

    /// Whether a PipeWire server answers on `remote` (nil: the default) within 1 s: what
    /// `--audio auto` asks before it picks PipeWire.
    public static func answers(remote: String? = nil) -> Bool { probe(remote: remote) == .answers }

    /// What a PipeWire server on `remote` (nil: the default) does when asked (at most 1 s).
    public enum Probe: Sendable, Equatable {
        /// It answered.
        case answers
        /// Nothing there (no socket, or the connection was refused).
        case absent
        /// Something took the connection and did not answer within 1 s: a stopped server.
        case silent
    }

    /// Asks a PipeWire server on `remote` (nil: the default) whether it is there (at most 1 s).
    public static func probe(remote: String? = nil) -> Probe {
        switch hs_pw_answers(remote, 0, nil, 1000) {
        case 1: .answers
        case -1: .silent
        default: .absent
        }
    }

    // MARK: - Lifecycle

    /// Connects, starts the stream on the sink, and waits for `cyclesBeforePlaying` cycles' timing.
    public func open() throws {
        guard stream == nil else { return }
        lastGraphTime = -1
        (lastQuantum, lastTicks) = (0, 0)
        requested.store(0, ordering: .relaxed)
        lastCycleStart.store(0, ordering: .relaxed)
        alignedEpoch = resumeEpoch.load(ordering: .relaxed)
        silentSince.store(0, ordering: .relaxed)
        idle.withLock { $0.paused = false }
        lastFrames = 0
        // A reopen (the server came back) keeps what underruns taught.
        let latency = UInt32(max(1, min(2_000_000, (currentLatency * 1e6).rounded())))
        running.store(true, ordering: .releasing)
        let asked = threadPriority
        var error = [CChar](repeating: 0, count: 512)
        let me = Unmanaged.passUnretained(self).toOpaque()
        let positions: [UInt32] = haptics.map { drive in
            drive.channels.layout.positions.map { p -> UInt32 in
                switch p {
                case .frontLeft: HS_PW_CHANNEL_FL.rawValue
                case .frontRight: HS_PW_CHANNEL_FR.rawValue
                case .rearLeft: HS_PW_CHANNEL_RL.rawValue
                case .rearRight: HS_PW_CHANNEL_RR.rawValue
                case .mono: HS_PW_CHANNEL_MONO.rawValue
                }
            }
        } ?? [HS_PW_CHANNEL_FL.rawValue, HS_PW_CHANNEL_FR.rawValue]
        let description = haptics.map { (hapticsOnly ? "HapSync haptics" : "HapSync playback and haptics") + " (\($0.channels.rawValue))" }
            ?? "HapSync playback"
        let opened: OpaquePointer? = positions.withUnsafeBufferPointer { positionsBuffer in
            let positionsPointer = positionsBuffer.baseAddress
            return dataThreadName.withCString { threadName in
            configuration.sink.withOptionalCString { sink in
                configuration.remote.withOptionalCString { remote in
                configuration.group.withOptionalCString { group in
                    description.withCString { description in
                        var config = hs_pw_config()
                        config.remote = remote
                        config.group = group
                        config.target = sink
                        config.description = description
                        config.rate = 0
                        config.channels = UInt32(positions.count)
                        config.positions = positionsPointer
                        config.latency_us = latency
                        config.tick = { user in
                            let output = Unmanaged<PipeWireOutput>.fromOpaque(user!).takeUnretainedValue()
                            output.adapt()
                            output.pauseIfIdle()
                        }
                        config.prepare = { user, rate in
                            Unmanaged<PipeWireOutput>.fromOpaque(user!).takeUnretainedValue().prepare(rate: Double(rate))
                        }
                        config.thread_name = threadName
                        config.realtime_priority = asked.map { Int32($0) } ?? 0
                        config.user = me
                        config.process = { user, data, frames, time in
                            Unmanaged<PipeWireOutput>.fromOpaque(user!).takeUnretainedValue().process(data!, frames: Int(frames), time: time!.pointee)
                        }
                        config.event = { user, kind, message in
                            // 1: the stream failed; 3: the server went away.
                            guard kind == 1 || kind == 3 else { return }
                            Unmanaged<PipeWireOutput>.fromOpaque(user!).takeUnretainedValue().serverLost(message.map { String(cString: $0) } ?? "the PipeWire server failed")
                        }
                        return hs_pw_open(&config, 5000, &error, error.count)
                    }
                }
                }
            }
        }
        }
        guard let opened else {
            running.store(false, ordering: .releasing)
            throw PipeWireError.refused(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        // Under `lifetime`, as `close` clears it: `willPlay` and `hold` read it there from other threads.
        lifetime.withLock { _ in stream = opened }
        serverVersion = String(cString: hs_pw_server_version(opened))
        oldQuantumAfterChange.store(configuration.expectsQuantumSteps && Self.timesOldQuantum(serverVersion: serverVersion), ordering: .relaxed)
        do {
            try awaitReady()
        } catch {
            close()
            throw error
        }
        if let asked {
            let got = Self.dataThreadGrant(of: opened, named: dataThreadName, asked: asked)
            priority.withLock { $0.got = got }
        }
    }

    /// What the data thread of `stream` (named `name`) got when it asked for SCHED_FIFO `asked`
    /// on its first cycle: refused for lack of permission, RealtimeKit is asked from here on its
    /// behalf. Control side, after the first cycle; may block (RealtimeKit's round trip).
    package static func dataThreadGrant(of stream: OpaquePointer, named name: String, asked: Int32) -> RealtimeThread {
        let result = hs_pw_realtime_result(stream)
        if result > 0, SystemErrno(result).isPermissionDenied, case let tid = hs_pw_data_thread(stream), tid > 0 {
            return RealtimeThread(name: name, asked: asked, result: HelperThreadCalls.requestRealtimeKit(thread: tid, asked: asked, refused: SystemErrno(result)))
        }
        return RealtimeThread(name: name, priority: asked, error: result == 0 ? nil : result < 0 ? "no cycle ran" : SystemErrno(result).description)
    }

    /// Once connected, before the stream starts: the renderer and the clock at the stream's rate.
    private func prepare(rate: Double) {
        sampleRate = rate
        renderer.prepare(sampleRate: rate, live: liveParameters, drive: haptics, passThrough: configuration.passThrough)
        clock.reset(sampleRate: rate)
        var sample = hs_pw_time()
        sample.rate_num = 1
        sample.rate_denom = UInt32(rate)
        _ = Self.heardTime(sample, sampleRate: rate)
    }

    /// Cycles `open` waits for before players may follow the clock: each cycle's timing places its
    /// own buffer exactly, so none is needed to average jitter away; three show the stream is
    /// running on the graph's clock (about 30 ms at a 512-frame quantum, where the 33 PulseAudio's
    /// protocol waits for took 0.35 s).
    static let cyclesBeforePlaying = 3

    /// Waits (at most 5 s) for `cyclesBeforePlaying` cycles' timing.
    private func awaitReady() throws {
        clock.waitUntilReady(observations: Self.cyclesBeforePlaying) { running.load(ordering: .acquiring) }
        guard running.load(ordering: .acquiring) else { throw PipeWireError.lost(lostReason.withLock { $0 } ?? "the PipeWire server went away") }
        guard clock.isFitted else { throw PipeWireError.noClock }
    }

    /// Stops the stream and disconnects.
    public func close() {
        running.store(false, ordering: .releasing)
        let closing = lifetime.withLock { _ -> OpaquePointer? in
            defer { stream = nil }
            return stream
        }
        if let closing { hs_pw_close(closing) }
        renderer.finish()
    }

    /// Whether a player with audio plays or is about to: the stream does not pause while one does.
    public func audiblePlayersActive(_ active: Bool) { awake.store(active, ordering: .releasing) }

    private let lostReason = Locked<String?>(nil)

    /// After a calm spell without underrun: node.latency back to `seconds` (never below the
    /// latency it began with) when it grew past that (`AdaptiveLatency.settle`). In a node group
    /// the graph runs the shortest cycle its nodes ask for only once every node asks for it: a
    /// stream left at its grown latency held PipeWire 0.3.65's cycle at 512 frames after
    /// `hapsync live`'s sink asked for 256 again. Control side: it only records the latency; the
    /// loop thread's next `adapt` (within 100 ms)
    /// asks for it, so that every node.latency the stream asks for is asked in order, on one
    /// thread, for the latency `AdaptiveLatency` holds then (a growth meanwhile wins).
    /// Nothing when the stream underran since the caller saw `underruns` (its growth stands).
    package func settleLatency(to seconds: Double, unlessUnderrunsPast underruns: Int) {
        guard adaptation.withLock({ a in underrunCount.load(ordering: .relaxed) == underruns ? a.settle(to: seconds) : nil }) != nil else { return }
        latencySettled.store(true, ordering: .releasing)
    }
    /// A settled latency for `adapt` to ask for.
    private let latencySettled = Atomic<Bool>(false)

    /// Loop thread, every 100 ms: after underruns, a longer node.latency (`AdaptiveLatency`); after
    /// `settleLatency`, the settled one.
    private func adapt() {
        let total = underrunCount.load(ordering: .relaxed)
        let settled = latencySettled.exchange(false, ordering: .acquiring)
        let (grown, latency) = adaptation.withLock { a in (a.underruns(total) != nil, a.current) }
        guard grown || settled, let stream else { return }
        _ = hs_pw_set_latency(stream, UInt32((latency * sampleRate).rounded()))
    }

    /// Loop thread, every 100 ms: pauses the stream once it has played only silence for
    /// `pauseWhenIdle` with no start asked for meanwhile (never with a drive riding in it: the
    /// waveform output's haptics are its sound).
    private func pauseIfIdle() {
        guard let after = configuration.pauseWhenIdle, haptics == nil, configuration.passThrough?.isActive != true, !awake.load(ordering: .acquiring), let stream else { return }
        let since = silentSince.load(ordering: .relaxed)
        let now = MonotonicClock.nanoseconds()
        let pause = idle.withLock { state -> Bool in
            guard !state.paused, since > 0, IdlePause.hasPassed(after, since: since, now: now),
                  IdlePause.hasPassed(after, since: state.demandAt, now: now) else { return false }
            state.paused = true
            state.pauses += 1
            return true
        }
        if pause { _ = hs_pw_set_active(stream, 0) }
    }

    /// A player with audio is about to start: a paused stream runs again, and this returns once
    /// its first cycle has run (at most 100 ms; a device waking from suspend may take longer, and
    /// a start placed before then may lose its first frames). Control side; may block.
    public func willPlay() {
        let now = MonotonicClock.nanoseconds()
        let wasPaused = idle.withLock { state -> Bool in
            state.demandAt = now
            defer { state.paused = false }
            return state.paused
        }
        guard wasPaused else { return }
        let before = cycles.load(ordering: .acquiring)
        resumedAt.store(now, ordering: .relaxed)
        resumeEpoch.add(1, ordering: .releasing)
        let resumed = lifetime.withLock { _ -> Bool in
            guard let stream else { return false }
            return hs_pw_set_active(stream, 1) == 0
        }
        guard resumed else {
            // Still paused (or closing): the next start tries again.
            idle.withLock { $0.paused = stream != nil }
            return
        }
        IdlePause.awaitResume(from: now, done: { cycles.load(ordering: .acquiring) != before }, running: { running.load(ordering: .relaxed) })
    }

    /// The server or stream failed (loop thread): reported once, while playing.
    private func serverLost(_ why: String) {
        lostReason.withLock { $0 = why }
        guard running.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged else { return }
        onServerLost?(why)
    }

    // MARK: - Real-time (hapsync-audio, PipeWire's data thread)

    /// When the first frame of the buffer being filled is heard (CLOCK_MONOTONIC ns), from the
    /// cycle's timing: `now + delay / graph rate + (buffered + queued) / sampleRate` (PipeWire's
    /// stream.h); and the graph clock's position in ns, for underruns. Pure: the one place a
    /// cycle's timing becomes "frame heard at T". Does not allocate, lock or block (`prepare`
    /// runs it once first, so a debug build's lazy witness tables are made off the data thread).
    package static func heardTime(_ time: hs_pw_time, sampleRate: Double) -> (heard: UInt64, graph: Int64) {
        guard time.rate_denom > 0 else { return (UInt64(max(0, time.now)), 0) }
        let tick = Double(time.rate_num) * 1e9 / Double(time.rate_denom)
        let heard = Double(time.now) + Double(time.delay) * tick + Double(time.buffered &+ time.queued) * 1e9 / sampleRate
        return (UInt64(max(0, heard)), Int64(Double(time.ticks) * tick))
    }

    /// Whether a PipeWire server of `serverVersion` ("0.3.65") has timer drivers (a null sink,
    /// the Dummy-Driver) that start the cycle after a quantum change one old quantum after the
    /// change, not one new quantum: releases before 0.3.68 (where the new quantum reaches the
    /// driver only after it has set its next wake-up; fixed upstream by "node: add target_rate
    /// and target_duration in io_clock"). False for a version that does not parse. Pure.
    package static func timesOldQuantum(serverVersion: String) -> Bool {
        let parts = serverVersion.split(separator: ".").prefix(3).map { Int($0.prefix { $0.isNumber }) }
        guard parts.count == 3, let major = parts[0], let minor = parts[1], let micro = parts[2] else { return false }
        return (major, minor, micro) < (0, 3, 68)
    }

    /// Where the frames after a cycle's are heard off the line, when its quantum is not the last
    /// one's and its timer driver starts the next cycle an old quantum on (`timesOldQuantum`)
    /// and takes each cycle's frames at its start: from the frame after this cycle's
    /// (`firstFrame` + `frames`) on, (old − new quantum) later, for good (ns; negative: earlier).
    /// Nil for a cycle that does not follow the last without a gap (ticks moved on by the last
    /// quantum), is not at the stream's own rate (`sampleRate`), or was not rendered whole. Pure;
    /// does not allocate, lock or block.
    package static func quantumStep(_ time: hs_pw_time, lastQuantum: UInt64, lastTicks: UInt64, firstFrame first: Int64, frames n: Int,
                                    sampleRate: Double) -> (frame: Int64, ns: Double)? {
        guard time.timer_driver != 0, time.duration > 0, lastQuantum > 0, time.duration != lastQuantum,
              time.ticks &- lastTicks == lastQuantum, UInt64(n) == time.duration,
              time.rate_num == 1, Double(time.rate_denom) == sampleRate
        else { return nil }
        return (first + Int64(n), (Double(lastQuantum) - Double(time.duration)) * 1e9 / sampleRate)
    }

    /// Tells the clock of a step `quantumStep` finds (`AudioClock.expectStep`) before any report
    /// can show it, on a server that needs it, so that haptics released meanwhile go with the
    /// frames (measured before: one tap per growth of the quantum late by the growth, 10.7-21.3
    /// ms). Does not allocate, lock or block.
    private func expectQuantumStep(_ time: hs_pw_time, firstFrame first: Int64, frames n: Int) {
        defer { (lastQuantum, lastTicks) = (time.duration, time.ticks) }
        guard oldQuantumAfterChange.load(ordering: .relaxed),
              let step = Self.quantumStep(time, lastQuantum: lastQuantum, lastTicks: lastTicks, firstFrame: first, frames: n, sampleRate: sampleRate)
        else { return }
        clock.expectStep(fromFrame: step.frame, by: step.ns)
    }

    /// Fills one cycle's buffer and tells the clock when its first frame is heard. Does not
    /// allocate, lock or block.
    private func process(_ data: UnsafeMutablePointer<Float>, frames: Int, time: hs_pw_time) -> UInt32 {
        guard running.load(ordering: .relaxed), time.rate_denom > 0, time.now > 0 else {
            data.update(repeating: 0, count: frames * renderer.channels)
            return UInt32(frames)
        }
        let (heard, graphTime) = Self.heardTime(time, sampleRate: sampleRate)
        let sounding = silentSince.load(ordering: .relaxed) == 0
        // After a pause the graph runs on a new phase (its driver stopped with nothing to drive
        // and starts again at once: a cycle may come early by up to a quantum, or seconds late).
        // The first cycle that finds its frames off the clock's line, nothing sounding, goes on
        // from the frame the line places at this cycle (silence repeated or left out), so that
        // players following the clock, and starts placed on it meanwhile, keep their times. Only
        // after a resume: a late cycle alone is the clock's to weigh (realigning on one made its
        // lateness permanent); one that finds the frames on the line, or a second after, ends it.
        let epoch = resumeEpoch.load(ordering: .acquiring)
        if epoch != alignedEpoch, !sounding, let onLine = clock.fit.frame(atTime: heard) {
            let off = abs(onLine - renderer.nextFrame) > Int64(sampleRate * 0.0005)
            if !off || renderer.realignSilence(to: onLine) || heard > resumedAt.load(ordering: .relaxed) &+ 1_000_000_000 {
                alignedEpoch = epoch
            }
        }
        let first = renderer.nextFrame
        if lastGraphTime >= 0, sounding {
            // The graph's clock and the cycle's start both moved on further than the frames
            // given: a clock that jumped alone is a new driver's (the stream moved to another
            // driver's cycles, e.g. as a node of its group was linked), not a missed cycle.
            let moved = Double(graphTime &- lastGraphTime), given = Double(lastFrames) * 1e9 / sampleRate
            let elapsed = Double(time.now &- lastCycleNow)
            if moved > given + 500_000, elapsed > given + 500_000 { underrunCount.add(1, ordering: .relaxed) }
        }
        lastCycleNow = time.now
        clock.observe(frame: first, heardAt: heard)
        let n = renderer.render(into: data, frames: frames, clock: clock, writesAhead: writesAhead)
        expectQuantumStep(time, firstFrame: first, frames: n)
        // After the frames (see `earliestStartFrame`).
        if time.requested > 0 { requested.store(Int(clamping: time.requested), ordering: .relaxed) }
        lastCycleStart.store(UInt64(time.now), ordering: .releasing)
        lastGraphTime = graphTime
        lastFrames = n
        if renderer.isPlaying || renderer.drive != nil || renderer.passThrough?.isActive == true {
            silentSince.store(0, ordering: .relaxed)
        } else if !sounding {
            // Still silent: keeps the time it began.
        } else {
            silentSince.store(max(1, heard), ordering: .relaxed)
        }
        cycles.add(1, ordering: .releasing)
        return UInt32(n)
    }
}

extension Optional where Wrapped == String {
    /// Calls `body` with the string as a C string, or NULL.
    package func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case .some(let s): return s.withCString { body($0) }
        case .none: return body(nil)
        }
    }
}
