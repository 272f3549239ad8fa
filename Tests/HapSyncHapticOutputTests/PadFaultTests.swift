import Glibc
import HapSyncRuntime
import HapSyncSystem
import Testing
@testable import HapSyncHapticOutput

/// A pad that goes away while it is being opened, and a driver that refuses the effect: errors
/// that name the device, its driver and what to do.
@Suite("pad faults: gone during probe, effect refused")
struct PadFaultTests {
    @Test(arguments: [ENODEV, EIO])
    func aPadGoneDuringProbeSaysSoAndNamesIt(errno: Int32) {
        let mock = MockEvdevSystem()
        mock.probeErrno = errno
        let backend = EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: mock)
        #expect(throws: EvdevError.opening("/dev/input/event1", SystemErrno(errno))) { try backend.open() }
        let text = EvdevError.opening("/dev/input/event1", SystemErrno(errno)).description
        #expect(text.contains("/dev/input/event1") && text.contains("unplugged?") && text.contains("hapsync devices"))
        #expect(mock.calls.last == .close, "the file it opened is closed again")
    }

    @Test func anotherProbeFailureNamesThePath() {
        let mock = MockEvdevSystem()
        mock.probeErrno = EINVAL
        let backend = EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: mock)
        #expect(throws: EvdevError.system(path: "/dev/input/event1", what: "reading force-feedback capabilities (EVIOCGBIT)", errno: SystemErrno(EINVAL))) {
            try backend.open()
        }
    }

    @Test func aRefusedEffectNamesTheDeviceAndItsDriver() throws {
        let mock = MockEvdevSystem()
        mock.drivers["/dev/input/event1"] = "hid-sony"
        mock.uploadErrno = EINVAL
        let backend = EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: mock)
        try backend.open()
        do {
            try backend.apply(level(0.5, 0), appliedAt: 100 * ms)
            Issue.record("an upload the driver refuses should throw")
        } catch let error as EvdevError {
            #expect(error == .refused(device: "/dev/input/event1 (Mock Rumble Pad)", driver: "hid-sony",
                                      what: "uploading the rumble effect (EVIOCSFF)", errno: SystemErrno(EINVAL)))
            #expect(error.description.hasPrefix("/dev/input/event1 (Mock Rumble Pad): uploading the rumble effect (EVIOCSFF) failed: "))
            #expect(error.description.contains("the pad's driver (hid-sony) refused it; 'hapsync devices' shows the pad"))
        }
    }

    @Test func anUnplugDuringPlayIsADisconnectNotARefusal() throws {
        let mock = MockEvdevSystem()
        mock.uploadErrno = ENODEV
        let backend = EvdevBackend(configuration: .init(path: "/dev/input/event1"), system: mock)
        try backend.open()
        #expect(throws: HapticDeviceDisconnected.self) { try backend.apply(level(0.5, 0), appliedAt: 100 * ms) }
    }
}
