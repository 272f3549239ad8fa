import HapSyncAudioStream

extension PipeWireOutput: SoundServerOutput, SinkHoldingOutput, LatencySettlingOutput {
    /// `configuration.latency` (node.latency).
    public var targetLatency: Double { configuration.latency }
    /// The frames the latest cycle asked for (nil before the first cycle that said).
    public var quantum: Int? { let frames = requestedFrames; return frames > 0 ? frames : nil }
    /// "pipewire 0.3.65".
    public var serverDescription: String { serverVersion.isEmpty ? "pipewire" : "pipewire \(serverVersion)" }
}
