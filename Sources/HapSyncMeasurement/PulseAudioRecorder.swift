import CPulse
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncRuntime
import Synchronization

/// Records a PulseAudio source (typically a sink's monitor) with low latency and knows when each
/// recorded frame was played: for measuring, from the outside, when audio was really heard.
///
/// The stream runs on a threaded mainloop with 2.5 ms fragments. Frames are counted in the
/// stream's own index space: a hole the server reports (data lost to an overflow) is filled with
/// silence and counted, so frame numbers never slip. Every 10 ms the server's timing info gives an
/// observation, computed as `pa_stream_get_time` does for a record stream but signed: the frame
/// being played at the info's timestamp is write_index + (transport + source latency − sink
/// latency) × rate. (A monitor's latency is negative: it sees data before the sink plays it;
/// `pa_simple_get_latency` clamps that to zero, which once made this recorder's clicks look 2 ms early.)
///
/// Every observation is kept (`PlaybackObservations`), and `heardTime(ofRecordedFrame:)` fits a
/// line through those within half a second of the frame asked about, so a recorded click is timed
/// by the observations around it, not by a fit extrapolated over the whole recording (a 200 ppm
/// slope error, extrapolated back 60 s, would be 12 ms). The live `clock` (an `AudioClock` fed the same observations) is there
/// for monitoring while recording. Attached to a null sink's monitor it also keeps that sink in
/// low-latency mode.
public final class PulseAudioRecorder: @unchecked Sendable {
    /// The source recorded, e.g. "hapsync.monitor".
    public let source: String
    /// Frames per second of the recording.
    public let sampleRate: Double
    /// Recorded frame → CLOCK_MONOTONIC time it was played.
    public let clock: AudioClock
    private let samples = Locked<[Float]>([])
    private let observed: Locked<PlaybackObservations>
    private let holeFrames = Atomic<Int>(0)
    private let overflowCount = Atomic<Int>(0)
    private var connection: PulseConnection?
    private var stream: OpaquePointer?
    private let capacityFrames: Int

    /// A recorder of `source` at `sampleRate`, keeping up to `seconds` of mono (left) samples.
    public init(source: String, sampleRate: Double = 48_000, seconds: Double = 120) {
        self.source = source
        self.sampleRate = sampleRate
        clock = AudioClock(sampleRate: sampleRate)
        capacityFrames = Int(seconds * sampleRate)
        observed = Locked(PlaybackObservations(sampleRate: sampleRate, capacity: capacityFrames / 480 + 64))
    }

    deinit { stop() }

    /// Frames the server reported lost (holes, filled with silence).
    public var lostFrames: Int { holeFrames.load(ordering: .relaxed) }

    /// Overflows the server reported (the client read too slowly).
    public var overflows: Int { overflowCount.load(ordering: .relaxed) }

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Connects and starts recording on the mainloop's thread.
    public func start() throws {
        guard connection == nil else { return }
        samples.withLock { $0.reserveCapacity(capacityFrames) }
        let connection = try PulseConnection(clientName: "HapSync monitor", server: nil, threadName: "hapsync-monitor")
        self.connection = connection
        do {
            stream = try connection.withLock { () throws(PulseConnection.PulseError) -> OpaquePointer in
                try connection.openStream(name: "HapSync monitor", rate: UInt32(sampleRate), onTiming: { [unowned self] info, at in
                    timingUpdated(info, at: at)
                }) { s in
                    pa_stream_set_read_callback(s, { _, _, userdata in
                        Unmanaged<PulseAudioRecorder>.fromOpaque(userdata!).takeUnretainedValue().read()
                    }, me)
                    pa_stream_set_overflow_callback(s, { _, userdata in
                        Unmanaged<PulseAudioRecorder>.fromOpaque(userdata!).takeUnretainedValue().overflowCount.add(1, ordering: .relaxed)
                    }, me)
                    var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
                                              fragsize: UInt32(0.0025 * sampleRate) * 8)
                    let flags = pa_stream_flags_t(rawValue: PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                                                  | PA_STREAM_ADJUST_LATENCY.rawValue)
                    return pa_stream_connect_record(s, source, &attr, flags)
                }
            }
        } catch {
            stop()
            throw error
        }
    }

    /// Mainloop thread: takes what the server sent, counting holes, and asks for timing info.
    private func read() {
        guard let s = stream else { return }
        while pa_stream_readable_size(s) > 0 {
            var data: UnsafeRawPointer?
            var bytes = 0
            guard pa_stream_peek(s, &data, &bytes) >= 0, bytes > 0 else { break }
            let frames = bytes / 8
            samples.withLock { x in
                let room = max(0, capacityFrames - x.count)
                if let data {
                    let f = data.assumingMemoryBound(to: Float.self)
                    for k in 0..<min(frames, room) { x.append(f[2 * k]) }
                } else {
                    holeFrames.add(frames, ordering: .relaxed)
                    x.append(contentsOf: repeatElement(0, count: min(frames, room)))
                }
            }
            pa_stream_drop(s)
        }
        connection?.requestTimingInfo()
    }

    /// Mainloop thread: the server's timing info, taken at monotonic time `at`, as "frame F was
    /// played at T".
    private func timingUpdated(_ info: pa_timing_info, at: UInt64) {
        guard info.write_index_corrupt == 0 else { return }
        let frame = Double(info.write_index) / 8
            + (Double(info.transport_usec) + Double(info.source_usec) - Double(info.sink_usec)) * sampleRate / 1e6
        let f = Int64(frame.rounded())
        clock.observe(frame: f, heardAt: at)
        observed.withLock { $0.append(frame: f, time: at) }
    }

    /// Stops recording and disconnects.
    public func stop() {
        connection?.close()
        connection = nil
        stream = nil
    }

    /// When recorded frame `frame` was played (CLOCK_MONOTONIC ns), by the observations within
    /// ±0.5 s of it (see `PlaybackObservations.heardTime(ofFrame:)`); nil with fewer than 8 there.
    public func heardTime(ofRecordedFrame frame: Int64) -> UInt64? {
        observed.withLock { $0.heardTime(ofFrame: frame) }
    }

    /// Where the recording's observations jump by more than 2 ms (see
    /// `PlaybackObservations.discontinuities`). A trustworthy measurement has none near its clicks.
    public var discontinuities: [(frame: Int64, jump: Double)] { observed.withLock { $0 }.discontinuities }

    /// The left channel recorded so far.
    public var recording: [Float] { samples.withLock { $0 } }
}
