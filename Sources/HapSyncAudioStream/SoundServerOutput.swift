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

/// An output whose latency, grown after underruns (`AdaptiveLatency`), can be brought back once
/// they have stopped: `hapsync live` steps its capture back after a calm spell, and the stream
/// that plays the sound on steps back with it, else the lag an underrun added stays for the rest
/// of the run (PulseAudio's protocol: the stream's tlength; PipeWire natively: its node.latency,
/// which in a node group also holds the graph's cycle).
package protocol LatencySettlingOutput: SoundServerOutput {
    /// The stream's latency back to `seconds`, never below the latency it began with nor above
    /// the one it has (`AdaptiveLatency.settle`), unless it has underrun since the caller saw
    /// `underruns` of them (a growth meanwhile wins: the calm spell the caller judged is over):
    /// asked of the server, not waited for. Control side.
    func settleLatency(to seconds: Double, unlessUnderrunsPast underruns: Int)
}
