import AHAP
import Foundation
import HapSyncConcurrency
import HapSyncRuntime

/// Plays a pattern: Core Haptics' `CHHapticPatternPlayer`. Times are engine times
/// (`CHHapticEngine.currentTime`); `CHHapticTimeImmediate` (or any past time) means now.
public protocol CHHapticPatternPlayer: AnyObject {
    /// Starts playing at `time`.
    func start(atTime time: TimeInterval) throws
    /// Stops at `time`.
    func stop(atTime time: TimeInterval) throws
    /// Changes dynamic parameters from `time` on (each at its `relativeTime` after it).
    func sendParameters(_ parameters: [CHHapticDynamicParameter], atTime time: TimeInterval) throws
    /// Ramps a control along a curve from `time` (plus the curve's `relativeTime`).
    func scheduleParameterCurve(_ parameterCurve: CHHapticParameterCurve, atTime time: TimeInterval) throws
    /// Stops at once and forgets what was scheduled.
    func cancel() throws
    /// Silences this player (it keeps playing).
    var isMuted: Bool { get set }
}

/// A player that also pauses, resumes, seeks, loops and changes rate: Core Haptics'
/// `CHHapticAdvancedPatternPlayer`.
public protocol CHHapticAdvancedPatternPlayer: CHHapticPatternPlayer {
    /// Called when the player finishes or is stopped (nil: it finished).
    typealias CompletionHandler = (Error?) -> Void
    /// Pauses at `time`, keeping the place reached.
    func pause(atTime time: TimeInterval) throws
    /// Resumes at `time` from the place reached.
    func resume(atTime time: TimeInterval) throws
    /// Moves to `offsetTime` seconds into the pattern.
    func seek(toOffset offsetTime: TimeInterval) throws
    /// Whether it loops.
    var loopEnabled: Bool { get set }
    /// Where a loop wraps (0: the pattern's end).
    var loopEnd: TimeInterval { get set }
    /// Pattern seconds per second.
    var playbackRate: Float { get set }
    /// Called when the player finishes or is stopped.
    var completionHandler: CompletionHandler? { get set }
}

/// Both protocols over one HapSync player.
final class CHHapticPlayer: CHHapticAdvancedPatternPlayer, @unchecked Sendable {
    let player: HapticPatternPlayer

    init(_ player: HapticPatternPlayer) { self.player = player }

    private func run(_ body: () throws -> Void) throws {
        do { try body() } catch let error as CHHapticError { throw error } catch {
            throw CHHapticError(.invalidPatternPlayer, "\(error)")
        }
    }

    func start(atTime time: TimeInterval) throws { try run { _ = try player.start(atTime: time) } }
    func stop(atTime time: TimeInterval) throws { try run { try player.stop(atTime: time) } }
    func cancel() throws { try run { try player.cancel() } }
    func pause(atTime time: TimeInterval) throws { try run { try player.pause(atTime: time) } }
    func resume(atTime time: TimeInterval) throws { try run { try player.resume(atTime: time) } }
    func seek(toOffset offsetTime: TimeInterval) throws { try run { try player.seek(toOffset: offsetTime) } }

    func sendParameters(_ parameters: [CHHapticDynamicParameter], atTime time: TimeInterval) throws {
        let sent = try parameters.map { try $0.ahap() }
        try run { try player.sendParameters(sent, atTime: time) }
    }

    func scheduleParameterCurve(_ parameterCurve: CHHapticParameterCurve, atTime time: TimeInterval) throws {
        let curve = try parameterCurve.ahap()
        try run { try player.scheduleParameterCurve(curve, atTime: time) }
    }

    var isMuted: Bool {
        get { player.isMuted }
        set { player.isMuted = newValue }
    }
    var loopEnabled: Bool {
        get { player.loopEnabled }
        set { player.loopEnabled = newValue }
    }
    var loopEnd: TimeInterval {
        get { player.loopEnd }
        set { player.loopEnd = newValue }
    }
    var playbackRate: Float {
        get { Float(player.playbackRate) }
        set { player.playbackRate = Double(newValue) }
    }
    private let handler = Locked(Box<CompletionHandler?>(nil))
    var completionHandler: CompletionHandler? {
        get { handler.withLock { $0 }.value }
        set {
            handler.withLock { $0 = Box(newValue) }
            guard let newValue else {
                player.completionHandler = nil
                return
            }
            let call = Box(newValue)
            player.completionHandler = { @Sendable (completion: HapticPatternPlayer.Completion) in
                let error: Error? = completion == .finished ? nil : CHHapticError(.operationNotPermitted, "the player was stopped before its end")
                call.value(error)
            }
        }
    }
}
