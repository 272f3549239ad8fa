import Dispatch
import Foundation
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncRuntime
import Synchronization

/// A pipe sink read by a thread that times what it takes: a stand-in for a speaker, to measure
/// from outside the sound server when audio is heard, on PulseAudio and on PipeWire alike.
///
/// `start()` makes a FIFO (8 KiB), loads `module-pipe-sink` writing float32 stereo into it (both
/// servers have the module) and reads it on a thread of its own (SCHED_FIFO 75 when granted). The
/// two servers' pipe sinks keep different contracts with whoever reads the pipe, and the reader
/// keeps each one as a speaker would (`Pacing`):
/// - PipeWire's is a stream in a graph driven by a clock of its own: it writes each cycle's block
///   when the cycle runs and never waits for the reader. A speaker plays a block as it arrives:
///   the first frame of each read is heard when the read returns (`.asWritten`).
/// - PulseAudio's writes whenever the pipe has room and counts what waits in the pipe as its
///   latency: the reader is its sound card. It takes frames at the nominal rate by
///   CLOCK_MONOTONIC, every 0.25 ms, so a frame is heard when it is taken (`.nominalRate`);
///   PulseAudio sees the pipe drain in those steps, which makes it think frames are heard up to
///   0.25 ms later than they are.
///
/// Reads give observations "frame F heard at T", kept in `PlaybackObservations` (`.asWritten`:
/// only reads that waited for their data, with a timeline that may step), and
/// `heardTime(ofFrame:)` fits a line through those within half a second of a frame. Nothing here
/// reads the server's timing reports: that is the point. The frames are the sink's own, so a
/// recorded click's frame (`ClickOnsets`) gives the moment it was heard.
public final class PipeSinkReader: @unchecked Sendable {
    /// How the reader takes what the pipe sink writes.
    public enum Pacing: Sendable, Equatable {
        /// Everything as it arrives; the first frame of each read is heard when the read returns.
        case asWritten
        /// At the nominal rate by CLOCK_MONOTONIC; a frame is heard when it is taken.
        case nominalRate

        /// What a server's pipe sink needs: `.asWritten` for PipeWire's, `.nominalRate` for
        /// PulseAudio's.
        public init(serverName: String) {
            self = PulseConnection.Server(serverName: serverName) == .pipeWire ? .asWritten : .nominalRate
        }
    }

    /// The sink's name (play to it by name).
    public let sinkName: String
    /// Frames per second of the sink.
    public let sampleRate: Double
    /// How far the `.nominalRate` reader's pace is off the nominal rate, ppm (positive: fast): a
    /// sound card whose crystal runs off the system's clock (PulseAudio's pipe sink follows its
    /// reader). PipeWire's pipe sink runs on its graph's clock whatever the reader does.
    public let cardPPM: Double
    /// The server's name, known after `start()`.
    public private(set) var serverName = ""
    /// How the pipe is read, known after `start()`.
    public private(set) var pacing = Pacing.asWritten
    /// Why the reading thread runs without SCHED_FIFO (nil: it has it, or it has not started).
    public var realtimeRefusal: String? { refusal.withLock { $0 } }

    private let capacityFrames: Int
    private let samples = Locked<[Float]>([])
    private let observed: Locked<PlaybackObservations>
    private let refusal = Locked<String?>(nil)
    private let running = Atomic<Bool>(false)
    private let readCount = Atomic<Int>(0)
    private let starvedCount = Atomic<Int>(0)
    private let exited = DispatchSemaphore(value: 0)
    private var pipe: NamedPipe?
    private var connection: PulseConnection?
    private var module: UInt32?
    private static let instances = Atomic<Int>(0)
    private static let frameBytes = 8
    /// How often the `.nominalRate` reader takes what is due, ns.
    private static let tick: UInt64 = 250_000

    /// A reader for a new pipe sink `sinkName` (default: unique in this process) at `sampleRate`,
    /// keeping up to `seconds` of mono (left) samples.
    /// `cardPPM`: the reader's pace off nominal (see the property).
    public init(sinkName: String? = nil, sampleRate: Double = 48_000, seconds: Double = 120, cardPPM: Double = 0) {
        let n = Self.instances.add(1, ordering: .relaxed).newValue
        self.sinkName = sinkName ?? "hapsync-pipe-\(getpid())-\(n)"
        self.sampleRate = sampleRate
        self.cardPPM = cardPPM
        capacityFrames = Int(seconds * sampleRate)
        // At most one read per tick.
        observed = Locked(PlaybackObservations(sampleRate: sampleRate, capacity: Int(seconds * 4000) + 64))
    }

    deinit { stop() }

    /// Makes the FIFO, loads the pipe sink on `server` (nil: the default) and starts reading.
    public func start(server: String? = nil) throws {
        guard connection == nil else { return }
        samples.withLock { $0.reserveCapacity(capacityFrames) }
        let pipe = try NamedPipe(creatingAt: FileManager.default.temporaryDirectory.appendingPathComponent("\(sinkName).fifo").path)
        // Small: PulseAudio keeps it full, and what is in it is latency.
        pipe.setCapacity(8192)
        self.pipe = pipe
        do {
            let connection = try PulseConnection(clientName: "HapSync pipe sink", server: server, threadName: "hapsync-pipectl")
            self.connection = connection
            let (name, index) = try connection.withLock { () throws(PulseConnection.PulseError) -> (String, UInt32) in
                let name = connection.serverName()
                let arguments = "file=\(pipe.path) sink_name=\(sinkName) format=float32le rate=\(Int(sampleRate)) channels=2"
                return (name, try connection.loadModule("module-pipe-sink", arguments: arguments))
            }
            serverName = name
            pacing = Pacing(serverName: name)
            module = index
            // PipeWire's writes each cycle's block without waiting, and drops what does not fit:
            // room for the largest quantum (8192 frames of float stereo), which a 50 ms
            // node.latency asks for (2048 frames: 16 KiB, twice the 8 KiB PulseAudio needs).
            if pacing == .asWritten { pipe.setCapacity(1 << 16) }
            observed.withLock { $0.splitsAtSteps = pacing == .asWritten }
        } catch {
            stop()
            throw error
        }
        running.store(true, ordering: .releasing)
        let thread = Thread { [self, pacing] in
            if case .failure(let e) = HelperThreadCalls.requestFIFO(priority: 75) { refusal.withLock { $0 = e.description } }
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 8)
            switch pacing {
            case .asWritten: readAsWritten(pipe, buffer: buffer, capacity: 1 << 16)
            case .nominalRate: readAtNominalRate(pipe, buffer: buffer, capacity: 1 << 16)
            }
            buffer.deallocate()
            exited.signal()
        }
        thread.name = "hapsync-piperd"
        thread.start()
    }

    /// `.asWritten`: waits for data, times the read as soon as there is some, and observes its
    /// first frame as heard then: only a read that found the pipe empty and waited for its data
    /// (data already waiting came while this thread was away, so its time says nothing of when
    /// it came), and not one within `burst` of the last read (the rest of a block the sink
    /// wrote at once, which woke this thread part-way).
    private func readAsWritten(_ pipe: NamedPipe, buffer: UnsafeMutableRawPointer, capacity: Int) {
        var frames = Frames()
        var lastRead: UInt64 = 0
        while running.load(ordering: .acquiring) {
            let waiting = pipe.waitReadable(milliseconds: 0)
            guard waiting || pipe.waitReadable(milliseconds: 20) else { continue }
            let time = MonotonicClock.nanoseconds()
            let n = pipe.read(into: buffer + frames.carry, capacity: capacity - frames.carry)
            guard n > 0 else { continue }
            if !waiting, time &- lastRead >= Self.burst { observe(frame: frames.count, at: time) }
            lastRead = time
            take(&frames, bytes: n, from: buffer)
        }
    }

    /// Reads closer together than this are one block the sink wrote at once (PipeWire's
    /// shortest cycle, 32 frames at 48 kHz, is 0.67 ms), ns.
    private static let burst: UInt64 = 500_000

    /// `.nominalRate`: from the first data on, every tick takes the frames due by then at the
    /// nominal rate and observes the next one as heard at that moment. When the pipe has less
    /// than is due (the sink fell behind: counted in `starved`) it takes what there is and carries
    /// on from there, as a sound card that ran dry starts again.
    private func readAtNominalRate(_ pipe: NamedPipe, buffer: UnsafeMutableRawPointer, capacity: Int) {
        while running.load(ordering: .acquiring), !pipe.waitReadable(milliseconds: 20) {}
        var frames = Frames()
        let pace = sampleRate * (1 + cardPPM * 1e-6)
        var origin = MonotonicClock.nanoseconds()    // when frame 0 was heard, moved on by each starvation
        var wake = origin
        while running.load(ordering: .acquiring) {
            wake += Self.tick
            HelperThreadCalls.sleep(untilMonotonic: wake)
            let time = MonotonicClock.nanoseconds()
            let due = Int64(Double(time - origin) * pace / 1e9) - frames.count
            guard due > 0 else { continue }
            let want = min(Int(due) * Self.frameBytes - frames.carry, capacity - frames.carry)
            var got = 0
            while got < want {
                let n = pipe.read(into: buffer + frames.carry + got, capacity: want - got)
                if n <= 0 { break }
                got += n
            }
            let before = frames.count
            take(&frames, bytes: got, from: buffer)
            if frames.count - before < due {
                starvedCount.add(1, ordering: .relaxed)
                origin = time - UInt64(Double(frames.count) / pace * 1e9)
            }
            observe(frame: frames.count, at: time)
            if time > wake + 10 * Self.tick { wake = time }   // a long stall: no burst of catch-up ticks
        }
    }

    /// Whole frames read so far, and the bytes of one split across reads (kept at the buffer's start).
    private struct Frames {
        var count: Int64 = 0
        var carry = 0
    }

    /// Keeps the left channel of the whole frames now in the buffer (`carry` + `bytes` bytes) and
    /// moves a split frame's bytes to its start.
    private func take(_ frames: inout Frames, bytes: Int, from buffer: UnsafeMutableRawPointer) {
        guard bytes > 0 else { return }
        readCount.add(1, ordering: .relaxed)
        let total = frames.carry + bytes
        let whole = total / Self.frameBytes
        let left = buffer.assumingMemoryBound(to: Float.self)
        samples.withLock { x in
            for k in 0..<min(whole, max(0, capacityFrames - x.count)) { x.append(left[2 * k]) }
        }
        frames.count += Int64(whole)
        frames.carry = total % Self.frameBytes
        if frames.carry > 0 { buffer.copyMemory(from: buffer + whole * Self.frameBytes, byteCount: frames.carry) }
    }

    private func observe(frame: Int64, at time: UInt64) {
        observed.withLock { $0.append(frame: frame, time: time) }
    }

    /// Stops reading, unloads the sink and removes the FIFO.
    public func stop() {
        if running.exchange(false, ordering: .acquiringAndReleasing) { exited.wait() }
        if let connection, let module { _ = connection.withLock { connection.unloadModule(module) } }
        module = nil
        connection?.close()
        connection = nil
        pipe?.remove()
        pipe = nil
    }

    /// Reads that took data so far.
    public var reads: Int { readCount.load(ordering: .relaxed) }

    /// `.nominalRate` ticks that found less in the pipe than was due.
    public var starved: Int { starvedCount.load(ordering: .relaxed) }

    /// The left channel read so far.
    public var recording: [Float] { samples.withLock { $0 } }

    /// When frame `frame` of the sink was heard (CLOCK_MONOTONIC ns), by the reads within ±0.5 s of
    /// it (see `PlaybackObservations.heardTime(ofFrame:)`); nil with fewer than 8 there.
    public func heardTime(ofFrame frame: Int64) -> UInt64? {
        observed.withLock { $0.heardTime(ofFrame: frame) }
    }

    /// Where the reads jump by more than 2 ms against their neighbours (see
    /// `PlaybackObservations.discontinuities`): data the sink dropped or the reader took late.
    public var discontinuities: [(frame: Int64, jump: Double)] { observed.withLock { $0 }.discontinuities }
}
