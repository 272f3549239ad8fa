import HapSyncRuntime

extension HapticOutputSpec {
    /// The backend this spec names, for the library front ends (`import CoreHaptics`, the C API):
    /// a trace replaces its file (the caller named it), `evdev:auto` takes the first rumble pad
    /// this user can open. Throws the device error when an evdev device cannot be used.
    public func backend() throws(EvdevError) -> HapticBackend {
        switch self {
        case .none: return NullHapticBackend()
        case .trace(let path): return TraceBackend(path: path, replacing: true)
        case .evdev(let named): return EvdevBackend(configuration: .init(path: try InputDeviceProbe.device(named: named).path))
        }
    }

    /// The backend when nothing names one: the first rumble pad, else none.
    public static func defaultBackend() -> HapticBackend {
        InputDeviceProbe.firstRumbleDevice().map { EvdevBackend(configuration: .init(path: $0.path)) } ?? NullHapticBackend()
    }
}
