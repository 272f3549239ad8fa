import HapSyncPipeWire
import HapSyncPulseAudio

extension PipeWireOutput: WaveformCarrier {
    /// The connection is pipewire-pulse on the default PipeWire server (its sink names are the
    /// nodes' names), and this output's node (or the default sink) is `sink`.
    package func plays(to sink: PulseConnection.SinkInfo, of server: String?, seenBy connection: PulseConnection) -> Bool {
        configuration.remote == nil && connection.serverName().contains("PipeWire")
            && (try? connection.sinkInfo(named: configuration.sink ?? "@DEFAULT_SINK@"))?.name == sink.name
    }
}

extension PipeWireOutput: WaveformStreamMaker {
    /// A native stream of its own for the drive: never paused (the drive is its sound), its data
    /// thread `hapsync-wave`.
    package func streamCarrying(_ drive: WaveformDrive, sink: String, latency: Double) -> SoundServerOutput {
        let own = PipeWireOutput(configuration: .init(sink: sink, latency: latency, maxPlayers: 1, remote: configuration.remote, pauseWhenIdle: nil))
        own.carryOnly(drive)
        return own
    }
}

/// Which sound server plays the audio (`--audio`, `HAPSYNC_AUDIO`, the C API's `audio`): parsed
/// and turned into an output here, once, for every front end.
public enum AudioServerChoice: String, CaseIterable, Sendable {
    /// PipeWire natively when a PipeWire server answers (and `PULSE_SERVER` does not name a
    /// PulseAudio server), else PulseAudio's protocol. The default.
    case auto
    /// PipeWire natively (libpipewire): its real-time data thread renders, its own timing places
    /// the haptics.
    case pipewire
    /// PulseAudio's protocol: a PulseAudio server, or PipeWire's pipewire-pulse.
    case pulse
    /// No audio; haptics run on the monotonic clock.
    case none

    /// What a value may be, for error messages.
    public static let expectation = "auto, pipewire, pulse or none"

    /// `HAPSYNC_AUDIO` from `environment` (absent or empty: auto), or a sentence naming the bad value.
    public static func from(environment: [String: String]) -> Result<AudioServerChoice, AudioChoiceError> {
        guard let text = environment["HAPSYNC_AUDIO"], !text.isEmpty else { return .success(.auto) }
        guard let choice = AudioServerChoice(rawValue: text) else { return .failure(AudioChoiceError(variable: "HAPSYNC_AUDIO", value: text)) }
        return .success(choice)
    }

    /// The output this choice makes for `sink` (nil: the server's default) at `latency` seconds,
    /// with the servers `environment` names (`PULSE_SERVER`, `PIPEWIRE_REMOTE`); nil for `none`.
    /// `auto` asks PipeWire first (at most 1 s).
    public func output(sink: String?, latency: Double, environment: [String: String]) -> SoundServerOutput? {
        output(sink: sink, latency: latency, environment: environment, passThrough: nil)
    }

    /// The same, its stream also playing on `passThrough`'s captured audio (`hapsync live`), a
    /// native PipeWire stream in node group `group` when given (`hapsync live`'s sink node's).
    package func output(sink: String?, latency: Double, environment: [String: String], passThrough: PassThroughAudio?,
                        group: String? = nil) -> SoundServerOutput? {
        let pulseServer = environment["PULSE_SERVER"], remote = environment["PIPEWIRE_REMOTE"]
        switch resolved(environment: environment) {
        case .none, .auto: return nil
        case .pulse:
            var configuration = PulseAudioOutput.Configuration(sink: sink, latency: latency, server: pulseServer)
            configuration.passThrough = passThrough
            return PulseAudioOutput(configuration: configuration)
        case .pipewire:
            var configuration = PipeWireOutput.Configuration(sink: sink, latency: latency, remote: remote)
            configuration.passThrough = passThrough
            configuration.group = group
            return PipeWireOutput(configuration: configuration)
        }
    }

    /// What this choice comes to with the servers `environment` names: `auto` is PipeWire
    /// natively when a PipeWire server answers on `PIPEWIRE_REMOTE` (at most 1 s) unless
    /// `PULSE_SERVER` alone names a server, else PulseAudio's protocol; the others are
    /// themselves. Never `auto`.
    package func resolved(environment: [String: String]) -> AudioServerChoice {
        guard self == .auto else { return self }
        let pulseServer = environment["PULSE_SERVER"], remote = environment["PIPEWIRE_REMOTE"]
        if pulseServer != nil && remote == nil { return .pulse }
        return PipeWireOutput.answers(remote: remote) ? .pipewire : .pulse
    }
}

/// A sound-server choice that is not one (`HAPSYNC_AUDIO=alsa`).
public struct AudioChoiceError: Error, Sendable, CustomStringConvertible {
    /// Where it came from ("HAPSYNC_AUDIO", "--audio").
    public let variable: String
    /// What it said.
    public let value: String
    /// `value`, given as `variable`, is not a choice.
    public init(variable: String, value: String) {
        self.variable = variable
        self.value = value
    }
    /// "HAPSYNC_AUDIO: 'alsa' is not auto, pipewire, pulse or none".
    public var description: String { "\(variable): '\(value)' is not \(AudioServerChoice.expectation)" }
}
