import CHapSync
import Foundation
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncCore
import HapSyncHapticOutput
import HapSyncOutputs
import HapSyncRuntime

/// What an `hs_engine` handle holds.
final class EngineBox: @unchecked Sendable {
    let engine: HapticEngine
    /// The outputs it plays to: they explain a failed start in the C API's own terms (nil for an
    /// engine made in Swift).
    let outputs: LibraryOutputs?
    /// The C callbacks and their user pointers (as integers: they only pass through).
    let callbacks = Locked<(stopped: hs_stopped_callback?, stoppedUser: UInt, reset: hs_reset_callback?, resetUser: UInt)>((nil, 0, nil, 0))

    init(engine: HapticEngine, outputs: LibraryOutputs?) {
        self.engine = engine
        self.outputs = outputs
        engine.stoppedHandler = { [weak self] reason in
            guard let (callback, user) = self?.callbacks.withLock({ ($0.stopped, $0.stoppedUser) }), let callback else { return }
            let code: Int32
            switch reason {
            case .audioServerLost: code = HS_STOPPED_AUDIO_SERVER_LOST.rawValue
            case .idleTimeout: code = HS_STOPPED_IDLE_TIMEOUT.rawValue
            case .finished: code = HS_STOPPED_FINISHED.rawValue
            case .engineDestroyed: code = HS_STOPPED_ENGINE_DESTROYED.rawValue
            case .deviceDisconnected: code = HS_STOPPED_DEVICE_DISCONNECTED.rawValue
            case .systemError: code = HS_STOPPED_SYSTEM_ERROR.rawValue
            }
            callback(hs_stopped_reason(rawValue: code), UnsafeMutableRawPointer(bitPattern: user))
        }
        engine.resetHandler = { [weak self] in
            guard let (callback, user) = self?.callbacks.withLock({ ($0.reset, $0.resetUser) }), let callback else { return }
            callback(UnsafeMutableRawPointer(bitPattern: user))
        }
    }
}

/// An engine error as a C status.
func cFailure(_ error: Error) -> CFailure {
    switch error as? HapticEngine.EngineError {
    case .notRunning?: return CFailure(status: HS_ERROR_NOT_RUNNING, message: "\(error)")
    case .tooManyPlayers?, .limitReached?: return CFailure(status: HS_ERROR_LIMIT, message: "\(error)")
    case .invalidParameter?, .invalidConfiguration?: return CFailure(status: HS_ERROR_INVALID_ARGUMENT, message: "\(error)")
    default: return CFailure(status: HS_ERROR_ENGINE, message: "\(error)")
    }
}

/// `hs_version`: the library version packed as major << 16 | minor << 8 | patch (HAPSYNC_VERSION).
@_cdecl("hs_version")
public func hsVersion() -> UInt32 { UInt32(HAPSYNC_VERSION_MAJOR << 16 | HAPSYNC_VERSION_MINOR << 8 | HAPSYNC_VERSION_PATCH) }

nonisolated(unsafe) private let versionString = strdup("\(HAPSYNC_VERSION_MAJOR).\(HAPSYNC_VERSION_MINOR).\(HAPSYNC_VERSION_PATCH)")!

/// `hs_version_string`: the version as static text ("0.1.0"); never freed.
@_cdecl("hs_version_string")
public func hsVersionString() -> UnsafePointer<CChar> { UnsafePointer(versionString) }

/// `hs_engine_create`: an engine from `config` (its outputs, as `LibraryOutputs` reads them); NULL config for the defaults.
@_cdecl("hs_engine_create")
public func hsEngineCreate(_ config: UnsafePointer<hs_engine_config>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> hs_status {
    cCall { () throws(CFailure) in
        guard let out else { throw .null("out") }
        out.pointee = nil
        let environment = ProcessInfo.processInfo.environment
        let haptics = config?.pointee.haptics.map { LibraryOutputs.Setting(String(cString: $0), source: "haptics") }
        let audio = config?.pointee.audio.map { LibraryOutputs.Setting(String(cString: $0), source: "audio") }
        let outputs: LibraryOutputs
        do throws(LibraryOutputs.Failure) {
            outputs = try LibraryOutputs(environment: environment, haptics: haptics, audio: audio)
        } catch {
            switch error.kind {
            case .invalidValue: throw .invalid(error.description)
            case .file: throw CFailure(status: HS_ERROR_FILE, message: "haptics \(error.description)")
            case .device: throw CFailure(status: HS_ERROR_ENGINE, message: "haptics \(error.description)")
            }
        }
        let policy: HapticPolicy
        do { policy = try HapticPolicy().applying(environment: environment) } catch { throw .invalid("\(error)") }
        do {
            let engine = try HapticEngine(configuration: .init(backend: outputs.backend, audio: outputs.audio, hapticLatency: outputs.hapticLatency,
                                                               policy: policy))
            out.pointee = Handles.make(EngineBox(engine: engine, outputs: outputs))
        } catch {
            throw cFailure(error)
        }
    }
}

/// `hs_engine_start`: opens the outputs and starts the engine's threads.
@_cdecl("hs_engine_start")
public func hsEngineStart(_ engine: OpaquePointer?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: EngineBox = try Handles.get(engine, "engine")
        do { try box.engine.start() } catch {
            let failure = cFailure(error)
            throw CFailure(status: failure.status, message: box.outputs?.explain(startFailure: error) ?? "\(error)")
        }
    }
}

/// `hs_engine_stop`: stops and writes the traces; from one of the engine's own callbacks it finishes on a helper thread.
@_cdecl("hs_engine_stop")
public func hsEngineStop(_ engine: OpaquePointer?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: EngineBox = try Handles.get(engine, "engine")
        if let error = box.engine.stop() { throw CFailure(status: HS_ERROR_ENGINE, message: "\(error)") }
    }
}

/// `hs_engine_destroy`: stops the engine if running and frees the handle (NULL is ignored).
@_cdecl("hs_engine_destroy")
public func hsEngineDestroy(_ engine: OpaquePointer?) {
    guard let box = Handles.destroy(engine, as: EngineBox.self) else { return }
    if box.engine.isRunning { box.engine.stop() }
}

/// `hs_engine_current_time`: seconds on the engine clock, 0 for a bad handle.
@_cdecl("hs_engine_current_time")
public func hsEngineCurrentTime(_ engine: OpaquePointer?) -> Double {
    (try? Handles.get(engine, "engine", as: EngineBox.self))?.engine.currentTime ?? 0
}

/// `hs_engine_set_stopped_callback`: the callback (notifier thread) for an engine that stopped on its own; NULL clears it.
@_cdecl("hs_engine_set_stopped_callback")
public func hsEngineSetStoppedCallback(_ engine: OpaquePointer?, _ callback: hs_stopped_callback?, _ user: UnsafeMutableRawPointer?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: EngineBox = try Handles.get(engine, "engine")
        box.callbacks.withLock { $0.stopped = callback; $0.stoppedUser = UInt(bitPattern: user) }
    }
}

/// `hs_engine_set_reset_callback`: the callback (notifier thread) after a reset (the audio server came back); NULL clears it.
@_cdecl("hs_engine_set_reset_callback")
public func hsEngineSetResetCallback(_ engine: OpaquePointer?, _ callback: hs_reset_callback?, _ user: UnsafeMutableRawPointer?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: EngineBox = try Handles.get(engine, "engine")
        box.callbacks.withLock { $0.reset = callback; $0.resetUser = UInt(bitPattern: user) }
    }
}

/// `hs_engine_set_haptics_muted`: mutes (non-zero) or unmutes every haptic the engine plays.
@_cdecl("hs_engine_set_haptics_muted")
public func hsEngineSetHapticsMuted(_ engine: OpaquePointer?, _ muted: Int32) -> hs_status {
    cCall { () throws(CFailure) in (try Handles.get(engine, "engine", as: EngineBox.self)).engine.isMutedForHaptics = muted != 0 }
}

/// `hs_engine_set_audio_muted`: mutes (non-zero) or unmutes every sound the engine plays.
@_cdecl("hs_engine_set_audio_muted")
public func hsEngineSetAudioMuted(_ engine: OpaquePointer?, _ muted: Int32) -> hs_status {
    cCall { () throws(CFailure) in (try Handles.get(engine, "engine", as: EngineBox.self)).engine.isMutedForAudio = muted != 0 }
}

/// `hs_engine_set_policy`: the accessibility policy (haptics on or off, intensity scale 0...1, rate limit in ms).
@_cdecl("hs_engine_set_policy")
public func hsEngineSetPolicy(_ engine: OpaquePointer?, _ enabled: Int32, _ scale: Double, _ rateLimitMilliseconds: Double) -> hs_status {
    cCall { () throws(CFailure) in
        let box: EngineBox = try Handles.get(engine, "engine")
        guard scale.isFinite, (0...1).contains(scale) else { throw .invalid("intensity_scale \(scale) is outside 0...1") }
        guard rateLimitMilliseconds.isFinite, (0...60_000).contains(rateLimitMilliseconds) else {
            throw .invalid("rate_limit_ms \(rateLimitMilliseconds) is outside 0...60000")
        }
        do {
            try box.engine.setPolicy(HapticPolicy(hapticsEnabled: enabled != 0, intensityScale: scale, rateLimitInterval: rateLimitMilliseconds / 1000))
        } catch {
            throw cFailure(error)
        }
    }
}

/// `hs_engine_play_feedback`: plays a built-in feedback style ("success", "impact-heavy", ...) now at `intensity` 0...1.
@_cdecl("hs_engine_play_feedback")
public func hsEnginePlayFeedback(_ engine: OpaquePointer?, _ style: UnsafePointer<CChar>?, _ intensity: Float) -> hs_status {
    cCall { () throws(CFailure) in
        let box: EngineBox = try Handles.get(engine, "engine")
        let name = try cString(style, "style")
        guard intensity.isFinite, (0...1).contains(intensity) else { throw .invalid("intensity \(intensity) is outside 0...1") }
        guard let feedback = SensoryFeedback.named(name, intensity: Double(intensity)) else {
            throw .invalid("style \"\(name)\" is not one of \(SensoryFeedback.all.map(\.name).joined(separator: ", "))")
        }
        do { _ = try box.engine.play(feedback) } catch { throw cFailure(error) }
    }
}

/// `hs_engine_get_statistics`: the commands applied, ring overflows and dispatch percentiles so far.
@_cdecl("hs_engine_get_statistics")
public func hsEngineGetStatistics(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<hs_statistics>?) -> hs_status {
    cCall { () throws(CFailure) in
        let box: EngineBox = try Handles.get(engine, "engine")
        guard let out else { throw .null("out") }
        let s = box.engine.statistics
        let sorted = s.dispatchErrors.sorted()
        func percentile(_ p: Double) -> Double { Double(sorted.nearestRankPercentile(p) ?? 0) / 1000 }
        out.pointee = hs_statistics(applied: UInt64(s.applied), output_overflows: UInt64(s.outputOverflows),
                                    dispatch_p50_us: percentile(50), dispatch_p99_us: percentile(99),
                                    dispatch_max_us: Double(sorted.last ?? 0) / 1000)
    }
}

/// An `hs_engine` handle over an engine made in Swift (with a backend C cannot name), for
/// benchmarks and tests that compare the C calls with the Swift ones on one engine. Destroy it
/// with `hs_engine_destroy` (which stops the engine).
public func hsEngineHandle(wrapping engine: HapticEngine) -> OpaquePointer {
    Handles.make(EngineBox(engine: engine, outputs: nil))
}
