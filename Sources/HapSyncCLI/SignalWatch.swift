import Dispatch
import Foundation
import HapSyncConcurrency

/// Catches the signals that ask a command to end (SIGINT from Ctrl-C, SIGTERM, SIGHUP when the
/// terminal goes away, SIGQUIT from Ctrl-\) for the whole `play` run, from before the engine
/// starts, so any of them at any moment ends playback cleanly (backend silenced, trace written)
/// instead of being lost, killing the process mid-write or dumping a backtrace. The run then exits
/// with 128 + the signal's number, as a shell reports a process the signal ended.
///
/// A signal the process was started ignoring (SIGHUP under `nohup`, SIGINT in a shell's background
/// job) stays ignored. A second signal while the run is ending (a stop that waits on a stalled
/// reader, say) gets the signal's default action at once.
final class SignalWatch: @unchecked Sendable {
    /// The signals caught, in the order they are named in messages.
    static let caught: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    private let sources: [DispatchSourceSignal]
    /// The signals caught (those not ignored at start).
    private let watched: [Int32]
    private let first = Locked<Int32?>(nil)
    private let handler = Locked<(@Sendable () -> Void)?>(nil)

    init() {
        var made: [DispatchSourceSignal] = [], watching: [Int32] = []
        for sig in Self.caught {
            let previous = Foundation.signal(sig, SIG_IGN)
            if Self.isIgnore(previous) { continue }
            watching.append(sig)
            made.append(DispatchSource.makeSignalSource(signal: sig, queue: .global()))
        }
        sources = made
        watched = watching
        for (sig, source) in zip(watched, sources) {
            source.setEventHandler { [weak self] in
                guard let self else { return }
                let again = first.withLock { f -> Bool in
                    defer { if f == nil { f = sig } }
                    return f != nil
                }
                if again {
                    // The second: the default action (ends the process with this signal).
                    Foundation.signal(sig, SIG_DFL)
                    raise(sig)
                    return
                }
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
        for (sig, source) in zip(watched, sources) {
            source.cancel()
            Foundation.signal(sig, SIG_DFL)
        }
    }

    /// Whether a handler `signal()` returned is SIG_IGN.
    private static func isIgnore(_ handler: __sighandler_t?) -> Bool {
        guard let handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
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
