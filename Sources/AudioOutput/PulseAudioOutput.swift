import CPulse
import Foundation
import Glibc
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import Synchronization

/// Audio through PulseAudio's asynchronous API, on its own clock.
///
/// One playback stream, float32 stereo at the sink's own rate, asking for a small target latency
/// (`latency`, default 20 ms), started corked with prebuf 0 and fed silence whenever nothing plays,
/// so its clock never stops. Every write comes from `AudioMixer`. After each write (at most every
/// 10 ms) it asks the server for timing info; from the read index, sink and transport latency it
/// knows which frame was heard when, and feeds that to `clock`, which the scheduler uses to put
/// haptics where the audio is heard. Underruns are counted; if the server goes away mid-play,
/// `onServerLost` is called (the engine reports it and its haptics go on).
public final class PulseAudioOutput: AudioDevice, @unchecked Sendable {
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

        /// Makes settings; defaults as described on each property.
        public init(sink: String? = nil, latency: Double = 0.020, maxPlayers: Int = 32, server: String? = nil) {
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
        /// The sink does not exist.
        case noSink(String)
        /// The stream failed.
        case stream(String)
        /// No timing information arrived.
        case noClock

        /// A sentence with a way out.
        public var description: String {
            switch self {
            case .noServer(let why): return "no PulseAudio server (\(why)); start one, or play without audio with --audio none"
            case .noSink(let name): return "PulseAudio has no sink named '\(name)'; 'pactl list short sinks' lists them"
            case .stream(let why): return "the PulseAudio stream failed: \(why)"
            case .noClock: return "the PulseAudio stream gave no timing information within 5 s"
            }
        }
    }

    /// The settings.
    public let configuration: Configuration
    /// "pulse".
    public var name: String { "pulse" }
    /// The sink's rate (known after `open`).
    public private(set) var sampleRate: Double = 48_000
    /// Frame ↔ CLOCK_MONOTONIC, fitted from the server's timing info (one clock for the output's
    /// whole life: `open` resets it).
    public let clock = AudioClock(sampleRate: 48_000)
    /// Scheduler → audio thread.
    public let messages = SPSCRing<AudioMessage>(capacity: 1024)
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
        get { muted.load(ordering: .relaxed) }
        set { muted.store(newValue, ordering: .relaxed) }
    }

    private let liveStore = Locked<LiveParameters?>(nil)
    private let muted = Atomic<Bool>(false)
    private let lostHandler = Locked<(@Sendable (String) -> Void)?>(nil)
    private var connection: PulseConnection?
    private var stream: OpaquePointer?
    private var mixer = AudioMixer(sampleRate: 48_000, capacity: PulseAudioOutput.voiceCapacity)
    /// Voices the mixer can hold at once (a started player reserves all its voices).
    public static let voiceCapacity = 256
    /// The name of the PulseAudio mainloop thread, which mixes (what `.ci/rt-alloc-check` watches).
    package static let threadName = "hapsync-audio"
    private let dropped = Atomic<Int>(0)
    private let written = Atomic<Int64>(0)
    private let underrunCount = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private let sources: UnsafeMutablePointer<Unmanaged<PlayerAudio>?>
    private let cache = Locked<[String: AudioSamples]>([:])

    /// Makes an output; nothing connects until `open`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        sources = .allocate(capacity: max(configuration.maxPlayers, 1))
        sources.initialize(repeating: nil, count: max(configuration.maxPlayers, 1))
    }

    deinit {
        close()
        sources.deallocate()
    }

    /// The first frame not yet handed to the server. Does not allocate, lock or block.
    public var nextWritableFrame: Int64 { written.load(ordering: .acquiring) }

    /// Buffer underruns reported by the server.
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }

    /// Voices not played because the mixer was full (more than `voiceCapacity` at once).
    public var droppedVoices: Int { dropped.load(ordering: .relaxed) }

    /// Registers a player's audio (control thread, before its start message reaches the audio thread).
    public func setSource(slot: Int, _ source: Unmanaged<PlayerAudio>?) {
        guard slot >= 0, slot < configuration.maxPlayers else { return }
        sources[slot] = source
    }

    /// Decodes a timeline's files at the sink's rate, sharing samples between players of the same
    /// file: only what its voices can play, within `AudioFileDecoder.maxDecodedBytes` a pattern
    /// (`PatternAudioLoader`).
    public func load(_ timeline: PatternTimeline, files: [String: URL]) throws -> PlayerAudio {
        PlayerAudio(timeline: timeline, samples: try PatternAudioLoader.samples(for: timeline, files: files, sampleRate: sampleRate, cache: cache))
    }

    // MARK: - Lifecycle

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Connects, creates the stream at the sink's rate, starts it, and waits for the first clock fit.
    public func open() throws {
        guard connection == nil else { return }
        let connection = try PulseConnection(clientName: "HapSync", server: configuration.server, threadName: Self.threadName,
                                             onFailure: { [weak self] why in self?.serverLost(why) })
        self.connection = connection
        do {
            stream = try connection.withLock { () throws(PulseError) -> OpaquePointer in
                let sinkRate = try connection.sampleRate(ofSink: configuration.sink ?? "@DEFAULT_SINK@")
                sampleRate = Double(sinkRate)
                clock.reset(sampleRate: sampleRate)
                mixer = AudioMixer(sampleRate: sampleRate, capacity: Self.voiceCapacity)
                mixer.live = liveParameters
                written.store(0, ordering: .releasing)
                let s = try connection.openStream(name: "HapSync playback", rate: sinkRate, onTiming: { [unowned self] info, at in
                    timingUpdated(info, at: at)
                }) { s in
                    pa_stream_set_write_callback(s, { _, bytes, userdata in
                        Unmanaged<PulseAudioOutput>.fromOpaque(userdata!).takeUnretainedValue().write(bytes)
                    }, me)
                    pa_stream_set_underflow_callback(s, { _, userdata in
                        let output = Unmanaged<PulseAudioOutput>.fromOpaque(userdata!).takeUnretainedValue()
                        output.underrunCount.add(1, ordering: .relaxed)
                        // Where frames are heard may have moved: fit afresh rather than slewing 25 µs at a time.
                        output.clock.restart()
                    }, me)
                    let frameBytes = 8.0
                    var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(configuration.latency * sampleRate * frameBytes),
                                              prebuf: 0, minreq: UInt32(0.005 * sampleRate * frameBytes), fragsize: UInt32.max)
                    let flags = pa_stream_flags_t(rawValue: PA_STREAM_START_CORKED.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue
                                                  | PA_STREAM_AUTO_TIMING_UPDATE.rawValue | PA_STREAM_ADJUST_LATENCY.rawValue)
                    return pa_stream_connect_playback(s, configuration.sink, &attr, flags, nil, nil)
                }
                running.store(true, ordering: .releasing)
                if let op = pa_stream_cork(s, 0, nil, nil) { pa_operation_unref(op) }
                return s
            }
        } catch {
            close()
            throw error
        }
        // Players follow the clock only once its fit has settled (about 0.35 s of timing updates;
        // once per engine start, not per trigger).
        let giveUp = Date().addingTimeInterval(5)
        while clock.observations < AudioClock.settlingObservations, Date() < giveUp, running.load(ordering: .acquiring) { usleep(2000) }
        guard running.load(ordering: .acquiring) else {
            close()
            throw PulseError.noServer("the server went away while the stream was starting")
        }
        guard clock.isFitted else {
            close()
            throw PulseError.noClock
        }
    }

    /// Whether a server answers now: connects a throwaway context (at most 1 s) and disconnects.
    public func canConnect() -> Bool { PulseConnection.answers(server: configuration.server) }

    /// Stops the stream and disconnects.
    public func close() {
        running.store(false, ordering: .releasing)
        connection?.close()
        connection = nil
        stream = nil
    }

    // MARK: - Mainloop thread

    /// The context or the stream failed: once playing, the server is reported lost (once).
    private func serverLost(_ why: String) {
        guard running.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged else { return }
        onServerLost?(why)
    }

    /// Turns the server's timing info, taken at monotonic time `at`, into "frame F was heard at T".
    private func timingUpdated(_ info: pa_timing_info, at: UInt64) {
        guard info.read_index_corrupt == 0 else { return }
        // As pa_stream_get_time does: the server had read up to read_index; the data took
        // transport_usec to get there and sits sink_usec in the sink before it is heard.
        let readFrames = Double(info.read_index) / 8
        let heard = readFrames + (Double(info.transport_usec) - Double(info.sink_usec)) * sampleRate / 1e6
        clock.observe(frame: Int64(heard.rounded()), heardAt: at)
    }

    // MARK: - Real-time (hapsync-audio, the PulseAudio mainloop thread)

    /// The server wants `bytes` more: between `pa_stream_begin_write` and `pa_stream_write`, take
    /// the scheduler's messages and mix into the server's buffer; then now and then ask for timing
    /// info. Our code here does not allocate, lock or block (`.ci/rt-alloc-check` counts
    /// allocations in that window); libpulse's own calls around it do, as its mainloop always does.
    private func write(_ bytes: Int) {
        guard let s = stream else { return }
        var data: UnsafeMutableRawPointer?
        var size = bytes
        guard pa_stream_begin_write(s, &data, &size) >= 0, let data else { return }
        guard size >= 8 else { pa_stream_cancel_write(s); return }
        while let m = messages.pop() {
            switch m.kind {
            case .start:
                if m.slot >= 0, Int(m.slot) < configuration.maxPlayers, let source = sources[Int(m.slot)] {
                    let lost = mixer.start(slot: m.slot, audio: source, startFrame: m.frame, from: m.from, rate: m.rate)
                    if lost > 0 { dropped.add(lost, ordering: .relaxed) }
                }
            case .stop: mixer.stop(slot: m.slot, atFrame: m.frame)
            case .stopAll: mixer.stopAll()
            }
        }
        let frames = size / 8
        let first = written.load(ordering: .relaxed)
        let out = data.assumingMemoryBound(to: Float.self)
        // This thread publishes the clock's fit, so reading it here never retries.
        let fit = clock.fit
        mixer.render(into: out, frames: frames, firstFrame: first, blockTime: fit.time(ofFrame: first), nsPerFrame: fit.slope)
        if muted.load(ordering: .relaxed) { out.update(repeating: 0, count: frames * 2) }
        pa_stream_write(s, data, frames * 8, nil, 0, PA_SEEK_RELATIVE)
        // Releasing: the scheduler reading this knows these frames are committed.
        written.store(first + Int64(frames), ordering: .releasing)
        connection?.requestTimingInfo()
    }
}
