import CHapSync
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime

/// What an `hs_player` handle holds.
final class PlayerBox: @unchecked Sendable {
    let player: HapticPatternPlayer
    /// Its engine's handle object: gone once the engine is destroyed (calls then refuse).
    weak var engine: EngineBox?
    /// This box's handle, for the finished callback.
    var handle: OpaquePointer?
    let finished = Locked<(callback: hs_player_finished_callback?, user: UInt)>((nil, 0))

    init(_ player: HapticPatternPlayer) {
        self.player = player
        player.completionHandler = { [weak self] completion in
            guard let self, let handle = self.handle else { return }
            let (callback, user) = self.finished.withLock { ($0.callback, $0.user) }
            callback?(handle, completion == .finished ? 0 : 1, UnsafeMutableRawPointer(bitPattern: user))
        }
    }
}

/// Runs a player call: the handle checked first, then `check` (its arguments), then `body`,
/// engine errors as C statuses; a player whose engine was destroyed refuses.
private func playerCall(_ handle: OpaquePointer?, check: () throws(CFailure) -> Void = {},
                        _ body: (HapticPatternPlayer) throws -> Void) -> hs_status {
    cCall { () throws(CFailure) in
        let box: PlayerBox = try Handles.get(handle, "player")
        try check()
        guard box.engine != nil else { throw CFailure(status: HS_ERROR_NOT_RUNNING, message: "the player's engine was destroyed") }
        do { try body(box.player) } catch { throw cFailure(error) }
    }
}

/// A time argument: finite and not negative.
private func checkedTime(_ time: Double, _ name: String = "time") throws(CFailure) -> Double {
    guard time.isFinite, time >= 0 else { throw .invalid("\(name) \(time) must be 0 (now) or a time on the engine clock") }
    return time
}

/// `hs_player_create`: a player of `pattern` on `engine` (the pattern is copied; it may be destroyed after).
@_cdecl("hs_player_create")
public func hsPlayerCreate(_ engine: OpaquePointer?, _ pattern: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> hs_status {
    cCall { () throws(CFailure) in
        guard let out else { throw .null("out") }
        out.pointee = nil
        let e: EngineBox = try Handles.get(engine, "engine")
        let p: PatternBox = try Handles.get(pattern, "pattern")
        do {
            let box = PlayerBox(try e.engine.makePlayer(timeline: p.playable.timeline, audioFiles: p.playable.audioFiles))
            box.engine = e
            let handle = Handles.make(box)
            box.handle = handle
            out.pointee = handle
        } catch {
            throw cFailure(error)
        }
    }
}

/// `hs_player_start`: starts at engine time `time` (0: now).
@_cdecl("hs_player_start")
public func hsPlayerStart(_ player: OpaquePointer?, _ time: Double) -> hs_status {
    playerCall(player, check: { () throws(CFailure) in _ = try checkedTime(time) }) { _ = try $0.start(atTime: time) }
}

/// `hs_player_stop`: stops at engine time `time` (0: now).
@_cdecl("hs_player_stop")
public func hsPlayerStop(_ player: OpaquePointer?, _ time: Double) -> hs_status {
    playerCall(player, check: { () throws(CFailure) in _ = try checkedTime(time) }) { try $0.stop(atTime: time) }
}

/// `hs_player_pause`: pauses at engine time `time` (0: now).
@_cdecl("hs_player_pause")
public func hsPlayerPause(_ player: OpaquePointer?, _ time: Double) -> hs_status {
    playerCall(player, check: { () throws(CFailure) in _ = try checkedTime(time) }) { try $0.pause(atTime: time) }
}

/// `hs_player_resume`: resumes a paused player at engine time `time` (0: now).
@_cdecl("hs_player_resume")
public func hsPlayerResume(_ player: OpaquePointer?, _ time: Double) -> hs_status {
    playerCall(player, check: { () throws(CFailure) in _ = try checkedTime(time) }) { try $0.resume(atTime: time) }
}

/// `hs_player_seek`: moves to `offset` s of the pattern, at once if playing, else where resume begins.
@_cdecl("hs_player_seek")
public func hsPlayerSeek(_ player: OpaquePointer?, _ offset: Double) -> hs_status {
    playerCall(player, check: { () throws(CFailure) in
        guard offset.isFinite, offset >= 0 else { throw .invalid("offset \(offset) must be 0 or more seconds") }
    }) { try $0.seek(toOffset: offset) }
}

/// `hs_player_set_loop`: loops (non-zero) or not, wrapping at `end` s (0: the pattern's end).
@_cdecl("hs_player_set_loop")
public func hsPlayerSetLoop(_ player: OpaquePointer?, _ enabled: Int32, _ end: Double) -> hs_status {
    playerCall(player) { try $0.setLoop(enabled != 0, end: end) }
}

/// `hs_player_set_rate`: pattern seconds per second, 0.01...100.
@_cdecl("hs_player_set_rate")
public func hsPlayerSetRate(_ player: OpaquePointer?, _ rate: Double) -> hs_status {
    playerCall(player) { try $0.setPlaybackRate(rate) }
}

/// `hs_player_send_parameter`: a dynamic parameter taking `value` at engine time `time` (bounded: 256 breakpoints a parameter).
@_cdecl("hs_player_send_parameter")
public func hsPlayerSendParameter(_ player: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ value: Float, _ time: Double) -> hs_status {
    var parameter: AHAPDynamicParameterID?
    return playerCall(player, check: { () throws(CFailure) in
        parameter = try parameterID(id)
        _ = try checkedTime(time)
    }) { try $0.sendParameters([AHAPDynamicParameter(parameter!, Double(value))], atTime: time) }
}

/// `hs_player_schedule_curve`: a parameter curve of 1 to 16 points, times relative to engine time `time`.
@_cdecl("hs_player_schedule_curve")
public func hsPlayerScheduleCurve(_ player: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ time: Double,
                                  _ times: UnsafePointer<Double>?, _ values: UnsafePointer<Float>?, _ count: Int) -> hs_status {
    var curve: AHAPParameterCurve?
    return playerCall(player, check: { () throws(CFailure) in
        let parameter = try parameterID(id)
        _ = try checkedTime(time)
        curve = AHAPParameterCurve(parameter, controlPoints: try curvePoints(times, values, count))
    }) { try $0.scheduleParameterCurve(curve!, atTime: time) }
}

/// `hs_player_set_finished_callback`: the callback (notifier thread) when a run ends; NULL clears it.
@_cdecl("hs_player_set_finished_callback")
public func hsPlayerSetFinishedCallback(_ player: OpaquePointer?, _ callback: hs_player_finished_callback?, _ user: UnsafeMutableRawPointer?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: PlayerBox = try Handles.get(player, "player")
        box.finished.withLock { $0 = (callback, UInt(bitPattern: user)) }
    }
}

/// `hs_player_destroy`: stops the player now and frees the handle; NULL is ignored.
@_cdecl("hs_player_destroy")
public func hsPlayerDestroy(_ player: OpaquePointer?) {
    guard let box = Handles.destroy(player, as: PlayerBox.self) else { return }
    try? box.player.stop(atTime: HapticEngine.timeImmediate)
}
