import HapSyncRuntime
import HapticOutput

/// The outputs an engine made by a library front end plays to (`import CoreHaptics`, the C API):
/// the one place a haptic output spec, a trace beside it and the audio output are put together.
///
/// - Haptics: the spec's backend (`HapticOutputSpec.backend()`), or the first rumble pad when no
///   spec is given; a waveform output (`waveform:SINK[:CHANNELS]`) is mixed into the audio's
///   stream when both play to one sink, and gets the trace's block records.
/// - A trace beside it (`HAPSYNC_TRACE`), written with whatever the haptic output is.
/// - A trace (either) never replaces an existing regular file: starting the engine fails saying
///   so, as the CLI does without `--force`; the caller removes the file to replace it.
/// - Audio as `audio` chooses (`AudioServerChoice`: PipeWire natively or PulseAudio's protocol,
///   or none), on `sink` of the servers `environment` names (nil: the defaults).
/// - The engine's haptic latency: a waveform stream's lead, else 0.
public struct LibraryOutputs {
    /// The haptic backend.
    public let backend: HapticBackend
    /// The audio output, if any.
    public let audio: SoundServerOutput?
    /// The engine's `hapticLatency` these outputs need (ns).
    public let hapticLatency: UInt64

    /// Why the outputs could not be made.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The haptic output that failed (`trace:PATH` for `HAPSYNC_TRACE`).
        public let spec: HapticOutputSpec
        /// Why.
        public let description: String
        /// Whether a file was refused (a trace over an existing file, a directory), rather than
        /// a device that cannot be used.
        public var isFile = false
    }

    /// Makes the outputs. Throws `Failure` when the haptic output cannot be made (a rumble pad
    /// that cannot be opened) or a trace would replace a file that exists (checked again when
    /// the engine opens it).
    public init(haptics spec: HapticOutputSpec?, tracePath: String?, audio choice: AudioServerChoice, sink: String?,
                environment: [String: String]) throws(Failure) {
        // Never over a file the user has: a library front end has no --force (remove it first).
        for path in [spec.flatMap { if case .trace(let p) = $0 { p } else { nil } }, tracePath].compactMap({ $0 }) where !path.isEmpty {
            do throws(OutputFile.Failure) { try OutputFile.check(path, replacing: false) } catch {
                throw Failure(spec: .trace(path), description: "trace:\(path): \(error) (remove it first, or name a new file)", isFile: true)
            }
        }
        let audio = choice.output(sink: sink, latency: 0.020, environment: environment)
        let trace = tracePath.flatMap { $0.isEmpty ? nil : TraceBackend(path: $0, replacing: false) }
        var haptics: HapticBackend
        var latency: UInt64 = 0
        switch spec {
        case .waveform(let sink, let channels):
            let waveform = WaveformOutput(configuration: .init(sink: sink, channels: channels, server: environment["PULSE_SERVER"],
                                                               audio: audio, recorder: trace))
            latency = waveform.configuration.lead
            haptics = waveform
        case let spec?:
            do { haptics = try spec.backend() } catch { throw Failure(spec: spec, description: "\(spec): \(error)") }
        case nil:
            haptics = HapticOutputSpec.defaultBackend()
        }
        if let trace {
            haptics = haptics is NullHapticBackend ? trace : FanOutBackend([haptics, trace])
        }
        backend = haptics
        self.audio = audio
        hapticLatency = latency
    }
}
