import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import Synchronization

/// Core Haptics' `CHHapticAdvancedPatternPlayer`: every HapSync player has the advanced features.
public typealias HapticAdvancedPatternPlayer = HapticPatternPlayer

/// Plays one compiled pattern on an engine, like Core Haptics' `CHHapticAdvancedPatternPlayer`.
///
/// `start(atTime:)`, `stop(atTime:)`, `pause(atTime:)`, `resume(atTime:)`, `seek(toOffset:)`
/// and the settings post a message to the scheduler and return at once; they never wait for it.
/// Times are engine times (`HapticEngine.currentTime`); `timeImmediate` (0) or any time already
/// past means now. Audio and haptics of the player move together through all of them: a start at
/// an offset starts audio voices part-way through, a pause fades them out, a loop restarts them.
public final class HapticPatternPlayer: @unchecked Sendable {
    /// How a playback ended.
    public enum Completion: Sendable, Equatable {
        /// It played to its end (the last release or audio voice).
        case finished
        /// `stop(atTime:)`, a restart or the engine stopping ended it early.
        case stopped
    }

    /// The compiled pattern this player plays.
    public let timeline: PatternTimeline
    /// A number unique within the engine, recorded with each of this player's commands.
    public let id: UInt32
    /// Called on the engine's notifier thread when a playback ends (not when it pauses).
    public var completionHandler: (@Sendable (Completion) -> Void)? {
        get { settings.withLock { $0.completion } }
        set { settings.withLock { $0.completion = newValue } }
    }
    /// Whether the player plays or is about to: a start or resume asked for and not yet handled,
    /// or a run under way. False when paused, finished or stopped, or when its engine is gone.
    public var isPlaying: Bool { engine?.isPlaying(id) ?? false }
    /// For a player that follows the audio clock: the output frame its latest start on that
    /// clock (or loop pass) put pattern time 0 on (known shortly after `start`), else nil.
    public var audioStartFrame: Int64? {
        get { startFrame.withLock { $0 } }
        set { startFrame.withLock { $0 = newValue } }
    }
    /// Called on the engine's notifier thread with the output frame each start, and each pass of
    /// a loop, puts pattern time 0 on, for a player that follows the audio clock.
    public var audioStartHandler: (@Sendable (Int64) -> Void)? {
        get { settings.withLock { $0.audioStart } }
        set { settings.withLock { $0.audioStart = newValue } }
    }
    /// The source this player's starts count against for the policy's per-source rate limit (nil: none).
    public var source: String? {
        get { settings.withLock { $0.source } }
        set { settings.withLock { $0.source = newValue } }
    }
    /// Whether the pattern repeats: at `loopEnd` (or its end when `loopEnd` is 0) it goes on from 0.
    /// A loop pass lasts at least `minimumLoopPeriod` (see there); `setLoop(_:end:passes:)` is the
    /// call that says when a setting is out of bounds instead.
    public var loopEnabled: Bool {
        get { settings.withLock { $0.loopEnabled } }
        set { settings.withLock { $0.loopEnabled = newValue }; sendLoop() }
    }
    /// Where a loop wraps (pattern seconds; 0 means the pattern's end), clamped to `loopEnds`
    /// (NaN is 0). `setLoop(_:end:passes:)` refuses instead of clamping.
    public var loopEnd: TimeInterval {
        get { settings.withLock { $0.loopEnd } }
        set { settings.withLock { $0.loopEnd = newValue.isNaN ? 0 : newValue.clamped(to: Self.loopEnds) }; sendLoop() }
    }
    /// The playback rates a player takes (0.01...100): the one range every rate is clamped to.
    /// Its floor is the audio decoding rule's (`AudioDecodingBudget.slowestPlaybackRate`: the
    /// slowest rate reads furthest into a file).
    public static let playbackRates: ClosedRange<Double> = AudioDecodingBudget.slowestPlaybackRate...100

    /// The loop ends a player takes: 0 (the pattern's end) up to `AHAPLimits.default.maxTime`
    /// (one day), the latest time a pattern may hold, so that every loop converts to engine
    /// nanoseconds without overflowing (a loop end of 2e10 s once wrapped the scheduler's
    /// arithmetic and spun it).
    public static let loopEnds: ClosedRange<Double> = 0...AHAPLimits.default.maxTime

    /// The shortest a loop pass lasts on the engine clock (its length ÷ the rate): 10 ms, the
    /// interval a rumble pad takes updates at. The scheduler wraps a shorter loop after this
    /// long (at pattern time rate × 10 ms), so no setting costs more than 100 wraps a second;
    /// `setLoop(_:end:passes:)` and `setPlaybackRate(_:)` refuse such a loop instead. A loop shorter than
    /// 1 ms of pattern time (taps at 0 with `loopEnd` 0) does not loop: the pattern plays once.
    public static let minimumLoopPeriod: TimeInterval = 0.01

    /// The shortest loop that loops, pattern seconds: a shorter one (taps at 0 with `loopEnd` 0)
    /// plays once.
    public static let shortestLoop: TimeInterval = Scheduler.shortestLoop

    /// What is wrong with looping (`enabled`) at `end` at `rate`, nil when nothing is: an end
    /// outside `loopEnds`, or a pass shorter than `minimumLoopPeriod`. The one check every front
    /// end (Swift, C, OSC) makes.
    public func loopProblem(enabled: Bool, end: TimeInterval, rate: Double) -> String? {
        guard end.isFinite, Self.loopEnds.contains(end) else {
            return "loop end \(end) s is outside \(Self.loopEnds.lowerBound)...\(Self.loopEnds.upperBound) (0: the pattern's end; at most one day, the latest time a pattern holds)"
        }
        let length = end > 0 ? end : timeline.end
        guard enabled, length >= Scheduler.shortestLoop, length / rate < Self.minimumLoopPeriod else { return nil }
        return "a loop pass must last at least \(Int(Self.minimumLoopPeriod * 1000)) ms: \(length) s of pattern at rate \(rate) lasts \(length / rate * 1000) ms (loop over a longer span, or play slower)"
    }

    /// Pattern seconds per second (`playbackRates`, default 1): event times and durations scale, audio
    /// pitch does not. Changing it while playing keeps the place reached. A rate outside
    /// `playbackRates` is clamped (NaN and infinities are 1); `setPlaybackRate(_:)` refuses instead.
    public var playbackRate: Double {
        get { settings.withLock { $0.rate } }
        set {
            let r = (newValue.isFinite ? newValue : 1).clamped(to: Self.playbackRates)
            settings.withLock { $0.rate = r }
            engine?.sendPlayer(.setRate, slot: slot, id: id, value: r)
        }
    }

    /// Loops (or stops looping) at `end` (pattern seconds; 0: the pattern's end), for `passes`
    /// passes in a run (0: until stopped). Every start (and a resume that begins a run) plays the
    /// whole count, its first pass however far into the pattern it starts; set while playing, the
    /// count starts from the pass under way (as does setting `loopEnabled` or `loopEnd`, which keep
    /// it). Each wrap uses one, and the last pass ends the run where it would have wrapped, as
    /// `finished` (`hapsync play --loop N` is one player with N passes). Throws `invalidParameter`, changing nothing, for
    /// an end outside `loopEnds`, a negative count, or a loop whose pass at the current rate is
    /// shorter than `minimumLoopPeriod`.
    public func setLoop(_ enabled: Bool, end: TimeInterval, passes: Int = 0) throws(HapticEngine.EngineError) {
        if let problem = loopProblem(enabled: enabled, end: end, rate: playbackRate) { throw .invalidParameter(problem) }
        guard (0...Int(UInt32.max)).contains(passes) else { throw .invalidParameter("a loop of \(passes) passes: the count is 0 (until stopped) to \(UInt32.max)") }
        settings.withLock { $0.loopEnabled = enabled; $0.loopEnd = end; $0.loopPasses = UInt32(passes) }
        sendLoop()
    }

    /// Sets the rate. Throws `invalidParameter`, changing nothing, for a rate outside
    /// `playbackRates` or one at which the loop set would pass in under `minimumLoopPeriod`.
    public func setPlaybackRate(_ rate: Double) throws(HapticEngine.EngineError) {
        guard rate.isFinite, Self.playbackRates.contains(rate) else {
            throw .invalidParameter("rate \(rate) is outside \(Self.playbackRates.lowerBound)...\(Self.playbackRates.upperBound)")
        }
        let loop = settings.withLock { ($0.loopEnabled, $0.loopEnd) }
        if let problem = loopProblem(enabled: loop.0, end: loop.1, rate: rate) { throw .invalidParameter(problem) }
        playbackRate = rate
    }

    /// Mutes this player's haptics and audio (it keeps playing silently).
    public var isMuted: Bool {
        get { settings.withLock { $0.muted } }
        set {
            settings.withLock { $0.muted = newValue }
            guard let engine else { return }
            engine.live.setMuted(slot: slot, newValue)
            engine.sendPlayer(.refresh, slot: slot, id: id)
        }
    }

    private struct Settings {
        var completion: (@Sendable (Completion) -> Void)?
        var audioStart: (@Sendable (Int64) -> Void)?
        var source: String?
        var loopEnabled = false
        var loopEnd: TimeInterval = 0
        var loopPasses: UInt32 = 0
        var rate = 1.0
        var muted = false
    }

    private let startFrame = Locked<Int64?>(nil)
    private let settings = Locked(Settings())
    private weak var engine: HapticEngine?
    private let slot: Int

    init(engine: HapticEngine, slot: Int, id: UInt32, timeline: PatternTimeline) {
        self.engine = engine
        self.slot = slot
        self.id = id
        self.timeline = timeline
    }

    deinit { engine?.retire(slot: slot, id: id) }

    private func sendLoop() {
        let s = settings.withLock { $0 }
        engine?.sendPlayer(.setLoop, slot: slot, id: id, value: s.loopEnd, flag: s.loopEnabled, count: s.loopPasses)
    }

    /// Starts (or restarts) playback from the beginning so that pattern time 0 falls at `time`.
    /// Does not wait. Returns false when the policy's per-source rate limit merged this start
    /// into the previous one from the same `source` (nothing new plays).
    @discardableResult
    public func start(atTime time: TimeInterval) throws -> Bool {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        // startPlayer restarts an engine the idle timer stopped, and refuses a stopped one.
        return try engine.startPlayer(slot: slot, id: id, at: time, source: source)
    }

    /// Starts (or restarts) playback from the beginning so that pattern time 0 is heard with
    /// audio output frame `outputFrame` of the engine's audio, expected at `time` (the rate
    /// limit's time, and the start's if the engine has no audio clock). A player without audio of
    /// its own then follows the audio clock as one with audio does: each command is released by
    /// when its frame is heard, and carries that frame (`OutputCommand.frame`), so a drive mixed
    /// into the audio stream places it on that frame, sample-locked to what else that stream
    /// plays there (`hapsync live`'s sound played on). A negative frame, an engine without
    /// audio, or a player with audio of its own (whose audio sets its frames): as
    /// `start(atTime:)`. Does not wait; false when the rate limit merged it.
    @discardableResult
    package func start(atTime time: TimeInterval, outputFrame: Int64) throws -> Bool {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        return try engine.startPlayer(slot: slot, id: id, at: time, source: source, frame: max(outputFrame, -1))
    }

    /// Stops playback at `time` (the completion handler hears `.stopped`). Does not wait.
    public func stop(atTime time: TimeInterval) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        try engine.stopPlayer(slot: slot, id: id, at: time)
    }

    /// Pauses at `time`, remembering the pattern offset reached; audio fades out over 5 ms.
    public func pause(atTime time: TimeInterval) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        try engine.stopPlayer(slot: slot, id: id, at: time, pause: true)
    }

    /// Resumes at `time` from the offset where it paused (or was sought to; 0 if neither).
    public func resume(atTime time: TimeInterval) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        _ = try engine.startPlayer(slot: slot, id: id, at: time, kind: .resume)
    }

    /// Moves to pattern offset `offset` (seconds): at once when playing, else where the next
    /// `resume` begins.
    public func seek(toOffset offset: TimeInterval) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        guard offset.isFinite, offset >= 0, offset <= AHAPLimits.default.maxTime else {
            throw HapticEngine.EngineError.invalidParameter("seek offset \(offset) s is outside 0...\(AHAPLimits.default.maxTime) seconds")
        }
        guard engine.isRunning else { throw HapticEngine.EngineError.notRunning }
        engine.sendPlayer(.seek, slot: slot, id: id, value: offset)
    }

    /// Moves the run a `start` asked for to begin at `time` instead, if it has released nothing
    /// yet (its first event, the haptic latency before it is felt, has not gone out); else does
    /// nothing, so what went out is never played twice. For players without audio and without
    /// a loop (a player with audio follows the audio clock; a looping one is left as it is).
    /// Does not wait.
    /// With `outputFrame` (≥ 0), the run starts on that audio output frame instead, expected
    /// heard at `time` (`start(atTime:outputFrame:)`).
    package func movePendingStart(toTime time: TimeInterval, outputFrame: Int64 = -1) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        try engine.movePendingRun(slot: slot, id: id, to: time, frame: max(outputFrame, -1), drop: false)
    }

    /// Drops the run a `start` asked for if it has released nothing yet (reported as stopped);
    /// else does nothing. For players without audio. Does not wait.
    package func dropPendingStart() throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        try engine.movePendingRun(slot: slot, id: id, to: 0, drop: true)
    }

    /// Stops at once (Core Haptics' `cancel()`).
    public func cancel() throws { try stop(atTime: HapticEngine.timeImmediate) }

    // MARK: - Live parameters

    /// Sends dynamic parameters, the pattern's own type: each takes effect at `time` + its `time`
    /// (in a pattern it counts from the pattern's start, here from `time`, as Core Haptics'
    /// `relativeTime` does) and holds until replaced. Intensity and volume controls multiply what
    /// the pattern plays, sharpness, pan, pitch and brightness controls add to it, exactly as in a
    /// file. The time is when the change is felt (or heard), as a start's time is: with a haptic
    /// latency it goes out that much earlier. Supported IDs: HapticIntensityControl,
    /// HapticSharpnessControl, AudioVolumeControl, AudioPanControl, AudioPitchControl,
    /// AudioBrightnessControl.
    public func sendParameters(_ parameters: [AHAPDynamicParameter], atTime time: TimeInterval) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        let base = engine.engineNanoseconds(time)
        var sends: [(LiveParameters.Control, UInt64, Double)] = []
        for (i, p) in parameters.enumerated() {
            let control = try Self.control(p.id, value: p.value, at: "parameters[\(i)]")
            try Self.checkRelativeTime(p.time, "parameters[\(i)]: time")
            sends.append((control, base.addingSaturated(UInt64(nanosecondsOf: p.time)), p.value))
        }
        try send(sends.map { ($0.0, [LiveParameters.Point(time: $0.1, value: $0.2, ramp: false)]) })
    }

    /// Schedules a parameter curve, the pattern's own type, starting at `time` + its `time`: linear
    /// between its control points (times from the curve's start), then holding the last. Same IDs
    /// and rules as `sendParameters`; 1 to 16 control points, as in Core Haptics.
    public func scheduleParameterCurve(_ curve: AHAPParameterCurve, atTime time: TimeInterval) throws {
        guard let engine else { throw HapticEngine.EngineError.notRunning }
        guard !curve.controlPoints.isEmpty, curve.controlPoints.count <= 16 else {
            throw HapticEngine.EngineError.invalidParameter("a parameter curve needs 1 to 16 control points, got \(curve.controlPoints.count)")
        }
        var control: LiveParameters.Control?
        var lastTime = -Double.infinity
        for (i, point) in curve.controlPoints.enumerated() {
            control = try Self.control(curve.id, value: point.value, at: "controlPoints[\(i)]")
            try Self.checkRelativeTime(point.time, "controlPoints[\(i)]: time")
            guard point.time >= lastTime else {
                throw HapticEngine.EngineError.invalidParameter("controlPoints[\(i)]: time \(point.time) goes back in time (the point before is at \(lastTime))")
            }
            lastTime = point.time
        }
        try Self.checkRelativeTime(curve.time, "curve time")
        let base = engine.engineNanoseconds(time).addingSaturated(UInt64(nanosecondsOf: curve.time))
        let points = curve.controlPoints.enumerated().map { i, p in
            LiveParameters.Point(time: base.addingSaturated(UInt64(nanosecondsOf: p.time)), value: p.value,
                                 ramp: i + 1 < curve.controlPoints.count)
        }
        try send([(control!, points)])
    }

    /// Hands live breakpoints to the engine in order, then asks the scheduler to evaluate them.
    /// A send that would leave more than `LiveParameters.capacity` breakpoints in its control is
    /// refused whole, and so are those after it (those before it stay applied).
    private func send(_ sends: [(LiveParameters.Control, [LiveParameters.Point])]) throws(HapticEngine.EngineError) {
        guard let engine else { throw .notRunning }
        defer { engine.sendPlayer(.refresh, slot: slot, id: id) }
        let now = engine.configuration.clock.now()
        for (i, (control, points)) in sends.enumerated() {
            do throws(LiveParameters.Overflow) {
                try engine.live.send(slot: slot, control, points, now: now)
            } catch {
                let rest = sends.count - i
                throw .limitReached(error.description + (sends.count > 1 ? " (\(rest) of the \(sends.count) sent refused)" : ""))
            }
        }
    }

    /// A time counted from a call's time (a parameter's, a curve's or a control point's): 0 up
    /// to `AHAPLimits.default.maxTime`, as in a file.
    private static func checkRelativeTime(_ time: TimeInterval, _ what: String) throws(HapticEngine.EngineError) {
        guard time.isFinite, time >= 0, time <= AHAPLimits.default.maxTime else {
            throw .invalidParameter("\(what) \(time) s is outside 0...\(AHAPLimits.default.maxTime) (at most one day after the call's time)")
        }
    }

    /// The live control for a parameter ID, with the value checked against its range.
    private static func control(_ id: AHAPDynamicParameterID, value: Double, at place: String) throws -> LiveParameters.Control {
        guard let control = LiveParameters.Control(id) else {
            let supported = LiveParameters.Control.allCases.map(\.parameterID.rawValue).joined(separator: ", ")
            throw HapticEngine.EngineError.invalidParameter("\(place): \(id.rawValue) cannot be sent live (envelope times are fixed when a pattern is compiled); supported: \(supported)")
        }
        let range = id.range
        guard value.isFinite, range.contains(value) else {
            throw HapticEngine.EngineError.invalidParameter("\(place): \(id.rawValue) value \(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return control
    }
}
