import HapSyncAudioStream

extension PipeWireOutput: SoundServerOutput {
    /// `configuration.latency` (node.latency).
    public var targetLatency: Double { configuration.latency }
    /// "pipewire 0.3.65".
    public var serverDescription: String { serverVersion.isEmpty ? "pipewire" : "pipewire \(serverVersion)" }
}
