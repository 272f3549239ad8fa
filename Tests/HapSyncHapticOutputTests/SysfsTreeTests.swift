import Foundation
import HapSyncHapticOutput
import HapSyncTestSupport
import Testing

/// `SysfsTree` and `usbDevice(above:)` on recorded trees (Tests/Fixtures/sysfs-dualsense): the
/// USB device above an event node or a sound card is the pad itself on USB, nothing on Bluetooth
/// or for a virtual pad, and a broken or missing link is a note, not a crash.
@Suite("sysfs: the USB device above a node or a sound card")
struct SysfsTreeTests {
    let dir: TemporaryDirectory

    init() throws { dir = try TemporaryDirectory("sysfs") }

    private func tree(_ names: String...) throws -> SysfsTree {
        try DeviceFixtures.buildSysfs(names, in: dir.url)
        return SysfsTree(root: dir.path)
    }

    /// The pad's nodes and its sound card lead to one USB device: 1-4, whose udev ID_PATH is the
    /// one the sound servers give as the card's device.bus_path, less its interface.
    @Test func aDualSenseOnUSBIsTheUSBDeviceAboveItsNodesAndItsCard() throws {
        let sysfs = try tree("dualsense-usb")
        let usb = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4"
        for node in ["/dev/input/event16", "/dev/input/event17", "event18"] {
            #expect(InputDeviceProbe.usbDevice(ofEventDevice: node, sysfs: sysfs)
                        == .found(USBDeviceLocation(path: usb, vendor: 0x054c, product: 0x0ce6)), "\(node)")
        }
        #expect(sysfs.usbDevice(above: "/sys/class/sound/card1/device").location?.path == usb)
        #expect(sysfs.usbDevice(above: "/sys/class/sound/card1/device").location?.busPathPrefix == "pci-0000:00:14.0-usb-0:4")
        #expect(sysfs.usbDevice(above: "/sys/class/sound/card1/device").location?.model?.name == "DualSense")
        // Every node of the pad has the one HID device above it.
        let hid = usb + "/1-4:1.3/0003:054C:0CE6.0002"
        #expect(try InputDeviceProbe.parentDevice(ofEventDevice: "/dev/input/event16", sysfs: sysfs).get() == hid)
        #expect(try InputDeviceProbe.parentDevice(ofEventDevice: "/dev/input/event18", sysfs: sysfs).get() == hid)
        #expect(sysfs.attribute(usb + "/product") == "DualSense Wireless Controller")
        #expect(sysfs.attribute(usb + "/nothing") == nil)
    }

    /// Behind a hub, the first USB device above is the pad (3-2.1), not the hub (3-2); its ID_PATH
    /// names the controller nearest it (0000:05:00.3), not the bridge above.
    @Test func behindAHubTheNearestUSBDeviceIsThePad() throws {
        let sysfs = try tree("dualsense-edge-hub")
        let found = try #require(InputDeviceProbe.usbDevice(ofEventDevice: "/dev/input/event20", sysfs: sysfs).location)
        #expect(found.path == "/sys/devices/pci0000:00/0000:00:08.1/0000:05:00.3/usb3/3-2/3-2.1")
        #expect(found.vendorProduct == "054c:0df2" && found.model?.name == "DualSense Edge")
        #expect(found.busPathPrefix == "pci-0000:05:00.3-usb-0:2.1")
    }

    /// A pad on Bluetooth stops at the adapter's `bluetooth` folder (never taking the adapter,
    /// 8087:0026, for the pad); a uhid pad is virtual; a PCI card and a platform keyboard are on
    /// no USB device.
    @Test func bluetoothVirtualAndPlatformDevicesAreOnNoUSBDevice() throws {
        let sysfs = try tree("dualsense-bluetooth", "builtin")
        #expect(InputDeviceProbe.usbDevice(ofEventDevice: "/dev/input/event24", sysfs: sysfs) == .bluetooth)
        #expect(InputDeviceProbe.usbDevice(ofEventDevice: "/dev/input/event40", sysfs: sysfs) == .virtual)
        guard case .unknown(let keyboard) = InputDeviceProbe.usbDevice(ofEventDevice: "/dev/input/event3", sysfs: sysfs) else {
            Issue.record("the keyboard is on the i8042 controller")
            return
        }
        #expect(keyboard == "/sys/devices/platform/i8042/serio0 is on no USB device")
        #expect(sysfs.usbDevice(above: "/sys/class/sound/card0/device") == .unknown("/sys/devices/pci0000:00/0000:00:1f.3 is on no USB device"))
    }

    /// A link whose target is gone, an entry that is not there and a link out of the tree are
    /// each said as such.
    @Test func brokenMissingAndEscapingLinksAreNotes() throws {
        let sysfs = try tree("dualsense-usb")
        try FileManager.default.removeItem(at: dir.url.appendingPathComponent("sys/devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0"))
        #expect(sysfs.usbDevice(above: "/sys/class/sound/card1/device")
                    == .unknown("/sys/class/sound/card1/device: a broken link: /sys/class/sound/card1 points to nothing"))
        #expect(sysfs.usbDevice(above: "/sys/class/sound/card1")
                    == .unknown("/sys/class/sound/card1: a broken link: /sys/class/sound/card1 points to nothing"))
        #expect(InputDeviceProbe.usbDevice(ofEventDevice: "/dev/input/event99", sysfs: sysfs)
                    == .unknown("/sys/class/input/event99/device/device: not there"))
        try FileManager.default.createSymbolicLink(atPath: dir.url.appendingPathComponent("sys/class/input/event50").path, withDestinationPath: "/tmp")
        guard case .failure(let escape) = sysfs.resolve("/sys/class/input/event50") else {
            Issue.record("a link out of the fixture tree must not be followed")
            return
        }
        #expect(escape.reason.hasPrefix("leads out of the tree"))
    }
}
