import HapSyncAHAP

/// Settings of pattern rendering: the control rate of the command stream and the constants of the
/// documented semantics.
public struct RenderOptions: Sendable, Equatable {
    /// Samples per second of the continuous haptic signal (default 1000 Hz).
    public var controlRate: Double
    /// A level command is emitted only when intensity or sharpness moved more than this (default 0.001).
    public var epsilon: Double
    /// The logical length of a transient tap, seconds (default 0.025).
    public var transientLength: Double
    /// Length of the click-preventing fades of an `AudioCustom` voice with its volume envelope on,
    /// seconds (default 0.005).
    public var audioFadeLength: Double
    /// Most commands a timeline may hold; more is a `RenderError` rather than gigabytes of memory
    /// (default 5,000,000: 83 minutes of constantly changing signal at 1 kHz).
    public var maxCommands: Int
    /// Latest time, longest duration and latest control point a compiled pattern may hold, seconds
    /// (default `AHAPLimits.default.maxTime`, one day, as the reader enforces for files). A later
    /// one, or one that is not a finite number ≥ 0 (possible in a pattern built in code), is a
    /// `RenderError` instead of times that overflow integer nanoseconds, frames or grid steps.
    public var maxTime: Double

    /// Makes options; every argument has the default described on its property.
    public init(controlRate: Double = 1000, epsilon: Double = 0.001, transientLength: Double = 0.025,
                audioFadeLength: Double = 0.005, maxCommands: Int = 5_000_000, maxTime: Double = AHAPLimits.default.maxTime) {
        self.controlRate = controlRate
        self.epsilon = epsilon
        self.transientLength = transientLength
        self.audioFadeLength = audioFadeLength
        self.maxCommands = maxCommands
        self.maxTime = maxTime
    }
}

/// Why a pattern could not be compiled into a timeline.
public enum RenderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option is out of its meaningful range.
    case invalidOption(String)
    /// The command stream would exceed `RenderOptions.maxCommands`.
    case tooManyCommands(needed: Int, limit: Int)
    /// The audio voices' automation would sample more than `limit` (`RenderOptions.maxCommands`)
    /// control-grid points.
    case tooManyVoiceSamples(limit: Int)
    /// A time or duration of the pattern (at `path`) is not a finite number from 0 to
    /// `RenderOptions.maxTime`.
    case timeOutOfRange(path: AHAPPath, seconds: Double, limit: Double)

    /// A sentence for the user.
    public var description: String {
        switch self {
        case .invalidOption(let why): return why
        case .tooManyCommands(let needed, let limit):
            return "the pattern needs about \(needed) commands at this control rate; the limit is \(limit) (lower the rate)"
        case .tooManyVoiceSamples(let limit):
            return "the audio voices' automation needs more than \(limit) samples at this control rate; the limit is \(limit) (lower the rate)"
        case .timeOutOfRange(let path, let seconds, let limit):
            return "\(path): \(AHAPWriter.formatNumber(seconds)) s is not a time from 0 to \(AHAPWriter.formatNumber(limit)) s (the limit on times and durations)"
        }
    }
}
