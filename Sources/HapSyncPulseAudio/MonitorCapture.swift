import CPulse
import HapSyncAudioStream
import HapSyncConcurrency
import HapSyncRuntime
import Synchronization

/// Records a sink's monitor (`<sink>.monitor`) in small fragments and hands every fragment, as it
/// comes, to a handler on the connection's mainloop thread: what `hapsync live` analyses and
/// plays on.
///
/// Contract:
/// - One record stream, float32 at the sink's rate and channel count (channels in libpulse's
///   default order for that count: stereo is front-left, front-right), on a connection of its own
///   (`PulseConnection` carries one stream), asking for `fragmentSeconds` fragments (default 5 ms,
///   `pa_buffer_attr.fragsize`) and the source latency to match (ADJUST_LATENCY); started
///   uncorked; never moved to another source (DONT_MOVE: when the sink goes, the capture fails
///   rather than record something else).
/// - On PulseAudio a null sink that nobody plays to renders up to 2 s ahead into its monitor (a
///   live sink just made does): nothing would reach the capture, and an application would be
///   heard that much later, until the sink's clock caught up. `start` then suspends and resumes
///   the sink (as `PulseConnection.restartIfRenderingFarAhead` does for an output, here also
///   for a sink that was suspended when idle), after which it renders only as far ahead as the
///   capture's fragment asks.
/// - Frames are numbered from the stream's start, one after another: frame 0 is the first the
///   server sent. A hole (data the server says is lost) is handed over as silence and counted, so
///   numbers never slip.
/// - `handler(samples, firstFrame)` gets interleaved frames and the number of the first; it runs
///   on the mainloop thread with the connection's lock held: it must not block, and must not call
///   `stop()`. The samples are libpulse's own memory (or a silence buffer made at `start`), valid
///   only during the call. The capture allocates nothing per fragment; libpulse does (its
///   mainloop, and the timing request after each read).
/// - Timing: after each read (at most every 10 ms) the server's timing info is asked for. The
///   frame entering the monitor at the info's time is write_index + (source latency + transport
///   latency) × rate: the server had sent up to write_index, the source held what it had taken
///   and not yet sent, and the reply took the transport latency to come. `clock` fits those
///   observations ("frame F entered the monitor at T", CLOCK_MONOTONIC), as `PulseAudioRecorder`
///   does for heard frames; `playedTime(ofFrame:)` reads it. Entering the monitor is when the sink
///   rendered the frame: the moment it left the application's stream. The sink's own latency (how
///   far ahead of its notional play time it renders: what an application is told on top of its
///   buffer) is `sinkLatency`, not included.
/// - Overruns: libpulse hands the server's overflow notice only to playback streams (it looks
///   the stream up among them), so the overflow callback, registered all the same, counts none
///   today. A capture that falls behind by more than `bufferSeconds` is found from the timing
///   replies instead: pipewire-pulse then skips what it could not queue (it sends no hole), and
///   its read index (what it sent, less what waits in libpulse's queue) runs ahead of the frames
///   handed over. Each such skip counts an overrun and its frames in `lostFrames`; the clock's
///   frames have the skips taken out, so frame numbers stay contiguous and their times right.
///   PulseAudio queues for a client that reads late (a 1 and a 1.5 s stall lost nothing), but
///   past that (a 2 s stop of the whole process lost 0.5 s) it drops what comes before it
///   reaches the queue, and its indices do not show it: the frames after the gap enter the
///   monitor later than the clock's line says, by what was lost. A gap over `lossThreshold`,
///   with the queue filled since the last reply (`framesLostBeforeQueue`: a sink that was
///   suspended enters late with no loss), is counted so (an overrun, its frames in
///   `lostFrames`); the frames are numbered on without it
///   (where in the queue it fell is not known), and the clock starts over from there.
/// - With `realtimePriority`, the mainloop thread ("hapsync-capture") asks for SCHED_FIFO at
///   it as the capture starts (a busy desktop would otherwise starve it, and the sound played on
///   from it would run dry); `realtimeThread` says what it got.
/// - `stop()` disconnects and is idempotent; not from the mainloop thread. If the server goes
///   away or the stream fails (the sink was removed), `onFailure` is called once, on the mainloop
///   thread, with a sentence naming the monitor and the server.
package final class MonitorCapture: @unchecked Sendable {
    /// What receives the captured frames: interleaved samples (`channels` a frame) and the
    /// number of the first frame, counted from the stream's start with holes counted. Runs on
    /// the mainloop thread; must not block or call `stop()`.
    package typealias Handler = (_ samples: UnsafeBufferPointer<Float>, _ firstFrame: Int64) -> Void

    /// The name of the mainloop thread, where the handler runs (at most 15 characters: the
    /// kernel's limit, past which the thread keeps its inherited name).
    package static let threadName = AudioStreamRenderer.captureThreadName

    /// The sink whose monitor is recorded.
    package let sink: String
    /// The server (nil: the default, as PULSE_SERVER says).
    package let server: String?
    /// The fragment asked of the server, seconds (default 0.005).
    package let fragmentSeconds: Double
    /// The most the server is asked to queue for the capture (maxlength), seconds (default 1):
    /// pipewire-pulse skips what a capture that fell further behind has not read.
    package let bufferSeconds: Double
    /// The monitor source recorded: "hapsync-live.monitor".
    package var source: String { sink + ".monitor" }
    /// The sink's rate (known after `start`).
    package private(set) var sampleRate: Double = 48_000
    /// The sink's channel count: samples a frame (known after `start`).
    package private(set) var channels = 2
    /// The fragment the server granted, frames (known after `start`).
    package private(set) var fragmentFrames = 0
    /// Which server records (known after `start`; PulseAudio before).
    package private(set) var serverKind = PulseConnection.Server.pulseAudio
    /// The SCHED_FIFO priority the mainloop thread asks for as the capture starts (nil: normal).
    package var realtimePriority: Int32? { mainloopPriority.asked }
    /// The mainloop thread and what it got, once a capture with `realtimePriority` started (kept
    /// after `stop`, for a run's summary).
    package var realtimeThread: RealtimeThread? { mainloopPriority.threads.first }
    private let mainloopPriority = MainloopPriority()
    /// Captured frame → CLOCK_MONOTONIC time it entered the monitor (reset by `start`).
    package let clock = AudioClock(sampleRate: 48_000)
    /// Where the handler's time is recorded, when given: what the handler costs its thread, at
    /// its priority.
    package let handlerTimes: HandlerTimes?

    /// What the handler took (`handlerTimes`): shared with the native PipeWire capture.
    package typealias HandlerTimes = CaptureHandlerTimes
    private let handler: Handler
    private let onFailure: (@Sendable (String) -> Void)?
    private var connection: PulseConnection?
    private var serverText = ""
    /// Mainloop thread: the number of the next frame to hand over.
    private var nextFrame: Int64 = 0
    /// Mainloop thread: frames the server skipped so far (its index less ours).
    private var skippedFrames: Int64 = 0
    /// Mainloop thread: the server's write index at the last timing reply, frames (nil before).
    private var lastWriteIndex: Int64?
    /// Zeros handed over for holes, `silenceFrames` frames (made at `start`, freed by `stop`).
    private var silence: UnsafeMutablePointer<Float>?
    private static let silenceFrames = 2048
    private var frameBytes: Int { 4 * channels }
    private let captured = Atomic<Int64>(0)
    private let lostCount = Atomic<Int64>(0)
    private let filledCount = Atomic<Int64>(0)
    private let overrunCount = Atomic<Int>(0)
    private let latencyMicroseconds = Atomic<Int64>(-1)
    private let sinkLatencyMicroseconds = Atomic<Int64>(-1)
    private let failed = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    /// A capture of `sink`'s monitor on `server`, handing fragments of about `fragmentSeconds`
    /// to `handler`, letting the server queue up to `bufferSeconds`, its thread at SCHED_FIFO
    /// `realtimePriority` when given; `onFailure` hears of a server that goes away or a stream
    /// that fails, and `handlerTimes` records what the handler took. Nothing connects until
    /// `start`.
    package init(sink: String, server: String? = nil, fragmentSeconds: Double = 0.005, bufferSeconds: Double = 1,
                 realtimePriority: Int32? = nil, handlerTimes: HandlerTimes? = nil, handler: @escaping Handler,
                 onFailure: (@Sendable (String) -> Void)? = nil) {
        self.sink = sink
        self.handlerTimes = handlerTimes
        mainloopPriority.asked = realtimePriority
        self.server = server
        self.fragmentSeconds = fragmentSeconds
        self.bufferSeconds = bufferSeconds
        self.handler = handler
        self.onFailure = onFailure
    }

    deinit { stop() }

    /// Frames handed to the handler so far (holes included). Any thread.
    package var framesCaptured: Int64 { captured.load(ordering: .relaxed) }

    /// Frames lost: holes the server reported (handed over as silence), frames it skipped and
    /// frames it dropped before its queue (never handed over; see the type's contract). Any
    /// thread.
    package var lostFrames: Int64 { lostCount.load(ordering: .relaxed) }

    /// Frames handed over as silence in place of holes (in `framesCaptured` and `lostFrames`
    /// both). Any thread.
    package var filledFrames: Int64 { filledCount.load(ordering: .relaxed) }

    /// Overruns seen: the server's overflow notices, the skips found in timing replies and the
    /// drops before the server's queue found from the clock (see the type's contract). Any
    /// thread.
    package var overruns: Int { overrunCount.load(ordering: .relaxed) }

    /// The capture's latency at the last timing reply, µs: what the monitor source holds (its
    /// latency) plus what is queued for us and not yet read (write index − read index); nil
    /// before the first reply. Any thread.
    package var captureLatency: Int64? {
        let value = latencyMicroseconds.load(ordering: .relaxed)
        return value < 0 ? nil : value
    }

    /// The sink's latency at the last timing reply, µs: how far ahead of its notional play time
    /// it renders into the monitor; nil before the first reply. Any thread.
    package var sinkLatency: Int64? {
        let value = sinkLatencyMicroseconds.load(ordering: .relaxed)
        return value < 0 ? nil : value
    }

    /// When captured frame `frame` entered the monitor (the sink rendered it), CLOCK_MONOTONIC ns,
    /// by `clock`'s fit; nil before the first timing reply. Any thread; does not allocate, lock or
    /// block.
    package func playedTime(ofFrame frame: Int64) -> UInt64? { clock.time(ofFrame: frame) }

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: - Control side

    /// Connects, opens the record stream on the monitor at the sink's rate and channel count, and
    /// returns once it runs (fragments reach the handler from then on). Throws `.noServer`,
    /// `.noSink` (no such sink) or `.stream`. A second call while running does nothing; after
    /// `stop()` it starts afresh, from frame 0.
    package func start() throws(PulseConnection.PulseError) {
        guard connection == nil else { return }
        let connection = try PulseConnection(clientName: "HapSync live capture", server: server, threadName: Self.threadName,
                                             realtimePriority: realtimePriority, onFailure: { [weak self] why in self?.fail(why) })
        self.connection = connection
        mainloopPriority.record(connection)
        do {
            try connection.withLock { () throws(PulseConnection.PulseError) in
                let name = connection.serverName()
                let address = connection.serverAddress ?? "the default server"
                serverText = name.isEmpty ? address : "\(name) at \(address)"
                serverKind = PulseConnection.Server(serverName: name)
                let info = try connection.sinkInfo(named: sink)
                sampleRate = Double(info.rate)
                channels = info.channels
                clock.reset(sampleRate: sampleRate)
                (nextFrame, skippedFrames) = (0, 0)
                captured.store(0, ordering: .relaxed)
                lostCount.store(0, ordering: .relaxed)
                filledCount.store(0, ordering: .relaxed)
                overrunCount.store(0, ordering: .relaxed)
                latencyMicroseconds.store(-1, ordering: .relaxed)
                sinkLatencyMicroseconds.store(-1, ordering: .relaxed)
                failed.store(false, ordering: .relaxed)
                let zeros = UnsafeMutablePointer<Float>.allocate(capacity: Self.silenceFrames * channels)
                zeros.initialize(repeating: 0, count: Self.silenceFrames * channels)
                silence = zeros
                let frameBytes = frameBytes
                let fragment = UInt32(max(1, (fragmentSeconds * sampleRate).rounded())) * UInt32(frameBytes)
                let maxLength = UInt32(max(1, (bufferSeconds * sampleRate).rounded())) * UInt32(frameBytes)
                let s = try connection.openStream(name: "HapSync live capture", rate: info.rate, channelCount: channels,
                                                  onTiming: { [unowned self] info, at in timingUpdated(info, at: at) }) { s in
                    pa_stream_set_read_callback(s, { s, _, userdata in
                        guard let s else { return }
                        Unmanaged<MonitorCapture>.fromOpaque(userdata!).takeUnretainedValue().read(s)
                    }, me)
                    pa_stream_set_overflow_callback(s, { _, userdata in
                        Unmanaged<MonitorCapture>.fromOpaque(userdata!).takeUnretainedValue().overrunCount.add(1, ordering: .relaxed)
                    }, me)
                    var attr = pa_buffer_attr(maxlength: maxLength, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max, fragsize: fragment)
                    let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue
                                                  | PA_STREAM_AUTO_TIMING_UPDATE.rawValue | PA_STREAM_DONT_MOVE.rawValue)
                    return pa_stream_connect_record(s, source, &attr, flags)
                }
                let granted = pa_stream_get_buffer_attr(s)?.pointee.fragsize ?? fragment
                fragmentFrames = Int(granted) / frameBytes
                restartIfRenderingFarAhead(info, on: connection, server: serverKind)
                // From here on a failure is reported (`fail`); one while opening is thrown instead.
                running.store(true, ordering: .releasing)
            }
        } catch {
            stop()
            throw error
        }
    }

    /// Suspends and resumes a PulseAudio sink that nobody but this capture plays to (idle, or
    /// suspended when idle, before it came) once it renders more than 50 ms further ahead than
    /// the capture's fragment (see the type's contract). Inside the connection's lock, with the
    /// stream ready.
    private func restartIfRenderingFarAhead(_ before: PulseConnection.SinkInfo, on connection: PulseConnection, server: PulseConnection.Server) {
        guard server == .pulseAudio, before.state != PA_SINK_RUNNING, let now = try? connection.sinkInfo(named: sink),
              Double(now.latency) > fragmentSeconds * 1e6 + 50_000 else { return }
        if connection.suspend(sink: now.index, true) { _ = connection.suspend(sink: now.index, false) }
    }

    /// Disconnects the stream and the connection (no handler call after it returns) and frees the
    /// silence buffer. Idempotent; not from the mainloop thread (not from the handler or `onFailure`).
    package func stop() {
        running.store(false, ordering: .releasing)
        connection?.close()
        connection = nil
        silence?.deallocate()
        silence = nil
    }

    // MARK: - Mainloop thread: the audio path

    /// The context or the stream failed: reported once, naming the monitor and the server (and,
    /// when the server killed the stream, that its sink went away: PulseAudio's own words for it,
    /// "Entity killed", say nothing to a user).
    private func fail(_ why: String) {
        guard running.load(ordering: .acquiring), !failed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let killed = String(cString: pa_strerror(Int32(PA_ERR_KILLED.rawValue)))
        onFailure?("the capture of \(source) on \(serverText.isEmpty ? server ?? "the default server" : serverText) failed: \(why)"
                   + (why == killed ? " (its sink went away: removed, or its device unplugged)" : ""))
    }

    /// Hands `samples`, the frames from `nextFrame` on, to the handler, and records how long it
    /// took when `handlerTimes` is given. Mainloop thread; our code here does not allocate, lock
    /// or block.
    @inline(__always) private func hand(_ samples: UnsafeBufferPointer<Float>) {
        guard let times = handlerTimes else { return handler(samples, nextFrame) }
        let began = MonotonicClock.nanoseconds()
        handler(samples, nextFrame)
        times.record(began: began, took: MonotonicClock.nanoseconds() &- began)
    }

    /// Hands every fragment the server sent to the handler (holes as silence, in pieces of at most
    /// `silenceFrames`), then asks for timing info. Our code here does not allocate, lock or
    /// block; libpulse's peek, drop and timing request run inside its mainloop as always.
    /// libpulse's record queue is frame-aligned (its base is the frame size), so a fragment holds
    /// whole frames.
    private func read(_ s: OpaquePointer) {
        let frameBytes = frameBytes
        while pa_stream_readable_size(s) > 0 {
            var data: UnsafeRawPointer?
            var bytes = 0
            guard pa_stream_peek(s, &data, &bytes) >= 0, bytes > 0 else { break }
            let frames = bytes / frameBytes
            if let data {
                hand(UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: frames * channels))
                nextFrame += Int64(frames)
            } else if let silence {
                lostCount.add(Int64(frames), ordering: .relaxed)
                filledCount.add(Int64(frames), ordering: .relaxed)
                var left = frames
                while left > 0 {
                    let n = min(left, Self.silenceFrames)
                    hand(UnsafeBufferPointer(start: silence, count: n * channels))
                    nextFrame += Int64(n)
                    left -= n
                }
            }
            pa_stream_drop(s)
        }
        captured.store(nextFrame, ordering: .relaxed)
        connection?.requestTimingInfo()
    }

    /// How much later than the line a frame may enter the monitor before the gap counts as
    /// frames lost, ns: far beyond the replies' jitter and a PipeWire quantum (2048 frames: 43
    /// ms at 48 kHz, 46 at 44.1).
    package static let lossThreshold: UInt64 = 50_000_000

    /// The frames lost before the server's queue when frame `entering` entered the monitor at
    /// `at` (CLOCK_MONOTONIC ns) while the capture's clock `fit` (8 observations or more) places
    /// it more than `lossThreshold` earlier, and the server queued at least nine tenths of its
    /// `queueFrames` (maxlength) since the last reply (`queued`, frames its write index moved):
    /// a full queue is when the server drops; a sink that was suspended, or a thread that
    /// stalled, enters late without one. That gap at `sampleRate`; else nil. Pure.
    package static func framesLostBeforeQueue(fit: AudioClock.Fit, entering: Int64, at: UInt64, sampleRate: Double, queued: Int64,
                                              queueFrames: Int64) -> Int64? {
        guard queued * 10 >= queueFrames * 9, fit.observations >= 8, let expected = fit.time(ofFrame: entering), at > expected &+ lossThreshold
        else { return nil }
        return Int64((Double(at - expected) * sampleRate / 1e9).rounded())
    }

    /// A timing reply taken at monotonic time `at`: a skip, if the server's read index ran ahead
    /// of the frames handed over; the frame entering the monitor then, in our numbers (see the
    /// type's contract), for `clock`; the capture's and the sink's latency.
    private func timingUpdated(_ info: pa_timing_info, at: UInt64) {
        guard info.write_index_corrupt == 0 else { return }
        let frameBytes = Int64(frameBytes)
        var skipped: Int64 = 0
        if info.read_index_corrupt == 0 {
            skipped = info.read_index / frameBytes - nextFrame - skippedFrames
            if skipped > 0 {
                skippedFrames += skipped
                lostCount.add(skipped, ordering: .relaxed)
                overrunCount.add(1, ordering: .relaxed)
            }
        }
        let bytesPerMicrosecond = sampleRate * Double(frameBytes) / 1e6
        let entering = Double(info.write_index / frameBytes - skippedFrames)
            + ((Double(info.source_usec) + Double(info.transport_usec)) * sampleRate / 1e6).rounded()
        // Frames the server dropped before they reached its queue for us leave no mark in its
        // indices: the frames after them enter the monitor later than the line says, by what was
        // lost (the clock then starts over from there).
        let writeIndex = info.write_index / frameBytes
        defer { lastWriteIndex = writeIndex }
        if skipped <= 0, let last = lastWriteIndex,
           let lost = Self.framesLostBeforeQueue(fit: clock.fit, entering: Int64(entering), at: at, sampleRate: sampleRate,
                                                 queued: writeIndex - last, queueFrames: Int64((bufferSeconds * sampleRate).rounded())) {
            lostCount.add(lost, ordering: .relaxed)
            overrunCount.add(1, ordering: .relaxed)
        }
        clock.observe(frame: Int64(entering), heardAt: at)
        let queued = info.read_index_corrupt == 0 ? max(0, info.write_index - info.read_index) : 0
        latencyMicroseconds.store(Int64(info.source_usec) + Int64((Double(queued) / bytesPerMicrosecond).rounded()), ordering: .relaxed)
        sinkLatencyMicroseconds.store(Int64(info.sink_usec), ordering: .relaxed)
    }
}
