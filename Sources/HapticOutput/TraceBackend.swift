import AHAP
import Foundation
import HapSyncRuntime

/// A haptic backend that records what the engine really did, for measurement: one record per
/// command with the time it was scheduled for, the time the scheduler released it and the time it
/// was applied here (all CLOCK_MONOTONIC ns), the player, kind, intensity and sharpness.
///
/// Records are kept in memory during playback and written when the backend closes, so no file I/O
/// happens on the output thread. Formats: JSON Lines (`.jsonl`, one record per line) or Chrome
/// trace-event JSON (`.json`, opens in Perfetto and chrome://tracing: a counter track per player
/// for level intensity and sharpness, instant events for transients, and a slice from scheduled to
/// applied time for every command).
public final class TraceBackend: HapticBackend, @unchecked Sendable {
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
    public struct Record: Sendable, Equatable {
        /// The command as the scheduler released it.
        public var command: OutputCommand
        /// When this backend applied it (engine ns).
        public var applied: UInt64
    }

    /// Where the trace is written.
    public let path: String
    /// The format written.
    public let format: Format
    private var storage: UnsafeMutablePointer<Record>
    private var capacity: Int
    private var count = 0
    private var handle: FileHandle?

    /// Makes a trace backend writing to `path` (format from its extension unless given), with room
    /// for `capacity` records before it has to allocate more.
    public init(path: String, format: Format? = nil, capacity: Int = 1 << 16) {
        self.path = path
        self.format = format ?? Format.forPath(path)
        self.capacity = max(capacity, 16)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// "trace".
    public var name: String { "trace" }
    /// The trace file.
    public var device: String { path }

    /// Creates (or truncates) the file now, so an unwritable path fails before playback.
    public func open() throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw TraceError.cannotCreate(path)
        }
        handle = FileHandle(forWritingAtPath: path)
        if handle == nil { throw TraceError.cannotCreate(path) }
    }

    // MARK: - Real-time (output thread)

    /// Records the command. Does not lock or block; allocates only when more records arrive than
    /// the capacity reserved at creation (it then doubles).
    public func apply(_ command: OutputCommand, appliedAt: UInt64) {
        if count == capacity {
            let bigger = UnsafeMutablePointer<Record>.allocate(capacity: capacity * 2)
            bigger.moveInitialize(from: storage, count: count)
            storage.deallocate()
            storage = bigger
            capacity *= 2
        }
        (storage + count).initialize(to: Record(command: command, applied: appliedAt))
        count += 1
    }

    /// Nothing to silence: a trace has no motors.
    public func stopAll() {}

    /// Writes the file and closes it.
    public func close() throws {
        guard let handle else { return }
        self.handle = nil
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(render().utf8))
    }

    /// The records so far (allocates; for summaries and tests, after playback).
    public var records: [Record] { Array(UnsafeBufferPointer(start: storage, count: count)) }

    /// The trace text in this backend's format.
    public func render() -> String {
        switch format {
        case .jsonLines: return records.map(Self.jsonLine).joined()
        case .chrome: return Self.chromeTrace(records)
        }
    }

    static func kindName(_ k: OutputCommand.Kind) -> String {
        switch k {
        case .level: return "level"
        case .transient: return "transient"
        case .stopAll: return "stop-all"
        }
    }

    static func number(_ x: Double) -> String { AHAPWriter.formatRounded(x) }

    static func jsonLine(_ r: Record) -> String {
        let c = r.command
        return "{\"scheduled_ns\":\(c.scheduled),\"released_ns\":\(c.released),\"applied_ns\":\(r.applied),"
            + "\"dispatch_ns\":\(Int64(bitPattern: c.released &- c.scheduled)),\"player\":\(c.player),\"kind\":\"\(kindName(c.kind))\","
            + "\"t\":\(number(c.patternTime)),\"intensity\":\(number(Double(c.intensity))),\"sharpness\":\(number(Double(c.sharpness)))}\n"
    }

    static func chromeTrace(_ records: [Record]) -> String {
        func us(_ ns: UInt64) -> String { number(Double(ns) / 1000) }
        var events: [String] = [
            #"{"name":"process_name","ph":"M","pid":1,"args":{"name":"hapsync"}}"#,
            #"{"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"haptic output"}}"#,
        ]
        for r in records {
            let c = r.command
            let args = "{\"player\":\(c.player),\"t\":\(number(c.patternTime)),\"intensity\":\(number(Double(c.intensity))),\"sharpness\":\(number(Double(c.sharpness))),\"dispatch_ns\":\(Int64(bitPattern: c.released &- c.scheduled)),\"apply_ns\":\(Int64(bitPattern: r.applied &- c.released))}"
            events.append("{\"name\":\"\(kindName(c.kind))\",\"cat\":\"haptic\",\"ph\":\"X\",\"pid\":1,\"tid\":\(c.player),\"ts\":\(us(c.scheduled)),\"dur\":\(us(r.applied &- c.scheduled)),\"args\":\(args)}")
            switch c.kind {
            case .level:
                events.append("{\"name\":\"haptic level\",\"ph\":\"C\",\"pid\":1,\"ts\":\(us(r.applied)),\"args\":{\"intensity\":\(number(Double(c.intensity))),\"sharpness\":\(number(Double(c.sharpness)))}}")
            case .transient:
                events.append("{\"name\":\"transient\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":\(c.player),\"ts\":\(us(r.applied)),\"args\":\(args)}")
            case .stopAll:
                events.append("{\"name\":\"stop all\",\"ph\":\"i\",\"s\":\"p\",\"pid\":1,\"ts\":\(us(r.applied))}")
            }
        }
        return "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" + events.joined(separator: ",\n") + "\n]}\n"
    }

    /// Why a trace could not be written.
    public enum TraceError: Error, Sendable, CustomStringConvertible {
        /// The file could not be created.
        case cannotCreate(String)
        /// A sentence for the user.
        public var description: String {
            switch self {
            case .cannotCreate(let p): return "cannot create trace file \(p) (missing folder or no permission?)"
            }
        }
    }
}
