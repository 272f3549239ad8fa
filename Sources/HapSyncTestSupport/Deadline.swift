import Dispatch
import Foundation
import HapSyncConcurrency

/// Runs `body` on a thread of its own and waits at most `seconds` for it: nil when it did not
/// finish in time. A test of something that must never wait (a reader beside a stopped writer)
/// then fails instead of hanging.
public func finishes<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () -> T) -> T? {
    let result = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
        let r = body()
        result.withLock { $0 = r }
        done.signal()
    }.start()
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return result.withLock { $0 }
}
