import CPulse
import Foundation
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import Synchronization

/// Haptics as an actuator drive signal on an audio sink's channels (`--haptics
/// waveform:SINK[:CHANNELS]`): voice-coil actuators such as a DualSense's (its rear channels) or
/// a bass shaker on a sound card.
///
/// A stream of its own on the sink, following that sink's clock as the audio does: each command
/// is placed at the frame heard at its time. For that the engine releases commands `lead` early
/// (its `hapticLatency`: the stream's buffer and a margin, `lead(latency:)`), and the command's
/// frame is the one heard at `scheduled + lead`. The drive signal is `WaveformSynth` with the
/// channels' profile.
///
/// `apply` (output thread) and the write callback (the PulseAudio mainloop thread) do not
/// allocate, lock or block; they meet through a lock-free ring.
public final class WaveformOutput: HapticBackend, @unchecked Sendable {
    /// Which channels of the stream carry the drive signal (`HapticOutputSpec.WaveformChannels`).
    public typealias Channels = HapticOutputSpec.WaveformChannels

    /// Settings.
    public struct Configuration: Sendable {
        /// The sink.
        public var sink: String
        /// The channels; nil: `rear` on a sink of four channels or more, else `all`.
        public var channels: Channels?
        /// The stream's target latency, seconds.
        public var latency: Double
        /// How early the engine releases commands (its `hapticLatency`), ns.
        public var lead: UInt64
        /// The server ("unix:/path/native"; nil: the default, as PULSE_SERVER says).
        public var server: String?

        /// Settings with the lead for this latency (`WaveformOutput.lead(latency:)`).
        public init(sink: String, channels: Channels? = nil, latency: Double = 0.020, server: String? = nil) {
            self.sink = sink
            self.channels = channels
            self.latency = latency
            self.lead = WaveformOutput.lead(latency: latency)
            self.server = server
        }
    }

    /// The lead the engine must give this output (its `hapticLatency`): the stream's latency and
    /// 15 ms for the output thread and the server's request cycle. The one place it is worked out.
    public static func lead(latency: Double) -> UInt64 { UInt64((latency + 0.015) * 1e9) }

    /// One command for the mainloop thread: what, and at which frame.
    private struct Drive: BitwiseCopyable {
        var frame: Int64
        var kind: UInt8   // 0 level, 1 transient, 2 silence
        var intensity: Float
        var sharpness: Float
    }

    /// The settings.
    public let configuration: Configuration
    /// "waveform".
    public var name: String { "waveform" }
    /// The sink and its channels, for summaries.
    public var device: String { "\(configuration.sink) (\(chosen?.rawValue ?? configuration.channels?.rawValue ?? "auto") channels)" }
    /// Frames ↔ CLOCK_MONOTONIC of this stream.
    public let clock = AudioClock(sampleRate: 48_000)
    /// Commands whose frame had already gone to the server (played at the first frame not yet
    /// written: late by that much).
    public var lateCommands: Int { late.load(ordering: .relaxed) }
    /// The channels in use (known after `open`).
    public private(set) var chosen: Channels?

    /// Producers: the output thread (`apply`), and the engine's stopping thread (`stopAll`) once
    /// the output thread has been joined: one at a time.
    private let drives = SPSCRing<Drive>(capacity: 4096, serializedProducers: true)
    private var pending: Drive?
    private var synth = WaveformSynth(profile: .generic, sampleRate: 48_000)
    private var driven: [Bool] = []
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchFrames = 0
    private var connection: PulseConnection?
    private var stream: OpaquePointer?
    private var timing = PulseAudioOutput.PlaybackTiming(server: .pulseAudio, sampleRate: 48_000)
    private let written = Atomic<Int64>(0)
    private let running = Atomic<Bool>(false)
    private let late = Atomic<Int>(0)

    /// An output; nothing connects until `open`.
    public init(configuration: Configuration) { self.configuration = configuration }

    deinit {
        try? close()
        scratch?.deallocate()
    }

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Connects, opens the stream on the sink with the channels' layout, and waits until its clock
    /// has settled.
    public func open() throws {
        guard connection == nil else { return }
        let connection = try PulseConnection(clientName: "HapSync haptics", server: configuration.server, threadName: "hapsync-waveform",
                                             onFailure: { [weak self] _ in self?.running.store(false, ordering: .releasing) })
        self.connection = connection
        do {
            stream = try connection.withLock { () throws(PulseAudioOutput.PulseError) -> OpaquePointer in
                let sink = try connection.sinkInfo(named: configuration.sink)
                let channels = configuration.channels ?? (sink.channels >= 4 ? .rear : .all)
                chosen = channels
                let layout = channels.layout
                driven = layout.driven
                let rate = Double(sink.rate)
                let frameBytes = Int64(4 * layout.positions.count)
                timing = PulseAudioOutput.PlaybackTiming(server: PulseConnection.Server(serverName: connection.serverName()), sampleRate: rate,
                                                         frameBytes: frameBytes)
                clock.reset(sampleRate: rate)
                synth = WaveformSynth(profile: channels.profile, sampleRate: rate)
                scratch?.deallocate()
                scratchFrames = Int(rate)   // a second: more than any request
                scratch = .allocate(capacity: scratchFrames)
                written.store(0, ordering: .releasing)
                let s = try connection.openStream(name: "HapSync haptics (\(channels.rawValue))", rate: sink.rate, channels: layout.positions,
                                                  onTiming: { [unowned self] info, at in timing.observe(info, at: at, into: clock) }) { s in
                    pa_stream_set_write_callback(s, { _, bytes, userdata in
                        Unmanaged<WaveformOutput>.fromOpaque(userdata!).takeUnretainedValue().write(bytes)
                    }, me)
                    return PulseConnection.connectCorkedPlayback(s, sink: configuration.sink, latency: configuration.latency,
                                                                 rate: rate, frameBytes: Int(frameBytes))
                }
                running.store(true, ordering: .releasing)
                connection.uncork(s, on: sink, latency: configuration.latency, server: timing.server)
                return s
            }
            try PulseConnection.awaitSettled(clock) { running.load(ordering: .acquiring) }
        } catch {
            try? close()
            throw error
        }
    }

    /// Places a command at the frame heard at its time (`scheduled + lead`). Output thread; does
    /// not allocate, lock or block.
    public func apply(_ command: OutputCommand, appliedAt: UInt64) throws {
        let kind: UInt8
        switch command.kind {
        case .level: kind = 0
        case .transient: kind = 1
        case .stopAll: kind = 2
        }
        let frame = clock.frame(atTime: command.scheduled &+ configuration.lead) ?? written.load(ordering: .acquiring)
        _ = drives.push(Drive(frame: frame, kind: kind, intensity: command.intensity, sharpness: command.sharpness))
    }

    /// Silences the actuators at the next frame written. Output thread; does not allocate, lock or block.
    public func stopAll() throws {
        _ = drives.push(Drive(frame: written.load(ordering: .acquiring), kind: 2, intensity: 0, sharpness: 0))
    }

    /// Stops the stream and disconnects.
    public func close() throws {
        running.store(false, ordering: .releasing)
        connection?.close()
        connection = nil
        stream = nil
    }

    // MARK: - Real-time (hapsync-waveform, the PulseAudio mainloop thread)

    /// The server wants `bytes` more: the drive signal, each command at its frame (or at once if
    /// its frame went by), into the driven channels. Our code here does not allocate, lock or block.
    private func write(_ bytes: Int) {
        guard let s = stream, let scratch else { return }
        var data: UnsafeMutableRawPointer?
        let channels = driven.count
        var size = min(bytes, scratchFrames * 4 * channels)
        guard pa_stream_begin_write(s, &data, &size) >= 0, let data else { return }
        let frames = min(size / (4 * channels), scratchFrames)
        guard frames > 0 else { pa_stream_cancel_write(s); return }
        let first = written.load(ordering: .relaxed)
        var position = 0
        while position < frames {
            if pending == nil { pending = drives.pop() }
            guard let d = pending else {
                synth.render(into: scratch + position, count: frames - position)
                position = frames
                break
            }
            let at = d.frame - first
            if at <= Int64(position) {
                if d.frame < first { late.add(1, ordering: .relaxed) }
                switch d.kind {
                case 0: synth.setLevel(intensity: Double(d.intensity), sharpness: Double(d.sharpness))
                case 1: synth.trigger(intensity: Double(d.intensity), sharpness: Double(d.sharpness))
                default: synth.setLevel(intensity: 0, sharpness: 0)
                }
                pending = nil
                continue
            }
            let end = Int(min(Int64(frames), at))
            synth.render(into: scratch + position, count: end - position)
            position = end
        }
        let out = data.assumingMemoryBound(to: Float.self)
        for i in 0..<frames {
            let v = scratch[i]
            for c in 0..<channels { out[i * channels + c] = driven[c] ? v : 0 }
        }
        pa_stream_write(s, data, frames * 4 * channels, nil, 0, PA_SEEK_RELATIVE)
        written.store(first + Int64(frames), ordering: .releasing)
        connection?.requestTimingInfo(clock: clock, server: timing.server)
    }
}

extension HapticOutputSpec.WaveformChannels {
    /// The stream's channel positions, and which of them carry the signal.
    var layout: (positions: [pa_channel_position_t], driven: [Bool]) {
        switch self {
        case .rear: return ([PA_CHANNEL_POSITION_FRONT_LEFT, PA_CHANNEL_POSITION_FRONT_RIGHT,
                             PA_CHANNEL_POSITION_REAR_LEFT, PA_CHANNEL_POSITION_REAR_RIGHT], [false, false, true, true])
        case .mono: return ([PA_CHANNEL_POSITION_MONO], [true])
        case .left: return ([PA_CHANNEL_POSITION_FRONT_LEFT, PA_CHANNEL_POSITION_FRONT_RIGHT], [true, false])
        case .right: return ([PA_CHANNEL_POSITION_FRONT_LEFT, PA_CHANNEL_POSITION_FRONT_RIGHT], [false, true])
        case .all: return ([PA_CHANNEL_POSITION_FRONT_LEFT, PA_CHANNEL_POSITION_FRONT_RIGHT], [true, true])
        }
    }
}

extension WaveformOutput {
    /// A sink of the sound server, and whether it looks like a haptic device.
    public struct Sink: Sendable, Equatable {
        /// The sink's name (for `waveform:NAME`).
        public var name: String
        /// Its description.
        public var description: String
        /// Its channel count.
        public var channels: Int

        /// A DualSense (its USB audio device, by name), or nil when the name does not say so.
        public var isDualSense: Bool {
            let text = (name + " " + description).lowercased()
            return text.contains("dualsense") || text.contains("wireless_controller") || text.contains("wireless controller")
        }

        /// The output to give it: `rear` on four channels or more, else `all`.
        public var suggested: String { "waveform:\(name):\(channels >= 4 ? "rear" : "all")" }
    }

    /// The sinks of the sound server (`server`: nil for the default), or why not.
    public static func sinks(server: String? = nil) throws -> [Sink] {
        let connection = try PulseConnection(clientName: "HapSync devices", server: server, threadName: "hapsync-probe", onFailure: { _ in })
        defer { connection.close() }
        return connection.withLock { connection.sinks() }.map { Sink(name: $0.name, description: $0.description, channels: $0.channels) }
    }
}
