import CPulse
import Foundation
import Glibc
import HapSyncRuntime
import Synchronization

/// Records a PulseAudio source (typically a sink's monitor) with low latency and knows when each
/// recorded frame was played: for measuring, from the outside, when audio was really heard.
///
/// A thread reads 2.5 ms blocks through the simple API; after each read, the stream's latency
/// says when the newest frame was captured, which feeds an `AudioClock` (recorded frame → CLOCK_MONOTONIC).
/// Attached to a null sink's monitor it also keeps that sink in low-latency mode.
public final class PulseAudioRecorder: @unchecked Sendable {
    /// The source recorded, e.g. "hapsync.monitor".
    public let source: String
    /// Frames per second of the recording.
    public let sampleRate: Double
    /// Recorded frame → CLOCK_MONOTONIC time it was played.
    public let clock: AudioClock
    private let samples = Mutex<[Float]>([])
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var handle: OpaquePointer?
    private let capacityFrames: Int

    /// A recorder of `source` at `sampleRate`, keeping up to `seconds` of mono (left) samples.
    public init(source: String, sampleRate: Double = 48_000, seconds: Double = 120) {
        self.source = source
        self.sampleRate = sampleRate
        clock = AudioClock(sampleRate: sampleRate)
        capacityFrames = Int(seconds * sampleRate)
    }

    /// Connects and starts recording on a thread of its own.
    public func start() throws {
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(sampleRate), channels: 2)
        let block = UInt32(0.0025 * sampleRate) * 8
        var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max, fragsize: block)
        var error: Int32 = 0
        guard let h = pa_simple_new(nil, "HapSync monitor", PA_STREAM_RECORD, source, "monitor", &spec, nil, &attr, &error) else {
            throw PulseAudioOutput.PulseError.noServer(String(cString: pa_strerror(error)))
        }
        handle = h
        samples.withLock { $0.reserveCapacity(capacityFrames) }
        running.store(true, ordering: .releasing)
        let frames = Int(block / 8)
        let thread = Thread { [self] in
            if let h = handle { record(h, blockFrames: frames) }
        }
        thread.name = "hapsync-monitor"
        thread.start()
    }

    private func record(_ h: OpaquePointer, blockFrames: Int) {
        var buffer = [Float](repeating: 0, count: blockFrames * 2)
        var total: Int64 = 0
        var error: Int32 = 0
        while running.load(ordering: .acquiring) {
            let rc = buffer.withUnsafeMutableBytes { pa_simple_read(h, $0.baseAddress, $0.count, &error) }
            if rc < 0 { break }
            let now = MonotonicClock.nanoseconds()
            let latency = pa_simple_get_latency(h, &error)
            total += Int64(blockFrames)
            // The newest frame read was played `latency` ago.
            clock.observe(frame: total - 1, heardAt: now - UInt64(latency) * 1000)
            samples.withLock { s in
                if s.count + blockFrames <= capacityFrames {
                    for k in 0..<blockFrames { s.append(buffer[2 * k]) }
                }
            }
        }
        finished.signal()
    }

    /// Stops recording and disconnects.
    public func stop() {
        guard running.load(ordering: .acquiring), let h = handle else { return }
        running.store(false, ordering: .releasing)
        _ = finished.wait(timeout: .now() + 2)
        pa_simple_free(h)
        handle = nil
    }

    /// The left channel recorded so far.
    public var recording: [Float] { samples.withLock { $0 } }

    /// Frames where a click starts: the level rises above `threshold` after at least `quiet`
    /// seconds below it.
    public static func onsets(_ x: [Float], threshold: Float = 0.1, quiet: Double = 0.05, sampleRate: Double = 48_000) -> [Int] {
        var result: [Int] = []
        var silent = 0
        let need = Int(quiet * sampleRate)
        for (i, v) in x.enumerated() {
            if abs(v) >= threshold {
                if silent >= need { result.append(i) }
                silent = 0
            } else {
                silent += 1
            }
        }
        return result
    }
}
