import HapSyncRuntime
import Testing
@testable import HapSyncHapticOutput

/// The per-driver rumble table and the evdev backend's use of it: a Switch Pro Controller
/// (hid-nintendo) gets the level on both grips, every other pad the standard mapping, and a
/// mapping given in the configuration wins over the pad's.
@Suite("per-driver rumble")
struct PadRumbleTests {
    @Test func bothGripsPlaysTheStandardLevelOnEachSide() {
        let m = RumbleMapping.bothGrips.map
        #expect(m(1, 0) == (65535, 65535))
        #expect(m(1, 1) == (65535, 65535), "sharpness does not move the rumble between the hands")
        #expect(m(0.5, 0.3) == (42861, 42861), "the standard level of 0.5: 0.10 + 0.90 × 0.5^0.7")
        #expect(m(0.0005, 1) == (0, 0), "below 0.001 the motors are off")
        #expect(m(-3, 0) == (0, 0) && m(7, 0) == (65535, 65535), "intensity clamped")
    }

    @Test func eachKnownDriverHasItsEntryAndOthersTheStandardMapping() {
        #expect(PadRumble.of(driver: "hid-nintendo").mapping.map(0.5, 1) == (42861, 42861))
        for driver in ["hid-playstation", "hid-sony", "hid-microsoft", "xpad"] {
            let rumble = PadRumble.of(driver: driver)
            #expect(rumble.driver == driver && !rumble.note.isEmpty)
            #expect(rumble.mapping.map(0.5, 1) == RumbleMapping.standard.map(0.5, 1))
        }
        for driver in [nil, "hid-generic", "uinput"] {
            let rumble = PadRumble.of(driver: driver)
            #expect(rumble.note.isEmpty, "no note for \(String(describing: driver))")
            #expect(rumble.mapping.map(1, 1) == (0, 65535))
        }
        #expect(Set(PadRumble.known.map(\.driver)).count == PadRumble.known.count, "one entry per driver")
    }

    /// Every driver of a model HapSync names has its rumble entry, so `hapsync devices` and play
    /// can say how the pad plays.
    @Test func everyKnownModelsDriverIsInTheTable() {
        for model in GamepadModel.known {
            #expect(PadRumble.known.contains { $0.driver == model.driver }, "\(model.name): \(model.driver)")
        }
    }

    @Test func theBackendPlaysWithThePadsDriversMapping() throws {
        let mock = MockEvdevSystem()
        mock.drivers["/dev/input/event1"] = "hid-nintendo"
        let backend = EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: mock)
        try backend.open()
        #expect(backend.padRumble.driver == "hid-nintendo")
        _ = mock.take()
        try backend.apply(level(0.5, 1), appliedAt: 100 * ms)
        #expect(mock.take() == [.upload(id: -1, strong: 42861, weak: 42861, length: 250), .play(code: 3, value: 1)])
        try backend.close()
    }

    @Test func aMappingGivenInTheConfigurationWins() throws {
        let mock = MockEvdevSystem()
        mock.drivers["/dev/input/event1"] = "hid-nintendo"
        let backend = EvdevBackend(configuration: .init(path: "/dev/input/event1", mapping: .standard), system: mock)
        try backend.open()
        _ = mock.take()
        try backend.apply(level(0.5, 1), appliedAt: 100 * ms)
        #expect(mock.take() == [.upload(id: -1, strong: 0, weak: 42861, length: 250), .play(code: 3, value: 1)])
        try backend.close()
    }

    @Test func aPlainPadKeepsTheStandardMapping() throws {
        let mock = MockEvdevSystem()
        let backend = EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: mock)
        try backend.open()
        #expect(backend.padRumble.note.isEmpty)
        _ = mock.take()
        try backend.apply(level(0.5, 0), appliedAt: 100 * ms)
        #expect(mock.take() == [.upload(id: -1, strong: 42861, weak: 0, length: 250), .play(code: 3, value: 1)])
        try backend.close()
    }
}

extension PadRumbleTests {
    /// hid-nintendo's own pace: the backend updates a Switch Pro Controller no faster than 40 ms
    /// even when configured for 10, and keeps a slower configured pace.
    @Test func theBackendKeepsTheDriversPace() throws {
        let mock = MockEvdevSystem()
        mock.drivers["/dev/input/event1"] = "hid-nintendo"
        let backend = EvdevBackend(configuration: .init(path: "/dev/input/event1", minimumUpdateInterval: 10 * ms), system: mock)
        try backend.open()
        #expect(backend.updateInterval == 40 * ms && backend.timingResolution == 40 * ms)
        _ = mock.take()
        try backend.apply(level(0.5, 0), appliedAt: 100 * ms)
        #expect(mock.take().count == 2, "the first level goes out at once")
        try backend.apply(level(1, 0), appliedAt: 120 * ms)
        _ = try backend.service(now: 130 * ms)
        #expect(mock.take().isEmpty, "20 and 30 ms after it: held back")
        _ = try backend.service(now: 140 * ms)
        #expect(mock.take() == [.upload(id: 3, strong: 65535, weak: 65535, length: 250), .play(code: 3, value: 1)], "40 ms after: the latest")
        try backend.close()

        let slow = EvdevBackend(configuration: .init(path: "/dev/input/event1", minimumUpdateInterval: 60 * ms), system: mock)
        try slow.open()
        #expect(slow.updateInterval == 60 * ms)
        try slow.close()

        let plain = EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: MockEvdevSystem())
        try plain.open()
        #expect(plain.updateInterval == 10 * ms)
        try plain.close()
    }
}
