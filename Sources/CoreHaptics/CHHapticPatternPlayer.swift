import Foundation
import HapSyncAHAP
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
    /// Called when the player finishes or is stopped, with nil (a stop asked for is not an error).
    var completionHandler: CompletionHandler? { get set }
}

/// The players an engine keeps alive while they play, as Core Haptics' engine does: a started
/// player plays on when the caller lets go of it.
final class PlayerKeeper: @unchecked Sendable {
    private let players = Locked<[ObjectIdentifier: CHHapticPlayer]>([:])

    /// Keeps `player` until `release` or `releaseAll`.
    func keep(_ player: CHHapticPlayer) { players.withLock { $0[ObjectIdentifier(player)] = player } }

    /// Lets `player` go (it ends when nobody else holds it).
    func release(_ player: CHHapticPlayer) {
        let gone = players.withLock { $0.removeValue(forKey: ObjectIdentifier(player)) }
        _ = gone   // released here, outside the lock
    }

    /// Lets every player go (the engine stopped: paused players too).
    func releaseAll() {
        let gone = players.withLock { p in defer { p = [:] }; return p }
        _ = gone
    }
}

/// Both protocols over one HapSync player.
///
/// Kept alive by its engine's `PlayerKeeper` from a start or resume until its run ends (by its
/// end or a stop) with no newer run asked for, or the engine stops. (HapSync's own player stops
/// when released.)
final class CHHapticPlayer: CHHapticAdvancedPatternPlayer, @unchecked Sendable {
    let player: HapticPatternPlayer
    private let keeper: PlayerKeeper
    private let handler = Locked(Box<CompletionHandler?>(nil))

    init(_ player: HapticPatternPlayer, keeper: PlayerKeeper) {
        self.player = player
        self.keeper = keeper
        // nil for a run that ended, by its end or by a stop: a stop asked for is not an error
        // (Apple's samples treat any error here as a failure). HapSync's own player tells the
        // two apart (`HapticPatternPlayer.Completion`).
        player.completionHandler = { @Sendable [weak self] _ in
            guard let self else { return }
            let call = self.handler.withLock { $0 }.value
            // A start or resume asked for after this run keeps it for that run.
            if !self.player.isPlaying { self.keeper.release(self) }
            call?(nil)
        }
    }

    /// Runs `body` (a start or resume) with the player kept; not kept if it throws.
    private func running(_ body: () throws -> Void) throws {
        keeper.keep(self)
        do {
            try run(body)
        } catch {
            if !player.isPlaying { keeper.release(self) }
            throw error
        }
    }

    private func run(_ body: () throws -> Void) throws {
        do { try body() } catch let error as CHHapticError { throw error } catch HapticEngine.EngineError.limitReached(let why) {
            // A bound the engine keeps (a control's live breakpoints): nothing was changed.
            throw CHHapticError(.resourceNotAvailable, "limit reached: \(why)")
        } catch {
            throw CHHapticError(.invalidPatternPlayer, "\(error)")
        }
    }

    func start(atTime time: TimeInterval) throws { try running { _ = try player.start(atTime: time) } }
    func stop(atTime time: TimeInterval) throws { try run { try player.stop(atTime: time) } }
    func cancel() throws { try run { try player.cancel() } }
    func pause(atTime time: TimeInterval) throws { try run { try player.pause(atTime: time) } }
    func resume(atTime time: TimeInterval) throws { try running { try player.resume(atTime: time) } }
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
    var completionHandler: CompletionHandler? {
        get { handler.withLock { $0 }.value }
        set { handler.withLock { $0 = Box(newValue) } }
    }
}
