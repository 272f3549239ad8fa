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

/// An output whose stream can be held to one sink, so that it no longer follows the server's
/// default sink, and let go again: `serve`'s output while live haptics have made
/// `hapsync-live`, which could be made the default and would then be played into by the stream
/// that plays on what it captured.
package protocol SinkHoldingOutput: SoundServerOutput {
    /// Holds the stream to the sink named `sink` (nil: the hold cleared, the stream follows the
    /// default sink again), as `pactl move-sink-input` does. Nil when done, else why not, as a
    /// phrase. A stream made anew (the server came back) is not held. Control side; waits for
    /// the server's answer.
    func hold(to sink: String?) -> String?
}
