import Foundation
import HapSyncHapticOutput
import HapSyncPulseAudio
import Synchronization
import Testing
@testable import HapSyncCLI

/// `hapsync devices --json` holds what its text lists: the input devices and the sound server's
/// sinks (before, the sinks were in the text only).
@Suite("hapsync devices --json")
struct DevicesJSONTests {
    static let sinks = [
        WaveformOutput.Sink(name: "hapsync", description: "Null Output", channels: 2),
        WaveformOutput.Sink(name: "alsa_output.usb-Sony_Interactive_Entertainment_Wireless_Controller-00.analog-surround-40",
                            description: "DualSense wireless controller (PS5) Analog Surround 4.0", channels: 4),
    ]

    /// What `list` printed.
    private func listed(json: Bool, sinks: Result<[WaveformOutput.Sink], any Error>) -> String {
        let out = Mutex("")
        let console = HapSyncCLI.Console(out: { s in out.withLock { $0 += s } }, err: { _ in })
        DevicesCommand.list(json: json, console: console, sinks: sinks)
        return out.withLock { $0 }
    }

    @Test func theJSONListsTheSinksTheTextLists() throws {
        let json = listed(json: true, sinks: .success(Self.sinks))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
        #expect(object["devices"] is [Any])
        let sinks = try #require(object["sinks"] as? [[String: Any]], "\(json)")
        #expect(sinks.map { $0["name"] as? String } == Self.sinks.map(\.name))
        #expect(sinks.map { $0["channels"] as? Int } == [2, 4])
        #expect(sinks.map { $0["dualsense"] as? Bool } == [false, true])
        #expect(sinks.last?["haptics"] as? String == "waveform:\(Self.sinks[1].name):rear")
        let text = listed(json: false, sinks: .success(Self.sinks))
        for sink in Self.sinks { #expect(text.contains(sink.name), "the text lists \(sink.name) too") }
    }

    @Test func noServerIsNullWithItsReason() throws {
        struct NoServer: Error, CustomStringConvertible { var description: String { "connection refused" } }
        let json = listed(json: true, sinks: .failure(NoServer()))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
        #expect(object["sinks"] is NSNull)
        #expect((object["sinksProblem"] as? String)?.contains("connection refused") == true)
    }
}

/// The line `hapsync devices` gives each pad: model, ids, bus and driver, and a hint when a known
/// pad is served by a driver without rumble.
@Suite("hapsync devices: model and driver")
struct DevicesIdentityTests {
    @Test func thePadsLineNamesModelAndDriver() {
        let pad = InputDeviceInfo(path: "/dev/input/event5", name: "Sony Interactive Entertainment DualSense Wireless Controller",
                                  hasRumble: true, effectSlots: 16, id: InputDeviceID(bus: 0x03, vendor: 0x054c, product: 0x0ce6),
                                  driver: "hid-playstation")
        #expect(DevicesCommand.identity(pad) == "/dev/input/event5: DualSense (054c:0ce6, USB), driver hid-playstation\n"
                    + "  rumble: " + PadRumble.of(driver: "hid-playstation").note + "\n")
        let pro = InputDeviceInfo(path: "/dev/input/event7", name: "Nintendo Switch Pro Controller", hasRumble: true, effectSlots: 16,
                                  id: InputDeviceID(bus: 0x03, vendor: 0x057e, product: 0x2009), driver: "hid-nintendo")
        #expect(DevicesCommand.identity(pro).hasPrefix("/dev/input/event7: Switch Pro Controller (057e:2009, USB), driver hid-nintendo\n  rumble: "))
        #expect(DevicesCommand.identity(pro).contains("HapSync plays the level on both grips"))
        var generic = pad
        generic.driver = "hid-generic"
        #expect(DevicesCommand.identity(generic).contains("driver hid-generic (hid-playstation is the one with rumble for it)"))
        #expect(!DevicesCommand.identity(generic).contains("rumble: "), "hid-generic plays no rumble: no note")
        let fake = InputDeviceInfo(path: "/dev/input/event1", name: "HapSync Fake Rumble Pad", hasRumble: true, effectSlots: 16,
                                   id: InputDeviceID(bus: 0x06, vendor: 0x1209, product: 0x0001))
        #expect(DevicesCommand.identity(fake)
                    == "/dev/input/event1: 1209:0001, virtual, a model HapSync does not know, no kernel driver of its own (uinput or virtual)\n")
    }
}
