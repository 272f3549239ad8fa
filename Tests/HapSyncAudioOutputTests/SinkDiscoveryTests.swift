import Foundation
import HapSyncHapticOutput
import HapSyncLiveTesting
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing
@testable import HapSyncAudioOutput
@testable import HapSyncOutputs

/// The pads and sinks of the recorded fixtures (Tests/Fixtures): each event node as
/// `InputDeviceProbe.list` reports it for the trees of sysfs-dualsense/.
enum RecordedPads {
    /// A node with these ids (bus USB unless said); `rumble` for the pad's own node.
    static func node(_ number: Int, _ name: String, vendor: UInt16 = 0x054c, product: UInt16, bus: UInt16 = 0x03,
                     rumble: Bool) -> InputDeviceInfo {
        InputDeviceInfo(path: "/dev/input/event\(number)", name: name, hasRumble: rumble, effectSlots: rumble ? 16 : 0,
                        id: InputDeviceID(bus: bus, vendor: vendor, product: product), driver: "hid-playstation")
    }

    /// The three nodes hid-playstation makes for a pad: the pad (rumble), motion sensors, touchpad.
    static func pad(from first: Int, _ name: String, product: UInt16, bus: UInt16 = 0x03) -> [InputDeviceInfo] {
        [node(first, name, product: product, bus: bus, rumble: true),
         node(first + 1, name + " Motion Sensors", product: product, bus: bus, rumble: false),
         node(first + 2, name + " Touchpad", product: product, bus: bus, rumble: false)]
    }

    /// dualsense-usb.tree: event16-18.
    static let dualSense = pad(from: 16, "Sony Interactive Entertainment DualSense Wireless Controller", product: 0x0ce6)
    /// dualsense-edge-hub.tree: event20-22.
    static let edge = pad(from: 20, "Sony Interactive Entertainment DualSense Edge Wireless Controller", product: 0x0df2)
    /// dualsense-bluetooth.tree: event24-26, bus Bluetooth.
    static let bluetooth = pad(from: 24, "DualSense Wireless Controller", product: 0x0ce6, bus: 0x05)
    /// dualshock4-usb.tree: event27-29.
    static let dualShock4 = pad(from: 27, "Sony Interactive Entertainment Wireless Controller", product: 0x09cc)
    /// builtin.tree: the keyboard, event3.
    static let keyboard = InputDeviceInfo(path: "/dev/input/event3", name: "AT Translated Set 2 keyboard", hasRumble: false, effectSlots: 0,
                                          id: InputDeviceID(bus: 0x11, vendor: 0x0001, product: 0x0001))

    /// The sinks of a recorded listing (sinks/NAME.txt).
    static func sinks(_ listing: String) throws -> [WaveformOutput.Sink] {
        try DeviceFixtures.sinks(listing).map {
            WaveformOutput.Sink(name: $0.name, description: $0.description, channels: $0.channels, properties: $0.properties)
        }
    }
}

/// A sysfs that answers nothing: every path "permission denied" (what a sandbox that hides /sys
/// gives; root, which these tests may run as, reads past chmod 000).
struct DeniedSysfs: SysfsReading {
    func resolve(_ path: String) -> Result<String, SysfsProblem> { .failure(SysfsProblem(path: path, reason: "permission denied")) }
    func attribute(_ path: String) -> String? { nil }
}

/// A DualSense's sink found by the ids in its properties, PulseAudio's and PipeWire's spellings
/// read alike, the name only a fallback; pads and sinks paired through recorded sysfs trees; and
/// `waveform:auto`'s choice and its errors.
@Suite("DualSense sinks: identification, pairing, waveform:auto")
struct SinkDiscoveryTests {
    let dir: TemporaryDirectory

    init() throws { dir = try TemporaryDirectory("sink-discovery") }

    private func sysfs(_ trees: String...) throws -> SysfsTree {
        try DeviceFixtures.buildSysfs(trees, in: dir.url)
        return SysfsTree(root: dir.path)
    }

    private func choose(_ sinks: [WaveformOutput.Sink], _ devices: [InputDeviceInfo], rumblePad: String? = nil,
                        channels: HapticOutputSpec.WaveformChannels? = nil, sysfs: SysfsReading) -> Result<WaveformAutoSink.Choice, WaveformAutoSink.Failure> {
        Result { () throws(WaveformAutoSink.Failure) in
            try WaveformAutoSink.choose(sinks: .success(sinks), devices: devices, rumblePad: rumblePad, channels: channels, sysfs: sysfs)
        }
    }

    // MARK: - Identification

    /// The same DualSense (card1 on port 4) as PulseAudio and as pipewire-pulse list it: ids
    /// "054c" and "0x054c", sysfs.path without and with "/sys", read to the same fields.
    @Test func pulseAudioAndPipeWireSpellingsReadAlike() throws {
        let pulse = try #require(try RecordedPads.sinks("pulseaudio").first { $0.channels == 4 })
        let pipe = try #require(try RecordedPads.sinks("pipewire").first { $0.name.contains("_DualSense_Wireless") })
        for sink in [pulse, pipe] {
            #expect(sink.vendorID == 0x054c && sink.productID == 0x0ce6 && sink.vendorProduct == "054c:0ce6", "\(sink.name)")
            #expect(sink.bus == "usb" && sink.alsaCard == 1, "\(sink.name)")
            #expect(sink.busPath == "pci-0000:00:14.0-usb-0:4:1.0", "\(sink.name)")
            #expect(sink.sysfsPath == "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0/sound/card1", "\(sink.name)")
            #expect(sink.model?.name == "DualSense" && sink.isDualSense && sink.suggested == "waveform:\(sink.name):rear", "\(sink.name)")
        }
        #expect(pulse.name != pipe.name, "the two servers (and firmwares) name the same sink differently")
    }

    /// Ids decide before the name: a DualShock 4's sink is a "Wireless_Controller" too, and is
    /// not a DualSense; a DualSense Edge is one; a sink without ids falls back to its name.
    @Test func idsDecideBeforeTheName() throws {
        let pulse = try RecordedPads.sinks("pulseaudio")
        let builtin = pulse[0], dualShock4 = pulse[2]
        #expect(dualShock4.nameSuggestsDualSense, "the name alone would take it for one")
        #expect(!dualShock4.isDualSense && dualShock4.model?.name == "DualShock 4" && dualShock4.actuatorModel == nil)
        #expect(!builtin.isDualSense && builtin.model == nil && builtin.vendorProduct == "8086:a348" && builtin.bus == "pci")
        let edge = try #require(try RecordedPads.sinks("pipewire").last)
        #expect(edge.isDualSense && edge.actuatorModel?.name == "DualSense Edge" && edge.alsaCard == 2)
        let unnamed = WaveformOutput.Sink(name: "alsa_output.usb-Sony_Interactive_Entertainment_Wireless_Controller-00.analog-surround-40",
                                          description: "Null Output", channels: 4)
        #expect(unnamed.isDualSense && unnamed.actuatorModel?.name == "DualSense" && unnamed.vendorProduct == nil)
        let otherIDs = WaveformOutput.Sink(name: "alsa_output.usb-DualSense_lookalike", description: "", channels: 4,
                                           properties: ["device.vendor.id": "1234", "device.product.id": "5678"])
        #expect(otherIDs.nameSuggestsDualSense && !otherIDs.isDualSense, "ids that name no DualSense win over the name")
        // The models it looks for are the table's: the ids are written once, in GamepadModel.known.
        #expect(GamepadModel.withVoiceCoilActuators.map(\.idsText) == ["054c:0ce6", "054c:0df2"])
    }

    /// The card number in PipeWire's spellings alone, and values that are not numbers or paths
    /// under /sys: nil, never a crash.
    @Test func otherSpellingsAndBadValuesDegradeToNil() {
        func sink(_ properties: [String: String]) -> WaveformOutput.Sink {
            WaveformOutput.Sink(name: "s", description: "", channels: 2, properties: properties)
        }
        #expect(sink(["api.alsa.card": "7"]).alsaCard == 7)
        #expect(sink(["api.alsa.pcm.card": "8"]).alsaCard == 8)
        #expect(sink(["alsa.card": "one", "api.alsa.card": "2"]).alsaCard == 2)
        #expect(sink(["alsa.card": "-1", "api.alsa.pcm.card": "3"]).alsaCard == 3)
        #expect(sink(["device.vendor.id": "0X054C", "device.product.id": "0ce6"]).vendorProduct == "054c:0ce6")
        let bad = sink(["device.vendor.id": "zz", "device.product.id": "", "sysfs.path": "devices/x", "device.bus": "",
                        "device.bus_path": "", "alsa.card": "-"])
        #expect(bad.vendorID == nil && bad.productID == nil && bad.sysfsPath == nil && bad.bus == nil && bad.busPath == nil && bad.alsaCard == nil)
        #expect(!bad.isDualSense)
    }

    /// `waveform:auto` is the word, as in `evdev:auto`, with or without channels.
    @Test func waveformAutoParsesAsTheWordAuto() {
        #expect(HapticOutputSpec(parsing: "waveform:auto") == .waveform(sink: HapticOutputSpec.auto, channels: nil))
        #expect(HapticOutputSpec(parsing: "waveform:auto:rear") == .waveform(sink: "auto", channels: .rear))
        #expect(HapticOutputSpec(parsing: "waveform:auto:rear")?.description == "waveform:auto:rear")
        #expect(HapticOutputSpec(parsing: "waveform::rear") == nil)
    }

    // MARK: - Pairing

    /// A DualSense on USB pairs with its sink through the card both servers name (card1 on
    /// 1-4): one pair for its three nodes, the rumble one standing for it; the DualShock 4 and
    /// the built-in card pair with nothing.
    @Test(arguments: ["pulseaudio", "pipewire"])
    func aUSBPadPairsWithItsSink(listing: String) throws {
        let sysfs = try sysfs("dualsense-usb", "dualshock4-usb", "builtin")
        let sinks = try RecordedPads.sinks(listing)
        let devices = [RecordedPads.keyboard] + RecordedPads.dualSense + RecordedPads.dualShock4
        let pairs = DualSensePairing.pairs(devices: devices, sinks: sinks, sysfs: sysfs)
        let pair = try #require(pairs.first, "\(pairs)")
        #expect(pair.model.name == "DualSense" && pair.pad?.path == "/dev/input/event16")
        #expect(pair.sink?.name.hasSuffix("Wireless_Controller-00.analog-surround-40") == true && pair.note == nil)
        #expect(pair.usbDevice == "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4")
        // PipeWire's listing has a DualSense Edge too, whose card is not in these trees.
        #expect(pairs.count == (listing == "pipewire" ? 2 : 1), "\(pairs)")
        if listing == "pipewire" {
            #expect(pairs[1].model.name == "DualSense Edge" && pairs[1].pad == nil)
            #expect(pairs[1].note?.hasPrefix("its sound card's USB device is not known (/sys/class/sound/card2/device: not there; ") == true,
                    "\(pairs[1].note ?? "")")
        }
    }

    /// Two pads, each with its sink: the DualSense Edge behind a hub with card2, the DualSense
    /// with card1, whichever order the nodes are listed in.
    @Test func twoPadsEachWithItsOwnSink() throws {
        let sysfs = try sysfs("dualsense-usb", "dualsense-edge-hub")
        let sinks = try RecordedPads.sinks("pipewire")
        for devices in [RecordedPads.edge + RecordedPads.dualSense, RecordedPads.dualSense + RecordedPads.edge] {
            let pairs = DualSensePairing.pairs(devices: devices, sinks: sinks, sysfs: sysfs)
            #expect(pairs.count == 2, "\(pairs)")
            for pair in pairs {
                let card = pair.pad?.path == "/dev/input/event20" ? 2 : pair.pad?.path == "/dev/input/event16" ? 1 : nil
                #expect(card != nil && pair.sink?.alsaCard == card && pair.note == nil, "\(pair)")
            }
        }
    }

    /// A DualSense on Bluetooth: one pad (its three nodes share the HID device under hci0), no
    /// sink, and the note says why; the USB adapter above it is never taken for it.
    @Test func aPadOnBluetoothHasNoSink() throws {
        let sysfs = try sysfs("dualsense-bluetooth", "builtin")
        let sinks = try RecordedPads.sinks("pulseaudio").filter { !$0.isDualSense }
        let pairs = DualSensePairing.pairs(devices: RecordedPads.bluetooth, sinks: sinks, sysfs: sysfs)
        #expect(pairs == [DualSensePair(model: GamepadModel.withVoiceCoilActuators[0], pad: RecordedPads.bluetooth[0], sink: nil, usbDevice: nil,
                                        note: "on Bluetooth: its actuators are a USB sound card, reachable as audio over a USB cable only")])
    }

    /// A pad whose card shows no sink (its profile off), and a sink whose pad has no node (no
    /// driver bound): each alone, with the USB device in its note; a uhid pad has no sound card.
    @Test func aPadWithoutSinkAndASinkWithoutPad() throws {
        let sysfs = try sysfs("dualsense-usb", "builtin")
        let usb = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4"
        let alone = DualSensePairing.pairs(devices: RecordedPads.dualSense, sinks: [], sysfs: sysfs)
        #expect(alone.count == 1 && alone[0].sink == nil && alone[0].usbDevice == usb)
        #expect(alone[0].note == "no sink of the sound server is on its USB device (\(usb)): is its card's profile off? ('pactl list cards')")
        let noServer = DualSensePairing.pairs(devices: RecordedPads.dualSense, sinks: nil, sysfs: sysfs)
        #expect(noServer.first?.note == "no sound server answers, so its sink is not known")
        let sinkOnly = DualSensePairing.pairs(devices: [RecordedPads.keyboard], sinks: try RecordedPads.sinks("pulseaudio"), sysfs: sysfs)
        #expect(sinkOnly.count == 1 && sinkOnly[0].pad == nil && sinkOnly[0].sink?.alsaCard == 1)
        #expect(sinkOnly[0].note?.hasPrefix("no evdev node is on its USB device (\(usb))") == true)
        let uhid = RecordedPads.node(40, "Sony Interactive Entertainment DualSense Wireless Controller", product: 0x0ce6, rumble: true)
        let virtual = DualSensePairing.pairs(devices: [uhid], sinks: [], sysfs: sysfs)
        #expect(virtual.first?.note == "a virtual device (uhid or uinput), on no USB device: it has no sound card")
    }

    /// With no card number or sysfs path to follow, the sink's device.bus_path (udev's ID_PATH)
    /// pairs it with the pad on that USB port, and with no other.
    @Test func theBusPathPairsWhenTheCardCannotBeFollowed() throws {
        let sysfs = try sysfs("dualsense-usb")
        func sink(busPath: String) -> WaveformOutput.Sink {
            WaveformOutput.Sink(name: "dualsense-by-path", description: "", channels: 4,
                                properties: ["device.vendor.id": "054c", "device.product.id": "0ce6", "device.bus_path": busPath])
        }
        let same = DualSensePairing.pairs(devices: RecordedPads.dualSense, sinks: [sink(busPath: "pci-0000:00:14.0-usb-0:4:1.0")], sysfs: sysfs)
        #expect(same.count == 1 && same[0].sink?.name == "dualsense-by-path" && same[0].pad?.path == "/dev/input/event16")
        for other in ["pci-0000:00:14.0-usb-0:3:1.0", "pci-0000:00:14.0-usb-0:4.1:1.0", "pci-0000:00:14.1-usb-0:4:1.0"] {
            let pairs = DualSensePairing.pairs(devices: RecordedPads.dualSense, sinks: [sink(busPath: other)], sysfs: sysfs)
            #expect(pairs.count == 2 && pairs.allSatisfy { $0.note != nil }, "\(other): \(pairs)")
        }
    }

    /// A pad whose USB device above is not itself (its ids differ: a receiver) is not paired
    /// through it.
    @Test func aUSBDeviceWithOtherIDsIsNotThePad() throws {
        let sysfs = try sysfs("dualshock4-usb")
        let claimed = RecordedPads.node(27, "a DualSense behind a receiver", product: 0x0ce6, rumble: true)
        let pairs = DualSensePairing.pairs(devices: [claimed], sinks: [], sysfs: sysfs)
        #expect(pairs.first?.note?.contains("054c:09cc at /sys/devices/pci0000:00/0000:00:14.0/usb1/1-3, is not the pad itself") == true,
                "\(pairs)")
    }

    /// Broken links and a sysfs that answers nothing: every pad and sink still listed, each with
    /// a note naming what could not be read.
    @Test func brokenLinksAndUnreadableSysfsDegradeToNotes() throws {
        let sysfs = try sysfs("dualsense-usb")
        try FileManager.default.removeItem(at: dir.url.appendingPathComponent("sys/devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0/sound"))
        var properties = try #require(try DeviceFixtures.sinks("pulseaudio").first { $0.channels == 4 }).properties
        properties["device.bus_path"] = nil
        let sink = WaveformOutput.Sink(name: "dualsense", description: "", channels: 4, properties: properties)
        let broken = DualSensePairing.pairs(devices: RecordedPads.dualSense, sinks: [sink], sysfs: sysfs)
        #expect(broken.count == 2 && broken[0].sink == nil && broken[1].pad == nil, "\(broken)")
        #expect(broken[1].note == "its sound card's USB device is not known (/sys/class/sound/card1/device: a broken link: /sys/class/sound/card1 points to nothing; "
                    + "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0/sound/card1: not there), so no pad can be paired with it")
        let denied = DualSensePairing.pairs(devices: RecordedPads.dualSense, sinks: [sink], sysfs: DeniedSysfs())
        #expect(denied.count == 2, "one pad (the rumble node: the others cannot be told to be its) and the sink: \(denied)")
        #expect(denied[0].pad?.path == "/dev/input/event16"
                    && denied[0].note == "its USB device is not known (/sys/class/input/event16/device/device: permission denied), so no sink can be paired with it")
        #expect(denied[1].note?.contains("/sys/class/sound/card1/device: permission denied") == true)
    }

    // MARK: - waveform:auto

    /// One DualSense sink: that one, with the pad it pairs with; the channels left to the sink's
    /// layout (rear on its four).
    @Test func theOneDualSenseSinkIsChosen() throws {
        let sysfs = try sysfs("dualsense-usb", "dualshock4-usb", "builtin")
        let choice = try choose(try RecordedPads.sinks("pulseaudio"), [RecordedPads.keyboard] + RecordedPads.dualShock4 + RecordedPads.dualSense,
                                sysfs: sysfs).get()
        #expect(choice.sink.name == "alsa_output.usb-Sony_Interactive_Entertainment_Wireless_Controller-00.analog-surround-40")
        #expect(choice.channels == nil && choice.pad?.path == "/dev/input/event16" && choice.reason == "the only DualSense sink")
    }

    /// Two: the one paired with the rumble pad, the one given (evdev:PATH) or evdev:auto's (the
    /// first rumble node listed).
    @Test func ofSeveralTheRumblePadsOwnIsChosen() throws {
        let sysfs = try sysfs("dualsense-usb", "dualsense-edge-hub")
        let sinks = try RecordedPads.sinks("pipewire")
        let edgeFirst = try choose(sinks, RecordedPads.edge + RecordedPads.dualSense, sysfs: sysfs).get()
        #expect(edgeFirst.sink.alsaCard == 2 && edgeFirst.pad?.path == "/dev/input/event20")
        #expect(edgeFirst.reason == "the only DualSense sink paired with /dev/input/event20, the rumble pad")
        let named = try choose(sinks, RecordedPads.edge + RecordedPads.dualSense, rumblePad: "/dev/input/event16", sysfs: sysfs).get()
        #expect(named.sink.alsaCard == 1 && named.pad?.path == "/dev/input/event16")
        let dualSenseFirst = try choose(sinks, RecordedPads.dualSense + RecordedPads.edge, sysfs: sysfs).get()
        #expect(dualSenseFirst.sink.alsaCard == 1)
    }

    /// Two that nothing tells apart (no pairing: sysfs has neither pad): an error naming both,
    /// and what to do; unless one alone has four channels.
    @Test func severalUnpairedSinksFailNamingThem() throws {
        let sysfs = try sysfs("builtin")
        let sinks = try RecordedPads.sinks("pipewire")
        guard case .failure(let failure) = choose(sinks, [], sysfs: sysfs) else {
            Issue.record("two DualSense sinks and no pad: nothing to choose by")
            return
        }
        #expect(failure.description == "2 DualSense sinks, and nothing tells which to play on: "
                    + "alsa_output.usb-Sony_Interactive_Entertainment_DualSense_Wireless_Controller-00.analog-surround-40 (DualSense, 4 channels, no pad paired); "
                    + "alsa_output.usb-Sony_Interactive_Entertainment_DualSense_Edge_Wireless_Controller-00.analog-surround-40 (DualSense Edge, 4 channels, no pad paired). "
                    + "Name one with --haptics waveform:SINK:rear, or give its pad with --haptics evdev:PATH ('hapsync devices' shows the pairs)")
        var stereo = sinks
        stereo[2].channels = 2
        let quad = try choose(stereo, [], sysfs: sysfs).get()
        #expect(quad.sink.alsaCard == 1 && quad.reason == "the only DualSense sink of four channels")
    }

    /// None: what was looked for (the table's ids), among how many sinks, a pad on Bluetooth
    /// named with why it has none, and what to do.
    @Test func noneFailsSayingWhatItLookedFor() throws {
        let sysfs = try sysfs("dualsense-bluetooth", "builtin")
        let sinks = try RecordedPads.sinks("pulseaudio").filter { !$0.isDualSense }
        guard case .failure(let failure) = choose(sinks, RecordedPads.bluetooth, sysfs: sysfs) else {
            Issue.record("no DualSense sink: nothing to choose")
            return
        }
        #expect(failure.description == "no DualSense sink on the sound server: looked among its 2 sinks for one whose device.vendor.id and "
                    + "device.product.id are a DualSense's (054c:0ce6) or a DualSense Edge's (054c:0df2), or, without ids, whose name says "
                    + "DualSense or Wireless_Controller. /dev/input/event24 is a DualSense without a sink: on Bluetooth: its actuators are a USB "
                    + "sound card, reachable as audio over a USB cable only. A DualSense's actuators are a sound card on USB: plug it in with a "
                    + "cable; 'hapsync devices' lists the sinks (name one with --haptics waveform:SINK:rear)")
        guard case .failure(let noServer) = Result(catching: { () throws(WaveformAutoSink.Failure) in
            try WaveformAutoSink.choose(sinks: .failure(PulseAudioOutput.PulseError.noServer("Connection refused")), devices: [],
                                        rumblePad: nil, channels: nil, sysfs: sysfs)
        }) else {
            Issue.record("no server: nothing to choose")
            return
        }
        #expect(noServer.description == "no sound server answers (Connection refused), so there is no DualSense sink to play waveform haptics on; "
                    + "start one (PipeWire or PulseAudio), or check PULSE_SERVER")
    }

    /// A DualSense sink on a stereo profile has no rear channels: an error saying how to choose
    /// the 4-channel profile, unless channels other than rear were asked for.
    @Test func aStereoProfileHasNoRearChannels() throws {
        let sysfs = try sysfs("dualsense-usb")
        var sink = try #require(try RecordedPads.sinks("pulseaudio").first { $0.isDualSense })
        sink.channels = 2
        for channels: HapticOutputSpec.WaveformChannels? in [nil, .rear] {
            guard case .failure(let failure) = choose([sink], RecordedPads.dualSense, channels: channels, sysfs: sysfs) else {
                Issue.record("\(String(describing: channels)) on 2 channels would drive the pad's speaker")
                continue
            }
            #expect(failure.description == "\(sink.name), the DualSense's sink, has 2 channels: its card's profile is not the 4-channel one, "
                        + "so there are no rear channels for the actuators. Choose its Analog Surround 4.0 profile ('pactl list cards' names it; "
                        + "'pactl set-card-profile CARD PROFILE')")
        }
        #expect(try choose([sink], RecordedPads.dualSense, channels: .all, sysfs: sysfs).get().channels == .all)
    }

    /// Through `HapticOutputRequest`, as `play` and the libraries ask: a failure is the request's
    /// one error type, with the text above.
    @Test func aRequestForWaveformAutoSaysWhyItFailed() {
        var request = HapticOutputRequest()
        request.waveform = (HapticOutputSpec.auto, nil)
        let error = #expect(throws: EvdevError.self) {
            _ = try request.makeBackend(audio: nil, environment: ["PULSE_SERVER": "unix:/nowhere/native"])
        }
        guard case .waveformAutoSink(let text)? = error else {
            Issue.record("\(String(describing: error)) is not waveform:auto's")
            return
        }
        #expect(text.hasPrefix("no sound server answers (") && error?.description == text)
    }
}

/// `waveform:auto` against the server the tests run with (PulseAudio under .ci/with-pulse,
/// pipewire-pulse under .ci/with-pipewire, which gives a sink's properties its own way): a null
/// sink given a DualSense's properties (sink_properties) reads back with its ids, bus path and
/// card, and a request for `waveform:auto` plays on it. Not on a private server: two PulseAudio
/// daemons started at once on one D-Bus session (with-pipewire's) refuse each other.
@Suite("DualSense sinks on the sound server")
struct LiveSinkDiscoveryTests {
    @Test(.needsPulseAudio) func aDualSenseSinksPropertiesReadBackAndWaveformAutoChoosesIt() throws {
        let address = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        let pactl = ["pactl"] + (address.map { ["-s", $0] } ?? [])
        let name = "hapsync-dualsense-\(UUID().uuidString.prefix(8))"
        let module = SoundTools.run(pactl + [
            "load-module", "module-null-sink", "sink_name=\(name)", "channels=4", "channel_map=front-left,front-right,rear-left,rear-right",
            "sink_properties=\"device.vendor.id=0x054c device.product.id=0x0ce6 device.bus=usb api.alsa.card=9 "
                + "device.bus_path=pci-0000:00:14.0-usb-0:9:1.0\"",
        ])
        try #require(Int(module) != nil, "pactl load-module: \(module)")
        defer { _ = SoundTools.run(pactl + ["unload-module", module]) }
        // pipewire-pulse adds the node a moment after it answers.
        var sinks: [WaveformOutput.Sink] = []
        for _ in 0..<50 {
            sinks = try WaveformOutput.sinks(server: address)
            if sinks.contains(where: { $0.name == name }) { break }
            usleep(50_000)
        }
        let sink = try #require(sinks.first { $0.name == name }, "\(sinks.map(\.name))")
        #expect(sink.vendorProduct == "054c:0ce6" && sink.bus == "usb" && sink.alsaCard == 9 && sink.channels == 4)
        #expect(sink.busPath == "pci-0000:00:14.0-usb-0:9:1.0" && sink.isDualSense && sink.model?.name == "DualSense")

        var request = HapticOutputRequest()
        request.waveform = (HapticOutputSpec.auto, nil)
        // Another test's DualSense sink on the same server at the same time makes two.
        let others = sinks.filter { $0.isDualSense && $0.name != name }
        do throws(EvdevError) {
            let made = try request.makeBackend(audio: nil, environment: address.map { ["PULSE_SERVER": $0] } ?? [:])
            #expect(others.isEmpty && made.waveform?.configuration.sink == name && made.waveform?.configuration.channels == nil)
            #expect(made.chosenSink?.reason == "the only DualSense sink")
        } catch {
            #expect(!others.isEmpty && error.description.contains("\(name) (DualSense, 4 channels, no pad paired)"), "\(error)")
        }
    }
}
