import CPulse
import Dispatch
import Glibc
import HapSyncAudioStream
import HapSyncConcurrency
import HapSyncRuntime

/// A client of a PulseAudio server on a threaded mainloop, with at most one stream: the handshake,
/// the waits and the teardown that the playback output and the monitor recorder share.
///
/// - `init` creates the mainloop (its thread named `threadName`) and a context, connects to
///   `server` (nil: the default, as PULSE_SERVER says) and returns once the context is ready, or
///   throws `.noServer` with the server's reason.
/// - `openStream` makes the one float32 stereo stream, lets the caller set its callbacks and
///   connect it (playback or record), and waits until it is ready, or throws `.stream`.
/// - Everything that touches the context or the stream runs inside `withLock` (the mainloop's
///   lock); callbacks run on the mainloop thread with that lock held. `onFailure` is called there
///   when the context fails or terminates, or the stream fails.
/// - `close()` disconnects the stream (every callback cleared first) and the context under the
///   lock, then stops and frees the mainloop; afterwards the connection is spent. It must not be
///   called from the mainloop thread.
package final class PulseConnection: @unchecked Sendable {
    /// Why connecting or opening the stream failed (the output's public error type).
    package typealias PulseError = PulseAudioOutput.PulseError

    /// The stream, once `openStream` has made it (nil again after `close`).
    package private(set) var stream: OpaquePointer?
    private let mainloop: OpaquePointer
    private let context: OpaquePointer
    private let onFailure: ((String) -> Void)?
    private var onTiming: ((pa_timing_info, UInt64) -> Void)?
    private var lastTimingRequest: UInt64 = 0
    private var closed = false
    /// Set on the mainloop thread when `init`'s wait for the server ran out.
    private var connectTimedOut = false
    /// How long `init` waits for the server to answer, µs.
    static let connectTimeout: pa_usec_t = 5_000_000

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The mainloop thread's real-time scheduling, when `init` was asked for it: what it got.
    package private(set) var realtimeThread: RealtimeThread?

    /// Connects as client `clientName` and waits until the context is ready. With
    /// `realtimePriority`, the mainloop thread (which runs the stream's callbacks: where audio is
    /// rendered) first asks for SCHED_FIFO at it; `realtimeThread` says what it got.
    package init(clientName: String, server: String?, threadName: String, realtimePriority: Int32? = nil,
                 onFailure: ((String) -> Void)? = nil) throws(PulseError) {
        guard let ml = pa_threaded_mainloop_new() else { throw .noServer("cannot create a mainloop") }
        guard let ctx = pa_context_new(pa_threaded_mainloop_get_api(ml), clientName) else {
            pa_threaded_mainloop_free(ml)
            throw .noServer("cannot create a context")
        }
        mainloop = ml
        context = ctx
        self.onFailure = onFailure
        pa_threaded_mainloop_set_name(ml, threadName)
        pa_context_set_state_callback(ctx, { ctx, userdata in
            let connection = Unmanaged<PulseConnection>.fromOpaque(userdata!).takeUnretainedValue()
            let state = pa_context_get_state(ctx)
            if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED { connection.onFailure?(connection.errorText) }
            pa_threaded_mainloop_signal(connection.mainloop, 0)
        }, me)
        let failure: PulseError? = withLock {
            guard pa_context_connect(ctx, server, PA_CONTEXT_NOFLAGS, nil) >= 0, pa_threaded_mainloop_start(ml) >= 0 else { return .noServer(errorText) }
            // A server that accepts the connection and then says nothing (stopped, or
            // pipewire-pulse over a stopped PipeWire) would hold this for libpulse's 30 s.
            let deadline = pa_context_rttime_new(ctx, pa_rtclock_now() + Self.connectTimeout, { _, _, _, userdata in
                let connection = Unmanaged<PulseConnection>.fromOpaque(userdata!).takeUnretainedValue()
                connection.connectTimedOut = true
                pa_threaded_mainloop_signal(connection.mainloop, 0)
            }, me)
            defer { if let deadline { pa_threaded_mainloop_get_api(ml).pointee.time_free(deadline) } }
            while true {
                let state = pa_context_get_state(ctx)
                if state == PA_CONTEXT_READY { return nil }
                if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED { return .noServer(errorText) }
                if connectTimedOut { return .noAnswer(seconds: Int(Self.connectTimeout / 1_000_000)) }
                pa_threaded_mainloop_wait(ml)
            }
        }
        if let failure {
            close()
            throw failure
        }
        if let realtimePriority { realtimeThread = promote(name: threadName, priority: realtimePriority) }
    }

    /// Asks for SCHED_FIFO at `priority` on the mainloop thread (queued under the lock, run there
    /// outside it; refused, through RealtimeKit) and waits at most 3 s for the answer. libpulse's mainloop lock inherits
    /// priority, so a control thread holding it is raised while the real-time mainloop waits.
    private func promote(name: String, priority: Int32) -> RealtimeThread {
        final class Request: @unchecked Sendable {
            let priority: Int32
            let done = DispatchSemaphore(value: 0)
            var result: Result<RealtimeGrant, RealtimeRefusal>?
            init(priority: Int32) { self.priority = priority }
        }
        let request = Request(priority: priority)
        // Under the lock: queuing the call adds an event to the mainloop, which its thread is
        // running (without it libpulse's defer list raced and asserted).
        withLock {
            pa_threaded_mainloop_once_unlocked(mainloop, { _, userdata in
                let request = Unmanaged<Request>.fromOpaque(userdata!).takeRetainedValue()
                request.result = HelperThreadCalls.requestFIFO(priority: request.priority)
                request.done.signal()
            }, Unmanaged.passRetained(request).toOpaque())
        }
        // RealtimeKit's round trip, when it is asked, has a second of its own.
        guard request.done.wait(timeout: .now() + 3) == .success, let result = request.result else {
            return RealtimeThread(name: name, priority: priority, error: "the mainloop thread did not answer within 3 s")
        }
        return RealtimeThread(name: name, asked: priority, result: result)
    }

    deinit { close() }

    /// The server's text for the context's last error.
    package var errorText: String { String(cString: pa_strerror(pa_context_errno(context))) }

    /// Runs `body` holding the mainloop's lock (not from the mainloop thread: its callbacks already
    /// hold it).
    package func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return try body()
    }

    /// What a sink is, as `sinkInfo(named:)` reads it.
    package struct SinkInfo: Sendable {
        /// The server's index of the sink.
        package var index: UInt32
        /// Its name, as `--sink` and `pactl` spell it.
        package var name: String
        /// Its sample rate.
        package var rate: UInt32
        /// Its state (running, idle, suspended).
        package var state: pa_sink_state_t
        /// Its latency now, µs: how far ahead of what is heard it has taken data.
        package var latency: UInt64
        /// Its channel count.
        package var channels: Int = 2
    }

    /// The sink named `sink` ("@DEFAULT_SINK@": the default one); throws `.noSink` if there is no
    /// such sink. Inside `withLock`.
    package func sinkInfo(named sink: String) throws(PulseError) -> SinkInfo {
        var reply = Reply<SinkInfo?>(mainloop: mainloop, value: nil)
        withUnsafeMutablePointer(to: &reply) { reply in
            finish(pa_context_get_sink_info_by_name(context, sink, { _, info, eol, userdata in
                let reply = userdata!.assumingMemoryBound(to: Reply<SinkInfo?>.self)
                if eol == 0, let i = info?.pointee {
                    reply.pointee.value = SinkInfo(index: i.index, name: String(cString: i.name), rate: i.sample_spec.rate,
                                                   state: i.state, latency: i.latency, channels: Int(i.sample_spec.channels))
                }
                pa_threaded_mainloop_signal(reply.pointee.mainloop, 0)
            }, reply))
        }
        guard let info = reply.value, info.rate > 0 else { throw .noSink(sink) }
        return info
    }

    /// A PulseAudio sink with nobody playing renders as far ahead as it may (module-null-sink: up to
    /// 2 s), and once our low-latency stream has joined it can take back (rewind) only as much as
    /// our latency: the stream would first be heard, and its clock first move, up to 2 s later
    /// (Bench/results/design-measurements.md). Suspending and resuming such a sink, which nobody
    /// else was playing to, starts it again from now. Only on PulseAudio (PipeWire starts streams
    /// at once and reports no sink latency), only when the sink was idle before our stream came,
    /// and only when it is now more than 50 ms further ahead than our whole target latency. Inside
    /// the connection's lock, with the caller's stream connected and corked (the audio output's,
    /// the waveform output's).
    package func restartIfRenderingFarAhead(_ sink: SinkInfo, latency: Double, server: Server) {
        guard server == .pulseAudio, sink.state == PA_SINK_IDLE,
              let now = try? sinkInfo(named: sink.name),
              Double(now.latency) > latency * 1e6 + 50_000 else { return }
        if suspend(sink: sink.index, true) { _ = suspend(sink: sink.index, false) }
    }

    /// One sink as the server lists it.
    package struct SinkListing: Sendable {
        /// Its name, as `--sink` and `pactl` spell it.
        package var name: String
        /// Its description, as sound settings show it (device.description).
        package var description: String
        /// Its channel count.
        package var channels: Int
        /// Its property list (pa_sink_info.proplist), every key with a text value: the device's
        /// ids, bus, ALSA card and sysfs path, as PulseAudio or pipewire-pulse spell them.
        package var properties: [String: String] = [:]
        /// The server's index of the sink (UInt32.max: not read).
        package var index: UInt32 = .max
        /// The index of the module that made it (`loadModule`), nil when no module owns it (a
        /// card's sink, or one PipeWire's own configuration made).
        package var ownerModule: UInt32?
        /// Its sample rate (0: not read).
        package var rate: UInt32 = 0
    }

    /// Every sink of the server, with its properties. Inside `withLock`.
    package func sinks() -> [SinkListing] {
        var reply = Reply<[SinkListing]>(mainloop: mainloop, value: [])
        withUnsafeMutablePointer(to: &reply) { reply in
            finish(pa_context_get_sink_info_list(context, { _, info, eol, userdata in
                let reply = userdata!.assumingMemoryBound(to: Reply<[SinkListing]>.self)
                if eol == 0, let i = info?.pointee {
                    reply.pointee.value.append(SinkListing(name: String(cString: i.name), description: i.description.map { String(cString: $0) } ?? "",
                                                           channels: Int(i.sample_spec.channels),
                                                           properties: PulseConnection.properties(of: i.proplist), index: i.index,
                                                           ownerModule: i.owner_module == UInt32.max ? nil : i.owner_module,
                                                           rate: i.sample_spec.rate))
                }
                pa_threaded_mainloop_signal(reply.pointee.mainloop, 0)
            }, reply))
        }
        return reply.value
    }

    /// A property list's entries that hold text (all a sink's do; a binary value is left out).
    /// Mainloop thread or inside `withLock`: it allocates.
    private static func properties(of list: OpaquePointer?) -> [String: String] {
        guard let list else { return [:] }
        var entries: [String: String] = [:]
        var state: UnsafeMutableRawPointer?
        while let key = pa_proplist_iterate(list, &state) {
            if let value = pa_proplist_gets(list, key) { entries[String(cString: key)] = String(cString: value) }
        }
        return entries
    }

    /// Which server speaks the protocol: they count time differently (see
    /// `PulseAudioOutput.PlaybackTiming`) and their pipe sinks keep different contracts.
    package enum Server: Sendable, Equatable {
        /// PulseAudio itself.
        case pulseAudio
        /// PipeWire's PulseAudio server, pipewire-pulse.
        case pipeWire

        /// The kind a server's name says: "PulseAudio (on PipeWire 0.3.65)" is PipeWire, anything
        /// else ("pulseaudio") PulseAudio.
        package init(serverName: String) {
            self = serverName.contains("PipeWire") ? .pipeWire : .pulseAudio
        }

        /// Whether frames a playback stream (prebuf 0) is given after it ran dry are played late
        /// by the gap, or skipped. PulseAudio plays them late: its stream's read index stays
        /// where the data ran out, and at the end of the underrun it has the sink rewind and
        /// rewrite the silence it mixed meanwhile (protocol-native.c, `handle_seek`). pipewire-
        /// pulse keeps the stream's timeline: each cycle that finds too little data plays
        /// silence and advances the read index by the whole cycle (pulse-server.c,
        /// `stream_process`, as in PipeWire 0.3.65, the one tested; older releases left the
        /// index where it was), so frames written behind it are never heard and those after them
        /// are heard where the clock's line already placed them.
        package var delaysLateWrites: Bool { self == .pulseAudio }

        /// Whether a record stream's fragment sets the cycle of the graph it records from, and so
        /// of every stream in that graph. pipewire-pulse asks for the fragment as the capture
        /// node's latency, and a PipeWire graph runs at the smallest latency any of its nodes asks
        /// (a 5 ms fragment: 256 frames at 48 kHz), so a stream played on in the same graph gains
        /// nothing from a longer latency of its own. PulseAudio's sinks keep their own timing.
        package var captureFragmentSetsCycle: Bool { self == .pipeWire }
    }

    /// The server's name: "pulseaudio", or "PulseAudio (on PipeWire 0.3.65)" from pipewire-pulse
    /// (empty if the server did not say). Inside `withLock`.
    package func serverName() -> String {
        var reply = Reply<String>(mainloop: mainloop, value: "")
        withUnsafeMutablePointer(to: &reply) { reply in
            finish(pa_context_get_server_info(context, { _, info, userdata in
                let reply = userdata!.assumingMemoryBound(to: Reply<String>.self)
                if let name = info?.pointee.server_name { reply.pointee.value = String(cString: name) }
                pa_threaded_mainloop_signal(reply.pointee.mainloop, 0)
            }, reply))
        }
        return reply.value
    }

    /// Suspends (or resumes) the sink with server index `sink`; whether the server did. Inside `withLock`.
    package func suspend(sink: UInt32, _ suspend: Bool) -> Bool {
        succeeds { context, done, reply in pa_context_suspend_sink_by_index(context, sink, suspend ? 1 : 0, done, reply) }
    }

    /// Loads server module `name` with `arguments` and returns its index; throws `.moduleRefused`
    /// with the server's reason if it refused. Inside `withLock`.
    package func loadModule(_ name: String, arguments: String) throws(PulseError) -> UInt32 {
        // UInt32.max is PA_INVALID_INDEX ((uint32_t) -1, which Swift cannot import as a UInt32).
        var reply = Reply<UInt32>(mainloop: mainloop, value: UInt32.max)
        withUnsafeMutablePointer(to: &reply) { reply in
            finish(pa_context_load_module(context, name, arguments, { _, index, userdata in
                let reply = userdata!.assumingMemoryBound(to: Reply<UInt32>.self)
                reply.pointee.value = index
                pa_threaded_mainloop_signal(reply.pointee.mainloop, 0)
            }, reply))
        }
        guard reply.value != UInt32.max else { throw .moduleRefused("\(name) \(arguments): \(errorText)") }
        return reply.value
    }

    /// Unloads the server module with index `module`; whether the server did. Inside `withLock`.
    @discardableResult
    package func unloadModule(_ module: UInt32) -> Bool {
        succeeds { context, done, reply in pa_context_unload_module(context, module, done, reply) }
    }

    /// A callback's answer and the mainloop to wake when it comes.
    private struct Reply<Value> {
        let mainloop: OpaquePointer
        var value: Value
    }

    /// Starts an operation whose callback reports success (`start` gets the context, that callback
    /// and its userdata), waits for it and says whether it succeeded. Inside `withLock`.
    private func succeeds(_ start: (OpaquePointer, pa_context_success_cb_t, UnsafeMutableRawPointer) -> OpaquePointer?) -> Bool {
        var reply = Reply<Int32>(mainloop: mainloop, value: 0)
        withUnsafeMutablePointer(to: &reply) { reply in
            finish(start(context, { _, success, userdata in
                let reply = userdata!.assumingMemoryBound(to: Reply<Int32>.self)
                reply.pointee.value = success
                pa_threaded_mainloop_signal(reply.pointee.mainloop, 0)
            }, reply))
        }
        return reply.value != 0
    }

    /// Waits until operation `op` is done, or cancelled when the context fails (its state callback
    /// wakes us), and releases it. Inside `withLock`.
    private func finish(_ op: OpaquePointer?) {
        guard let op else { return }
        while pa_operation_get_state(op) == PA_OPERATION_RUNNING { pa_threaded_mainloop_wait(mainloop) }
        pa_operation_unref(op)
    }

    /// Makes the stream (float32 stereo at `rate` Hz), has `connect` set its callbacks and connect
    /// it (returning what `pa_stream_connect_playback` or `_record` returned), and waits until it is
    /// ready. `onTiming` receives the replies `requestTimingInfo` asks for. Inside `withLock`.
    package func openStream(name: String, rate: UInt32, channels: [AudioChannelPosition]? = nil,
                            onTiming: @escaping (pa_timing_info, UInt64) -> Void,
                            connect: (OpaquePointer) -> Int32) throws(PulseError) -> OpaquePointer {
        // Stereo by default (the server's usual map); or the positions given, in order.
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: rate, channels: UInt8(channels?.count ?? 2))
        var map = pa_channel_map()
        if let channels {
            map.channels = UInt8(channels.count)
            withUnsafeMutableBytes(of: &map.map) { raw in
                let positions = raw.bindMemory(to: pa_channel_position_t.self)
                for (i, p) in channels.enumerated() { positions[i] = p.pulse }
            }
        }
        let made = channels == nil ? pa_stream_new(context, name, &spec, nil) : pa_stream_new(context, name, &spec, &map)
        guard let s = made else { throw .stream("cannot create the stream") }
        return try connectAndWait(s, onTiming: onTiming, connect: connect)
    }

    /// A new stream made this connection's one: its timing replies to `onTiming`, its failure to
    /// `onFailure`, connected by `connect` (playback or record), and waited for until ready.
    /// Inside `withLock`.
    private func connectAndWait(_ s: OpaquePointer, onTiming: @escaping (pa_timing_info, UInt64) -> Void,
                                connect: (OpaquePointer) -> Int32) throws(PulseError) -> OpaquePointer {
        stream = s
        self.onTiming = onTiming
        pa_stream_set_state_callback(s, { s, userdata in
            let connection = Unmanaged<PulseConnection>.fromOpaque(userdata!).takeUnretainedValue()
            if pa_stream_get_state(s) == PA_STREAM_FAILED { connection.onFailure?(connection.errorText) }
            pa_threaded_mainloop_signal(connection.mainloop, 0)
        }, me)
        guard connect(s) >= 0 else { throw .stream(errorText) }
        while true {
            let state = pa_stream_get_state(s)
            if state == PA_STREAM_READY { return s }
            if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED { throw .stream(errorText) }
            pa_threaded_mainloop_wait(mainloop)
        }
    }

    /// Connects a playback stream made by `openStream` to `sink` (nil: the default), corked, with
    /// `latency` seconds of buffer and a 5 ms request size at `rate` frames of `frameBytes`, timing
    /// interpolated and updated: the one buffer and flag set of every output stream (audio and
    /// waveform). Returns what `pa_stream_connect_playback` returned. Inside `withLock`.
    package static func connectCorkedPlayback(_ s: OpaquePointer, sink: String?, latency: Double, rate: Double, frameBytes: Int) -> Int32 {
        var attr = playbackBuffer(latency: latency, rate: rate, frameBytes: frameBytes)
        let flags = pa_stream_flags_t(rawValue: PA_STREAM_START_CORKED.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue
                                      | PA_STREAM_AUTO_TIMING_UPDATE.rawValue | PA_STREAM_ADJUST_LATENCY.rawValue)
        return pa_stream_connect_playback(s, sink, &attr, flags, nil, nil)
    }

    /// A playback stream's buffer for `latency` seconds: tlength that long, no prebuffering (the
    /// clock never stops), requests of 5 ms at least. The one place it is reckoned.
    package static func playbackBuffer(latency: Double, rate: Double, frameBytes: Int) -> pa_buffer_attr {
        let bytes = Double(frameBytes)
        return pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(latency * rate * bytes),
                              prebuf: 0, minreq: UInt32(0.005 * rate * bytes), fragsize: UInt32.max)
    }

    /// Asks the server for a playback stream's new target latency (`playbackBuffer`). Mainloop
    /// thread, or inside `withLock`.
    package static func setPlaybackLatency(_ s: OpaquePointer, latency: Double, rate: Double, frameBytes: Int) {
        var attr = playbackBuffer(latency: latency, rate: rate, frameBytes: frameBytes)
        if let op = pa_stream_set_buffer_attr(s, &attr, nil, nil) { pa_operation_unref(op) }
    }

    /// Starts a stream connected by `connectCorkedPlayback`: restarts an idle sink rendering far
    /// ahead (`restartIfRenderingFarAhead`), then uncorks. Inside `withLock`.
    package func uncork(_ s: OpaquePointer, on sink: SinkInfo, latency: Double, server: Server) {
        restartIfRenderingFarAhead(sink, latency: latency, server: server)
        if let op = pa_stream_cork(s, 0, nil, nil) { pa_operation_unref(op) }
    }

    /// Waits (at most 5 s) until `clock` has the observations players need to follow it
    /// (`AudioClock.readyObservations`, one per write until then: about 40 ms); throws `.noServer` if the stream stopped running meanwhile,
    /// `.noClock` if no fit came. Not inside `withLock` (the replies need the mainloop).
    package static func awaitReady(_ clock: AudioClock, running: () -> Bool) throws(PulseError) {
        clock.waitUntilReady(while: running)
        guard running() else { throw .noServer("the server went away while the stream was starting") }
        guard clock.isFitted else { throw .noClock }
    }

    /// Asks for timing info as an output's write wants it: after every write while its clock
    /// settles (a quicker start) and on PipeWire (which needs replies from consecutive cycles to
    /// know its quantum), else at most every 10 ms, or every `idleInterval` ns while the stream
    /// plays only silence (the fit's slope is settled, and nothing is placed by it until something
    /// plays; each request is a round trip to the server). Mainloop thread.
    package func requestTimingInfo(clock: AudioClock, server: Server, idleInterval: UInt64? = nil) {
        let settled = clock.observations >= AudioClock.settlingObservations
        requestTimingInfo(every: !settled || server != .pulseAudio ? 0 : idleInterval ?? 10_000_000)
    }

    /// Asks the server for the stream's timing info, unless the last request was less than
    /// `interval` ns ago (default 10 ms; 0: every call); a reply reaches `onTiming` with the
    /// CLOCK_MONOTONIC time the info was taken. Mainloop thread, from a stream callback (libpulse
    /// allocates the request).
    package func requestTimingInfo(every interval: UInt64 = 10_000_000) {
        guard let s = stream else { return }
        let now = MonotonicClock.nanoseconds()
        guard now - lastTimingRequest >= interval else { return }
        lastTimingRequest = now
        if let op = pa_stream_update_timing_info(s, { s, success, userdata in
            guard success != 0, let s, let info = pa_stream_get_timing_info(s)?.pointee,
                  let at = PulseConnection.monotonicTime(of: info) else { return }
            Unmanaged<PulseConnection>.fromOpaque(userdata!).takeUnretainedValue().onTiming?(info, at)
        }, me) { pa_operation_unref(op) }
    }

    /// Disconnects the stream (all its callbacks cleared first) and the context under the
    /// mainloop's lock, then stops and frees the mainloop. Idempotent; not from the mainloop thread.
    package func close() {
        guard !closed else { return }
        closed = true
        withLock {
            if let s = stream {
                pa_stream_set_state_callback(s, nil, nil)
                pa_stream_set_write_callback(s, nil, nil)
                pa_stream_set_underflow_callback(s, nil, nil)
                pa_stream_set_read_callback(s, nil, nil)
                pa_stream_set_overflow_callback(s, nil, nil)
                pa_stream_set_moved_callback(s, nil, nil)
                pa_stream_disconnect(s)
                pa_stream_unref(s)
                stream = nil
            }
            pa_context_set_state_callback(context, nil, nil)
            pa_context_disconnect(context)
            pa_context_unref(context)
        }
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    /// Whether a server answers now: connects a throwaway context on a mainloop of its own (at
    /// most 1 s) and disconnects.
    package static func answers(server: String?) -> Bool {
        guard let ml = pa_mainloop_new() else { return false }
        defer { pa_mainloop_free(ml) }
        guard let ctx = pa_context_new(pa_mainloop_get_api(ml), "HapSync probe") else { return false }
        defer { pa_context_unref(ctx) }
        guard pa_context_connect(ctx, server, PA_CONTEXT_NOFLAGS, nil) >= 0 else { return false }
        let giveUp = MonotonicClock.nanoseconds() + 1_000_000_000
        var ready = false
        while MonotonicClock.nanoseconds() < giveUp {
            let state = pa_context_get_state(ctx)
            if state == PA_CONTEXT_READY { ready = true; break }
            if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED { break }
            _ = pa_mainloop_iterate(ml, 0, nil)
            usleep(1000)
        }
        pa_context_disconnect(ctx)
        return ready
    }

    /// When a timing info was taken, on CLOCK_MONOTONIC ns: its timestamp is wall-clock time, so it
    /// is moved over by its age; nil for an info more than a second old (or from the future).
    package static func monotonicTime(of info: pa_timing_info) -> UInt64? {
        let monoNow = MonotonicClock.nanoseconds()
        let stamp = Int64(info.timestamp.tv_sec) * 1_000_000_000 + Int64(info.timestamp.tv_usec) * 1000
        let age = max(0, WallClock.nanoseconds() - stamp)
        guard age < 1_000_000_000 else { return nil }
        return monoNow - UInt64(age)
    }
}

// MARK: - Sinks, their streams and modules (the live sink's calls)

extension PulseConnection {
    /// The address the context connected to ("unix:/run/user/1000/pulse/native"), or nil before
    /// it did: with `serverName()`, what an error names as the server.
    package var serverAddress: String? { pa_context_get_server(context).map { String(cString: $0) } }

    /// Whether the context is connected and ready now (false once the server went away or the
    /// connection closed). Inside `withLock`.
    package var isReady: Bool { !closed && pa_context_get_state(context) == PA_CONTEXT_READY }

    /// The server's default sink's name, nil if it has none. Inside `withLock`.
    package func defaultSinkName() -> String? {
        var reply = Reply<String?>(mainloop: mainloop, value: nil)
        withUnsafeMutablePointer(to: &reply) { reply in
            finish(pa_context_get_server_info(context, { _, info, userdata in
                let reply = userdata!.assumingMemoryBound(to: Reply<String?>.self)
                if let name = info?.pointee.default_sink_name { reply.pointee.value = String(cString: name) }
                pa_threaded_mainloop_signal(reply.pointee.mainloop, 0)
            }, reply))
        }
        return reply.value
    }

    /// One stream playing into a sink, as the server lists it (pa_sink_input_info).
    package struct SinkInputListing: Sendable, Equatable {
        /// The server's index of the sink input (what `moveSinkInput` takes).
        package var index: UInt32
        /// The index of the sink it plays into.
        package var sink: UInt32
        /// Its name (media.name: "Playback Stream", a track's title).
        package var name: String
        /// The application's name (application.name), empty when it gave none.
        package var application: String
        /// The process id the application gave (application.process.id), nil when none.
        package var processID: Int32?
    }

    /// Every stream playing into a sink of the server. Inside `withLock`.
    package func sinkInputs() -> [SinkInputListing] {
        var reply = Reply<[SinkInputListing]>(mainloop: mainloop, value: [])
        withUnsafeMutablePointer(to: &reply) { reply in
            finish(pa_context_get_sink_input_info_list(context, { _, info, eol, userdata in
                let reply = userdata!.assumingMemoryBound(to: Reply<[SinkInputListing]>.self)
                if eol == 0, let i = info?.pointee {
                    let properties = PulseConnection.properties(of: i.proplist)
                    reply.pointee.value.append(SinkInputListing(index: i.index, sink: i.sink, name: i.name.map { String(cString: $0) } ?? "",
                                                                application: properties["application.name"] ?? "",
                                                                processID: properties["application.process.id"].flatMap { Int32($0) }))
                }
                pa_threaded_mainloop_signal(reply.pointee.mainloop, 0)
            }, reply))
        }
        return reply.value
    }

    /// Moves the stream with sink input index `input` to the sink with index `sink`; whether the
    /// server did (PipeWire answers once it has noted the target: the link follows). Inside `withLock`.
    package func moveSinkInput(_ input: UInt32, toSink sink: UInt32) -> Bool {
        succeeds { context, done, reply in pa_context_move_sink_input_by_index(context, input, sink, done, reply) }
    }

    /// Moves the stream with sink input index `input` to the sink named `sink`
    /// ("@DEFAULT_SINK@": the default, which lets the stream follow the default sink again);
    /// whether the server did. Inside `withLock`.
    package func moveSinkInput(_ input: UInt32, toSinkNamed sink: String) -> Bool {
        sink.withCString { name in succeeds { context, done, reply in pa_context_move_sink_input_by_name(context, input, name, done, reply) } }
    }

    /// A loaded module as the server lists it (pa_module_info).
    package struct ModuleListing: Sendable, Equatable {
        /// The server's index of the module (what `unloadModule` takes).
        package var index: UInt32
        /// Its name: "module-null-sink".
        package var name: String
        /// The arguments it was loaded with.
        package var arguments: String
    }

    /// What the server answered when asked for a module by its index.
    package enum ModuleLookup: Sendable, Equatable {
        /// It is loaded.
        case listed(ModuleListing)
        /// No module has that index ("no such entity").
        case missing
        /// The question failed otherwise (a timeout, the connection): nothing is known.
        case failed(String)
    }

    /// The module with index `module`, nil if none is loaded with that index or the question
    /// failed (`lookUpModule` tells them apart). Inside `withLock`.
    package func module(_ module: UInt32) -> ModuleListing? {
        if case .listed(let listing) = lookUpModule(module) { return listing }
        return nil
    }

    /// Asks for the module with index `module`: listed, missing, or the question failed. Inside
    /// `withLock`.
    package func lookUpModule(_ module: UInt32) -> ModuleLookup {
        var reply = Reply<ModuleLookup?>(mainloop: mainloop, value: nil)
        var asked = false
        withUnsafeMutablePointer(to: &reply) { reply in
            let op = pa_context_get_module_info(context, module, { context, info, eol, userdata in
                let reply = userdata!.assumingMemoryBound(to: Reply<ModuleLookup?>.self)
                if eol == 0, let i = info?.pointee {
                    reply.pointee.value = .listed(ModuleListing(index: i.index, name: i.name.map { String(cString: $0) } ?? "",
                                                                arguments: i.argument.map { String(cString: $0) } ?? ""))
                } else if eol < 0, reply.pointee.value == nil {
                    let error = pa_context_errno(context)
                    reply.pointee.value = error == Int32(PA_ERR_NOENTITY.rawValue) ? .missing : .failed(String(cString: pa_strerror(error)))
                }
                pa_threaded_mainloop_signal(reply.pointee.mainloop, 0)
            }, reply)
            asked = op != nil
            finish(op)
        }
        // Not asked (libpulse refused the question: an invalid index, a context not ready).
        guard asked else { return .failed(errorText) }
        // The end of the list without an entry or an error: none listed.
        return reply.value ?? (isReady ? .missing : .failed(errorText))
    }

    /// Makes the stream as the other `openStream` does, float32 with `channelCount` channels in
    /// libpulse's default order for that count (stereo: front-left, front-right), which the
    /// server maps a sink's or source's own channels to: for a stream of any sink's channel
    /// count (a monitor's), not only the positions `AudioChannelPosition` names. Inside `withLock`.
    package func openStream(name: String, rate: UInt32, channelCount: Int, onTiming: @escaping (pa_timing_info, UInt64) -> Void,
                            connect: (OpaquePointer) -> Int32) throws(PulseError) -> OpaquePointer {
        guard (1...Int(PA_CHANNELS_MAX)).contains(channelCount) else { throw .stream("cannot record \(channelCount) channels") }
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: rate, channels: UInt8(channelCount))
        var map = pa_channel_map()
        guard pa_channel_map_init_extend(&map, UInt32(channelCount), PA_CHANNEL_MAP_DEFAULT) != nil,
              let s = pa_stream_new(context, name, &spec, &map) else { throw .stream("cannot create the stream: \(errorText)") }
        return try connectAndWait(s, onTiming: onTiming, connect: connect)
    }
}

/// The real-time request for a mainloop thread and its answer, as `RealtimeThreaded` reports
/// them (the playback output's, the waveform output's and the live capture's, one rule for all).
package final class MainloopPriority: Sendable {
    private let state = Locked<(asked: Int32?, got: RealtimeThread?)>((nil, nil))

    package init() {}

    /// The priority the next connection's mainloop asks for (nil: normal priority).
    package var asked: Int32? {
        get { state.withLock { $0.asked } }
        set { state.withLock { $0.asked = newValue } }
    }

    /// What the latest connection's mainloop got (`connection.realtimeThread`; kept after it
    /// closes, for a run's summary), or nothing (nil: its stream was mixed into another output's).
    package func record(_ connection: PulseConnection?) { state.withLock { $0.got = connection?.realtimeThread } }

    /// The thread as reported (empty when none asked or none runs).
    package var threads: [RealtimeThread] { state.withLock { $0.got.map { [$0] } ?? [] } }
}

extension AudioChannelPosition {
    /// PulseAudio's name for the position.
    var pulse: pa_channel_position_t {
        switch self {
        case .frontLeft: PA_CHANNEL_POSITION_FRONT_LEFT
        case .frontRight: PA_CHANNEL_POSITION_FRONT_RIGHT
        case .rearLeft: PA_CHANNEL_POSITION_REAR_LEFT
        case .rearRight: PA_CHANNEL_POSITION_REAR_RIGHT
        case .mono: PA_CHANNEL_POSITION_MONO
        }
    }
}
