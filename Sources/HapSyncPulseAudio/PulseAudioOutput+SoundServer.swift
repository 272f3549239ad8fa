import HapSyncAudioStream

extension PulseAudioOutput: SoundServerOutput, SinkHoldingOutput, LatencySettlingOutput {
    /// `configuration.latency`.
    public var targetLatency: Double { configuration.latency }
    /// Nil: PulseAudio's protocol does not say (pipewire-pulse's is only estimated, for its clock).
    public var quantum: Int? { nil }
    /// "pulse", or "pulse (PulseAudio (on PipeWire 0.3.65))" through pipewire-pulse.
    public var serverDescription: String { serverName.contains("PipeWire") ? "pulse (\(serverName))" : "pulse" }
}

/// An audio output a waveform output's drive signal can ride in: one stream for both, so that a
/// tap and its sound start at the same frame.
package protocol WaveformCarrier: SoundServerOutput {
    /// Mixes `drive` into the stream the next `open` makes (nil: no longer). Control side.
    func attach(_ drive: WaveformDrive?)
    /// Whether it plays to `sink`, found on PulseAudio server `server` through `connection`
    /// (inside its lock): the waveform output's own view of the sound server.
    func plays(to sink: PulseConnection.SinkInfo, of server: String?, seenBy connection: PulseConnection) -> Bool
}

/// An audio output whose server a waveform output's stream of its own is opened on, when the two
/// play to different sinks (PipeWire natively: `HapSyncAudioOutput` makes `PipeWireOutput` one).
package protocol WaveformStreamMaker: SoundServerOutput {
    /// A new output, not yet open, on the same server as this one, playing `drive` alone to
    /// `sink` at `latency` seconds.
    func streamCarrying(_ drive: WaveformDrive, sink: String, latency: Double) -> SoundServerOutput
}

extension PulseAudioOutput: WaveformCarrier {
    /// The same server, and its sink (or the default) is `sink`.
    package func plays(to sink: PulseConnection.SinkInfo, of server: String?, seenBy connection: PulseConnection) -> Bool {
        configuration.server == server && (try? connection.sinkInfo(named: configuration.sink ?? "@DEFAULT_SINK@"))?.name == sink.name
    }
}
