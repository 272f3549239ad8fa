import HapSyncAudioOutput
import HapSyncHapticOutput
import HapSyncRuntime

/// A DualSense (or DualSense Edge) as HapSync finds it: the evdev node its rumble plays on and
/// the sound server's sink its voice-coil actuators play on (the rear channels), paired when both
/// sit on one USB device in sysfs. Either may be missing: a pad on Bluetooth has no sink, a sink
/// whose pad has no evdev node (no driver bound) has no pad; `note` then says why.
public struct DualSensePair: Sendable, Equatable {
    /// The model, by the pad's ids (or its USB device's), else by the sink's.
    public var model: GamepadModel
    /// The pad's event node: of its nodes (buttons and sticks, motion sensors, touchpad), the
    /// one with rumble, else the first. nil when only the sink was found.
    public var pad: InputDeviceInfo?
    /// The sink on the same USB device, nil when none is.
    public var sink: WaveformOutput.Sink?
    /// That USB device's directory ("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4"), when known.
    public var usbDevice: String?
    /// Why the pad has no sink or the sink no pad, in a sentence; nil when paired.
    public var note: String?

    /// A pair (or half of one, with the note saying why).
    public init(model: GamepadModel, pad: InputDeviceInfo?, sink: WaveformOutput.Sink?, usbDevice: String?, note: String?) {
        self.model = model
        self.pad = pad
        self.sink = sink
        self.usbDevice = usbDevice
        self.note = note
    }
}

/// Pairs DualSense pads with their sinks through sysfs: an event node's HID device
/// (/sys/class/input/eventN/device/device) and a sink's sound card (/sys/class/sound/cardN/device,
/// by `alsa.card`, else the sink's `sysfs.path`) are both below the pad's USB device, the first
/// directory above them with `idVendor` and `idProduct`; the same directory, the same pad. A sink
/// whose card cannot be found in sysfs is matched by its `device.bus_path` (udev's ID_PATH) against
/// the pad's USB port instead. Reads nothing but sysfs (through `SysfsReading`), so tests run it on
/// fixture trees; what it cannot read ends up in a pair's note, never in a crash.
public enum DualSensePairing {
    /// The USB device a sink's sound card is on: by its ALSA card (/sys/class/sound/cardN/device),
    /// else by its `sysfs.path`; `.unknown` (why) when the server gave neither or neither resolves.
    public static func usbDevice(ofSink sink: WaveformOutput.Sink, sysfs: SysfsReading) -> USBDeviceLookup {
        var tried: [String] = []
        if let card = sink.alsaCard {
            let found = sysfs.usbDevice(above: "/sys/class/sound/card\(card)/device")
            if case .unknown(let why) = found { tried.append(why) } else { return found }
        }
        if let path = sink.sysfsPath {
            let found = sysfs.usbDevice(above: path)
            if case .unknown(let why) = found { tried.append(why) } else { return found }
        }
        return .unknown(tried.isEmpty ? "the sound server gave neither its ALSA card nor its sysfs path" : tried.joined(separator: "; "))
    }

    /// The DualSense pads among `devices` and the DualSense sinks among `sinks` (nil: the sound
    /// server did not answer), paired: a pair for each pad (with its sink when one is on its USB
    /// device), then one for each sink no pad took, in the order they were listed.
    public static func pairs(devices: [InputDeviceInfo], sinks: [WaveformOutput.Sink]?, sysfs: SysfsReading) -> [DualSensePair] {
        let pads = padGroups(devices, sysfs: sysfs)
        let candidates = (sinks ?? []).filter(\.isDualSense).map { (sink: $0, lookup: usbDevice(ofSink: $0, sysfs: sysfs)) }
        var taken = Set<Int>()
        var pairs: [DualSensePair] = []
        for pad in pads {
            let location = pad.lookup.location
            let matching = candidates.indices.filter { i in
                guard let location, !taken.contains(i) else { return false }
                if let found = candidates[i].lookup.location { return found.path == location.path }
                guard let busPath = candidates[i].sink.busPath, let prefix = location.busPathPrefix else { return false }
                return busPath.hasPrefix(prefix + ":")
            }
            taken.formUnion(matching)
            if matching.isEmpty {
                pairs.append(DualSensePair(model: pad.model, pad: pad.node, sink: nil, usbDevice: location?.path,
                                           note: whyNoSink(pad.lookup, serverAnswered: sinks != nil)))
            }
            for i in matching {
                pairs.append(DualSensePair(model: pad.model, pad: pad.node, sink: candidates[i].sink, usbDevice: location?.path, note: nil))
            }
        }
        for (i, candidate) in candidates.enumerated() where !taken.contains(i) {
            guard let model = candidate.sink.actuatorModel else { continue }
            let note: String
            switch candidate.lookup {
            case .found(let location):
                note = "no evdev node is on its USB device (\(location.path)): no driver gave the pad one (is hid-playstation loaded?)"
            case .bluetooth, .virtual:
                note = "its sound card is on no USB device, so no pad's node can share it"
            case .unknown(let why):
                note = "its sound card's USB device is not known (\(why)), so no pad can be paired with it"
            }
            pairs.append(DualSensePair(model: model, pad: nil, sink: candidate.sink, usbDevice: candidate.lookup.location?.path, note: note))
        }
        return pairs
    }

    /// A pad's nodes taken together: its model, the node that stands for it, where it is.
    private struct PadGroup {
        var key: String
        var model: GamepadModel
        var node: InputDeviceInfo
        var lookup: USBDeviceLookup
    }

    /// The DualSense pads among `devices` (by the node's ids, or for a node this user cannot open,
    /// its USB device's), one for each HID device their nodes share; the node with rumble stands
    /// for its pad.
    private static func padGroups(_ devices: [InputDeviceInfo], sysfs: SysfsReading) -> [PadGroup] {
        var groups: [PadGroup] = []
        for device in devices {
            var lookup = InputDeviceProbe.usbDevice(ofEventDevice: device.path, sysfs: sysfs)
            guard let model = device.model ?? lookup.location?.model, model.hasVoiceCoilActuators else { continue }
            if let location = lookup.location, let id = device.id, id.vendor != location.vendor || id.product != location.product {
                // A receiver or adapter between: the USB device found is not the pad itself.
                lookup = .unknown("the USB device above it, \(location.vendorProduct) at \(location.path), is not the pad itself (a receiver or adapter?)")
            }
            // Without its HID device a node cannot be told to be one of the pad's: only the one
            // with rumble stands for a pad then (its motion sensors and touchpad are left out).
            let parent = try? InputDeviceProbe.parentDevice(ofEventDevice: device.path, sysfs: sysfs).get()
            guard let key = parent ?? (device.hasRumble ? device.path : nil) else { continue }
            if let i = groups.firstIndex(where: { $0.key == key }) {
                if device.hasRumble, !groups[i].node.hasRumble { groups[i].node = device }
            } else {
                groups.append(PadGroup(key: key, model: model, node: device, lookup: lookup))
            }
        }
        return groups
    }

    /// Why a pad has no sink, for its note.
    private static func whyNoSink(_ lookup: USBDeviceLookup, serverAnswered: Bool) -> String {
        switch lookup {
        case .bluetooth:
            return "on Bluetooth: its actuators are a USB sound card, reachable as audio over a USB cable only"
        case .virtual:
            return "a virtual device (uhid or uinput), on no USB device: it has no sound card"
        case .unknown(let why):
            return "its USB device is not known (\(why)), so no sink can be paired with it"
        case .found(let location):
            return serverAnswered
                ? "no sink of the sound server is on its USB device (\(location.path)): is its card's profile off? ('pactl list cards')"
                : "no sound server answers, so its sink is not known"
        }
    }
}
