import Foundation
import HapSyncAHAP
import HapSyncRuntime

/// One line of a JSON Lines trace (`--haptics trace:FILE.jsonl`), as `TraceBackend` writes it and
/// as tools and tests read it back: a command the haptic output applied, or a block of the
/// waveform drive. The one definition of the format: the writer encodes these, readers decode them.
///
/// Numbers are rounded to six decimals when a record is made from the engine's values, so a record
/// read back equals the one written.
public enum TraceRecord: Codable, Sendable, Equatable {
    /// A command the output applied (`kind` level, transient or stop-all).
    case command(Command)
    /// A block of samples the waveform drive rendered (`kind` block).
    case block(Block)

    /// What an applied command asked of the actuator, as the trace names it.
    public enum Kind: String, Codable, Sendable, Equatable {
        /// The continuous level (all players mixed); intensity 0 stops.
        case level
        /// A tap on top of the level.
        case transient
        /// Everything stopped (the engine stopping).
        case stopAll = "stop-all"

        /// The trace's name for an engine command kind.
        public init(_ kind: OutputCommand.Kind) {
            switch kind {
            case .level: self = .level
            case .transient: self = .transient
            case .stopAll: self = .stopAll
            }
        }
    }

    /// A command with the times it was scheduled for, released at and applied at (CLOCK_MONOTONIC ns).
    public struct Command: Codable, Sendable, Equatable {
        /// Engine time (ns) the command was scheduled for.
        public var scheduledNs: UInt64
        /// Engine time (ns) the scheduler released it.
        public var releasedNs: UInt64
        /// Engine time (ns) the backend applied it.
        public var appliedNs: UInt64
        /// Release minus schedule (ns): negative when released early, which the scheduler does on purpose
        /// for backends with a known lead.
        public var dispatchNs: Int64
        /// The id of the player whose command it was, 0 for engine-wide commands.
        public var player: UInt32
        /// Level, transient or stop-all.
        public var kind: Kind
        /// Pattern time (s) in the player's timeline, −1 for engine commands.
        public var t: Double
        /// 0...1; for levels, all players mixed.
        public var intensity: Double
        /// 0...1; for levels, all players mixed.
        public var sharpness: Double
        /// The audio frame the command is placed at when its player follows the audio, else nil.
        public var frame: Int64?

        enum CodingKeys: String, CodingKey {
            case scheduledNs = "scheduled_ns"
            case releasedNs = "released_ns"
            case appliedNs = "applied_ns"
            case dispatchNs = "dispatch_ns"
            case player, kind, t, intensity, sharpness, frame
        }

        /// The record of `command`, applied at `applied` (engine ns).
        public init(_ command: OutputCommand, applied: UInt64) {
            scheduledNs = command.scheduled
            releasedNs = command.released
            appliedNs = applied
            dispatchNs = Int64(bitPattern: command.released &- command.scheduled)
            player = command.player
            kind = Kind(command.kind)
            t = TraceRecord.rounded(command.patternTime)
            intensity = TraceRecord.rounded(Double(command.intensity))
            sharpness = TraceRecord.rounded(Double(command.sharpness))
            frame = command.frame >= 0 ? command.frame : nil
        }

        /// Applied minus released (ns): how long the backend took to apply it.
        public var applyNs: Int64 { Int64(bitPattern: appliedNs &- releasedNs) }
    }

    /// A block of the waveform drive: where it starts in the stream, when that is heard, and what it
    /// played.
    public struct Block: Codable, Sendable, Equatable {
        /// The block's first frame in the stream.
        public var frame: Int64
        /// Frames in the block.
        public var frames: Int32
        /// When the first frame is heard (engine ns), 0 before the stream's clock had a fit.
        public var timeNs: UInt64
        /// The continuous level's intensity (0...1).
        public var intensity: Double
        /// The continuous level's sharpness (0...1).
        public var sharpness: Double
        /// The oscillator's frequency (Hz).
        public var frequencyHz: Double
        /// Transient bursts that began in the block.
        public var transients: Int32

        enum CodingKeys: String, CodingKey {
            case timeNs = "time_ns"
            case frequencyHz = "frequency_hz"
            case kind, frame, frames, intensity, sharpness, transients
        }

        /// The record of `block`.
        public init(_ block: WaveformBlock) {
            frame = block.frame
            frames = block.frames
            timeNs = block.time
            intensity = TraceRecord.rounded(Double(block.intensity))
            sharpness = TraceRecord.rounded(Double(block.sharpness))
            frequencyHz = TraceRecord.rounded(Double(block.frequency))
            transients = block.transients
        }

        /// Decodes a block record (its `kind` is "block").
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            frame = try c.decode(Int64.self, forKey: .frame)
            frames = try c.decode(Int32.self, forKey: .frames)
            timeNs = try c.decode(UInt64.self, forKey: .timeNs)
            intensity = try c.decode(Double.self, forKey: .intensity)
            sharpness = try c.decode(Double.self, forKey: .sharpness)
            frequencyHz = try c.decode(Double.self, forKey: .frequencyHz)
            transients = try c.decode(Int32.self, forKey: .transients)
        }

        /// Encodes the record with its `"kind":"block"` (keys come out sorted).
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode("block", forKey: .kind)
            try c.encode(frame, forKey: .frame)
            try c.encode(frames, forKey: .frames)
            try c.encode(timeNs, forKey: .timeNs)
            try c.encode(intensity, forKey: .intensity)
            try c.encode(sharpness, forKey: .sharpness)
            try c.encode(frequencyHz, forKey: .frequencyHz)
            try c.encode(transients, forKey: .transients)
        }
    }

    private enum KindKey: String, CodingKey { case kind }

    /// Decodes either kind of line by its `kind` field.
    public init(from decoder: any Decoder) throws {
        let kind = try decoder.container(keyedBy: KindKey.self).decode(String.self, forKey: .kind)
        self = kind == "block" ? .block(try Block(from: decoder)) : .command(try Command(from: decoder))
    }

    /// Encodes the record as one flat JSON object.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .command(let c): try c.encode(to: encoder)
        case .block(let b): try b.encode(to: encoder)
        }
    }

    /// The command, when this line is one.
    public var command: Command? {
        if case .command(let c) = self { return c }
        return nil
    }

    /// The block, when this line is one.
    public var block: Block? {
        if case .block(let b) = self { return b }
        return nil
    }

    /// `x` to six decimals, as every number in a trace is written (`AHAPWriter.formatRounded`'s rule).
    static func rounded(_ x: Double) -> Double {
        guard x.isFinite, abs(x) < 1e9 else { return x }
        let r = (x * 1e6).rounded() / 1e6
        return r == 0 ? 0 : r   // never "-0"
    }

    /// The encoder trace lines are written with: keys sorted (so every line of a kind reads the same:
    /// JSONEncoder does not keep declaration order), slashes unescaped, and a non-finite number
    /// (which the engine never produces) written as the string "NaN" or "±Infinity" rather than lost.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    /// The record as one JSON Lines line, with its newline, written by `encoder` (one from
    /// `makeEncoder()`; a writer keeps one rather than making one per line).
    public func jsonLine(_ encoder: JSONEncoder = TraceRecord.makeEncoder()) -> String {
        // With non-finite numbers written as strings, a record of numbers and strings always encodes.
        let data = (try? encoder.encode(self)) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// Why a trace could not be read: the file, and the line with what is wrong with it.
    public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The trace file.
        public var path: String
        /// The 1-based line, or 0 when the file itself could not be read.
        public var line: Int
        /// What is wrong.
        public var reason: String

        /// "FILE:LINE: reason".
        public var description: String { line > 0 ? "\(path):\(line): \(reason)" : "\(path): \(reason)" }
    }

    /// Every record of the JSON Lines trace at `path`, in file order; blank lines are skipped.
    /// Throws `ReadError` naming the file and line of the first record that is not a trace record.
    public static func read(contentsOf path: String) throws(ReadError) -> [TraceRecord] {
        try readLines(TraceRecord.self, contentsOf: path, what: "a trace record")
    }

    /// Every record of JSON Lines `text`; `path` names it in errors.
    public static func parse(_ text: String, path: String = "trace") throws(ReadError) -> [TraceRecord] {
        try decodeLines(TraceRecord.self, text, path: path, what: "a trace record")
    }

    /// Every line of the JSON Lines file at `path` (a trace, or another log written with
    /// `makeEncoder`), decoded as `T`, in file order; blank lines are skipped. `whileWritten`: the
    /// file may still be being written, so a last line not yet ended by a newline is left out.
    /// Throws `ReadError` naming the file, and the line that is not `what` ("a trace record").
    package static func readLines<T: Decodable>(_ type: T.Type, contentsOf path: String, what: String,
                                                whileWritten: Bool = false) throws(ReadError) -> [T] {
        var text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ReadError(path: path, line: 0, reason: "cannot be read: \(error.localizedDescription)")
        }
        if whileWritten, !text.hasSuffix("\n") { text = String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)]) }
        return try decodeLines(type, text, path: path, what: what)
    }

    private static func decodeLines<T: Decodable>(_ type: T.Type, _ text: String, path: String, what: String) throws(ReadError) -> [T] {
        let decoder = JSONDecoder()
        // Non-finite numbers read back as `makeEncoder` writes them.
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        var values: [T] = []
        for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            do { values.append(try decoder.decode(type, from: Data(line.utf8))) } catch {
                throw ReadError(path: path, line: i + 1, reason: "not \(what) (\(error))")
            }
        }
        return values
    }
}

extension Array where Element == TraceRecord {
    /// The command records, in order.
    public var commands: [TraceRecord.Command] { compactMap(\.command) }
    /// The waveform block records, in order.
    public var blocks: [TraceRecord.Block] { compactMap(\.block) }
}
