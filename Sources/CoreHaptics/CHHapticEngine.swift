import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncCore
import HapSyncHapticOutput
import HapSyncOutputs
import HapSyncRuntime

/// Core Haptics' engine on Linux: `CHHapticEngine` over HapSync's real-time engine.
///
/// There is no device list here, so `init()` picks its outputs from the environment:
/// - `HAPSYNC_HAPTICS`: `evdev:auto` (the first rumble pad this user can open), `evdev:PATH`,
///   `trace:PATH`, `waveform:SINK[:CHANNELS]` (voice-coil actuators fed as audio, mixed into the
///   audio's stream when it plays to the same sink) or `none`. Unset: the first rumble pad if there is one, else none (then
///   `supportsHaptics` is false). `on`/`off` keep their accessibility meaning (haptics on or off).
/// - `HAPSYNC_AUDIO`: `auto` (default: PipeWire natively when a PipeWire server answers, else
///   PulseAudio's protocol), `pipewire`, `pulse` or `none`; `HAPSYNC_SINK`: the sink (PulseAudio's
///   sink name or PipeWire's node.name); `PULSE_SERVER` and `PIPEWIRE_REMOTE`: the servers, as
///   for every client of theirs.
/// - `HAPSYNC_TRACE`: a trace file (as `trace:PATH`) written beside the haptic output, for
///   checking what a pad was sent. A trace never replaces an existing file: `start()` fails
///   naming it (remove it first).
/// - `HAPSYNC_INTENSITY_SCALE`, `HAPSYNC_RATE_LIMIT_MS`: the accessibility policy, as for `hapsync`.
///
/// Handlers run on the engine's notifier thread, as Core Haptics runs them on its own queue.
public final class CHHapticEngine: @unchecked Sendable {
    /// Why the engine stopped: Core Haptics' reasons with Apple's raw values.
    public enum StoppedReason: Int, Sendable {
        /// The audio session was interrupted (here: the audio server went away).
        case audioSessionInterrupt = 1
        /// The application was suspended.
        case applicationSuspended = 2
        /// Auto-shutdown stopped an idle engine.
        case idleTimeout = 3
        /// A `notifyWhenPlayersFinished` handler returned `.stopEngine`.
        case notifyWhenFinished = 4
        /// The engine was destroyed.
        case engineDestroyed = 5
        /// The game controller (here: the rumble device) disconnected.
        case gameControllerDisconnect = 6
        /// An error occurred.
        case systemError = -1
    }

    /// What a finished handler wants next, with Apple's raw values.
    public enum FinishedAction: Int, Sendable {
        /// Stop the engine now that its players have finished (its stopped handler gets `.notifyWhenFinished`).
        case stopEngine = 1
        /// Keep it running.
        case leaveEngineRunning = 2
    }

    /// Called after the engine stopped on its own (not after `stop`).
    public typealias StoppedHandler = (CHHapticEngine.StoppedReason) -> Void
    /// Called after the engine reset (the audio server came back, or the backend reopened).
    public typealias ResetHandler = () -> Void
    /// Called when a start or stop has finished, with its error.
    public typealias CompletionHandler = (Error?) -> Void
    /// Called when every player has finished.
    public typealias FinishedHandler = (Error?) -> CHHapticEngine.FinishedAction

    /// HapSync's engine underneath.
    public let hapSyncEngine: HapticEngine
    private let audioOutput: SoundServerOutput?
    /// The outputs HapSync's engine plays to: they explain a failed start in the library's own
    /// settings (`HAPSYNC_AUDIO=none`).
    private let outputs: LibraryOutputs
    private let state = Locked(State())
    /// Starts and stops in the order they were called: `stop(completionHandler:)` followed at
    /// once by `start()` leaves the engine running (the later call wins), however the threads
    /// are scheduled.
    private let lifecycle = DispatchQueue(label: "CHHapticEngine.lifecycle")
    /// Started players, kept until they end or the engine stops.
    private let keeper = PlayerKeeper()

    private struct State {
        var stopped: Box<StoppedHandler> = Box { _ in }
        var reset: Box<ResetHandler> = Box {}
        var resources: [CHHapticAudioResourceID: AudioResource] = [:]
        var nextResource: CHHapticAudioResourceID = 1
        var playsHapticsOnly = false
        var playsAudioOnly = false
        var mutedForAudio = false
        var mutedForHaptics = false
    }

    /// Makes an engine whose outputs come from the environment (see the type's note).
    public convenience init() throws {
        try self.init(environment: ProcessInfo.processInfo.environment)
    }

    /// Makes an engine whose outputs come from `environment` (the variables in the type's note).
    public init(environment: [String: String]) throws {
        let outputs: LibraryOutputs
        do throws(LibraryOutputs.Failure) {
            // PULSE_SERVER and PIPEWIRE_REMOTE as every client reads them, from the environment given.
            outputs = try LibraryOutputs(environment: environment)
        } catch {
            // A bad value or a trace that would replace a file names its own variable's value; a
            // device that cannot be used, HAPSYNC_HAPTICS's.
            switch error.kind {
            case .invalidValue, .file: throw CHHapticError(.invalidEngineParameter, error.description)
            case .device: throw CHHapticError(.notSupported, "HAPSYNC_HAPTICS=\(error.description)")
            }
        }
        audioOutput = outputs.audio
        self.outputs = outputs
        let policy: HapticPolicy
        do {
            policy = try HapticPolicy().applying(environment: environment)
        } catch {
            throw CHHapticError(.invalidEngineParameter, "\(error)")
        }
        do {
            hapSyncEngine = try HapticEngine(configuration: .init(backend: outputs.backend, audio: audioOutput, hapticLatency: outputs.hapticLatency,
                                                                  policy: policy))
        } catch {
            throw CHHapticError(.invalidEngineParameter, "\(error)")
        }
        lifecycle.setSpecific(key: Self.lifecycleKey, value: ObjectIdentifier(self))
        hapSyncEngine.stoppedHandler = { [weak self] reason in self?.engineStopped(reason) }
        hapSyncEngine.resetHandler = { [weak self] in self?.state.withLock { $0.reset }.value() }
    }

    deinit {
        if hapSyncEngine.isRunning {
            hapSyncEngine.stop()
            state.withLock { $0.stopped }.value(.engineDestroyed)
        }
        keeper.releaseAll()
    }

    /// What the hardware can do (Core Haptics' class method; here, what the environment's outputs
    /// can do).
    public class func capabilitiesForHardware() -> CHHapticDeviceCapability {
        let engine = try? CHHapticEngine()
        return HardwareCapability(supportsHaptics: engine.map { $0.hapSyncEngine.capabilities.supportsHaptics } ?? false,
                                  supportsAudio: engine?.audioOutput?.canConnect() ?? false)
    }

    // MARK: - Handlers and settings

    /// Called after the engine stopped on its own.
    public var stoppedHandler: StoppedHandler {
        get { state.withLock { $0.stopped }.value }
        set { state.withLock { $0.stopped = Box(newValue) } }
    }

    /// Called after the engine reset; players must be made again, as in Core Haptics.
    public var resetHandler: ResetHandler {
        get { state.withLock { $0.reset }.value }
        set { state.withLock { $0.reset = Box(newValue) } }
    }

    /// Plays only haptics (audio events are silent).
    public var playsHapticsOnly: Bool {
        get { state.withLock { $0.playsHapticsOnly } }
        set { applyMutes { $0.playsHapticsOnly = newValue } }
    }

    /// Plays only audio (haptic events are silent).
    public var playsAudioOnly: Bool {
        get { state.withLock { $0.playsAudioOnly } }
        set { applyMutes { $0.playsAudioOnly = newValue } }
    }

    /// Silences every player's audio.
    public var isMutedForAudio: Bool {
        get { state.withLock { $0.mutedForAudio } }
        set { applyMutes { $0.mutedForAudio = newValue } }
    }

    /// Silences every player's haptics.
    public var isMutedForHaptics: Bool {
        get { state.withLock { $0.mutedForHaptics } }
        set { applyMutes { $0.mutedForHaptics = newValue } }
    }

    /// Changes the settings, then gives HapSync's engine the mutes they add up to (audio off for a
    /// mute or haptics only, haptics off for a mute or audio only).
    private func applyMutes(_ change: (inout State) -> Void) {
        let (audio, haptics) = state.withLock { s -> (Bool, Bool) in
            change(&s)
            return (s.mutedForAudio || s.playsHapticsOnly, s.mutedForHaptics || s.playsAudioOnly)
        }
        hapSyncEngine.isMutedForAudio = audio
        hapSyncEngine.isMutedForHaptics = haptics
    }

    /// Seconds without a playing player after which auto-shutdown stops the engine (Core Haptics
    /// does not document its own).
    public static let autoShutdownTimeout: TimeInterval = 2

    /// Stops the engine when no player has played for `autoShutdownTimeout` (the stopped handler
    /// hears `.idleTimeout`; the next player start restarts it). Settable at any time.
    public var isAutoShutdownEnabled: Bool {
        get { hapSyncEngine.idleTimeout != nil }
        set { hapSyncEngine.idleTimeout = newValue ? Self.autoShutdownTimeout : nil }
    }

    /// The engine's clock, seconds (CLOCK_MONOTONIC): the time base of `start(atTime:)` and friends.
    public var currentTime: TimeInterval { hapSyncEngine.currentTime }

    // MARK: - Start and stop

    /// Starts the engine: opens the haptic output and the audio stream. Returns once it runs,
    /// after any start or stop called before it.
    public func start() throws {
        try inOrder { try self.startNow() }
    }

    /// Starts the engine (after any start or stop called before), then calls
    /// `completionHandler` (on a dispatch queue) with the error, if any.
    public func start(completionHandler: CompletionHandler? = nil) {
        let done = Box(completionHandler)
        lifecycle.async {
            let error: Error?
            do { try self.startNow(); error = nil } catch let e { error = e }
            let result = Box(error)
            if done.value != nil { DispatchQueue.global().async { done.value?(result.value) } }
        }
    }

    /// Starts the engine (after any start or stop called before) without blocking the calling task.
    public func start() async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, Error>) in
            lifecycle.async {
                do { try self.startNow(); done.resume() } catch { done.resume(throwing: error) }
            }
        }
    }

    /// Stops the engine (after any start or stop called before), then calls `completionHandler`
    /// (on a dispatch queue) once everything has stopped and a trace is written, with the
    /// trace's write error if any. A start called after this one runs after it.
    public func stop(completionHandler: CompletionHandler? = nil) {
        let done = Box(completionHandler)
        lifecycle.async {
            let result = Box(self.stopNow())
            if done.value != nil { DispatchQueue.global().async { done.value?(result.value) } }
        }
    }

    /// Stops the engine (after any start or stop called before) and returns once everything
    /// has stopped and a trace is written; throws the trace's write error, if any.
    public func stop() async throws {
        let error = await withCheckedContinuation { (done: CheckedContinuation<Error?, Never>) in
            lifecycle.async { done.resume(returning: self.stopNow()) }
        }
        if let error { throw error }
    }

    /// Runs a start or stop in call order: on the lifecycle queue, after those called before,
    /// except from an engine handler (the notifier thread), which may be what a stop on the
    /// queue is waiting for, and on the queue itself.
    private func inOrder(_ body: () throws -> Void) throws {
        if hapSyncEngine.isNotifierThread || DispatchQueue.getSpecific(key: Self.lifecycleKey) == ObjectIdentifier(self) {
            return try body()
        }
        try lifecycle.sync { try body() }
    }

    /// Marks the lifecycle queue, so `inOrder` knows when it runs on it.
    private static let lifecycleKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Starts HapSync's engine now, its errors as Core Haptics'.
    private func startNow() throws {
        do {
            try hapSyncEngine.start()
        } catch {
            throw CHHapticError(.serverInitFailed, outputs.explain(startFailure: error))
        }
    }

    /// Stops HapSync's engine now (waiting for a stop a handler began), lets go of the players
    /// and returns the trace's write error, if any.
    private func stopNow() -> Error? {
        let error = hapSyncEngine.stop() ?? hapSyncEngine.waitUntilStopped()
        keeper.releaseAll()
        return error.map { CHHapticError(.unknownError, "\($0)") }
    }

    /// Calls `finishedHandler` once every player has finished; its answer stops the engine or not.
    public func notifyWhenPlayersFinished(finishedHandler: @escaping FinishedHandler) {
        let handler = Box(finishedHandler)
        hapSyncEngine.notifyWhenPlayersFinished { error in
            handler.value(error) == .stopEngine ? .stopEngine : .leaveEngineRunning
        }
    }

    // MARK: - Audio resources

    /// Registers an audio file for `CHHapticEvent(audioResourceID:...)`; returns its ID. Throws
    /// `.fileNotFound` for a path that is not a readable regular file. `options`:
    /// `CHHapticAudioResourceKeyLoopEnabled` (Bool, default false: the file repeats for the
    /// event's duration) and `CHHapticAudioResourceKeyUseVolumeEnvelope` (Bool, default true:
    /// 5 ms fades in and out); they apply to every event playing the resource, as if the event had
    /// `EventWaveformLoopEnabled` true / `EventWaveformUseVolumeEnvelope` false. Another key, or a
    /// value that is not a Bool, throws `.invalidParameterType` naming it.
    public func registerAudioResource(_ resourceURL: URL, options: [AnyHashable: Any] = [:]) throws -> CHHapticAudioResourceID {
        var resource = AudioResource(url: resourceURL)
        for (key, value) in options {
            guard let flag = value as? Bool else {
                throw CHHapticError(.invalidParameterType, "registerAudioResource options[\(key)]: \(value) is not a Bool")
            }
            switch key {
            case AnyHashable(CHHapticAudioResourceKeyLoopEnabled): resource.loopEnabled = flag
            case AnyHashable(CHHapticAudioResourceKeyUseVolumeEnvelope): resource.useVolumeEnvelope = flag
            default:
                throw CHHapticError(.invalidParameterType, "registerAudioResource options: \(key) is not a CHHapticAudioResourceKey (known: CHHapticAudioResourceKeyLoopEnabled, CHHapticAudioResourceKeyUseVolumeEnvelope)")
            }
        }
        var st = stat()
        guard resourceURL.isFileURL, stat(resourceURL.path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, access(resourceURL.path, R_OK) == 0 else {
            throw CHHapticError(.fileNotFound, "\(resourceURL.path) is not a readable regular file")
        }
        return state.withLock { s in
            let id = s.nextResource
            s.nextResource += 1
            s.resources[id] = resource
            return id
        }
    }

    /// A registered audio file and its options.
    struct AudioResource {
        var url: URL
        var loopEnabled = false
        var useVolumeEnvelope = true
    }

    /// Forgets a registered audio resource (players already made keep it).
    public func unregisterAudioResource(_ resourceID: CHHapticAudioResourceID) throws {
        let removed = state.withLock { $0.resources.removeValue(forKey: resourceID) }
        guard removed != nil else { throw CHHapticError(.invalidAudioResource, "no audio resource \(resourceID) is registered") }
    }

    // MARK: - Players

    /// A player for `pattern`.
    public func makePlayer(with pattern: CHHapticPattern) throws -> CHHapticPatternPlayer {
        try makeAdvancedPlayer(with: pattern)
    }

    /// An advanced player for `pattern` (pause, resume, seek, loop, rate).
    public func makeAdvancedPlayer(with pattern: CHHapticPattern) throws -> CHHapticAdvancedPatternPlayer {
        CHHapticPlayer(try player(for: pattern.ahapPattern), keeper: keeper)
    }

    /// Plays an AHAP file now, once (its audio found beside it).
    public func playPattern(from fileURL: URL) throws {
        try CHHapticPattern.requireFileURL(fileURL)
        do {
            try hapSyncEngine.playPattern(from: fileURL)
        } catch {
            let missing = !FileManager.default.fileExists(atPath: fileURL.path)
            throw CHHapticError(missing ? .fileNotFound : .invalidPatternData, "\(error)")
        }
    }

    /// Plays AHAP data now, once.
    public func playPattern(from data: Data) throws {
        let (pattern, files) = try withAudioResources(CHHapticPattern(data: data).ahapPattern)
        do {
            try hapSyncEngine.playPattern(pattern, audioFiles: files)
        } catch {
            throw CHHapticError(.invalidPatternData, "\(error)")
        }
    }

    private func player(for pattern: AHAPPattern) throws -> HapticPatternPlayer {
        let (pattern, files) = try withAudioResources(pattern)
        do {
            return try hapSyncEngine.makePlayer(with: pattern, audioFiles: files)
        } catch {
            throw CHHapticError(.invalidPatternData, "\(error)")
        }
    }

    /// The pattern with its audio-resource events given their resource's options, and the
    /// registered files by the waveform path those events carry; throws `.invalidAudioResource` for
    /// an event naming an ID that is not registered.
    private func withAudioResources(_ pattern: AHAPPattern) throws -> (AHAPPattern, [String: URL]) {
        let registered = state.withLock { $0.resources }
        var byPath: [String: AudioResource] = [:]
        for (id, resource) in registered { byPath[CHHapticPattern.waveformPath(forResource: id)] = resource }
        var pattern = pattern
        for (i, entry) in pattern.entries.enumerated() {
            guard case .event(var event) = entry, let path = event.waveformPath,
                  path.hasPrefix(CHHapticPattern.resourcePathPrefix) else { continue }
            guard let resource = byPath[path] else {
                throw CHHapticError(.invalidAudioResource, "\(path): no audio resource with that ID is registered")
            }
            event.loopEnabled = event.loopEnabled || resource.loopEnabled
            event.useVolumeEnvelope = event.useVolumeEnvelope && resource.useVolumeEnvelope
            pattern.entries[i] = .event(event)
        }
        return (pattern, byPath.mapValues(\.url))
    }

    private func engineStopped(_ reason: HapticEngine.StoppedReason) {
        let mapped: StoppedReason
        switch reason {
        case .engineDestroyed: mapped = .engineDestroyed
        case .deviceDisconnected: mapped = .gameControllerDisconnect
        case .systemError: mapped = .systemError
        case .audioServerLost: mapped = .audioSessionInterrupt
        case .idleTimeout: mapped = .idleTimeout
        case .finished: mapped = .notifyWhenFinished
        }
        keeper.releaseAll()
        state.withLock { $0.stopped }.value(mapped)
    }
}

/// A value that crosses threads under a lock or a dispatch hop (a handler of the caller's).
struct Box<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
