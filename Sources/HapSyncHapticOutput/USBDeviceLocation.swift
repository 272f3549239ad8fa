import HapSyncRuntime

/// The USB device a sysfs device sits on: the first directory at or above it with `idVendor` and
/// `idProduct` (a USB device; its interfaces, the HID device and the sound card below it have
/// neither).
public struct USBDeviceLocation: Sendable, Equatable {
    /// Its directory, links resolved: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4".
    public var path: String
    /// `idVendor`.
    public var vendor: UInt16
    /// `idProduct`.
    public var product: UInt16

    /// A USB device at `path` with these ids.
    public init(path: String, vendor: UInt16, product: UInt16) {
        self.path = path
        self.vendor = vendor
        self.product = product
    }

    /// "054c:0ce6".
    public var vendorProduct: String { GamepadModel.idText(vendor: vendor, product: product) }

    /// The pad model its ids name, if HapSync knows it.
    public var model: GamepadModel? { GamepadModel.named(vendor: vendor, product: product) }

    /// The start udev's ID_PATH (a sound server's `device.bus_path`) has for each interface of
    /// this device: "pci-0000:00:14.0-usb-0:4" for ".../0000:00:14.0/usb1/1-4", whose audio
    /// interface is "pci-0000:00:14.0-usb-0:4:1.0". nil when its controller is not a PCI device
    /// (udev names those otherwise).
    public var busPathPrefix: String? {
        let parts = path.split(separator: "/").map(String.init)
        guard let hub = parts.lastIndex(where: { $0.hasPrefix("usb") && Int($0.dropFirst(3)) != nil }), hub > 0,
              let device = parts.last, let dash = device.firstIndex(of: "-") else { return nil }
        let controller = parts[hub - 1]
        guard controller.contains(":"), controller.contains(".") else { return nil }
        return "pci-\(controller)-usb-0:\(device[device.index(after: dash)...])"
    }
}

/// What looking for the USB device above a sysfs device found.
public enum USBDeviceLookup: Sendable, Equatable {
    /// The USB device.
    case found(USBDeviceLocation)
    /// The device is on Bluetooth (a `bluetooth` directory above it): no USB device of its own.
    case bluetooth
    /// A virtual device (under /sys/devices/virtual: uhid, uinput): on no bus.
    case virtual
    /// Not found, and why (a broken link, an unreadable directory, no USB device above it).
    case unknown(String)

    /// The USB device, when found.
    public var location: USBDeviceLocation? {
        if case .found(let location) = self { return location }
        return nil
    }
}

extension SysfsReading {
    /// The USB device at or above the device `path` leads to (a link such as
    /// /sys/class/sound/card1/device is followed first), walking up the resolved directory:
    /// the first one with hex `idVendor` and `idProduct`. Stops at a `bluetooth` directory, at
    /// /sys/devices/virtual and at /sys/devices. Never fails: what it could not read is in the
    /// answer.
    public func usbDevice(above path: String) -> USBDeviceLookup {
        let resolved: String
        switch resolve(path) {
        case .success(let p): resolved = p
        case .failure(let problem): return .unknown(problem.description)
        }
        var dir = resolved
        while dir.hasPrefix("/sys/devices/") {
            if dir.hasPrefix("/sys/devices/virtual/") { return .virtual }
            let name = dir.split(separator: "/").last.map(String.init) ?? ""
            if name == "bluetooth" { return .bluetooth }
            if let vendor = attribute(dir + "/idVendor").flatMap({ UInt16($0, radix: 16) }),
               let product = attribute(dir + "/idProduct").flatMap({ UInt16($0, radix: 16) }) {
                return .found(USBDeviceLocation(path: dir, vendor: vendor, product: product))
            }
            dir = String(dir[..<(dir.lastIndex(of: "/") ?? dir.startIndex)])
        }
        return .unknown("\(resolved) is on no USB device")
    }
}
