import CPipeWire
import Glibc
import HapSyncAudioStream
import HapSyncConcurrency
import HapSyncRuntime
import HapSyncSystem
import Synchronization

/// A sink made natively on PipeWire (`hapsync live` on PipeWire): a node with media.class
/// Audio/Sink, named `name` ("hapsync-live") and described `description` ("HapSync Live"),
/// float32 stereo at the graph's rate, that applications play into like any sink (desktops list
/// it; pipewire-pulse shows it to PulseAudio clients, so `PULSE_SINK=hapsync-live` and pactl
/// work), and whose process callback, in PipeWire's real-time data thread, hands what they played
/// this cycle to a handler: what `hapsync live` analyses and plays on.
///
/// Contract:
/// - The node belongs to this capture's connection: it goes when the capture stops or the
///   process dies (nothing is ever left behind), and the session manager then moves the
///   streams that played into it to the default sink.
/// - It processes every cycle, linked or not (`node.always-process`): frames run on at the
///   graph's pace whether anything plays, as a null sink's monitor does. `node.group` `group`
///   puts it in the cycles of the driver that drives the other nodes of that group (the stream
///   that plays the sound on: the capture and the sound played on are then sample-locked).
/// - `node.latency` is `fragmentSeconds`, rounded up to a power of two frames (the graph's cycles
///   are; it would round down): the graph's cycle, when it is the shortest its nodes ask for;
///   `setFragment` changes it while it runs (`hapsync live` after underruns).
/// - Frames are numbered from the node's first cycle, one after another. A cycle whose graph
///   clock moved on further than the frames handed over (the data thread missed cycles) is a gap:
///   handed over as silence (at most `silenceFrames` a piece, at most 2 s in all; more is counted
///   and not numbered) and counted in `overruns` and `lostFrames`, so that numbers keep time.
/// - `handler(samples, firstFrame)` runs on the data thread ("hapsync-capture", at SCHED_FIFO
///   `realtimePriority` when given): it must not block, allocate or lock. The samples are
///   PipeWire's buffer, valid only during the call.
/// - Timing: each cycle's first frame entered the sink at the cycle's start (`pw_time.now`), as
///   a null sink renders what is played into it at its cycle; `clock` fits those, and
///   `playedTime(ofFrame:)` reads it. `sinkLatency` is 0: the node plays nothing itself.
/// - `stop()` disconnects (the node goes) and is idempotent; not from the data thread. If the
///   server goes away, or the node fails, `onFailure` is called once, on PipeWire's loop thread,
///   with a sentence naming the sink and the server; `serverWentAway` tells the two apart.
/// - `properties` go on the node as they are (`hapsync live`'s owner marker, as on its
///   PulseAudio sink, so that another run sees whose it is).
///
/// Made with `init(monitoring:...)` instead, it makes no sink: it records the monitor of an
/// existing sink (`hapsync live --no-delay` on PipeWire), a capture stream
/// (stream.capture.sink) in that sink's graph, with the sink's own channels. Each cycle it hands
/// over what the sink took, numbered and gap-filled as above; `playedTime(ofFrame:)` is when the
/// sink took it (the cycle's start; a cycle earlier when the sink drives the graph, as a sound
/// card does: a driver runs last in its cycle, so the nodes it drives read of its monitor what
/// it took the cycle before) and `sinkLatency` how much later it is heard:
/// the sink's own latency as it reports it (SPA_PARAM_Latency for its input, at the cycle's
/// quantum: for a sound card a quantum and its headroom, 0 for a null or pipe sink), what
/// PipeWire tells a stream that plays into it (the same model `PipeWireOutput` places its own
/// frames by). It does not follow another sink: the sink going away fails it (`onFailure`).
package final class PipeWireSinkCapture: @unchecked Sendable {
    /// What receives the frames: interleaved samples (`channels` a frame: 2 for a sink made, the
    /// monitored sink's own for a monitor) and the number of the first. Runs on
    /// the data thread; must not block, allocate or lock.
    package typealias Handler = (_ samples: UnsafeBufferPointer<Float>, _ firstFrame: Int64) -> Void

    /// The data thread's name, as the PulseAudio capture's thread (at most 15 characters).
    package static let threadName = AudioStreamRenderer.captureThreadName

    /// The sink's node.name: the one made, or the one whose monitor is recorded.
    package let name: String
    /// Whether it records an existing sink's monitor (`init(monitoring:...)`), not a sink of its own.
    package let monitors: Bool
    /// What desktops show for it.
    package let description: String
    /// The server (PIPEWIRE_REMOTE's form; nil: the default).
    package let remote: String?
    /// node.group (nil: none).
    package let group: String?
    /// More properties for the node, key to value.
    package let properties: [(String, String)]
    /// The cycle asked for, seconds (`node.latency`).
    package private(set) var fragmentSeconds: Double
    /// The graph's rate (known after `start`).
    package private(set) var sampleRate: Double = 48_000
    /// Samples a frame: 2 for a sink made; the monitored sink's own (as found when made).
    package let channels: Int
    /// The frames of the latest cycle (the graph's quantum; 0 before the first).
    package var fragmentFrames: Int { Int(lastCycleFrames.load(ordering: .relaxed)) }
    /// Frame → CLOCK_MONOTONIC time it entered the sink (reset by `start`).
    package let clock = AudioClock(sampleRate: 48_000)
    /// The SCHED_FIFO priority the data thread asks for on its first cycle (nil: as PipeWire made it).
    package let realtimePriority: Int32?
    /// What the data thread got, once started with `realtimePriority` (kept after `stop`).
    package private(set) var realtimeThread: RealtimeThread?
    /// Where the handler's time is recorded, when given.
    package let handlerTimes: CaptureHandlerTimes?
    /// The longest piece of silence handed over for a gap, frames.
    package static let silenceFrames = 2048

    private let handler: Handler
    private let onFailure: (@Sendable (String) -> Void)?
    private var stream: OpaquePointer?
    /// Named before the node is made (the loop thread's failure reads it): the server, not yet
    /// its version.
    private let serverText: String
    // The data thread's own: the next frame's number, the graph clock's ticks expected next.
    private var nextFrame: Int64 = 0
    private var expectedTicks: UInt64?
    private var lastNow: Int64 = 0
    private var silence: UnsafeMutablePointer<Float>?
    private let captured = Atomic<Int64>(0)
    private let lostCount = Atomic<Int64>(0)
    private let filledCount = Atomic<Int64>(0)
    private let overrunCount = Atomic<Int>(0)
    private let lastCycleFrames = Atomic<Int>(0)
    /// A monitor's latest cycle: how much later than the cycle's start its frames are heard
    /// (the sink's latency), µs.
    private let sinkDelay = Atomic<Int64>(0)
    /// Cycles run since `start`.
    private let cycles = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private let failed = Atomic<Bool>(false)
    private let serverGone = Atomic<Bool>(false)

    /// A sink `name` (`description`) on `remote`, in `group`, asking for `fragmentSeconds`
    /// cycles, its data thread at SCHED_FIFO `realtimePriority` when given, handing each cycle's
    /// frames to `handler`; `onFailure` hears of a server that goes away. Nothing connects until
    /// `start`.
    package convenience init(name: String, description: String, remote: String? = nil, group: String? = nil, properties: [(String, String)] = [],
                 fragmentSeconds: Double = 0.005, realtimePriority: Int32? = nil, handlerTimes: CaptureHandlerTimes? = nil,
                 handler: @escaping Handler, onFailure: (@Sendable (String) -> Void)? = nil) {
        self.init(name: name, description: description, monitors: false, channels: 2, sampleRate: 48_000, remote: remote, group: group,
                  properties: properties, fragmentSeconds: fragmentSeconds, realtimePriority: realtimePriority, handlerTimes: handlerTimes,
                  handler: handler, onFailure: onFailure)
    }

    /// Either kind, every setting given.
    private init(name: String, description: String, monitors: Bool, channels: Int, sampleRate: Double, remote: String?, group: String?,
                 properties: [(String, String)], fragmentSeconds: Double, realtimePriority: Int32?, handlerTimes: CaptureHandlerTimes?,
                 handler: @escaping Handler, onFailure: (@Sendable (String) -> Void)?) {
        (self.name, self.description, self.remote, self.group, self.properties) = (name, description, remote, group, properties)
        (self.monitors, self.channels, self.sampleRate) = (monitors, channels, sampleRate)
        serverText = "PipeWire (\(remote ?? "the default server"))"
        self.fragmentSeconds = fragmentSeconds
        self.realtimePriority = realtimePriority
        self.handlerTimes = handlerTimes
        self.handler = handler
        self.onFailure = onFailure
    }

    /// A capture of the monitor of the sink `sink` (node.name, or its id) on `remote`, of
    /// `channels` channels at `sampleRate` Hz (the sink's own channels and the graph's rate, from
    /// `monitorFormat`: `start` fails if the sink has other channels by then), asking for `fragmentSeconds` cycles, its data thread at SCHED_FIFO
    /// `realtimePriority` when given, handing each cycle's frames to `handler`; `onFailure` hears
    /// of the sink or the server going away. Nothing connects until `start`.
    package convenience init(monitoring sink: String, channels: Int, sampleRate: Double, remote: String? = nil, fragmentSeconds: Double = 0.005, realtimePriority: Int32? = nil,
                 handlerTimes: CaptureHandlerTimes? = nil, handler: @escaping Handler, onFailure: (@Sendable (String) -> Void)? = nil) {
        self.init(name: sink, description: "HapSync Live monitor", monitors: true, channels: channels, sampleRate: sampleRate, remote: remote,
                  group: nil, properties: [], fragmentSeconds: fragmentSeconds, realtimePriority: realtimePriority, handlerTimes: handlerTimes,
                  handler: handler, onFailure: onFailure)
    }

    /// What a capture of the monitor of `sink` (node.name, or its id or object.serial) on
    /// `remote` (nil: the default server) gets: the sink's node.name (the name to follow it by
    /// from then on: a number may be another sink's after a restart), its channels, as its node
    /// says (2 when it does not), and the graph's rate (default.clock.rate); or why not: a
    /// sentence naming the sink and the server. Waits for the server, at most 2 s.
    package static func monitorFormat(of sink: String, remote: String?) -> Result<(name: String, channels: Int, sampleRate: Double), Failure> {
        var (channels, rate): (UInt32, UInt32) = (0, 0)
        var (found, error) = ([CChar](repeating: 0, count: 256), [CChar](repeating: 0, count: 512))
        let result = sink.withCString { sink in
            remote.withOptionalCString { hs_pw_sink_info($0, sink, &channels, &rate, &found, found.count, &error, error.count, 2000) }
        }
        let server = "PipeWire (\(remote ?? "the default server"))"
        let text = { (chars: [CChar]) in String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        switch result {
        case 0: return .success((text(found), Int(channels), Double(rate)))
        case -ENOENT: return .failure(Failure(description: "\(text(error)) (on \(server))"))
        case -ETIMEDOUT: return .failure(Failure(description: "\(server) did not answer within 2 s (is it stopped?)"))
        case -EHOSTDOWN: return .failure(Failure(description: "no \(server) answers"))
        default: return .failure(Failure(description: "the sink '\(sink)' on \(server) could not be looked at (\(String(cString: strerror(-result))))"))
        }
    }

    /// What it is, for its sentences: "the live sink 'hapsync-live'" or "the capture of the
    /// monitor of 'SINK'".
    private var what: String { monitors ? "the capture of the monitor of '\(name)'" : "the live sink '\(name)'" }

    deinit { stop() }

    /// Frames handed to the handler so far (gaps' silence included). Any thread.
    package var framesCaptured: Int64 { captured.load(ordering: .relaxed) }
    /// Frames of the cycles the data thread missed. Any thread.
    package var lostFrames: Int64 { lostCount.load(ordering: .relaxed) }
    /// Frames handed over as silence in place of missed cycles (in `framesCaptured` and
    /// `lostFrames` both). Any thread.
    package var filledFrames: Int64 { filledCount.load(ordering: .relaxed) }
    /// Gaps: cycles the data thread missed, counted once a run of them. Any thread.
    package var overruns: Int { overrunCount.load(ordering: .relaxed) }
    /// The cycle, seconds, the node runs when it asks for `seconds` at `sampleRate` Hz: rounded
    /// up to a power of two frames, as the C side asks the graph (`hs_pw_cycle_frames`). Pure.
    package static func cycle(forSeconds seconds: Double, sampleRate: Double) -> Double {
        let frames = (seconds * sampleRate).rounded()
        return Double(hs_pw_cycle_frames(frames >= 1 ? UInt32(min(frames, Double(UInt32.max))) : 1)) / sampleRate
    }

    /// How much later than it entered the sink a frame is heard, µs: 0 for a sink made (it
    /// renders nothing ahead of its cycle); a monitor's sink's latency at its latest cycle (see
    /// the type's contract). Any thread.
    package var sinkLatency: Int64? { monitors ? sinkDelay.load(ordering: .relaxed) : 0 }
    /// Whether it failed because the server went away (its connection broke), not the node
    /// alone. Any thread.
    package var serverWentAway: Bool { serverGone.load(ordering: .acquiring) }

    /// When frame `frame` entered the sink, CLOCK_MONOTONIC ns; nil before the first cycles. Any
    /// thread; does not allocate, lock or block.
    package func playedTime(ofFrame frame: Int64) -> UInt64? { clock.time(ofFrame: frame) }

    /// Why a sink could not be made: PipeWire's sentence, naming the server and the sink.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// The sentence.
        package let description: String
    }

    // MARK: - Control side

    /// Connects and makes the sink; returns once its first cycle ran (within 5 s). Throws when
    /// no server answers, a node of that name is there already, or no cycle runs. A second call
    /// while running does nothing; after `stop()` it starts afresh, from frame 0.
    package func start() throws(Failure) {
        guard stream == nil else { return }
        nextFrame = 0
        (expectedTicks, lastNow) = (nil, 0)
        captured.store(0, ordering: .relaxed)
        lostCount.store(0, ordering: .relaxed)
        filledCount.store(0, ordering: .relaxed)
        overrunCount.store(0, ordering: .relaxed)
        lastCycleFrames.store(0, ordering: .relaxed)
        sinkDelay.store(0, ordering: .relaxed)
        cycles.store(0, ordering: .relaxed)
        failed.store(false, ordering: .relaxed)
        serverGone.store(false, ordering: .relaxed)
        let zeros = UnsafeMutablePointer<Float>.allocate(capacity: Self.silenceFrames * channels)
        zeros.initialize(repeating: 0, count: Self.silenceFrames * channels)
        silence = zeros
        running.store(true, ordering: .releasing)
        var error = [CChar](repeating: 0, count: 512)
        let me = Unmanaged.passUnretained(self).toOpaque()
        let positions: [UInt32] = [HS_PW_CHANNEL_FL.rawValue, HS_PW_CHANNEL_FR.rawValue]
        let latency = UInt32(max(1, min(2_000_000, (fragmentSeconds * 1e6).rounded())))
        let opened: OpaquePointer? = positions.withUnsafeBufferPointer { positionsBuffer in
            Self.threadName.withCString { threadName in
                remote.withOptionalCString { remote in
                    group.withOptionalCString { group in
                        name.withCString { name in
                            description.withCString { description in
                                var config = hs_pw_config()
                                config.remote = remote
                                config.group = group
                                config.description = description
                                if monitors {
                                    // The sink's own channels and positions.
                                    (config.target, config.capture_sink, config.channels) = (name, 1, 0)
                                    config.rate = UInt32(max(0, min(sampleRate, 1_000_000)))
                                } else {
                                    config.sink_name = name
                                    config.channels = 2
                                    config.positions = positionsBuffer.baseAddress
                                }
                                config.latency_us = latency
                                config.thread_name = threadName
                                config.realtime_priority = realtimePriority ?? 0
                                config.user = me
                                config.prepare = { user, rate in
                                    Unmanaged<PipeWireSinkCapture>.fromOpaque(user!).takeUnretainedValue().prepare(rate: Double(rate))
                                }
                                config.process = { user, data, frames, time in
                                    Unmanaged<PipeWireSinkCapture>.fromOpaque(user!).takeUnretainedValue().process(data!, frames: Int(frames), time: time!.pointee)
                                    return frames
                                }
                                config.event = { user, kind, message in
                                    // 1: the node failed; 3: the server went away.
                                    guard kind == 1 || kind == 3 else { return }
                                    Unmanaged<PipeWireSinkCapture>.fromOpaque(user!).takeUnretainedValue()
                                        .fail(message.map { String(cString: $0) } ?? "the PipeWire server failed", serverGone: kind == 3)
                                }
                                return Self.withCStrings(properties.flatMap { [$0.0, $0.1] }) { pairs in
                                    config.properties = pairs
                                    return hs_pw_open(&config, 5000, &error, error.count)
                                }
                            }
                        }
                    }
                }
            }
        }
        guard let opened else {
            stop()
            let why = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw Failure(description: "\(monitors ? "the monitor of '\(name)' could not be recorded" : "the live sink '\(name)' could not be made") on PipeWire (\(remote ?? "the default server")): \(why)")
        }
        stream = opened
        if monitors, case let got = Int(hs_pw_channels(opened)), got != channels {
            stop()
            throw Failure(description: "the sink '\(name)' on \(serverText) has \(got) channels now, \(channels) when the run began")
        }
        // Streaming comes before the first cycle: that cycle, where the data thread asks for its
        // priority, within 2 s.
        let giveUp = MonotonicClock.nanoseconds() &+ 2_000_000_000
        while cycles.load(ordering: .acquiring) == 0, running.load(ordering: .acquiring), MonotonicClock.nanoseconds() < giveUp { usleep(1_000) }
        guard cycles.load(ordering: .acquiring) > 0 else {
            stop()
            throw Failure(description: "\(what) on \(serverText) ran no cycle within 2 s (is the graph's driver suspended?)")
        }
        if let realtimePriority { realtimeThread = PipeWireOutput.dataThreadGrant(of: opened, named: Self.threadName, asked: realtimePriority) }
    }

    /// Asks the graph for `seconds` cycles from now on (`node.latency`); false when PipeWire
    /// refused. Control side, while running.
    @discardableResult
    package func setFragment(_ seconds: Double) -> Bool {
        guard let stream else { return false }
        fragmentSeconds = seconds
        return hs_pw_set_latency(stream, UInt32(max(1, (seconds * sampleRate).rounded()))) == 0
    }

    /// Before the sink goes: the streams playing into it, asked to play to the sink `target`
    /// instead (nil: none asked; the session manager moves them to the default sink when the
    /// node goes). A sentence saying what became of them, nil when none played into it. Control
    /// side, while running; waits for the server (at most 2 s).
    package func handOver(to target: String?) -> String? {
        guard let stream, !monitors else { return nil }
        var names = [CChar](repeating: 0, count: 512)
        let result = target.withOptionalCString { hs_pw_hand_over(stream, $0, &names, names.count) }
        let list = String(decoding: names.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if result == 0 { return nil }
        guard result > 0 else {
            let why = PipeWireOutput.retargetFailure(-result, target: target)
            return "could not move what played into '\(name)'\(list.isEmpty ? "" : " (\(list))") to \(target ?? "the default sink"): \(why); the session manager moves it to the default sink"
        }
        let streams = "\(result) stream\(result == 1 ? "" : "s") (\(list))"
        return target.map { "removed '\(name)': moved \(streams) to \($0)" }
            ?? "removed '\(name)': \(streams) left to the session manager, which moves them to the default sink"
    }

    /// Disconnects (the node goes; no handler call after it returns) and frees the silence.
    /// Idempotent; not from the data thread or `onFailure`.
    package func stop() {
        running.store(false, ordering: .releasing)
        if let stream { hs_pw_close(stream) }
        stream = nil
        silence?.deallocate()
        silence = nil
    }

    /// Calls `body` with `strings` as C strings in a NULL-terminated array (valid during the call).
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        guard !strings.isEmpty else { return body(nil) }
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
    }

    /// Connected, before the first cycle: the clock at the graph's rate.
    private func prepare(rate: Double) {
        sampleRate = rate
        clock.reset(sampleRate: rate)
    }

    /// The server or the node failed (loop thread): reported once, while running.
    private func fail(_ why: String, serverGone gone: Bool) {
        if gone { serverGone.store(true, ordering: .releasing) }
        guard running.load(ordering: .acquiring), !failed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        onFailure?("\(what) on \(serverText) failed: \(why)")
    }

    // MARK: - Real-time (hapsync-capture, PipeWire's data thread)

    /// One cycle: a gap before it handed over as silence (see the type's contract), its frames
    /// handed over, their time observed. Does not allocate, lock or block.
    private func process(_ data: UnsafeMutablePointer<Float>, frames: Int, time: hs_pw_time) {
        guard running.load(ordering: .relaxed), frames > 0 else { return }
        // The graph's ticks are frames when its rate is the stream's (the graph runs at one rate).
        // A gap counts when the cycle's start says so too: ticks that jump without the time
        // (the node moved to another driver, whose clock counts from elsewhere) are no gap.
        let sameRate = time.rate_num == 1 && Double(time.rate_denom) == sampleRate
        if sameRate, let expected = expectedTicks,
           let gap = Self.gap(ticks: time.ticks, expected: expected, now: time.now, lastNow: lastNow,
                              lastFrames: lastCycleFrames.load(ordering: .relaxed), frames: frames, sampleRate: sampleRate) {
            lostCount.add(gap, ordering: .relaxed)
            overrunCount.add(1, ordering: .relaxed)
            if let silence {
                var left = min(gap, Int64(2 * sampleRate))
                filledCount.add(left, ordering: .relaxed)
                while left > 0 {
                    let n = Int(min(left, Int64(Self.silenceFrames)))
                    hand(UnsafeBufferPointer(start: silence, count: n * channels))
                    left -= Int64(n)
                }
            }
        }
        expectedTicks = sameRate ? time.ticks &+ UInt64(frames) : nil
        lastNow = time.now
        // A monitor whose sink drives the graph hands over what the sink took a cycle before
        // (graph ticks, at most 2^20 from the C side).
        let tick = time.rate_denom > 0 ? Double(time.rate_num) * 1e9 / Double(time.rate_denom) : 0
        let took = monitors && time.sink_took_before > 0 && tick > 0 && tick < 1e9
            ? time.now &- Int64(Double(min(time.sink_took_before, 1 << 20)) * tick) : time.now
        if took > 0 { clock.observe(frame: nextFrame, heardAt: UInt64(took)) }
        if monitors {
            // Ticks (at most 10 s' worth from the C side): µs.
            let delay = time.sink_latency > 0 && tick > 0 && tick < 1e9 ? Int64(Double(min(time.sink_latency, Int64(Int32.max))) * tick / 1000) : 0
            sinkDelay.store(delay, ordering: .relaxed)
        }
        hand(UnsafeBufferPointer(start: data, count: frames * channels))
        lastCycleFrames.store(frames, ordering: .relaxed)
        captured.store(nextFrame, ordering: .relaxed)
        cycles.add(1, ordering: .releasing)
    }

    /// The frames of the cycles missed before one whose graph clock reads `ticks` (frames) where
    /// `expected` (the last cycle's ticks and frames) was due, starting at `now` where the last
    /// (of `lastFrames` frames) started at `lastNow` (ns), this one of `frames`: the ticks' jump
    /// when the cycle's start moved on as far, within half this cycle (the data thread was held
    /// up); nil for none, and for ticks that jumped alone (the node moved to another
    /// driver, whose clock counts from elsewhere) or back. Pure; does not allocate, lock or block.
    package static func gap(ticks: UInt64, expected: UInt64, now: Int64, lastNow: Int64, lastFrames: Int, frames: Int, sampleRate: Double) -> Int64? {
        guard ticks > expected, lastNow > 0, now > lastNow, case let jump = ticks &- expected, jump < UInt64(Int64.max) else { return nil }
        let byTime = Double(now &- lastNow) * sampleRate / 1e9 - Double(lastFrames)
        return abs(byTime - Double(jump)) < Double(max(frames / 2, 64)) ? Int64(jump) : nil
    }

    /// Hands `samples` (frames from `nextFrame` on) to the handler, timing it when
    /// `handlerTimes` is given, and moves `nextFrame` on. Does not allocate, lock or block.
    @inline(__always) private func hand(_ samples: UnsafeBufferPointer<Float>) {
        if let times = handlerTimes {
            let began = MonotonicClock.nanoseconds()
            handler(samples, nextFrame)
            times.record(began: began, took: MonotonicClock.nanoseconds() &- began)
        } else {
            handler(samples, nextFrame)
        }
        nextFrame += Int64(samples.count / channels)
    }
}
