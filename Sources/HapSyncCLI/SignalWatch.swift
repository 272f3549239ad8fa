import Dispatch
import Foundation
import HapSyncConcurrency

/// Catches SIGINT and SIGTERM for the whole `play` run (from before the engine starts), so a
/// Ctrl-C at any moment ends playback cleanly instead of being lost or killing the process.
final class SignalWatch: @unchecked Sendable {
    private let sources: [DispatchSourceSignal]
    private let flag = Locked(false)
    private let handler = Locked<(@Sendable () -> Void)?>(nil)

    init() {
        var made: [DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            made.append(DispatchSource.makeSignalSource(signal: sig, queue: .global()))
        }
        sources = made
        for source in sources {
            source.setEventHandler { [weak self] in
                guard let self else { return }
                flag.withLock { $0 = true }
                handler.withLock { $0 }?()
            }
            source.resume()
        }
    }

    /// Whether a signal came.
    var received: Bool { flag.withLock { $0 } }
    /// Called (on a dispatch queue) when one comes.
    var onSignal: (@Sendable () -> Void)? {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }

    func cancel() {
        for (sig, source) in zip([SIGINT, SIGTERM], sources) {
            source.cancel()
            signal(sig, SIG_DFL)
        }
    }
}
