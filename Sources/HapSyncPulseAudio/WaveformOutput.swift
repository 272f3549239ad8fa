import CPulse
import Foundation
import HapSyncAudioFiles
import HapSyncAudioStream
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import Synchronization

/// Haptics as an actuator drive signal on an audio sink's channels (`--haptics
/// waveform:SINK[:CHANNELS]`): voice-coil actuators such as a DualSense's (its rear channels) or
/// a bass shaker on a sound card.
///
/// Two ways, chosen at `open`:
/// - **Mixed into the audio** when the engine's audio output (`Configuration.audio`) plays to the
///   same sink of the same server: the drive signal rides in the audio's own stream
///   (`PulseAudioOutput.attach`), and a command that follows the audio is placed at its
///   `OutputCommand.frame`: a player's with audio, the frame its audio at the same pattern time
///   starts at; one started on a frame (`hapsync live`'s transients), on that frame:
///   sample-locked, no drift by construction.
/// - **A stream of its own** on the sink otherwise, following that sink's clock as the audio
///   does: each command is placed at the frame heard at its time. When the engine's audio is
///   PipeWire natively, that stream is native too (a `PipeWireOutput` carrying the drive alone,
///   rendered in PipeWire's data thread); else through PulseAudio's protocol. The sink is found,
///   either way, through PulseAudio's protocol (pipewire-pulse on PipeWire).
///
/// Either way the engine releases commands `lead` early (its `hapticLatency`: the stream's buffer
/// and a margin, `lead(latency:)`), and a command without a frame goes to the frame heard at
/// `scheduled + lead`. The drive signal is `WaveformSynth` with the channels' profile
/// (`WaveformDrive`); a trace given as `recorder` gets one record per block rendered.
///
/// `apply` (output thread) and the stream's write callback (the PulseAudio mainloop thread) do not
/// allocate, lock or block; they meet through a lock-free ring.
public final class WaveformOutput: HapticBackend, RealtimeThreaded, HapticLeadAdjusting, @unchecked Sendable {
    /// Which channels of the stream carry the drive signal (`HapticOutputSpec.WaveformChannels`).
    public typealias Channels = HapticOutputSpec.WaveformChannels

    /// The SCHED_FIFO priority its own stream's mainloop thread (hapsync-wave, which renders
    /// the drive) asks for; the engine sets it below its own threads' (nil: normal priority).
    public var threadPriority: Int32? {
        get { mainloopPriority.asked }
        set { mainloopPriority.asked = newValue }
    }
    /// That thread and what it got, for the latest stream of its own (none when mixed into the
    /// audio output's stream, whose thread renders the drive).
    public var realtimeThreads: [RealtimeThread] { native?.realtimeThreads ?? nativeThreads ?? mainloopPriority.threads }
    /// The threads of the last native stream of its own, kept once it closed.
    private var nativeThreads: [RealtimeThread]?
    private let mainloopPriority = MainloopPriority()

    /// Settings.
    public struct Configuration: Sendable {
        /// The sink the drive signal plays to, by its name on the sound server.
        public var sink: String
        /// The channels; nil: `rear` on a sink of four channels or more, else `all`.
        public var channels: Channels?
        /// The stream's target latency, seconds.
        public var latency: Double
        /// How early the engine releases commands (its `hapticLatency`), ns.
        public var lead: UInt64
        /// The server ("unix:/path/native"; nil: the default, as PULSE_SERVER says).
        public var server: String?
        /// The engine's audio output (the same object the engine is given): when it plays to the
        /// same sink, the drive signal is mixed into its stream.
        public var audio: SoundServerOutput?
        /// Takes a record of each block rendered (a trace), if set.
        public var recorder: WaveformBlockRecorder?
        /// How much earlier than its sound a command is felt, ns: the actuator's own delay the
        /// user makes up for (`--haptic-latency-ms`, which the engine's `hapticLatency` also
        /// holds beside `lead`). Mixed into the audio, a command with an audio frame goes that
        /// much before it; one without, like every command in a stream of its own, at
        /// `scheduled + lead`, which the engine's latency already makes that much earlier.
        public var advance: UInt64
        /// Scales every intensity, 0...1 (default 1): a live profile's share for voice coils.
        public var level: Float = 1
        /// A low-pass on the drive signal, Hz (a bass shaker's; nil, the default: none).
        public var lowPassHz: Double?

        /// Settings with the lead for this latency, or the audio's when that is longer
        /// (`WaveformOutput.lead(latency:)`).
        public init(sink: String, channels: Channels? = nil, latency: Double = 0.020, server: String? = nil,
                    audio: SoundServerOutput? = nil, recorder: WaveformBlockRecorder? = nil, advance: UInt64 = 0) {
            self.sink = sink
            self.channels = channels
            self.latency = latency
            self.lead = WaveformOutput.lead(latency: max(latency, audio?.targetLatency ?? 0))
            self.advance = advance
            self.server = server
            self.audio = audio
            self.recorder = recorder
        }
    }

    /// The lead the engine must give this output (its `hapticLatency`): the stream's latency and
    /// 15 ms for the output thread and the server's request cycle. The one place it is worked out.
    public static func lead(latency: Double) -> UInt64 { UInt64(nanosecondsOf: latency) &+ leadMargin }

    /// What a command needs beyond the stream's buffer to reach the drive before its frame is
    /// rendered (the scheduler's and output thread's way to it, with room for their jitter), ns.
    public static let leadMargin: UInt64 = 15_000_000

    /// How much more lead than `configuration.lead` the stream has shown it needs, ns: its sink
    /// renders further ahead of the sound than the stream's latency asked for (a sink of fixed
    /// latency, a buffer grown after underruns): the drive's `renderAhead` plus `leadMargin`,
    /// beyond the configured lead (0 while within it; it only grows). The engine's scheduler
    /// releases commands that much earlier (`HapticLeadAdjusting`). Does not allocate, lock or
    /// block.
    public var extraLead: UInt64 {
        let need = gauge.value &+ Self.leadMargin
        return need > configuration.lead ? need - configuration.lead : 0
    }

    /// The settings.
    public let configuration: Configuration
    /// 5 ms: each command is placed by its scheduled time (or its audio frame), and the engine
    /// releases it a lead of the stream's buffer plus 15 ms early, so releasing it a few
    /// milliseconds later changes nothing that is heard or felt.
    public var timingResolution: UInt64 { 5_000_000 }
    /// "waveform".
    public var name: String { "waveform" }
    /// The sink and its channels, for summaries.
    public var device: String {
        "\(configuration.sink) (\(drive?.channels.rawValue ?? configuration.channels?.rawValue ?? "auto") channels"
            + (mixesIntoAudio ? ", mixed into the audio stream)" : playsNatively ? ", a native PipeWire stream of its own)" : ")")
    }
    /// Frames ↔ CLOCK_MONOTONIC of the stream carrying the signal (the audio's when mixed into it).
    public var clock: AudioClock { mixedInto?.clock ?? native?.clock ?? ownClock }
    /// Its own stream, natively (when the engine's audio is PipeWire natively).
    private var native: SoundServerOutput?
    /// Whether the last `open` made its own stream a native PipeWire one (kept after `close`).
    public private(set) var playsNatively = false
    /// Commands whose frame had already gone to the server (played at the first frame not yet
    /// written: late by that much).
    public var lateCommands: Int { drive?.lateCommands ?? 0 }
    /// Commands lost because the stream did not take them in time (its ring was full: the
    /// stream had stopped).
    public var droppedCommands: Int { drive?.droppedCommands ?? 0 }
    /// The channels in use (known after `open`).
    public var chosen: Channels? { drive?.channels }
    /// The audio output the signal is mixed into while open, nil when it has a stream of its own.
    public private(set) var mixedInto: SoundServerOutput?
    /// Whether the last `open` mixed the signal into the audio's stream (kept after `close`).
    public private(set) var mixesIntoAudio = false

    private let ownClock = AudioClock(sampleRate: 48_000)
    private var drive: WaveformDrive?
    /// How far ahead of its sound every drive this output makes is rendered (`extraLead`).
    private let gauge = RenderAheadGauge()
    /// `advance` in the sink's frames.
    private var advanceFrames: Int64 = 0
    /// Which channels of its own stream carry the signal (their count is the stream's).
    private var driven: [Bool] = []
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchFrames = 0
    private var connection: PulseConnection?
    private var stream: OpaquePointer?
    private var timing = PulseAudioOutput.PlaybackTiming(server: .pulseAudio, sampleRate: 48_000)
    private let running = Atomic<Bool>(false)

    /// An output; nothing connects until `open`.
    public init(configuration: Configuration) { self.configuration = configuration }

    deinit {
        try? close()
        scratch?.deallocate()
    }

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Finds the sink; when the audio output plays to it too, attaches the drive signal to the
    /// audio's stream (which the engine opens next; once attached it stays, so a reopen keeps the
    /// same drive); otherwise opens a stream of its own with the channels' layout and waits until
    /// its clock has settled.
    public func open() throws {
        guard connection == nil, mixedInto == nil, native == nil else { return }
        let connection = try PulseConnection(clientName: "HapSync haptics", server: configuration.server, threadName: "hapsync-wave",
                                             realtimePriority: mainloopPriority.asked,
                                             onFailure: { [weak self] _ in self?.running.store(false, ordering: .releasing) })
        self.connection = connection
        mainloopPriority.record(connection)
        do {
            let shared = try connection.withLock { () throws(PulseAudioOutput.PulseError) -> Bool in
                let sink = try connection.sinkInfo(named: configuration.sink)
                let channels = configuration.channels ?? (sink.channels >= 4 ? .rear : .all)
                let drive = WaveformDrive(channels: channels, sampleRate: Double(sink.rate), gauge: gauge)
                drive.recorder = configuration.recorder
                drive.lowPassHz = configuration.lowPassHz
                self.drive = drive
                advanceFrames = Int64((Double(configuration.advance) * Double(sink.rate) / 1e9).rounded())
                if let audio = configuration.audio as? WaveformCarrier,
                   audio.plays(to: sink, of: configuration.server, seenBy: connection) {
                    audio.attach(drive)
                    mixedInto = audio
                    mixesIntoAudio = true
                    return true
                }
                mixesIntoAudio = false
                playsNatively = false
                nativeThreads = nil
                if let audio = configuration.audio as? WaveformStreamMaker {
                    // Natively, on the same PipeWire server as the audio.
                    let own = audio.streamCarrying(drive, sink: sink.name, latency: configuration.latency)
                    own.threadPriority = mainloopPriority.asked
                    native = own
                    playsNatively = true
                    return true
                }
                try openStream(on: sink, connection: connection, drive: drive)
                return false
            }
            if let native {
                connection.close()
                self.connection = nil
                mainloopPriority.record(nil)
                try native.open()
                return
            }
            if shared {
                // The drive is rendered on the audio output's mainloop, which reports itself.
                connection.close()
                self.connection = nil
                mainloopPriority.record(nil)
                return
            }
            try PulseConnection.awaitReady(ownClock) { running.load(ordering: .acquiring) }
        } catch {
            try? close()
            throw error
        }
    }

    /// Opens the stream of its own (inside the connection's lock).
    private func openStream(on sink: PulseConnection.SinkInfo, connection: PulseConnection, drive: WaveformDrive) throws(PulseAudioOutput.PulseError) {
        let layout = drive.channels.layout
        driven = layout.driven
        let rate = Double(sink.rate)
        let frameBytes = Int64(4 * driven.count)
        timing = PulseAudioOutput.PlaybackTiming(server: PulseConnection.Server(serverName: connection.serverName()), sampleRate: rate,
                                                 frameBytes: frameBytes)
        ownClock.reset(sampleRate: rate)
        scratch?.deallocate()
        scratchFrames = Int(rate)   // a second: more than any request
        scratch = .allocate(capacity: scratchFrames)
        let s = try connection.openStream(name: "HapSync haptics (\(drive.channels.rawValue))", rate: sink.rate, channels: layout.positions,
                                          onTiming: { [unowned self] info, at in timing.observe(info, at: at, into: ownClock) }) { s in
            pa_stream_set_write_callback(s, { _, bytes, userdata in
                Unmanaged<WaveformOutput>.fromOpaque(userdata!).takeUnretainedValue().write(bytes)
            }, me)
            return PulseConnection.connectCorkedPlayback(s, sink: configuration.sink, latency: configuration.latency,
                                                         rate: rate, frameBytes: Int(frameBytes))
        }
        stream = s
        running.store(true, ordering: .releasing)
        connection.uncork(s, on: sink, latency: configuration.latency, server: timing.server)
    }

    /// Places a command at its frame: when mixed into the audio, a player's command at its audio
    /// frame (`OutputCommand.frame`); otherwise the frame heard at `scheduled + lead`. Output
    /// thread; does not allocate, lock or block.
    public func apply(_ command: OutputCommand, appliedAt: UInt64) throws {
        guard let drive else { return }
        let frame: Int64
        if mixedInto != nil, command.frame >= 0 {
            frame = command.frame - advanceFrames
        } else {
            frame = clock.frame(atTime: command.scheduled &+ configuration.lead &+ command.extraLead) ?? drive.nextFrame
        }
        drive.place(command.kind, intensity: command.intensity * configuration.level, sharpness: command.sharpness, frame: frame)
    }

    /// Silences the actuators at the next frame written. Output thread; does not allocate, lock or block.
    public func stopAll() throws {
        drive?.silence()
    }

    /// Stops the stream and disconnects. Mixed into the audio, it silences the actuators and
    /// stays attached: the audio output's stream is the audio's to end, and a reopen (the engine
    /// restarting, or reopening its outputs after an error) goes on with the same drive.
    public func close() throws {
        if mixedInto != nil {
            drive?.silence()
            return
        }
        if let native {
            native.close()
            nativeThreads = native.realtimeThreads
        }
        native = nil
        running.store(false, ordering: .releasing)
        connection?.close()
        connection = nil
        stream = nil
    }

    // MARK: - Real-time (hapsync-wave, the PulseAudio mainloop thread)

    /// The server wants `bytes` more: the drive signal into the driven channels. Our code here
    /// does not allocate, lock or block.
    private func write(_ bytes: Int) {
        guard let s = stream, let scratch, let drive else { return }
        var data: UnsafeMutableRawPointer?
        let channels = driven.count
        var size = min(bytes, scratchFrames * 4 * channels)
        guard pa_stream_begin_write(s, &data, &size) >= 0, let data else { return }
        let frames = min(size / (4 * channels), scratchFrames)
        guard frames > 0 else { pa_stream_cancel_write(s); return }
        let first = drive.nextFrame
        drive.render(into: scratch, frames: frames, time: ownClock.fit.time(ofFrame: first) ?? 0)
        let out = data.assumingMemoryBound(to: Float.self)
        driven.withUnsafeBufferPointer { driven in
            for i in 0..<frames {
                let v = scratch[i]
                for c in 0..<channels { out[i * channels + c] = driven[c] ? v : 0 }
            }
        }
        pa_stream_write(s, data, frames * 4 * channels, nil, 0, PA_SEEK_RELATIVE)
        connection?.requestTimingInfo(clock: ownClock, server: timing.server)
    }
}

extension WaveformOutput {
    /// A sink of the sound server: its name and channels, and what its property list
    /// (pa_sink_info.proplist) says of the device behind it, which identifies a DualSense and
    /// finds its sound card in sysfs. PulseAudio and PipeWire (pipewire-pulse) spell these
    /// differently: ids "054c" or "0x054c", the card as `alsa.card` or `api.alsa.card`, the sysfs
    /// path without or with "/sys"; each field reads both. A sink without them (a null sink, a
    /// network sink) has nil there.
    public struct Sink: Sendable, Equatable {
        /// The sink's name (for `waveform:NAME`).
        public var name: String
        /// The server's human-readable description of the sink (the card's name, for a DualSense).
        public var description: String
        /// Its channel count.
        public var channels: Int
        /// The USB (or PCI) vendor id of its device, `device.vendor.id`.
        public var vendorID: UInt16?
        /// The product id of its device, `device.product.id`.
        public var productID: UInt16?
        /// The bus its device is on, `device.bus`: "usb", "pci", "bluetooth".
        public var bus: String?
        /// The ALSA card number behind it: `alsa.card`, else PipeWire's `api.alsa.card` or
        /// `api.alsa.pcm.card`. Its sysfs directory is /sys/class/sound/cardN.
        public var alsaCard: Int?
        /// udev's ID_PATH of its sound card, `device.bus_path`: "pci-0000:00:14.0-usb-0:4:1.0"
        /// for a card on interface 0 of the USB device on port 4 of that controller.
        public var busPath: String?
        /// Its sound card's directory in sysfs, `sysfs.path`, always under /sys: PulseAudio writes
        /// "/devices/.../sound/card1" (udev's devpath), PipeWire "/sys/devices/.../sound/card1".
        public var sysfsPath: String?

        /// A sink named `name` (described by the server as `description`) with `channels` channels;
        /// the device fields are read from `properties` (its property list, as
        /// `pactl list sinks` prints it).
        public init(name: String, description: String, channels: Int, properties: [String: String] = [:]) {
            self.name = name
            self.description = description
            self.channels = channels
            vendorID = properties["device.vendor.id"].flatMap(Self.hexID)
            productID = properties["device.product.id"].flatMap(Self.hexID)
            bus = properties["device.bus"].flatMap { $0.isEmpty ? nil : $0 }
            alsaCard = ["alsa.card", "api.alsa.card", "api.alsa.pcm.card"].lazy
                .compactMap { properties[$0].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil } }.first
            busPath = properties["device.bus_path"].flatMap { $0.isEmpty ? nil : $0 }
            sysfsPath = properties["sysfs.path"].flatMap { path in
                path.hasPrefix("/sys/") ? path : path.hasPrefix("/devices/") ? "/sys" + path : nil
            }
        }

        /// A USB id as a server writes it: "054c" (PulseAudio, from udev) or "0x054c" (PipeWire).
        private static func hexID(_ text: String) -> UInt16? {
            UInt16(text.hasPrefix("0x") || text.hasPrefix("0X") ? String(text.dropFirst(2)) : text, radix: 16)
        }

        /// Its device's ids as "054c:0ce6", when the server gave both.
        public var vendorProduct: String? {
            guard let vendorID, let productID else { return nil }
            return GamepadModel.idText(vendor: vendorID, product: productID)
        }

        /// The pad model its vendor and product ids name (`GamepadModel.known`): nil without ids,
        /// or for a device HapSync does not know as a pad.
        public var model: GamepadModel? {
            guard let vendorID, let productID else { return nil }
            return GamepadModel.named(vendor: vendorID, product: productID)
        }

        /// Whether its name or description reads like a DualSense's USB audio device
        /// ("...Sony_Interactive_Entertainment_Wireless_Controller..." or "DualSense"): the guess
        /// for a sink whose server gave no ids.
        public var nameSuggestsDualSense: Bool {
            let text = (name + " " + description).lowercased()
            return text.contains("dualsense") || text.contains("wireless_controller") || text.contains("wireless controller")
        }

        /// A DualSense or DualSense Edge: by its ids when the server gives them (a DualShock 4's
        /// sink, also a "Wireless Controller", is not one), else by `nameSuggestsDualSense`.
        public var isDualSense: Bool {
            vendorID != nil && productID != nil ? model?.hasVoiceCoilActuators == true : nameSuggestsDualSense
        }

        /// The pad model with voice-coil actuators it is: by ids, or for a name that suggests a
        /// DualSense, the DualSense (nil when it is not one).
        public var actuatorModel: GamepadModel? {
            guard isDualSense else { return nil }
            return model ?? GamepadModel.withVoiceCoilActuators.first
        }

        /// The output to give it: `rear` on four channels or more, else `all`.
        public var suggested: String { "waveform:\(name):\(channels >= 4 ? "rear" : "all")" }
    }

    /// The sinks of the sound server (`server`: nil for the default), with their properties, or
    /// why not.
    public static func sinks(server: String? = nil) throws -> [Sink] {
        let connection = try PulseConnection(clientName: "HapSync devices", server: server, threadName: "hapsync-probe", onFailure: { _ in })
        defer { connection.close() }
        return connection.withLock { connection.sinks() }.map {
            Sink(name: $0.name, description: $0.description, channels: $0.channels, properties: $0.properties)
        }
    }
}
