import Dispatch
import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncRuntime
import Synchronization

/// A haptic backend that records what the engine really did, for measurement: one record per
/// command with the time it was scheduled for, the time the scheduler released it and the time it
/// was applied here (all CLOCK_MONOTONIC ns), the player, kind, intensity and sharpness.
///
/// Formats: JSON Lines (`.jsonl`, one record per line) or Chrome trace-event JSON (`.json`, opens
/// in Perfetto and chrome://tracing: a counter track per player for level intensity and sharpness,
/// instant events for transients, and a slice from scheduled to applied time for every command).
///
/// Memory is bounded, however long the run: the output thread pushes each record into a ring of
/// `capacity` records (allocated and written once, at creation) and a writer thread of the trace's
/// own drains it every 20 ms and streams the records to disk. No file I/O happens on the output
/// thread. If the disk falls so far behind that the ring fills, the records that did not fit are
/// counted and `close()` fails saying how many were lost; nothing is lost silently.
///
/// Every write and the close are checked. When one fails (a full disk) the trace stops there,
/// a JSON Lines file is cut back to its last whole record (so it stays valid JSON Lines), and
/// `close()` throws `TraceError.writeFailed` with the system's reason and the records kept.
///
/// The file is opened by `OutputFile`'s rules (a regular file is replaced only when `replacing`; a
/// character device or FIFO is written into; a directory is refused). Opened again after a close
/// (the engine restarted: its audio server came back, the idle timer stopped it, `stop()` then
/// `start()`), the trace goes on after what it holds: never truncated. A Chrome trace is reopened
/// by cutting its closing `]}` and continuing the event list (on a device or FIFO, where nothing can
/// be cut, a second document follows the first).
public final class TraceBackend: HapticBackend, WaveformBlockRecorder, @unchecked Sendable {
    /// The file format.
    public enum Format: String, Sendable {
        /// One JSON object per line.
        case jsonLines = "jsonl"
        /// Chrome trace-event JSON.
        case chrome = "json"

        /// `.json` gives Chrome trace events; anything else JSON Lines.
        public static func forPath(_ path: String) -> Format { path.hasSuffix(".json") ? .chrome : .jsonLines }
    }

    /// One applied command.
    public struct Record: Sendable, Equatable, BitwiseCopyable {
        /// The command as the scheduler released it.
        public var command: OutputCommand
        /// When this backend applied it (engine ns).
        public var applied: UInt64
    }

    /// Records the ring holds by default: 16,384 (1 MiB), 16 s of a 1 kHz command stream between
    /// two 20 ms drains.
    public static let defaultCapacity = 1 << 14

    /// Where the trace is written.
    public let path: String
    /// The format written.
    public let format: Format
    /// Whether an existing regular file at `path` may be replaced (the CLI's `--force`).
    public let replacing: Bool
    /// The output thread's hand-off to the writer thread.
    private let ring: SPSCRing<Record>
    /// The waveform output's audio thread's hand-off to the writer thread (block records).
    private let blocks = SPSCRing<WaveformBlock>(capacity: 4096)
    /// The writer's figures, read by the control side.
    private let progress = Locked(Progress())
    /// The writer running now (between `open` and `close`).
    private var writer: Writer?

    /// What the writer has done (all opens together).
    private struct Progress {
        var written = 0
        var failure: TraceError?
        var opened = false
        /// Chrome: the file's length without its closing `]}`.
        var chromeBodyEnd: Int64 = 0
    }

    /// Makes a trace backend writing to `path` (format from its extension unless given). `capacity`
    /// (rounded up to a power of two) bounds the records waiting to be written. The file is
    /// created when the engine opens the backend; an existing regular file is replaced only when
    /// `replacing` is true.
    public init(path: String, format: Format? = nil, replacing: Bool = false, capacity: Int = TraceBackend.defaultCapacity) {
        self.path = path
        self.format = format ?? Format.forPath(path)
        self.replacing = replacing
        var slots = 16
        while slots < capacity { slots <<= 1 }
        // Pushed by whichever thread drains the engine's output stage (one at a time).
        ring = SPSCRing(capacity: slots, serializedProducers: true)
    }

    /// "trace".
    public var name: String { "trace" }
    /// The trace file.
    public var device: String { path }

    /// Records written to the file so far (all opens together).
    public var recordsWritten: Int { progress.withLock { $0.written } }
    /// Records lost because the ring was full (the disk did not keep up).
    public var recordsDropped: Int { ring.overflowCount + blocks.overflowCount }
    /// Why the trace failed, if it did.
    public var failure: TraceError? { progress.withLock { $0.failure } }
    /// A write that failed (as it happens, not only at `close()`) and the records lost so far.
    public var health: OutputHealth { OutputHealth(failure: failure.map { "\($0)" }, lost: recordsDropped) }

    /// Creates the file (or, after a close, reopens it to go on after what it holds) and starts
    /// the writer thread, so an unwritable path fails before playback. Throws the earlier failure
    /// if a write already failed.
    public func open() throws {
        guard writer == nil else { return }
        let (again, bodyEnd, failed) = progress.withLock { ($0.opened, $0.chromeBodyEnd, $0.failure) }
        // A trace that failed stays failed: writing on after a gap would make the error's count
        // of what the file holds untrue.
        if let failed { throw failed }
        let file: OutputFile
        do {
            file = try OutputFile.create(path, replacing: replacing, mode: again ? .append : .stream)
        } catch {
            throw TraceError.cannotCreate(error)
        }
        do {
            if format == .chrome {
                if again, file.isRegularFile, bodyEnd > 0, file.bytesWritten >= bodyEnd {
                    try file.truncate(to: bodyEnd)
                } else {
                    try file.write(Self.chromeHeader)
                }
            }
        } catch {
            file.discard()
            throw TraceError.writeFailed(error, kept: recordsWritten)
        }
        progress.withLock {
            $0.opened = true
            $0.chromeBodyEnd = file.bytesWritten
        }
        ring.resetOwnership()
        blocks.resetOwnership()
        let w = Writer(trace: self, file: file)
        writer = w
        w.start()
    }

    // MARK: - Real-time (output thread)

    /// Hands the record to the writer thread through the ring. Does not allocate, lock or block: a
    /// full ring counts the record as dropped.
    public func apply(_ command: OutputCommand, appliedAt: UInt64) {
        _ = ring.push(Record(command: command, applied: appliedAt))
    }

    /// Hands a waveform block's record to the writer thread (the waveform output's audio thread).
    /// Does not allocate, lock or block: a full ring counts the record as dropped.
    public func record(_ block: WaveformBlock) {
        _ = blocks.push(block)
    }

    /// Nothing to silence: a trace has no motors.
    public func stopAll() {}

    // MARK: - Control side

    /// Writes what is still in the ring, finishes the file (a Chrome trace's closing `]}`) and
    /// closes it. Throws `TraceError` if a write or the close failed or records were dropped.
    public func close() throws {
        guard let w = writer else { return }
        writer = nil
        w.finish()
        let (failure, written) = progress.withLock { ($0.failure, $0.written) }
        if let failure { throw failure }
        let dropped = ring.overflowCount + blocks.overflowCount
        if dropped > 0 {
            let lost = TraceError.recordsDropped(path: path, dropped: dropped, kept: written)
            progress.withLock { $0.failure = lost }
            throw lost
        }
    }

    /// Undoes `open()` after a start that failed later: ends the writer and removes the file if
    /// this open created it (nothing was played into it), so the same run can be tried again
    /// without `--force`. A file that was there before (written into, or truncated on the
    /// user's `--force`) stays; a reopened trace goes on being appended to next time.
    public func abandon() {
        guard let w = writer else { return }
        writer = nil
        w.finish()
        guard progress.withLock({ $0.written == 0 && $0.failure == nil }), w.file.removeCreated() else { return }
        // Gone: the next open creates it afresh.
        progress.withLock {
            $0.opened = false
            $0.chromeBodyEnd = 0
        }
    }

    /// The writer thread: drains the ring every 20 ms, formats the records and writes them.
    private final class Writer: @unchecked Sendable {
        unowned let trace: TraceBackend
        let file: OutputFile
        let stopping = Atomic<Bool>(false)
        let wake = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        var failed = false
        /// Formats every record and event this writer writes (made once: JSONEncoder is not free).
        let encoder = TraceRecord.makeEncoder()

        init(trace: TraceBackend, file: OutputFile) {
            self.trace = trace
            self.file = file
        }

        func start() {
            let thread = Thread { [self] in
                HelperThreadCalls.setName("hapsync-trace")
                run()
                done.signal()
            }
            thread.start()
        }

        /// Asks the thread to write what is left and end, and waits for it.
        func finish() {
            stopping.store(true, ordering: .releasing)
            wake.signal()
            done.wait()
        }

        func run() {
            var batch = ""
            while true {
                let last = stopping.load(ordering: .acquiring)
                batch.removeAll(keepingCapacity: true)
                var count = 0
                while let r = trace.ring.pop() {
                    if failed { continue }
                    appendRecord(r, to: &batch)
                    count += 1
                    if batch.utf8.count >= 1 << 16 { flush(&batch, count); batch.removeAll(keepingCapacity: true); count = 0 }
                }
                while let b = trace.blocks.pop() {
                    if failed { continue }
                    if appendBlock(b, to: &batch) { count += 1 }
                    if batch.utf8.count >= 1 << 16 { flush(&batch, count); batch.removeAll(keepingCapacity: true); count = 0 }
                }
                if count > 0 { flush(&batch, count) }
                if last { break }
                _ = wake.wait(timeout: .now() + .milliseconds(20))
            }
            finishFile()
        }

        func appendRecord(_ r: Record, to batch: inout String) {
            let record = TraceRecord.Command(r.command, applied: r.applied)
            switch trace.format {
            case .jsonLines:
                batch += TraceRecord.command(record).jsonLine(encoder)
            case .chrome:
                // The header's metadata events come first, so every event follows a comma.
                for event in ChromeEvent.events(record) { batch += ",\n" + TraceBackend.json(event, encoder) }
            }
        }

        /// Appends a block's record; false when it has none (Chrome: a block from before the
        /// stream's clock had a fit has no time to put it at).
        func appendBlock(_ b: WaveformBlock, to batch: inout String) -> Bool {
            switch trace.format {
            case .jsonLines: batch += TraceRecord.block(TraceRecord.Block(b)).jsonLine(encoder)
            case .chrome:
                guard b.time > 0 else { return false }
                batch += ",\n" + TraceBackend.json(ChromeEvent.event(TraceRecord.Block(b)), encoder)
            }
            return true
        }

        /// Writes a batch of `count` whole records; on failure keeps the whole records that reached
        /// the file and stops writing.
        func flush(_ batch: inout String, _ count: Int) {
            let start = file.bytesWritten
            do {
                try file.write(batch)
                trace.progress.withLock {
                    $0.written += count
                    $0.chromeBodyEnd = file.bytesWritten
                }
            } catch {
                failed = true
                // Whole lines that reached the file stay; a cut line is removed.
                let reached = Int(file.bytesWritten - start)
                let utf8 = Array(batch.utf8.prefix(reached))
                var kept = 0, keptBytes = 0
                if trace.format == .jsonLines {
                    for (i, byte) in utf8.enumerated() where byte == UInt8(ascii: "\n") {
                        kept += 1
                        keptBytes = i + 1
                    }
                }
                // A cut line is removed where it can be; where it cannot (a device or FIFO, or the
                // truncation failed too), the error says the file ends with part of a record.
                var cutLeft: String?
                if keptBytes < reached {
                    if !file.isRegularFile {
                        cutLeft = "a device or FIFO cannot be cut back"
                    } else {
                        do { try file.truncate(to: start + Int64(keptBytes)) } catch { cutLeft = "cutting it off failed: \(error)" }
                    }
                }
                trace.progress.withLock { p in
                    p.written += kept
                    if let why = cutLeft {
                        p.failure = .writeFailedPartly(error, kept: p.written, why: why)
                    } else {
                        p.failure = .writeFailed(error, kept: p.written)
                    }
                }
            }
        }

        /// Closes the file: a Chrome trace's closing `]}` first; the close itself is checked.
        func finishFile() {
            do {
                if trace.format == .chrome, !failed { try file.write(TraceBackend.chromeFooter) }
                try file.commit()
            } catch {
                trace.progress.withLock { p in
                    if p.failure == nil { p.failure = .writeFailed(error, kept: p.written) }
                }
                file.discard()
            }
        }
    }

    // MARK: - Formatting

    /// One Chrome trace event, as the trace-event format defines it (`ph` its phase: X a slice, C a
    /// counter, i an instant, M metadata; `ts` and `dur` in µs).
    struct ChromeEvent: Encodable {
        /// The event's arguments; absent ones are left out.
        struct Args: Encodable {
            var name: String?
            var player: UInt32?
            var t: Double?
            var intensity: Double?
            var sharpness: Double?
            var frequencyHz: Double?
            var dispatchNs: Int64?
            var applyNs: Int64?

            enum CodingKeys: String, CodingKey {
                case frequencyHz = "frequency_hz"
                case dispatchNs = "dispatch_ns"
                case applyNs = "apply_ns"
                case name, player, t, intensity, sharpness
            }
        }

        var name: String
        var cat: String?
        var ph: String
        var s: String?
        var pid = 1
        var tid: UInt32?
        var ts: Double?
        var dur: Double?
        var args: Args?

        /// Engine ns as the format's µs, to the rounding every trace number gets.
        static func us(_ ns: UInt64) -> Double { TraceRecord.rounded(Double(ns) / 1000) }
        static func us(_ ns: Int64) -> Double { TraceRecord.rounded(Double(ns) / 1000) }

        /// A command's events: its slice from scheduled to applied, and its counter or instant.
        static func events(_ c: TraceRecord.Command) -> [ChromeEvent] {
            let args = Args(player: c.player, t: c.t, intensity: c.intensity, sharpness: c.sharpness, dispatchNs: c.dispatchNs, applyNs: c.applyNs)
            var events = [ChromeEvent(name: c.kind.rawValue, cat: "haptic", ph: "X", tid: c.player, ts: us(c.scheduledNs),
                                      dur: us(max(0, Int64(bitPattern: c.appliedNs &- c.scheduledNs))), args: args)]
            switch c.kind {
            case .level:
                events.append(ChromeEvent(name: "haptic level", ph: "C", ts: us(c.appliedNs), args: Args(intensity: c.intensity, sharpness: c.sharpness)))
            case .transient:
                events.append(ChromeEvent(name: "transient", ph: "i", s: "t", tid: c.player, ts: us(c.appliedNs), args: args))
            case .stopAll:
                events.append(ChromeEvent(name: "stop all", ph: "i", s: "p", ts: us(c.appliedNs)))
            }
            return events
        }

        /// A waveform block's event: the "drive" counter at the block's time.
        static func event(_ b: TraceRecord.Block) -> ChromeEvent {
            ChromeEvent(name: "drive", ph: "C", ts: us(b.timeNs), args: Args(intensity: b.intensity, sharpness: b.sharpness, frequencyHz: b.frequencyHz))
        }

        /// The metadata events that open every Chrome trace: the process's and the thread's names.
        static let metadata = [ChromeEvent(name: "process_name", ph: "M", args: Args(name: "hapsync")),
                               ChromeEvent(name: "thread_name", ph: "M", tid: 0, args: Args(name: "haptic output"))]
    }

    /// An event's JSON text, by the trace's one encoder.
    static func json(_ event: ChromeEvent, _ encoder: JSONEncoder) -> String {
        String(decoding: (try? encoder.encode(event)) ?? Data(), as: UTF8.self)
    }

    /// A Chrome trace's opening: the document's head and the metadata events (every later event
    /// follows a comma).
    static var chromeHeader: String {
        let encoder = TraceRecord.makeEncoder()
        return "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" + ChromeEvent.metadata.map { json($0, encoder) }.joined(separator: ",\n")
    }
    static let chromeFooter = "\n]}\n"

    /// Why a trace could not be written; each names the file.
    public enum TraceError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file could not be created (or reopened).
        case cannotCreate(OutputFile.Failure)
        /// A write or the close failed; `kept` records are in the file, whole.
        case writeFailed(OutputFile.Failure, kept: Int)
        /// A write failed part-way through a record that could not be removed: `kept` whole
        /// records, then part of one; `why` says why it stayed.
        case writeFailedPartly(OutputFile.Failure, kept: Int, why: String)
        /// The ring was full: the disk did not keep up with the commands.
        case recordsDropped(path: String, dropped: Int, kept: Int)

        /// A sentence for the user.
        public var description: String {
            switch self {
            case .cannotCreate(let f): return "trace: \(f)"
            case .writeFailed(let f, let kept): return "trace: \(f); the trace holds the first \(kept) records, whole"
            case .writeFailedPartly(let f, let kept, let why):
                return "trace: \(f); the trace holds the first \(kept) records, whole, then part of one more (\(why))"
            case .recordsDropped(let p, let dropped, let kept):
                return "trace \(p): \(dropped) records lost (the disk did not keep up with the commands); \(kept) records written"
            }
        }
    }
}
