/// Where haptic commands go, as `hapsync --haptics`, `HAPSYNC_HAPTICS` and the APIs spell it:
/// `evdev:PATH`, `evdev:auto`, `trace:PATH` or `none`. The one parser of that spelling.
public enum HapticOutputSpec: Sendable, Equatable, CustomStringConvertible {
    /// No haptic output (timing is still measured).
    case none
    /// A rumble device: a path, or `auto` for the first rumble-capable device this user can open.
    case evdev(String)
    /// A trace file (`.json`: Chrome trace events; anything else: JSON Lines).
    case trace(String)

    /// What a spec may be, for error messages.
    public static let expectation = "evdev:PATH, evdev:auto, trace:PATH or none"

    /// Parses a spec; nil when `text` is not one.
    public init?(parsing text: String) {
        if text == "none" { self = .none; return }
        if text.hasPrefix("trace:"), text.count > 6 { self = .trace(String(text.dropFirst(6))); return }
        if text.hasPrefix("evdev:"), text.count > 6 { self = .evdev(String(text.dropFirst(6))); return }
        return nil
    }

    /// The spec as it is written.
    public var description: String {
        switch self {
        case .none: "none"
        case .evdev(let path): "evdev:\(path)"
        case .trace(let path): "trace:\(path)"
        }
    }
}
