import HapSyncAudioOutput
import HapSyncHapticOutput
import HapSyncRuntime

/// The outputs an engine made by a library front end plays to (`import CoreHaptics`, the C API):
/// the one place their settings are read and a haptic output spec, a trace beside it and the
/// audio output are put together.
///
/// - Settings: `HAPSYNC_HAPTICS`, `HAPSYNC_AUDIO`, `HAPSYNC_TRACE`, `HAPSYNC_SINK` (and the
///   servers' `PULSE_SERVER`, `PIPEWIRE_REMOTE`) from the environment given, the C API's config
///   in place of the first two when it names them (`init(environment:haptics:audio:)`).
/// - Haptics: the spec's backend (`HapticOutputRequest`), or the first rumble pad when no
///   spec is given (nothing named, or `HAPSYNC_HAPTICS` is a policy switch such as `off`, which
///   `HapticPolicy` reads); a waveform output (`waveform:SINK[:CHANNELS]`) is mixed into the
///   audio's stream when both play to one sink, and gets the trace's block records.
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
    /// How this front end's user turns the audio off, in its own terms: `HAPSYNC_AUDIO=none`, or
    /// the C API's `audio = "none"` when its config named the audio.
    public let audioOffSetting: String

    /// `error` from starting an engine on these outputs, as a sentence for this front end's user:
    /// an audio output that could not start says how to play without audio in the front end's own
    /// setting (never a CLI flag).
    public func explain(startFailure error: any Error) -> String {
        guard let engineError = error as? HapticEngine.EngineError, case .audioUnavailable = engineError else { return "\(error)" }
        return "\(error); to play without audio, set \(audioOffSetting)"
    }

    /// Why the outputs could not be made.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What kind of failure, for a front end's error codes.
        public enum Kind: Sendable {
            /// A setting that is none of its choices (`HAPSYNC_AUDIO=alsa`).
            case invalidValue
            /// A file refused: a trace over an existing file, a directory.
            case file
            /// A device that cannot be used (a rumble pad that cannot be opened).
            case device
        }
        /// What kind.
        public let kind: Kind
        /// Why, naming the setting, file or device.
        public let description: String
        /// Whether a file was refused.
        public var isFile: Bool { kind == .file }
    }

    /// A setting a front end passes in place of the environment's: its value and what to call
    /// it in errors (the C API's config: "haptics", "audio").
    public struct Setting: Sendable {
        /// The value as given.
        public var value: String
        /// Its name in errors.
        public var source: String
        /// A setting named `source` with `value`.
        public init(_ value: String, source: String) {
            self.value = value
            self.source = source
        }
    }

    /// Makes the outputs from a front end's settings: `haptics` (else `HAPSYNC_HAPTICS`),
    /// `audio` (else `HAPSYNC_AUDIO`, else auto), `HAPSYNC_TRACE` and `HAPSYNC_SINK`, all from
    /// `environment`. Throws `Failure`: a value that is none of its choices (naming it and where
    /// it came from), a trace over a file, a rumble pad that cannot be used.
    public init(environment: [String: String], haptics: Setting? = nil, audio: Setting? = nil) throws(Failure) {
        // HAPSYNC_HAPTICS may be the policy's switch instead of an output (HapticPolicy reads it).
        let fromEnvironment = haptics == nil
        var spec: HapticOutputSpec?
        if let setting = haptics ?? environment["HAPSYNC_HAPTICS"].map({ Setting($0, source: "HAPSYNC_HAPTICS") }), !setting.value.isEmpty {
            if let parsed = HapticOutputSpec(parsing: setting.value) {
                spec = parsed
            } else if !fromEnvironment || HapticPolicy.switchValue(setting.value) == nil {
                let expected = fromEnvironment ? "on, off or an output (\(HapticOutputSpec.expectation))" : HapticOutputSpec.expectation
                throw Failure(kind: .invalidValue, description: "\(setting.source): '\(setting.value)' is not \(expected)")
            }
        }
        let choice: AudioServerChoice
        if let audio {
            guard let parsed = AudioServerChoice(rawValue: audio.value) else {
                throw Failure(kind: .invalidValue, description: "\(AudioChoiceError(variable: audio.source, value: audio.value))")
            }
            choice = parsed
        } else {
            switch AudioServerChoice.from(environment: environment) {
            case .success(let c): choice = c
            case .failure(let error): throw Failure(kind: .invalidValue, description: error.description)
            }
        }
        try self.init(haptics: spec, tracePath: environment["HAPSYNC_TRACE"], audio: choice, sink: environment["HAPSYNC_SINK"],
                      environment: environment, audioOffSetting: audio.map { "\($0.source) = \"none\"" } ?? "HAPSYNC_AUDIO=none")
    }

    /// Makes the outputs from parsed settings. Throws `Failure` when the haptic output cannot be made (a rumble pad
    /// that cannot be opened) or a trace would replace a file that exists (checked again when
    /// the engine opens it).
    init(haptics spec: HapticOutputSpec?, tracePath: String?, audio choice: AudioServerChoice, sink: String?,
         environment: [String: String], audioOffSetting: String) throws(Failure) {
        self.audioOffSetting = audioOffSetting
        // Never over a file the user has: a library front end has no --force (remove it first).
        for path in [spec.flatMap { if case .trace(let p) = $0 { p } else { nil } }, tracePath].compactMap({ $0 }) where !path.isEmpty {
            do throws(OutputFile.Failure) { try OutputFile.check(path, replacing: false) } catch {
                throw Failure(kind: .file, description: "trace:\(path): \(error) (remove it first, or name a new file)")
            }
        }
        let audio = choice.output(sink: sink, latency: 0.020, environment: environment)
        var request = HapticOutputRequest()
        request.firstPadByDefault = spec == nil
        switch spec {
        case .evdev(let named)?: request.evdev = named
        case .waveform(let sink, let channels)?: request.waveform = (sink, channels)
        case .trace(let path)?: request.traces.append(TraceBackend(path: path, replacing: false))
        case .none?, nil: break
        }
        if let tracePath, !tracePath.isEmpty { request.traces.append(TraceBackend(path: tracePath, replacing: false)) }
        let made: HapticOutputRequest.Made
        do throws(EvdevError) {
            made = try request.makeBackend(audio: audio, environment: environment)
        } catch {
            throw Failure(kind: .device, description: "\(spec.map { "\($0)" } ?? "evdev:auto"): \(error)")
        }
        backend = made.backend
        self.audio = audio
        hapticLatency = made.waveform?.configuration.lead ?? 0
    }
}
