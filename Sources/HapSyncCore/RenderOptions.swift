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

    /// Makes options; every argument has the default described on its property.
    public init(controlRate: Double = 1000, epsilon: Double = 0.001, transientLength: Double = 0.025,
                audioFadeLength: Double = 0.005, maxCommands: Int = 5_000_000) {
        self.controlRate = controlRate
        self.epsilon = epsilon
        self.transientLength = transientLength
        self.audioFadeLength = audioFadeLength
        self.maxCommands = maxCommands
    }
}

/// Why a pattern could not be compiled into a timeline.
public enum RenderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option is out of its meaningful range.
    case invalidOption(String)
    /// The command stream would exceed `RenderOptions.maxCommands`.
    case tooManyCommands(needed: Int, limit: Int)

    /// A sentence for the user.
    public var description: String {
        switch self {
        case .invalidOption(let why): return why
        case .tooManyCommands(let needed, let limit):
            return "the pattern needs about \(needed) commands at this control rate; the limit is \(limit) (lower the rate)"
        }
    }
}
