/// What a pad's kernel driver does with an FF_RUMBLE effect, and the mapping HapSync plays it
/// with: the one table of per-driver rumble behaviour (`hapsync devices`, the evdev backend and the
/// real-kernel test's checks all read it).
///
/// The standard mapping is written for two motors of different weight: the left, heavy one
/// (strong) for dull haptics, the right, light one (weak) for sharp ones. Most drivers send the
/// two magnitudes on as they are, scaled to the pad's own range. hid-nintendo does not: a Switch
/// Pro Controller has one linear actuator per grip, and the driver plays the strong magnitude on
/// the left grip and the weak one on the right, both at its fixed HD-rumble frequencies, so
/// sharpness would only move the rumble from one hand to the other. There HapSync plays the level
/// on both grips and leaves sharpness out. hid-nintendo also keeps a pace of its own: it sends at
/// most one report every 25 ms, each right after one of the pad's input reports (every 15 ms),
/// from an 8-frame queue that drops frames when fed faster and sends each change one report late;
/// fed every 10 ms it fell behind by up to 200 ms. HapSync updates it at most every 40 ms.
public struct PadRumble: Sendable {
    /// The kernel driver (module name, as `hapsync devices` shows it: "hid-nintendo").
    public var driver: String
    /// (intensity, sharpness) → (strong, weak) for pads this driver serves.
    public var mapping: RumbleMapping
    /// What the pad receives and how HapSync plays it, in a sentence for `hapsync devices` and
    /// `play`'s output line.
    public var note: String
    /// The shortest time between two updates the driver keeps up with, ns (0: the backend's own
    /// limit is enough); the evdev backend updates no faster.
    public var minimumUpdateInterval: UInt64 = 0

    /// hid-nintendo's pace: HapSync updates a Switch Pro Controller at most this often, ns.
    static let nintendoPace: UInt64 = 40_000_000

    /// Every driver whose pads HapSync knows, with how their rumble reaches the motors.
    public static let known: [PadRumble] = [
        PadRumble(driver: "hid-playstation", mapping: .standard,
                  note: "rumble emulated on the voice coils by the pad (hid-playstation's compatible vibration, "
                      + "v2 from firmware feature version 2.21): each motor a byte; for its full haptics play to its sound card, "
                      + "--haptics waveform:auto (or waveform:SINK:rear)"),
        PadRumble(driver: "hid-sony", mapping: .standard, note: "two motors, each a byte (magnitude / 256)"),
        PadRumble(driver: "hid-nintendo", mapping: .bothGrips,
                  note: "HD rumble at fixed frequencies, the strong magnitude on the left grip and the weak on the right: "
                      + "HapSync plays the level on both grips (sharpness cannot change its pitch), "
                      + "at most every \(nintendoPace / 1_000_000) ms (the driver's own pace)",
                  minimumUpdateInterval: nintendoPace),
        PadRumble(driver: "hid-microsoft", mapping: .standard, note: "two motors in 1 % steps (magnitude × 100 / 65535)"),
        PadRumble(driver: "xpad", mapping: .standard, note: "two motors, each a byte (magnitude / 256)"),
    ]

    /// The rumble of a pad served by `driver`; any other driver (or none: uinput, virtual
    /// devices) gets the standard mapping and no note.
    public static func of(driver: String?) -> PadRumble {
        known.first { $0.driver == driver } ?? PadRumble(driver: driver ?? "", mapping: .standard, note: "")
    }
}

extension RumbleMapping {
    /// For one actuator per grip played alike (hid-nintendo's Switch Pro Controller): the
    /// standard level (`level(_:)`) on both magnitudes, sharpness left out.
    public static let bothGrips = RumbleMapping { intensity, _ in
        let both = magnitude(level(intensity))
        return (both, both)
    }
}
