import Foundation
import Glibc
import HapSyncHapticOutput
import HapSyncLiveTesting
import HapSyncPulseAudio
import HapSyncSystem
import HapSyncTestSupport
import Synchronization
import Testing
@testable import HapSyncCLI

/// Event nodes that answer EVIOCGNAME, EVIOCGBIT(EV_FF), EVIOCGEFFECTS and EVIOCGID as the pads
/// of Tests/Fixtures/sysfs-dualsense would, behind the evdev chokepoint.
final class RecordedEvdev: EvdevSystem {
    struct Node {
        var name: String
        var rumble: Bool
        var bus: UInt16
        var vendor: UInt16
        var product: UInt16
    }

    private let nodes: [String: Node]
    private var opened: [Int32: String] = [:]

    init(_ nodes: [String: Node]) { self.nodes = nodes }

    /// A pad's three nodes from `first` (the pad with rumble, motion sensors, touchpad).
    static func pad(from first: Int, _ name: String, product: UInt16, bus: UInt16 = 0x03) -> [String: Node] {
        ["/dev/input/event\(first)": Node(name: name, rumble: true, bus: bus, vendor: 0x054c, product: product),
         "/dev/input/event\(first + 1)": Node(name: name + " Motion Sensors", rumble: false, bus: bus, vendor: 0x054c, product: product),
         "/dev/input/event\(first + 2)": Node(name: name + " Touchpad", rumble: false, bus: bus, vendor: 0x054c, product: product)]
    }

    static let keyboard = ["/dev/input/event3": Node(name: "AT Translated Set 2 keyboard", rumble: false, bus: 0x11, vendor: 1, product: 1)]

    func open(_ path: String, readWrite: Bool) -> Result<Int32, SystemErrno> {
        guard nodes[path] != nil else { return .failure(SystemErrno(ENOENT)) }
        let fd = Int32(opened.count + 3)
        opened[fd] = path
        return .success(fd)
    }

    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Result<Int32, SystemErrno> {
        guard let node = opened[fd].flatMap({ nodes[$0] }) else { return .failure(SystemErrno(EBADF)) }
        switch request {
        case EvdevABI.EVIOCGNAME:
            let bytes = Array(node.name.utf8) + [0]
            argument.copyMemory(from: bytes, byteCount: bytes.count)
        case EvdevABI.EVIOCGBIT_FF:
            if node.rumble { argument.assumingMemoryBound(to: UInt8.self)[Int(EvdevABI.FF_RUMBLE) / 8] |= 1 << (EvdevABI.FF_RUMBLE % 8) }
        case EvdevABI.EVIOCGEFFECTS:
            argument.assumingMemoryBound(to: Int32.self).pointee = node.rumble ? 16 : 0
        case EvdevABI.EVIOCGID:
            // struct input_id: bustype, vendor, product, version.
            let id = argument.assumingMemoryBound(to: UInt16.self)
            (id[0], id[1], id[2], id[3]) = (node.bus, node.vendor, node.product, 0x8111)
        default:
            return .failure(SystemErrno(ENOTTY))
        }
        return .success(0)
    }

    func ioctl(_ fd: Int32, _ request: UInt, value: Int32) -> Result<Int32, SystemErrno> { .failure(SystemErrno(ENOTTY)) }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, SystemErrno> { .success(bytes.count) }
    func close(_ fd: Int32) { opened[fd] = nil }
    func eventDevicePaths() -> [String] { nodes.keys.sorted { Int($0.dropFirst(16))! < Int($1.dropFirst(16))! } }
    func driver(ofEventDevice path: String) -> String? { nodes[path]?.vendor == 0x054c ? "hid-playstation" : nil }
}

/// `hapsync devices` pairs each DualSense's event node with its sink (recorded sysfs trees and
/// `pactl list sinks` listings, Tests/Fixtures), in its text and in `--json`, and says which sink
/// `waveform:auto` plays on, or why none.
@Suite("hapsync devices: DualSense pairs")
struct DevicesPairingTests {
    let dir: TemporaryDirectory

    init() throws { dir = try TemporaryDirectory("devices-pairs") }

    static let dualSenseSink = "alsa_output.usb-Sony_Interactive_Entertainment_Wireless_Controller-00.analog-surround-40"

    private func sinks(_ listing: String) throws -> [WaveformOutput.Sink] {
        try DeviceFixtures.sinks(listing).map {
            WaveformOutput.Sink(name: $0.name, description: $0.description, channels: $0.channels, properties: $0.properties)
        }
    }

    /// What `list` printed for these nodes, sinks and trees.
    private func listed(json: Bool, nodes: [String: RecordedEvdev.Node], sinks: Result<[WaveformOutput.Sink], any Error>,
                        trees: [String]) throws -> String {
        try DeviceFixtures.buildSysfs(trees, in: dir.url)
        let out = Mutex("")
        let console = HapSyncCLI.Console(out: { s in out.withLock { $0 += s } }, err: { _ in })
        DevicesCommand.list(json: json, console: console, system: RecordedEvdev(nodes), sinks: sinks, sysfs: SysfsTree(root: dir.path))
        return out.withLock { $0 }
    }

    private static let usbAndBluetooth = RecordedEvdev.keyboard
        .merging(RecordedEvdev.pad(from: 16, "Sony Interactive Entertainment DualSense Wireless Controller", product: 0x0ce6)) { $1 }
        .merging(RecordedEvdev.pad(from: 24, "DualSense Wireless Controller", product: 0x0ce6, bus: 0x05)) { $1 }

    /// A DualSense on USB with its sink, one on Bluetooth without: a line each, and waveform:auto
    /// on the USB one's sink; the DualShock 4's sink, a "Wireless_Controller" too, is no DualSense.
    @Test func theTextPairsEachDualSense() throws {
        let text = try listed(json: false, nodes: Self.usbAndBluetooth, sinks: .success(try sinks("pulseaudio")),
                              trees: ["dualsense-usb", "dualsense-bluetooth", "dualshock4-usb", "builtin"])
        #expect(text.contains("\nDualSense: /dev/input/event16 + sink \(Self.dualSenseSink) (rear channels)\n"), "\(text)")
        #expect(text.contains("\nDualSense: /dev/input/event24, no sink: on Bluetooth: its actuators are a USB sound card, "
                                + "reachable as audio over a USB cable only\n"), "\(text)")
        #expect(!text.contains("/dev/input/event17 +") && !text.contains("DualSense: /dev/input/event25"), "a pad's other nodes are not pads")
        #expect(text.hasSuffix("\nwaveform:auto plays on \(Self.dualSenseSink) (the only DualSense sink)\n"), "\(text)")
        let dualShock4 = "alsa_output.usb-Sony_Interactive_Entertainment_Wireless_Controller-00.analog-stereo.2"
        #expect(text.contains(" waveform:\(dualShock4):all (a shaker, say)\n"), "its ids name a DualShock 4: \(text)")
        #expect(text.contains("a DualSense: waveform:\(Self.dualSenseSink):rear\n"))
    }

    /// The same in `--json`: "pairs", each sink's model, ids, card and paired pad, and
    /// "waveformAuto".
    @Test func theJSONHasThePairs() throws {
        let json = try listed(json: true, nodes: Self.usbAndBluetooth, sinks: .success(try sinks("pulseaudio")),
                              trees: ["dualsense-usb", "dualsense-bluetooth", "dualshock4-usb", "builtin"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
        let pairs = try #require(object["pairs"] as? [[String: Any]], "\(json)")
        #expect(pairs.count == 2)
        #expect(pairs[0]["model"] as? String == "DualSense" && pairs[0]["pad"] as? String == "/dev/input/event16")
        #expect(pairs[0]["sink"] as? String == Self.dualSenseSink && pairs[0]["haptics"] as? String == "waveform:\(Self.dualSenseSink):rear")
        #expect(pairs[0]["usbDevice"] as? String == "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4" && pairs[0]["note"] is NSNull)
        #expect(pairs[1]["pad"] as? String == "/dev/input/event24" && pairs[1]["sink"] is NSNull && pairs[1]["usbDevice"] is NSNull)
        #expect((pairs[1]["note"] as? String)?.hasPrefix("on Bluetooth") == true)
        let sinks = try #require(object["sinks"] as? [[String: Any]])
        #expect(sinks.map { $0["model"] as? String } == [nil, "DualSense", "DualShock 4"])
        #expect(sinks.map { $0["dualsense"] as? Bool } == [false, true, false])
        #expect(sinks.map { $0["vendorProduct"] as? String } == ["8086:a348", "054c:0ce6", "054c:09cc"])
        #expect(sinks.map { $0["card"] as? Int } == [0, 1, 3] && sinks.map { $0["bus"] as? String } == ["pci", "usb", "usb"])
        #expect(sinks[1]["pad"] as? String == "/dev/input/event16" && sinks[0]["pad"] is NSNull && sinks[2]["pad"] is NSNull)
        #expect(object["waveformAuto"] as? String == Self.dualSenseSink && object["waveformAutoProblem"] == nil)
    }

    /// A DualSense whose card gives no sink: its line says so, and waveform:auto why it has
    /// nothing; with no DualSense at all, one short line; with no server, the pads' lines and
    /// no waveform:auto line (the sinks' line already says no server answers).
    @Test func whatIsMissingIsSaid() throws {
        let builtinOnly = try sinks("pulseaudio").filter { !$0.name.hasPrefix("alsa_output.usb") }
        let pad = RecordedEvdev.pad(from: 16, "Sony Interactive Entertainment DualSense Wireless Controller", product: 0x0ce6)
        let text = try listed(json: false, nodes: pad, sinks: .success(builtinOnly), trees: ["dualsense-usb", "builtin"])
        #expect(text.contains("\nDualSense: /dev/input/event16, no sink: no sink of the sound server is on its USB device "
                                + "(/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4): is its card's profile off? ('pactl list cards')\n"), "\(text)")
        #expect(text.contains("\nwaveform:auto has nothing to play on: no DualSense sink on the sound server: looked among its 1 sink for one"), "\(text)")
        let none = try listed(json: false, nodes: RecordedEvdev.keyboard, sinks: .success(builtinOnly), trees: [])
        #expect(none.hasSuffix("\nno DualSense sink here; waveform:auto has nothing to play on\n"), "\(none)")
        struct NoServer: Error, CustomStringConvertible { var description: String { "connection refused" } }
        let noServer = try listed(json: false, nodes: pad, sinks: .failure(NoServer()), trees: [])
        #expect(noServer.hasSuffix("\nno sound server answers: audio sinks for waveform haptics not listed\n\n"
                                    + "DualSense: /dev/input/event16, no sink: no sound server answers, so its sink is not known\n"), "\(noServer)")
        let json = try listed(json: true, nodes: pad, sinks: .failure(NoServer()), trees: [])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
        #expect(object["waveformAuto"] is NSNull && (object["waveformAutoProblem"] as? String)?.hasPrefix("no sound server answers (connection refused)") == true)
        #expect((object["pairs"] as? [[String: Any]])?.first?["pad"] as? String == "/dev/input/event16")
    }

    /// The built binary, on the server the tests run with given a null sink with a DualSense
    /// Edge's properties (this machine's own /dev/input and /sys): the sink is one, and
    /// waveform:auto's (unless another test's DualSense sink is there at the same time).
    @Test(.needsPulseAudio) func theBinaryListsTheServersDualSenseSink() throws {
        let address = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        let name = "hapsync-edge-\(UUID().uuidString.prefix(8))"
        let connection = try PulseConnection(clientName: "HapSync test", server: address, threadName: "hapsync-test")
        defer { connection.close() }
        let module = try connection.withLock { () throws(PulseAudioOutput.PulseError) in
            try connection.loadModule("module-null-sink", arguments: "sink_name=\(name) channels=4 channel_map=front-left,front-right,rear-left,rear-right "
                                          + "sink_properties=\"device.vendor.id=054c device.product.id=0df2 device.bus=usb\"")
        }
        defer { _ = connection.withLock { connection.unloadModule(module) } }
        var object: [String: Any] = [:]
        var sink: [String: Any]?
        for _ in 0..<50 where sink == nil {
            let run = try BinaryTests.run(["devices", "--json"])
            #expect(run.status == 0, "\(run.err)")
            object = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any], "\(run.out)")
            sink = (object["sinks"] as? [[String: Any]])?.first { $0["name"] as? String == name }
            if sink == nil { usleep(50_000) }
        }
        let found = try #require(sink, "pipewire-pulse adds the node a moment after it loads it: \(object)")
        #expect(found["model"] as? String == "DualSense Edge" && found["dualsense"] as? Bool == true && found["vendorProduct"] as? String == "054c:0df2")
        let pair = try #require((object["pairs"] as? [[String: Any]])?.first { $0["sink"] as? String == name }, "\(object)")
        #expect(pair["model"] as? String == "DualSense Edge" && pair["pad"] is NSNull)
        #expect((pair["note"] as? String)?.contains("the sound server gave neither its ALSA card nor its sysfs path") == true)
        let dualSenses = (object["sinks"] as? [[String: Any]])?.filter { $0["dualsense"] as? Bool == true }.count ?? 0
        if dualSenses == 1 {
            #expect(object["waveformAuto"] as? String == name, "\(object)")
        } else {
            #expect((object["waveformAutoProblem"] as? String)?.contains(name) == true, "\(object)")
        }
    }
}

/// `hapsync play --haptics waveform:auto` with nothing to find: the error says why and what to
/// do, exit status 1, before anything plays.
@Suite("hapsync play --haptics waveform:auto")
struct PlayWaveformAutoTests {
    @Test func noServerToLookOnIsAnErrorSayingSo() throws {
        let taps = packageRoot.appendingPathComponent("Assets/taps.ahap").path
        let run = try BinaryTests.run(["play", "--audio", "none", "--haptics", "waveform:auto", taps],
                                      environment: ["PULSE_SERVER": "unix:/nonexistent/hapsync/native"])
        #expect(run.status == 1 && run.out.isEmpty, "\(run.out)\(run.err)")
        #expect(run.err.hasSuffix("\nerror: no sound server answers (Connection refused), so there is no DualSense sink to play waveform "
                                  + "haptics on; start one (PipeWire or PulseAudio), or check PULSE_SERVER\n"), "\(run.err)")
    }
}
