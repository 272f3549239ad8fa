import HapSyncRuntime

/// An audio output on a sound server (PulseAudio's protocol or PipeWire natively): what reports
/// and the front ends ask of either.
public protocol SoundServerOutput: AudioDevice, RealtimeThreaded {
    /// The stream's target latency, seconds.
    var targetLatency: Double { get }
    /// The latency it runs with now, seconds: `targetLatency`, or more where the output grows it
    /// after underruns (`AdaptiveLatency`).
    var currentLatency: Double { get }
    /// Frames per cycle the server's graph runs with now (PipeWire natively: what each cycle asks
    /// of the stream, which `node.latency` bounds and the graph chooses); nil where the server
    /// does not say (PulseAudio's protocol).
    var quantum: Int? { get }
    /// Voices not played because the mixer was full (more than `AudioStreamRenderer`'s 256 at once).
    var droppedVoices: Int { get }
    /// The protocol and server as a summary names them: "pulse", "pulse (on PipeWire 0.3.65)",
    /// "pipewire 0.3.65".
    var serverDescription: String { get }
}
