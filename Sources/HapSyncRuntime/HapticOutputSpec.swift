import HapSyncCore

/// Where haptic commands go, as `hapsync --haptics`, `HAPSYNC_HAPTICS` and the APIs spell it:
/// `evdev:PATH`, `evdev:auto`, `trace:PATH`, `waveform:SINK[:CHANNELS]`, `waveform:auto[:CHANNELS]`
/// or `none`. The one parser of that spelling.
///
/// `auto` (`HapticOutputSpec.auto`) is a word, not a name, in both places it can stand: the
/// first rumble pad for evdev, a DualSense's sink found by its device ids for waveform
/// (`WaveformAutoSink` in HapSyncOutputs resolves it). A sink that is itself named "auto" (no
/// sound server makes one; only a `sink_name=auto` given by hand) cannot be named here.
public enum HapticOutputSpec: Sendable, Equatable, CustomStringConvertible {
    /// No haptic output (timing is still measured).
    case none
    /// A rumble device: a path, or `auto` for the first rumble-capable device this user can open.
    case evdev(String)
    /// A trace file (`.json`: Chrome trace events; anything else: JSON Lines).
    case trace(String)
    /// A voice-coil actuator's drive signal on channels of an audio sink (nil: `rear` on a sink
    /// of four channels or more, else `all`); the sink `auto` is the DualSense's the sound server
    /// has (the one paired with the rumble pad when it has several).
    case waveform(sink: String, channels: WaveformChannels?)

    /// The word that asks HapSync to find the device: `evdev:auto`, `waveform:auto`.
    public static let auto = "auto"

    /// Which channels of a sink carry the drive signal, and with which actuator profile.
    public enum WaveformChannels: String, CaseIterable, Sendable {
        /// Four channels (front-left, front-right, rear-left, rear-right), the signal on both rear
        /// ones, the front ones silent: a DualSense (`ActuatorProfile.dualSense`). Both actuators
        /// get the same signal: AHAP has no left or right.
        case rear
        /// One channel: a bass shaker (`ActuatorProfile.shaker`, low-passed).
        case mono
        /// Stereo, the signal on the left channel only (`ActuatorProfile.generic`).
        case left
        /// Stereo, the signal on the right channel only.
        case right
        /// Stereo, the signal on both channels.
        case all

        /// The actuator profile of these channels.
        public var profile: ActuatorProfile {
            switch self {
            case .rear: return .dualSense
            case .mono: return .shaker
            case .left, .right, .all: return .generic
            }
        }
    }

    /// What a spec may be, for error messages.
    public static let expectation = "evdev:PATH, evdev:auto, trace:PATH, waveform:SINK[:\(WaveformChannels.allCases.map(\.rawValue).joined(separator: "|"))], waveform:auto or none"

    /// Parses a spec; nil when `text` is not one.
    public init?(parsing text: String) {
        if text == "none" { self = .none; return }
        if text.hasPrefix("trace:"), text.count > 6 { self = .trace(String(text.dropFirst(6))); return }
        if text.hasPrefix("evdev:"), text.count > 6 { self = .evdev(String(text.dropFirst(6))); return }
        if text.hasPrefix("waveform:"), text.count > 9 {
            let rest = String(text.dropFirst(9))
            if let colon = rest.lastIndex(of: ":"), let channels = WaveformChannels(rawValue: String(rest[rest.index(after: colon)...])) {
                let sink = String(rest[..<colon])
                guard !sink.isEmpty else { return nil }
                self = .waveform(sink: sink, channels: channels)
            } else {
                self = .waveform(sink: rest, channels: nil)
            }
            return
        }
        return nil
    }

    /// The spec as it is written.
    public var description: String {
        switch self {
        case .none: "none"
        case .evdev(let path): "evdev:\(path)"
        case .trace(let path): "trace:\(path)"
        case .waveform(let sink, let channels): "waveform:\(sink)" + (channels.map { ":\($0.rawValue)" } ?? "")
        }
    }
}
