import HapSyncRuntime
import Synchronization
import Testing
@testable import HapSyncHapticOutput

/// A fan-out asks for the greatest extra lead any of its backends asks for.
@Suite("fan-out: extra lead")
struct FanOutLeadTests {
    final class Asking: HapticBackend, HapticLeadAdjusting, @unchecked Sendable {
        let extra = Atomic<UInt64>(0)
        var extraLead: UInt64 { extra.load(ordering: .relaxed) }
        var name: String { "asking" }
        var device: String { "test" }
        var motors: Int { 1 }
        func open() throws {}
        func apply(_ command: OutputCommand, appliedAt: UInt64) throws {}
        func stopAll() throws {}
        func close() throws {}
    }

    @Test func theGreatestOfItsBackendsAsks() {
        let a = Asking(), b = Asking()
        let fan = FanOutBackend([a, NullHapticBackend(), b])
        #expect(fan.extraLead == 0)
        a.extra.store(5_000_000, ordering: .relaxed)
        b.extra.store(17_000_000, ordering: .relaxed)
        #expect(fan.extraLead == 17_000_000)
        #expect(FanOutBackend([NullHapticBackend()]).extraLead == 0)
    }
}
