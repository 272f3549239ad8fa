import Dispatch
import Foundation

/// `async` forms of the calls that wait: starting (which opens the backend and the audio stream),
/// stopping (which joins the threads and finishes the trace), and waiting for players to finish.
/// Each does its waiting on a dispatch thread, never on the caller's task's thread.
extension HapticEngine {
    /// Starts the engine (see the synchronous `start()`) without blocking the calling task.
    public func start() async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, Error>) in
            DispatchQueue.global().async {
                do {
                    try self.start()
                    done.resume()
                } catch {
                    done.resume(throwing: error)
                }
            }
        }
    }

    /// Stops the engine (see the synchronous `stop()`) and returns once everything has stopped
    /// and the trace is written: also when called from a handler, where the synchronous stop
    /// finishes on a helper thread. Returns what closing the haptic backend reported (a trace
    /// that could not be written), nil when it closed cleanly.
    @discardableResult
    public func stop() async -> Error? {
        await withCheckedContinuation { (done: CheckedContinuation<Error?, Never>) in
            DispatchQueue.global().async {
                self.stop()
                done.resume(returning: self.waitUntilStopped())
            }
        }
    }

    /// Waits until a stop under way has finished (one begun by a handler finishes on a helper
    /// thread), then returns what closing the haptic backend reported at the latest stop: the
    /// way to know a trace is whole after a handler stopped the engine.
    public func stopped() async -> Error? {
        await withCheckedContinuation { (done: CheckedContinuation<Error?, Never>) in
            DispatchQueue.global().async { done.resume(returning: self.waitUntilStopped()) }
        }
    }

    /// Returns once every player has finished or stopped (at once if none plays or the engine is
    /// not running); the engine keeps running. Uses `notifyWhenPlayersFinished`: do not give that
    /// another handler while this waits (it would replace this one's).
    public func playersFinished() async {
        guard isRunning else { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            notifyWhenPlayersFinished { _ in
                done.resume()
                return .leaveEngineRunning
            }
        }
    }

    /// Blocks until no stop is finishing on a helper thread (one a handler asked for), then
    /// returns the latest stop's close error (nil: the backend closed cleanly). Not from a
    /// handler: the stop it waits for may be waiting for the handler's thread.
    public func waitUntilStopped() -> Error? {
        while control.withLock({ $0.stopInProgress }) {
            Syscalls.sleep(untilMonotonic: Syscalls.monotonicNanoseconds() + 1_000_000)
        }
        return control.withLock { $0.lastStopError }
    }
}
