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
/// stall its own witnesses saw (`StallWatch.report`) before it judges timing: the sound server's
/// timing jumping near what is measured, while this process ran on time.
public func retryingWhenStalled(_ what: String, attempts: Int = 3, sourceLocation: SourceLocation = #_sourceLocation,
                                _ body: (StallWatch) async throws -> Void) async rethrows {
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
        print("\(what): attempt \(attempt) of \(attempts) failed while the machine or the sound server stalled (\(watch.summary))"
              + (attempt < attempts ? "; running it again" : "; timing not judged in this run"))
    }
}
