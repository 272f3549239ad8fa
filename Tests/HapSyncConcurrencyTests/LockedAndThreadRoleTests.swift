import Foundation
import Testing
@testable import HapSyncConcurrency

@Suite("Locked and ThreadRole")
struct LockedAndThreadRoleTests {
    struct Refused: Error, Equatable {}

    /// Four threads × 100,000 increments under the lock: none is lost. (Also run under
    /// ThreadSanitizer by .ci/run, which would report the counter if the lock did not order it.)
    @Test func concurrentIncrementsAreNotLost() {
        let counter = Locked(0)
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<4 {
            Thread {
                for _ in 0..<100_000 { counter.withLock { $0 += 1 } }
                done.signal()
            }.start()
        }
        for _ in 0..<4 { done.wait() }
        #expect(counter.withLock { $0 } == 400_000)
    }

    /// The body's result comes back, a thrown error is rethrown with its type, and the lock is
    /// released either way (a second `withLock` does not deadlock).
    @Test func resultsAndTypedErrorsPassThrough() {
        let box = Locked([1, 2])
        #expect(box.withLock { $0.count } == 2)
        #expect(throws: Refused()) { try box.withLock { (_: inout [Int]) throws(Refused) in throw Refused() } }
        box.withLock { $0.append(3) }
        #expect(box.withLock { $0 } == [1, 2, 3])
    }

    /// The first thread to check a role owns it; the same thread may check again; after a release
    /// another thread may take it.
    @Test func aRoleBelongsToOneThreadUntilReleased() {
        let role = Locked(ThreadRoleBox())
        role.withLock { $0.role.check("producer", of: "test") }
        role.withLock { $0.role.check("producer", of: "test") }
        role.withLock { $0.role.release() }
        let done = DispatchSemaphore(value: 0)
        Thread {
            role.withLock { $0.role.check("producer", of: "test") }
            done.signal()
        }.start()
        done.wait()
    }

    /// A second thread taking a role that another thread holds traps, naming the role.
    @Test func aSecondThreadTraps() async {
        await #expect(processExitsWith: .failure) {
            let box = ThreadRoleBox()
            box.role.check("consumer", of: "test")
            let done = DispatchSemaphore(value: 0)
            Thread {
                box.role.check("consumer", of: "test")
                done.signal()
            }.start()
            done.wait()
        }
    }
}

/// A `ThreadRole` in a class, so threads can share it.
final class ThreadRoleBox: @unchecked Sendable {
    let role = ThreadRole()
}
