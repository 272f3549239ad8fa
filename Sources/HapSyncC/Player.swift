import AHAP
import CHapSync
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime

/// What an `hs_player` handle holds.
final class PlayerBox: @unchecked Sendable {
    let player: HapticPatternPlayer
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

/// Runs a player call, its engine errors as C statuses.
private func playerCall(_ handle: OpaquePointer?, _ body: (HapticPatternPlayer) throws -> Void) -> hs_status {
    cCall { () throws(CFailure) in
        let box: PlayerBox = try Handles.get(handle, "player")
        do { try body(box.player) } catch { throw cFailure(error) }
    }
}

/// A time argument: finite and not negative.
private func checkedTime(_ time: Double, _ name: String = "time") throws(CFailure) -> Double {
    guard time.isFinite, time >= 0 else { throw .invalid("\(name) \(time) must be 0 (now) or a time on the engine clock") }
    return time
}

@_cdecl("hs_player_create")
public func hsPlayerCreate(_ engine: OpaquePointer?, _ pattern: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> hs_status {
    cCall { () throws(CFailure) in
        guard let out else { throw .null("out") }
        out.pointee = nil
        let e: EngineBox = try Handles.get(engine, "engine")
        let p: PatternBox = try Handles.get(pattern, "pattern")
        do {
            let box = PlayerBox(try e.engine.makePlayer(timeline: p.playable.timeline, audioFiles: p.playable.audioFiles))
            let handle = Handles.make(box)
            box.handle = handle
            out.pointee = handle
        } catch {
            throw cFailure(error)
        }
    }
}

@_cdecl("hs_player_start")
public func hsPlayerStart(_ player: OpaquePointer?, _ time: Double) -> hs_status {
    cCall { () throws(CFailure) in
        let t = try checkedTime(time)
        let box: PlayerBox = try Handles.get(player, "player")
        do { _ = try box.player.start(atTime: t) } catch { throw cFailure(error) }
    }
}

@_cdecl("hs_player_stop")
public func hsPlayerStop(_ player: OpaquePointer?, _ time: Double) -> hs_status {
    guard time.isFinite, time >= 0 else { return cCall { () throws(CFailure) in _ = try checkedTime(time) } }
    return playerCall(player) { try $0.stop(atTime: time) }
}

@_cdecl("hs_player_pause")
public func hsPlayerPause(_ player: OpaquePointer?, _ time: Double) -> hs_status {
    guard time.isFinite, time >= 0 else { return cCall { () throws(CFailure) in _ = try checkedTime(time) } }
    return playerCall(player) { try $0.pause(atTime: time) }
}

@_cdecl("hs_player_resume")
public func hsPlayerResume(_ player: OpaquePointer?, _ time: Double) -> hs_status {
    guard time.isFinite, time >= 0 else { return cCall { () throws(CFailure) in _ = try checkedTime(time) } }
    return playerCall(player) { try $0.resume(atTime: time) }
}

@_cdecl("hs_player_seek")
public func hsPlayerSeek(_ player: OpaquePointer?, _ offset: Double) -> hs_status {
    guard offset.isFinite, offset >= 0 else { return cCall { () throws(CFailure) in throw .invalid("offset \(offset) must be 0 or more seconds") } }
    return playerCall(player) { try $0.seek(toOffset: offset) }
}

@_cdecl("hs_player_set_loop")
public func hsPlayerSetLoop(_ player: OpaquePointer?, _ enabled: Int32, _ end: Double) -> hs_status {
    guard end.isFinite, end >= 0 else { return cCall { () throws(CFailure) in throw .invalid("end \(end) must be 0 or more seconds") } }
    return playerCall(player) { p in
        p.loopEnd = end
        p.loopEnabled = enabled != 0
    }
}

@_cdecl("hs_player_set_rate")
public func hsPlayerSetRate(_ player: OpaquePointer?, _ rate: Double) -> hs_status {
    let range = HapticPatternPlayer.playbackRates
    guard rate.isFinite, range.contains(rate) else {
        return cCall { () throws(CFailure) in throw .invalid("rate \(rate) is outside \(range.lowerBound)...\(range.upperBound)") }
    }
    return playerCall(player) { $0.playbackRate = rate }
}

@_cdecl("hs_player_send_parameter")
public func hsPlayerSendParameter(_ player: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ value: Float, _ time: Double) -> hs_status {
    cCall { () throws(CFailure) in
        let box: PlayerBox = try Handles.get(player, "player")
        let parameter = try parameterID(id)
        let t = try checkedTime(time)
        do { try box.player.sendParameters([AHAPDynamicParameter(parameter, Double(value))], atTime: t) } catch { throw cFailure(error) }
    }
}

@_cdecl("hs_player_schedule_curve")
public func hsPlayerScheduleCurve(_ player: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ time: Double,
                                  _ times: UnsafePointer<Double>?, _ values: UnsafePointer<Float>?, _ count: Int) -> hs_status {
    cCall { () throws(CFailure) in
        let box: PlayerBox = try Handles.get(player, "player")
        let parameter = try parameterID(id)
        let t = try checkedTime(time)
        let points = try curvePoints(times, values, count)
        do { try box.player.scheduleParameterCurve(AHAPParameterCurve(parameter, controlPoints: points), atTime: t) } catch { throw cFailure(error) }
    }
}

@_cdecl("hs_player_set_finished_callback")
public func hsPlayerSetFinishedCallback(_ player: OpaquePointer?, _ callback: hs_player_finished_callback?, _ user: UnsafeMutableRawPointer?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: PlayerBox = try Handles.get(player, "player")
        box.finished.withLock { $0 = (callback, UInt(bitPattern: user)) }
    }
}

@_cdecl("hs_player_destroy")
public func hsPlayerDestroy(_ player: OpaquePointer?) {
    guard let box = Handles.destroy(player, as: PlayerBox.self) else { return }
    try? box.player.stop(atTime: HapticEngine.timeImmediate)
}
