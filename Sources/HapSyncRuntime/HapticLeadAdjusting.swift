/// A haptic backend whose commands must reach it further ahead of their sound than the engine's
/// configured `hapticLatency` gives, by an amount it learns while playing: a waveform output
/// mixed into an audio stream renders each block as far ahead of its sound as the sound server
/// keeps its buffer, which can be deeper than the stream asked for (a sink of fixed latency, a
/// buffer grown after underruns). The engine's scheduler adds `extraLead` to its `hapticLatency`
/// for every command it releases from then on, so a command still reaches the output before its
/// frame is rendered.
public protocol HapticLeadAdjusting: AnyObject, Sendable {
    /// How much earlier than the configured `hapticLatency` commands must now be released, ns (0
    /// until the backend finds it needs more; it only grows). Read on the scheduler's real-time
    /// thread: does not allocate, lock or block.
    var extraLead: UInt64 { get }
}
