import HapSyncRuntime

extension HapticOutputSpec {
    /// The backend this spec names, for the library front ends (`import CoreHaptics`, the C API):
    /// a trace never replaces an existing regular file (the engine's start fails saying so: a
    /// library has no `--force`; the caller removes the file first), `evdev:auto` takes the first
    /// rumble pad this user can open. Throws the device error when an evdev device cannot be used.
    /// A waveform output needs the audio output and the engine's haptic latency made with it:
    /// `LibraryOutputs` (in AudioOutput) makes it; here it is an error saying so.
    public func backend() throws -> HapticBackend {
        switch self {
        case .none: return NullHapticBackend()
        case .trace(let path): return TraceBackend(path: path, replacing: false)
        case .evdev(let named): return EvdevBackend(configuration: .init(path: try InputDeviceProbe.device(named: named).path))
        case .waveform: throw HapticOutputUnavailable(description: "\(self): a waveform output is made with the engine's audio (LibraryOutputs)")
        }
    }

    /// The backend when nothing names one: the first rumble pad, else none.
    public static func defaultBackend() -> HapticBackend {
        InputDeviceProbe.firstRumbleDevice().map { EvdevBackend(configuration: .init(path: $0.path)) } ?? NullHapticBackend()
    }
}

/// A haptic output that exists but cannot be made here, with why.
public struct HapticOutputUnavailable: Error, Sendable, CustomStringConvertible {
    /// Why, naming the output.
    public let description: String
}
