import Foundation
import HapSyncCore
import HapSyncHapticOutput
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// The trace streams to disk through a bounded ring, checks every write, and is never truncated
/// when the engine opens it again.
@Suite("Trace backend: bounded, checked, continued")
struct TraceBackendTests {
    /// This test's folder, removed with the suite instance.
    let scratch: TemporaryDirectory
    var dir: URL { scratch.url }

    init() throws {
        scratch = try TemporaryDirectory("trace")
    }

    private func command(_ i: Int, _ kind: OutputCommand.Kind = .transient) -> OutputCommand {
        OutputCommand(scheduled: UInt64(1_000 + i), released: UInt64(1_010 + i), player: 1, kind: kind, intensity: 0.5, sharpness: 0.25,
                      patternTime: Double(i) / 1000)
    }

    /// The writer and every reader share one record type: what the trace wrote reads back as the
    /// records of the commands and blocks it was given (numbers to six decimals), in order.
    @Test func recordsReadBackAsWritten() throws {
        let path = dir.appendingPathComponent("roundtrip.jsonl").path
        let trace = TraceBackend(path: path)
        try trace.open()
        var level = command(1, .level)
        level.frame = 4_800
        level.intensity = 1.0 / 3
        let engineStop = OutputCommand(scheduled: 9_000, released: 8_990, player: 0, kind: .stopAll, intensity: 0, sharpness: 0, patternTime: -1)
        let block = WaveformBlock(frame: 480, frames: 240, time: 12_345, intensity: 0.8, sharpness: 0.2, frequency: 60, transients: 1)
        trace.apply(command(0), appliedAt: 2_000)
        trace.apply(level, appliedAt: 2_001)
        trace.record(block)
        trace.apply(engineStop, appliedAt: 9_100)
        try trace.close()
        let read = try TraceRecord.read(contentsOf: path)
        #expect(read.commands == [TraceRecord.Command(command(0), applied: 2_000), TraceRecord.Command(level, applied: 2_001),
                                  TraceRecord.Command(engineStop, applied: 9_100)])
        #expect(read.blocks == [TraceRecord.Block(block)])
        let l = try #require(read.commands.dropFirst().first)
        #expect(l.frame == 4_800 && l.intensity == 0.333333 && l.kind == .level && l.dispatchNs == 10 && l.applyNs == 2_001 - 1_011)
        #expect(read.commands.first?.frame == nil, "no frame when the player does not follow the audio")
        #expect(read.commands.last?.dispatchNs == -10, "released early: negative")
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains(#""kind":"stop-all""#))
    }

    /// A line that is not a record is named by file and line, not skipped.
    @Test func aBadLineIsNamed() throws {
        let good = TraceRecord.command(TraceRecord.Command(command(0), applied: 2_000)).jsonLine()
        do {
            _ = try TraceRecord.parse(good + "{\"kind\":\"level\"}\n", path: "t.jsonl")
            Issue.record("a record without its fields must fail")
        } catch {
            #expect(error.line == 2 && error.description.contains("scheduled_ns"), "\(error)")
        }
        do {
            _ = try TraceRecord.parse(good + "\n" + "not json\n", path: "t.jsonl")
            Issue.record("a line that is not JSON must fail")
        } catch {
            #expect(error.path == "t.jsonl" && error.line == 3 && error.description.hasPrefix("t.jsonl:3: not a trace record"))
        }
        #expect(throws: TraceRecord.ReadError.self) { _ = try TraceRecord.read(contentsOf: dir.appendingPathComponent("absent.jsonl").path) }
    }

    /// A trace read while it is written: its last line, not yet ended, is left out, not named as
    /// bad; read as finished, the same line is named.
    @Test func aLineStillBeingWrittenIsLeftOutOnlyWhileWritten() throws {
        let good = TraceRecord.command(TraceRecord.Command(command(0), applied: 2_000)).jsonLine()
        let path = dir.appendingPathComponent("growing.jsonl").path
        try (good + String(good.prefix(20))).write(toFile: path, atomically: true, encoding: .utf8)
        let growing = try TraceRecord.readLines(TraceRecord.self, contentsOf: path, what: "a trace record", whileWritten: true)
        #expect(growing.count == 1)
        #expect(throws: TraceRecord.ReadError.self) { _ = try TraceRecord.read(contentsOf: path) }
        try String(good.prefix(20)).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try TraceRecord.readLines(TraceRecord.self, contentsOf: path, what: "a trace record", whileWritten: true).isEmpty)
    }

    /// An engine restart (its audio server came back, the idle timer, stop then start) closes and
    /// reopens the backend: the trace used to be truncated then, losing everything before.
    @Test(arguments: ["t.jsonl", "t.json"])
    func reopeningGoesOnAfterWhatIsThere(_ name: String) throws {
        let path = dir.appendingPathComponent(name).path
        let trace = TraceBackend(path: path)
        try trace.open()
        trace.apply(command(0), appliedAt: 2_000)
        trace.apply(command(1, .level), appliedAt: 2_001)
        try trace.close()
        try trace.open()
        trace.apply(command(2), appliedAt: 3_000)
        try trace.close()
        #expect(trace.recordsWritten == 3)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        if name.hasSuffix(".jsonl") {
            let lines = text.split(separator: "\n")
            #expect(lines.count == 3)
            #expect(try TraceRecord.parse(text).last?.command?.appliedNs == 3000)
        } else {
            let doc = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "one valid JSON document")
            let events = try #require(doc["traceEvents"] as? [[String: Any]])
            #expect(events.filter { $0["ph"] as? String == "X" }.count == 3)
        }
    }

    /// Memory is the ring's, whatever the run's length: records that do not fit are counted and
    /// the close fails saying so; what was written adds up.
    @Test func aFullRingIsReportedNotHidden() throws {
        let path = dir.appendingPathComponent("small.jsonl").path
        let trace = TraceBackend(path: path, capacity: 16)
        try trace.open()
        for i in 0..<5_000 { trace.apply(command(i), appliedAt: UInt64(2_000 + i)) }
        do {
            try trace.close()
            Issue.record("5,000 records through a 16-record ring at once cannot all be written")
        } catch let TraceBackend.TraceError.recordsDropped(p, dropped, kept) {
            #expect(p == path && dropped > 0 && dropped + kept == 5_000)
            #expect(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count == kept)
        }
    }

    /// A write error (a full disk) is an error with the system's reason; it used to be lost.
    @Test func aFullDiskIsAnError() throws {
        let trace = TraceBackend(path: "/dev/full", replacing: true)
        try trace.open()
        trace.apply(command(0), appliedAt: 2_000)
        #expect(throws: TraceBackend.TraceError.writeFailed(.writeFailed(path: "/dev/full", reason: "No space left on device"), kept: 0)) {
            try trace.close()
        }
    }

    @Test func anExistingTraceIsKeptUnlessReplacingAndADirectoryRefused() throws {
        let path = dir.appendingPathComponent("mine.jsonl").path
        try "mine\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: TraceBackend.TraceError.cannotCreate(.exists(path: path))) { try TraceBackend(path: path).open() }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "mine\n")
        #expect(throws: TraceBackend.TraceError.cannotCreate(.refusedKind(path: dir.path, kind: "a directory"))) {
            try TraceBackend(path: dir.path, replacing: true).open()
        }
    }
}
