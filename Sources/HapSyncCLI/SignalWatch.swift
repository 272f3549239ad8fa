import Dispatch
import Foundation
import HapSyncConcurrency

/// Catches the signals that ask a command to end (SIGINT from Ctrl-C, SIGTERM, SIGHUP when the
/// terminal goes away, SIGQUIT from Ctrl-\) for the whole `play` run, from before the engine
/// starts, so any of them at any moment ends playback cleanly (backend silenced, trace written)
/// instead of being lost, killing the process mid-write or dumping a backtrace. The run then exits
/// with 128 + the signal's number, as a shell reports a process the signal ended.
final class SignalWatch: @unchecked Sendable {
    /// The signals caught, in the order they are named in messages.
    static let caught: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    private let sources: [DispatchSourceSignal]
    private let first = Locked<Int32?>(nil)
    private let handler = Locked<(@Sendable () -> Void)?>(nil)

    init() {
        var made: [DispatchSourceSignal] = []
        for sig in Self.caught {
            Foundation.signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            made.append(source)
        }
        sources = made
        for (sig, source) in zip(Self.caught, sources) {
            source.setEventHandler { [weak self] in
                guard let self else { return }
                first.withLock { if $0 == nil { $0 = sig } }
                handler.withLock { $0 }?()
            }
            source.resume()
        }
    }

    /// Whether a signal came.
    var received: Bool { caughtSignal != nil }
    /// The first signal that came, if any.
    var caughtSignal: Int32? { first.withLock { $0 } }
    /// Called (on a dispatch queue) when one comes.
    var onSignal: (@Sendable () -> Void)? {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }

    /// Stops catching: each signal gets its default action back.
    func cancel() {
        for (sig, source) in zip(Self.caught, sources) {
            source.cancel()
            Foundation.signal(sig, SIG_DFL)
        }
    }

    /// A signal's name ("SIGHUP").
    static func name(of sig: Int32) -> String {
        switch sig {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        case SIGQUIT: "SIGQUIT"
        default: "signal \(sig)"
        }
    }
}
