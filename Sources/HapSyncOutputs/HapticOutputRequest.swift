import HapSyncAudioOutput
import HapSyncHapticOutput
import HapSyncRuntime

/// The haptic outputs an engine plays to, as any front end asks for them: the CLI's and serve's
/// `--haptics` flags, and `HAPSYNC_HAPTICS`, `HAPSYNC_TRACE` and the C API's config through
/// `LibraryOutputs`. `makeBackend` is the one place their backends are made and put together:
/// a rumble pad, a waveform output (voice-coil actuators fed as audio: mixed into the audio's
/// stream when both play to one sink; the first trace gets its block records), traces beside
/// them; none, one, or a fan-out of all.
public struct HapticOutputRequest {
    /// A rumble pad: its device path, or "auto" for the first one this user can open.
    public var evdev: String?
    /// Rumble updates at most this often, ns (`EvdevBackend.Configuration`).
    public var rumbleInterval: UInt64 = 10_000_000
    /// How long a rumble burst for a transient lasts, ns.
    public var rumbleBurst: UInt64 = 30_000_000
    /// A waveform output: its sink and channels (nil: the sink's layout decides). The sink
    /// `auto` (`HapticOutputSpec.auto`) is found by `makeBackend`: the DualSense's
    /// (`WaveformAutoSink`).
    public var waveform: (sink: String, channels: HapticOutputSpec.WaveformChannels?)?
    /// The waveform stream's latency, seconds.
    public var waveformLatency = 0.020
    /// How much earlier than its sound a waveform command plays (the actuator's own delay), ns.
    public var waveformAdvance: UInt64 = 0
    /// Scales the rumble pad's intensities, 0...1 (a live profile's share for rumble).
    public var rumbleLevel = 1.0
    /// Scales the waveform output's intensities, 0...1 (a live profile's share for voice coils).
    public var voiceCoilLevel: Float = 1
    /// A low-pass on the waveform output's drive, Hz (a bass shaker's; nil: none).
    public var voiceCoilLowPassHz: Double?
    /// Traces written beside the outputs.
    public var traces: [TraceBackend] = []
    /// Whether the first rumble pad plays when nothing else is named (the library front ends).
    public var firstPadByDefault = false

    /// A request for nothing yet.
    public init() {}

    /// What `makeBackend` made.
    public struct Made {
        /// The backend the engine drives.
        public let backend: HapticBackend
        /// The device `evdev: auto` chose (nil when a path was named or no pad plays).
        public let chosenDevice: InputDeviceInfo?
        /// The waveform output, if one was made (its `configuration.lead` is the haptic latency it
        /// needs).
        public let waveform: WaveformOutput?
        /// The sink `waveform:auto` chose and why, for a note (nil when a sink was named or none
        /// plays).
        public let chosenSink: WaveformAutoSink.Choice?
    }

    /// Makes the backends: the rumble pad (a device that cannot be used throws, naming it), the
    /// waveform output on the sound server `environment` names (`PULSE_SERVER`), mixed into
    /// `audio`'s stream when that plays to its sink, and the traces. For `waveform:auto` it asks
    /// that server for its sinks and pairs them with the input devices through /sys; one it cannot
    /// choose throws `.waveformAutoSink`, saying why.
    public func makeBackend(audio: SoundServerOutput?, environment: [String: String]) throws(EvdevError) -> Made {
        var backends: [HapticBackend] = []
        var chosen: InputDeviceInfo?
        if let named = evdev {
            let device = try InputDeviceProbe.device(named: named)
            chosen = device.chosen
            backends.append(EvdevBackend(configuration: rumbleConfiguration(path: device.path)))
        } else if firstPadByDefault, waveform == nil, let first = InputDeviceProbe.firstRumbleDevice() {
            backends.append(EvdevBackend(configuration: rumbleConfiguration(path: first.path)))
        }
        var made: WaveformOutput?
        var chosenSink: WaveformAutoSink.Choice?
        if var (sink, channels) = waveform {
            let server = environment["PULSE_SERVER"]
            if sink == HapticOutputSpec.auto {
                do throws(WaveformAutoSink.Failure) {
                    let choice = try WaveformAutoSink.choose(sinks: Result { try WaveformOutput.sinks(server: server) },
                                                             devices: InputDeviceProbe.list(), rumblePad: chosen?.path ?? evdev,
                                                             channels: channels, sysfs: SysfsTree())
                    (sink, channels) = (choice.sink.name, choice.channels)
                    chosenSink = choice
                } catch {
                    throw .waveformAutoSink(error.description)
                }
            }
            var configuration = WaveformOutput.Configuration(sink: sink, channels: channels, latency: waveformLatency, server: server,
                                                             audio: audio, recorder: traces.first, advance: waveformAdvance)
            configuration.level = voiceCoilLevel
            configuration.lowPassHz = voiceCoilLowPassHz
            let output = WaveformOutput(configuration: configuration)
            made = output
            backends.append(output)
        }
        backends += traces as [HapticBackend]
        let backend: HapticBackend = backends.isEmpty ? NullHapticBackend() : backends.count == 1 ? backends[0] : FanOutBackend(backends)
        return Made(backend: backend, chosenDevice: chosen, waveform: made, chosenSink: chosenSink)
    }

    /// The rumble pad's settings: the update interval, burst length and level asked for.
    private func rumbleConfiguration(path: String) -> EvdevBackend.Configuration {
        var configuration = EvdevBackend.Configuration(path: path, minimumUpdateInterval: rumbleInterval, burstLength: rumbleBurst)
        configuration.level = rumbleLevel
        return configuration
    }
}
