import HapSyncConcurrency
import HapSyncTestSupport
import Synchronization
import Testing

/// Runs `body`, a check that judges timing against live sound servers, with a `StallWatch` on.
///
/// Issues recorded while the machine had stalled (a shared VM stopped for milliseconds: every
/// timing check of that moment fails at once, the sound server's own included) are recorded as
/// known issues, and the check runs again, at most `attempts` times in all. An issue in an attempt
/// without a stall fails the test as usual, so a real fault still fails: it fails the attempts the
/// machine did not disturb. Only when every attempt stalled does the test pass on known issues,
/// and it prints so.
public func retryingWhenStalled(_ what: String, attempts: Int = 3, sourceLocation: SourceLocation = #_sourceLocation,
                                _ body: () async throws -> Void) async rethrows {
    try await retryingWhenStalled(what, attempts: attempts, sourceLocation: sourceLocation) { (_: StallWatch) in try await body() }
}

/// `retryingWhenStalled`, with the attempt's `StallWatch` handed to `body`, which may report a
/// stall that only its own witnesses saw (`StallWatch.report`: the sound server's timing jumping
/// where it measures, while this process ran on time) before it judges timing: that attempt's
/// issues are known ones too, and it runs again. But a witness of the test's own could be moved
/// by the product itself: when every attempt stalled and the watch saw none of those stalls,
/// the test fails, saying so.
public func retryingWhenStalled(_ what: String, attempts: Int = 3, sourceLocation: SourceLocation = #_sourceLocation,
                                _ body: (StallWatch) async throws -> Void) async rethrows {
    var watchSawOne = false
    for attempt in 1...attempts {
        let watch = StallWatch()
        let failedWhileStalled = Atomic<Bool>(false)
        watch.start()
        try await withKnownIssue("\(what): the machine or the sound server stalled during this attempt", isIntermittent: true, sourceLocation: sourceLocation) {
            try await body(watch)
        } matching: { _ in
            guard watch.stalled else { return false }
            failedWhileStalled.store(true, ordering: .releasing)
            return true
        }
        watch.stop()
        guard failedWhileStalled.load(ordering: .acquiring) else { return }
        watchSawOne = watchSawOne || watch.sawStall
        print("\(what): attempt \(attempt) of \(attempts) failed while the machine or the sound server stalled (\(watch.summary))"
              + (attempt < attempts ? "; running it again" : watchSawOne ? "; timing not judged in this run" : ""))
        if attempt == attempts, !watchSawOne {
            let why = "\(what): each of \(attempts) attempts failed on a stall that only the test reported (\(watch.summary)); "
                + "the watch saw none, so the product may be what stalls"
            Issue.record(Comment(rawValue: why), sourceLocation: sourceLocation)
        }
    }
}
