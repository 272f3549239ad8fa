/// A game controller model HapSync recognises by its ids, and the kernel driver that serves it.
///
/// The one table of pad ids. It lives below the backends because two of them identify pads by it:
/// the evdev probe (a node's EVIOCGID) and the sound server's sinks (a DualSense's USB audio
/// device, by the `device.vendor.id` and `device.product.id` the server gives).
public struct GamepadModel: Sendable, Equatable {
    /// What people call it ("DualSense").
    public var name: String
    /// The USB or Bluetooth vendor id.
    public var vendor: UInt16
    /// Its product ids (a model may have several revisions).
    public var products: [UInt16]
    /// The Linux driver module that binds it (`hid-playstation`).
    public var driver: String

    /// The models HapSync knows: the ones whose kernel drivers give them FF_RUMBLE.
    public static let known: [GamepadModel] = [
        GamepadModel(name: "DualSense", vendor: 0x054c, products: [0x0ce6], driver: "hid-playstation"),
        GamepadModel(name: "DualSense Edge", vendor: 0x054c, products: [0x0df2], driver: "hid-playstation"),
        GamepadModel(name: "DualShock 4", vendor: 0x054c, products: [0x05c4, 0x09cc, 0x0ba0], driver: "hid-sony"),
        GamepadModel(name: "Switch Pro Controller", vendor: 0x057e, products: [0x2009], driver: "hid-nintendo"),
        GamepadModel(name: "Xbox One S controller (Bluetooth)", vendor: 0x045e, products: [0x02e0, 0x02fd, 0x0b20], driver: "hid-microsoft"),
        GamepadModel(name: "Xbox Series controller (Bluetooth)", vendor: 0x045e, products: [0x0b13], driver: "hid-microsoft"),
        GamepadModel(name: "Xbox Elite Series 2 controller (Bluetooth)", vendor: 0x045e, products: [0x0b05, 0x0b22], driver: "hid-microsoft"),
        GamepadModel(name: "Xbox controller (USB)", vendor: 0x045e, products: [0x02ea, 0x0b12], driver: "xpad"),
    ]

    /// The known model with these ids, or nil.
    public static func named(vendor: UInt16, product: UInt16) -> GamepadModel? {
        known.first { $0.vendor == vendor && $0.products.contains(product) }
    }

    /// The models (by name in `known`) with voice-coil actuators driven as audio: the rear pair of
    /// their USB sound card's four channels.
    private static let voiceCoilModels: Set<String> = ["DualSense", "DualSense Edge"]

    /// Whether the pad has voice-coil actuators fed as audio (a DualSense or DualSense Edge on
    /// USB: `waveform:auto` looks for their sinks), not only rumble motors.
    public var hasVoiceCoilActuators: Bool { Self.voiceCoilModels.contains(name) }

    /// The known models with voice-coil actuators, in table order (what `waveform:auto` looks for).
    public static var withVoiceCoilActuators: [GamepadModel] { known.filter(\.hasVoiceCoilActuators) }

    /// "054c:0ce6" for each of its products, joined by " or ".
    public var idsText: String {
        products.map { Self.idText(vendor: vendor, product: $0) }.joined(separator: " or ")
    }

    /// A device's ids as lsusb and `hapsync devices` write them: "054c:0ce6". The one format for
    /// input devices, USB devices and sinks.
    public static func idText(vendor: UInt16, product: UInt16) -> String { hex(vendor) + ":" + hex(product) }

    /// Four lower-case hex digits, as lsusb and the kernel write USB ids.
    public static func hex(_ v: UInt16) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
