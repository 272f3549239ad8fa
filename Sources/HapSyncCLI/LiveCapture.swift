import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncPipeWire
import HapSyncRuntime

/// What a live run captures the sound from: a sink's monitor through PulseAudio's protocol
/// (`MonitorCapture`: a PulseAudio server, or PipeWire's pipewire-pulse), or, on PipeWire
/// natively (`PipeWireSinkCapture`), the live sink itself (the node applications play into) or,
/// with `--no-delay`, the real sink's monitor.
/// `LiveFeed` holds one and makes it anew; the analysis does not know which.
protocol LiveCapture: AnyObject, Sendable {
    /// Starts it; the frames reach the handler from then on. Throws a sentence naming the
    /// server and the sink.
    func begin() throws(LiveCaptureFailure)
    /// Stops it (no handler call after it returns). Idempotent; not from its own thread.
    func stop()
    /// Frames handed over so far (holes and gaps as silence included).
    var framesCaptured: Int64 { get }
    /// Overruns seen (see each capture's contract).
    var overruns: Int { get }
    /// Frames lost to them.
    var lostFrames: Int64 { get }
    /// Frames handed over as silence in place of lost ones (in `framesCaptured` and `lostFrames`
    /// both: frame numbers keep time).
    var filledFrames: Int64 { get }
    /// When frame `frame` entered the sink, CLOCK_MONOTONIC ns (nil: not yet known). Does not
    /// allocate, lock or block.
    func playedTime(ofFrame frame: Int64) -> UInt64?
    /// How far ahead of its notional play time the sink renders, µs (nil: not yet known).
    var sinkLatency: Int64? { get }
    /// The fragment the capture gets, frames (0 before it started).
    var fragmentFrames: Int { get }
    /// What its real-time thread asked for and got (nil: it did not ask).
    var realtimeThread: RealtimeThread? { get }
    /// Whether it failed because its server went away, as far as it can tell (false: it cannot,
    /// or it did not; the PulseAudio path asks its control connection instead).
    var serverWentAway: Bool { get }
    /// How its fragment sets the graph's cycle, and so how it grows after underruns.
    var growth: LiveCaptureGrowth { get }
    /// Asks for `seconds` fragments from now on, in place (`growth` `.inPlace`); false when
    /// refused.
    func setFragment(_ seconds: Double) -> Bool
    /// Before it stops, for a capture that is the live sink itself (the native PipeWire sink):
    /// the streams playing into it asked to play to `sink` (nil: the default sink), and a
    /// sentence saying so; nil when there is nothing to say (a monitor's sink is its owner's).
    func handOver(to sink: String?) -> String?
}

/// How a capture's fragment can be made longer after the sound played on underran.
enum LiveCaptureGrowth {
    /// Its fragment does not set the graph's cycle (PulseAudio): nothing to grow.
    case none
    /// Made anew with a longer fragment (pipewire-pulse's monitor capture, whose fragment sets
    /// the cycle of the graph it records from).
    case replace
    /// The same capture asks the graph for longer cycles (the native PipeWire sink).
    case inPlace
}

/// Why a live capture did not start: the capture's own sentence.
struct LiveCaptureFailure: Error, CustomStringConvertible {
    /// The sentence, naming the server and the sink.
    let description: String
}

extension MonitorCapture: LiveCapture {
    /// `start()`, its error as the capture's sentence.
    func begin() throws(LiveCaptureFailure) {
        do { try start() } catch { throw LiveCaptureFailure(description: "\(error)") }
    }

    /// `.replace` on pipewire-pulse (its fragment sets the graph's cycle), else `.none`.
    var growth: LiveCaptureGrowth { serverKind.captureFragmentSetsCycle ? .replace : .none }

    /// Not in place: false.
    func setFragment(_ seconds: Double) -> Bool { false }

    /// The monitored sink is its owner's (`LiveSink`): nil.
    func handOver(to sink: String?) -> String? { nil }

    /// Not told apart here: false.
    var serverWentAway: Bool { false }
}

extension PipeWireSinkCapture: LiveCapture {
    /// `start()`, its error as the capture's sentence.
    func begin() throws(LiveCaptureFailure) {
        do throws(Failure) { try start() } catch { throw LiveCaptureFailure(description: error.description) }
    }

    /// `.inPlace`: the node asks for longer cycles (a monitor's are not grown: with
    /// `--no-delay` nothing is played on to underrun).
    var growth: LiveCaptureGrowth { .inPlace }
}

/// Where a live run's capture comes from.
enum LiveCaptureSource: Sendable {
    /// A sink's monitor through PulseAudio's protocol on `server` (nil: the default).
    case monitor(server: String?)
    /// The live sink made natively on the PipeWire server `remote` (nil: the default), in
    /// `group` (`node.group`, the stream that plays the sound on being in it too).
    case pipeWireSink(remote: String?, group: String?)
    /// The monitor of a sink on the PipeWire server `remote` (nil: the default), recorded
    /// natively (`--no-delay`).
    case pipeWireMonitor(remote: String?)

    /// Whether the capture is made natively on PipeWire (the live sink or a monitor).
    var isNative: Bool {
        if case .monitor = self { false } else { true }
    }
}
