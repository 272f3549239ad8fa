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

/// Whether `condition` held within `seconds` (asked every 20 ms).
public func poll(seconds: Double = 3, _ condition: () -> Bool) -> Bool {
    pollValue(seconds: seconds) { condition() ? true : nil } ?? false
}

/// The first non-nil value `value` gave within `seconds` (asked every 20 ms).
public func pollValue<T>(seconds: Double = 3, _ value: () -> T?) -> T? {
    let giveUp = Date().addingTimeInterval(seconds)
    while true {
        if let v = value() { return v }
        guard Date() < giveUp else { return nil }
        usleep(20_000)
    }
}
