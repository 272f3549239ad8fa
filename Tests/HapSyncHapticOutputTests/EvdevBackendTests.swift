import CLinuxInput
import Glibc
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapSyncSystem
import HapSyncTestSupport
import Synchronization
import Testing
@testable import HapSyncHapticOutput

func level(_ i: Float, _ s: Float) -> OutputCommand {
    OutputCommand(scheduled: 0, released: 0, player: 1, kind: .level, intensity: i, sharpness: s, patternTime: 0)
}
func tap(_ i: Float, _ s: Float) -> OutputCommand {
    OutputCommand(scheduled: 0, released: 0, player: 1, kind: .transient, intensity: i, sharpness: s, patternTime: 0)
}
let ms: UInt64 = 1_000_000

/// Expected magnitudes are worked out from the mapping's formula (docs/devices.md table):
/// level = 0.10 + 0.90 × I^0.7, strong = level × cos(S·π/2), weak = level × sin(S·π/2), × 65535.
@Suite("evdev backend against a mock device")
struct EvdevBackendTests {
    func opened(_ mock: MockEvdevSystem = MockEvdevSystem(), _ configure: (inout EvdevBackend.Configuration) -> Void = { _ in }) throws -> (EvdevBackend, MockEvdevSystem) {
        var config = EvdevBackend.Configuration(path: "/dev/input/event1")
        configure(&config)
        let backend = EvdevBackend(configuration: config, system: mock)
        try backend.open()
        return (backend, mock)
    }

    @Test func kernelABIFacts() {
        #expect(EvdevABI.inputEventSize == 24)
        #expect(EvdevABI.ffEffectSize == 48)
        #expect(EvdevABI.EVIOCSFF == 0x4030_4580)
        #expect(EvdevABI.EVIOCRMFF == 0x4004_4581)
        #expect(EvdevABI.EVIOCGEFFECTS == 0x8004_4584)
        #expect(EvdevABI.EVIOCGBIT_FF == 0x8010_4535)
    }

    @Test func mappingTable() {
        let m = RumbleMapping.standard.map
        #expect(m(0, 0.5) == (0, 0))
        #expect(m(1, 0) == (65535, 0))
        #expect(m(1, 1) == (0, 65535))
        #expect(m(1, 0.5) == (46340, 46340))
        #expect(m(0.5, 0) == (42861, 0))
        #expect(m(0.25, 0.25) == (26703, 11061))
        #expect(m(0.1, 0.75) == (7011, 16927))
        #expect(m(0.0005, 0) == (0, 0), "below 0.001 the motors are off")
    }

    @Test func opensAndChecksCapabilities() throws {
        let (backend, mock) = try opened()
        #expect(mock.take() == [.open("/dev/input/event1", readWrite: true), .getName, .getFFBits, .getEffects])
        #expect(backend.deviceName == "Mock Rumble Pad" && backend.effectSlots == 16)
    }

    @Test func uploadsOnceThenUpdatesInPlace() throws {
        let (backend, mock) = try opened()
        _ = mock.take()
        try backend.apply(level(0.5, 0), appliedAt: 100 * ms)
        #expect(mock.take() == [.upload(id: -1, strong: 42861, weak: 0, length: 250), .play(code: 3, value: 1)])
        try backend.apply(level(1, 0.5), appliedAt: 120 * ms)
        #expect(mock.take() == [.upload(id: 3, strong: 46340, weak: 46340, length: 250), .play(code: 3, value: 1)], "same id: updated in place")
        try backend.apply(level(1, 0.5), appliedAt: 140 * ms)
        #expect(mock.take().isEmpty, "nothing changed, nothing sent")
        try backend.apply(level(0, 0), appliedAt: 160 * ms)
        #expect(mock.take() == [.play(code: 3, value: 0)], "silence stops the effect but keeps it uploaded")
        try backend.apply(level(0.5, 0), appliedAt: 180 * ms)
        #expect(mock.take() == [.upload(id: 3, strong: 42861, weak: 0, length: 250), .play(code: 3, value: 1)])
        try backend.close()
        #expect(mock.take() == [.play(code: 3, value: 0), .erase(3), .close])
    }

    @Test func rateLimitCoalescesToTheLatest() throws {
        let (backend, mock) = try opened()
        _ = mock.take()
        try backend.apply(level(0.25, 0), appliedAt: 1000 * ms)
        try backend.apply(level(0.5, 0), appliedAt: 1001 * ms)
        try backend.apply(level(0.75, 0), appliedAt: 1002 * ms)
        try backend.apply(level(1, 0), appliedAt: 1003 * ms)
        #expect(mock.take() == [.upload(id: -1, strong: 28903, weak: 0, length: 250), .play(code: 3, value: 1)])
        #expect(try backend.service(now: 1005 * ms) == 1010 * ms, "asks to be called when the 10 ms have passed")
        #expect(mock.take().isEmpty)
        _ = try backend.service(now: 1010 * ms)
        #expect(mock.take() == [.upload(id: 3, strong: 65535, weak: 0, length: 250), .play(code: 3, value: 1)], "only the latest value")
    }

    @Test func aThousandCommandsASecondBecomeAHundredUpdates() throws {
        let (backend, mock) = try opened()
        _ = mock.take()
        var t = 2000 * ms
        for k in 0..<1000 {
            try backend.apply(level(Float(k % 100) / 100 + 0.01, 0), appliedAt: t)
            _ = try backend.service(now: t)
            t += ms
        }
        let uploads = mock.take().filter { if case .upload = $0 { return true } else { return false } }
        #expect(uploads.count == 100)
    }

    @Test func transientsBecomeBurstsOfAtLeastThirtyMilliseconds() throws {
        let (backend, mock) = try opened()
        _ = mock.take()
        try backend.apply(tap(0.8, 0.2), appliedAt: 500 * ms)
        #expect(mock.take() == [.upload(id: -1, strong: 54215, weak: 17616, length: 250), .play(code: 3, value: 1)])
        #expect(try backend.service(now: 529 * ms) == 530 * ms)
        #expect(mock.take().isEmpty)
        _ = try backend.service(now: 530 * ms)
        #expect(mock.take() == [.play(code: 3, value: 0)], "after 30 ms the burst ends: back to silence")
        // On top of a level: 0.5 at sharpness 0.3 plus the tap → 1.3 saturates at 1, sharpness (0.15 + 0.16) / 1.3.
        try backend.apply(level(0.5, 0.3), appliedAt: 600 * ms)
        try backend.apply(tap(0.8, 0.2), appliedAt: 650 * ms)
        _ = mock.take()
        _ = try backend.service(now: 681 * ms)
        #expect(mock.take() == [.upload(id: 3, strong: 38189, weak: 19458, length: 250), .play(code: 3, value: 1)], "back to the level alone")
    }

    @Test func aLevelScalesTransientsAndLevelsAlike() throws {
        // level 0.5: a tap of 0.8 plays as one of 0.4, a level of 0.6 as 0.3.
        let (scaled, mock) = try opened { $0.level = 0.5 }
        let (plain, reference) = try opened()
        _ = mock.take()
        _ = reference.take()
        try scaled.apply(tap(0.8, 0.2), appliedAt: 500 * ms)
        try plain.apply(tap(0.4, 0.2), appliedAt: 500 * ms)
        #expect(mock.take() == reference.take())
        try scaled.apply(level(0.6, 0.5), appliedAt: 600 * ms)
        try plain.apply(level(0.3, 0.5), appliedAt: 600 * ms)
        _ = try scaled.service(now: 700 * ms)
        _ = try plain.service(now: 700 * ms)
        let got = mock.take()
        #expect(!got.isEmpty && got == reference.take())
    }

    @Test func burstLengthIsConfigurable() throws {
        let (backend, mock) = try opened { $0.burstLength = 50 * ms }
        _ = mock.take()
        try backend.apply(tap(1, 0), appliedAt: 100 * ms)
        _ = try backend.service(now: 149 * ms)
        #expect(mock.take() == [.upload(id: -1, strong: 65535, weak: 0, length: 250), .play(code: 3, value: 1)])
        _ = try backend.service(now: 150 * ms)
        #expect(mock.take() == [.play(code: 3, value: 0)])
    }

    @Test func deadManRefreshKeepsASteadyLevelAlive() throws {
        let (backend, mock) = try opened()
        _ = mock.take()
        try backend.apply(level(1, 0), appliedAt: 0 * ms + 1)
        _ = mock.take()
        // The effect runs 250 ms by itself; HapSync re-triggers it every 125 ms while it should play.
        #expect(try backend.service(now: 100 * ms) == 125 * ms + 1)
        #expect(mock.take().isEmpty)
        _ = try backend.service(now: 125 * ms + 1)
        #expect(mock.take() == [.play(code: 3, value: 1)])
        #expect(try backend.service(now: 130 * ms) == 250 * ms + 1)
        try backend.apply(level(0, 0), appliedAt: 140 * ms)
        #expect(mock.take() == [.play(code: 3, value: 0)])
        #expect(try backend.service(now: 400 * ms) == nil, "stopped: no refresh, nothing to wait for")
    }

    @Test func stopAllStopsAtOnceEvenInsideTheRateLimit() throws {
        let (backend, mock) = try opened()
        _ = mock.take()
        try backend.apply(level(1, 1), appliedAt: 10 * ms)
        try backend.apply(OutputCommand(scheduled: 0, released: 0, player: 0, kind: .stopAll, intensity: 0, sharpness: 0, patternTime: -1), appliedAt: 11 * ms)
        #expect(mock.take() == [.upload(id: -1, strong: 0, weak: 65535, length: 250), .play(code: 3, value: 1), .play(code: 3, value: 0)])
    }

    @Test func errorsSayWhatToDo() throws {
        let denied = MockEvdevSystem()
        denied.openErrno = EACCES
        #expect(throws: EvdevError.opening("/dev/input/event1", SystemErrno(EACCES))) { try opened(denied) }
        let text = EvdevError.opening("/dev/input/event1", SystemErrno(EACCES)).description
        #expect(text.contains("permission denied") && text.contains("udev rule") && text.contains(InputDeviceProbe.udevRule))
        #expect(!text.contains("'input' group"), "the input group opens keyboards too: never advised")
        // The rule the hint gives is the one the source ships (Assets/udev/70-hapsync.rules), and it
        // opens joysticks only.
        let shipped = try String(contentsOf: TestFiles.assets.appendingPathComponent("udev/70-hapsync.rules"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(shipped == [Substring(InputDeviceProbe.udevRule)])
        #expect(InputDeviceProbe.udevRule.contains("ID_INPUT_JOYSTICK"))

        let noRumble = MockEvdevSystem()
        noRumble.hasRumble = false
        noRumble.devices = ["/dev/input/event1"]
        #expect(throws: EvdevError.notRumbleCapable(path: "/dev/input/event1", name: "Mock Rumble Pad")) { try opened(noRumble) }
        #expect(noRumble.calls.last == .close, "the device is closed again")
        #expect(EvdevError.notRumbleCapable(path: "/dev/input/event1", name: "Pad").description.contains("cannot rumble: it has no FF_RUMBLE"))

        let gone = MockEvdevSystem()
        gone.openErrno = ENOENT
        #expect(EvdevError.opening("/dev/input/event9", SystemErrno(ENOENT)).description.contains("no such device"))

        let (backend, mock) = try opened()
        mock.writeErrno = ENODEV
        #expect(throws: HapticDeviceDisconnected.self) { try backend.apply(level(1, 0), appliedAt: 5 * ms) }
    }

    @Test func listsDevicesAndFindsTheFirstRumblePad() {
        let mock = MockEvdevSystem()
        let list = InputDeviceProbe.list(system: mock)
        #expect(list.map(\.path) == ["/dev/input/event0", "/dev/input/event1"])
        #expect(list.map(\.hasRumble) == [false, true])
        #expect(InputDeviceProbe.firstRumbleDevice(system: mock)?.path == "/dev/input/event1")
        mock.openErrno = EACCES
        let denied = InputDeviceProbe.list(system: mock)
        #expect(denied[1].openProblem?.contains("permission denied") == true && denied[1].hasRumble, "read-only still shows what it is")
        #expect(InputDeviceProbe.firstRumbleDevice(system: mock) == nil)
    }
}

/// The engine with an evdev device that is unplugged mid-play.
@Suite("Unplugging the pad")
struct DisconnectTests {
    @Test func aTraceGoesOnAndTheStoppedHandlerSaysDisconnected() throws {
        let mock = MockEvdevSystem()
        let evdev = EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: mock)
        let recorder = RecordingHapticBackend()
        let clock = ManualClock()
        let engine = try HapticEngine(configuration: .init(backend: FanOutBackend([evdev, recorder]), clock: clock, threading: .manual))
        let reasons = Locked<[HapticEngine.StoppedReason]>([])
        engine.stoppedHandler = { r in reasons.withLock { $0.append(r) } }
        try engine.start()
        let player = try engine.makePlayer(with: try AHAPPatternBuilder().transient(at: 0.1).transient(at: 0.2).transient(at: 0.3).build())
        try player.start(atTime: 2)
        clock.set(nanoseconds: 2_100_000_000); engine.pump()
        mock.writeErrno = ENODEV
        clock.set(nanoseconds: 2_200_000_000); engine.pump()
        clock.set(nanoseconds: 2_300_000_000); engine.pump()
        #expect(reasons.withLock { $0 } == [.deviceDisconnected])
        #expect(engine.isRunning, "the trace goes on")
        #expect(recorder.entries.map(\.command.scheduled) == [2_100_000_000, 2_200_000_000, 2_300_000_000])
        engine.stop()
    }

    @Test func aloneTheEngineStops() throws {
        let mock = MockEvdevSystem()
        let clock = ManualClock()
        let engine = try HapticEngine(configuration: .init(backend: EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: mock),
                                                           clock: clock, threading: .manual))
        let reasons = Locked<[HapticEngine.StoppedReason]>([])
        engine.stoppedHandler = { r in reasons.withLock { $0.append(r) } }
        try engine.start()
        let player = try engine.makePlayer(with: try AHAPPatternBuilder().transient(at: 0.1).build())
        try player.start(atTime: 2)
        mock.writeErrno = ENODEV
        clock.set(nanoseconds: 2_100_000_000); engine.pump()
        #expect(reasons.withLock { $0 } == [.deviceDisconnected])
        #expect(!engine.isRunning)
    }
}

/// `hapsync devices` names each pad's model by its ids (EVIOCGID) and the kernel driver sysfs says
/// serves it.
@Suite("Input devices: model and driver")
struct InputDeviceIdentityTests {
    @Test func aKnownPadIsNamedWithItsDriver() {
        let mock = MockEvdevSystem()
        mock.ids = ["/dev/input/event1": (0x03, 0x054c, 0x0ce6), "/dev/input/event0": (0x11, 0x0001, 0x0001)]
        mock.drivers = ["/dev/input/event1": "hid-playstation", "/dev/input/event0": "atkbd"]
        let list = InputDeviceProbe.list(system: mock)
        let pad = list[1]
        #expect(pad.id == InputDeviceID(bus: 0x03, vendor: 0x054c, product: 0x0ce6))
        #expect(pad.model?.name == "DualSense" && pad.model?.driver == "hid-playstation")
        #expect(pad.driver == "hid-playstation" && pad.id?.busName == "USB" && pad.id?.vendorProduct == "054c:0ce6")
        #expect(list[0].model == nil && list[0].driver == "atkbd")
    }

    @Test func everyKnownModelIsFoundByEachOfItsIds() {
        for model in GamepadModel.known {
            for product in model.products {
                #expect(GamepadModel.named(vendor: model.vendor, product: product) == model, "\(model.name)")
            }
        }
        #expect(GamepadModel.named(vendor: 0x054c, product: 0x0268) == nil, "a DualShock 3 has no FF_RUMBLE driver HapSync knows")
        #expect(GamepadModel.named(vendor: 0x054c, product: 0x0df2)?.name == "DualSense Edge")
        #expect(GamepadModel.named(vendor: 0x057e, product: 0x2009)?.driver == "hid-nintendo")
    }

    @Test func idsThatCannotBeReadLeaveTheModelUnknown() {
        let mock = MockEvdevSystem()
        let list = InputDeviceProbe.list(system: mock)
        #expect(list.allSatisfy { $0.id == nil && $0.model == nil && $0.driver == nil })
    }
}
