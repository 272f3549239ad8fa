import HapSyncSystem
import Testing
@testable import HapSyncRuntime

/// RealtimeKit's priority rule and how its answers read. (The D-Bus path itself runs as a user
/// without real-time rights in `.ci/rtkit-check`: root, as tests run, never takes it.)
@Suite struct RealtimeKitTests {
    @Test func prioritiesMoveDownTogetherUnderTheLimit() {
        // rtkit's default limit, 20: the scheduler lands on it, the others keep their distance.
        #expect(RealtimeKit.priority(for: 80, limit: 20) == 20)
        #expect(RealtimeKit.priority(for: 79, limit: 20) == 19)
        #expect(RealtimeKit.priority(for: 78, limit: 20) == 18)
        #expect(RealtimeKit.priority(for: 75, limit: 20) == 15)
        // What fits is kept; nothing goes below 1 or above the limit.
        #expect(RealtimeKit.priority(for: 10, limit: 20) == 10)
        #expect(RealtimeKit.priority(for: 30, limit: 20) == 1)
        #expect(RealtimeKit.priority(for: 95, limit: 20) == 20)
        #expect(RealtimeKit.priority(for: 0, limit: 20) == 1)
        #expect(RealtimeKit.priority(for: 80, limit: 99) == 80)
    }

    @Test func aRefusalNamesBothAnswers() {
        let refusal = RealtimeRefusal(direct: SystemErrno(1), realtimeKit: "no system bus (x)")
        #expect(refusal.description.hasPrefix("Operation not permitted (errno 1); RealtimeKit: no system bus (x)"))
        #expect(RealtimeRefusal(direct: SystemErrno(22)).description == SystemErrno(22).description)
    }

    @Test func theStatusSaysWhatRealtimeKitGranted() {
        var status = RealtimeStatus(fifoPriority: 20, memoryLocked: true)
        status.fifoThroughRealtimeKit = true
        status.threads = [RealtimeThread(name: "hapsync-sched", asked: 80, result: .success(RealtimeGrant(priority: 20, throughRealtimeKit: true))),
                          RealtimeThread(name: "hapsync-output", asked: 79,
                                         result: .failure(RealtimeRefusal(direct: SystemErrno(1), realtimeKit: "denied")))]
        #expect(status.description.contains("SCHED_FIFO hapsync-sched 20 (through RealtimeKit)"))
        #expect(status.description.contains("SCHED_FIFO refused (Operation not permitted (errno 1); RealtimeKit: denied) for hapsync-output 79"))
    }
}
