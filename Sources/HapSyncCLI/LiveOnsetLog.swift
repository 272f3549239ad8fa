import Dispatch
import Foundation
import HapSyncConcurrency
import HapSyncHapticOutput
import HapSyncRuntime

/// `hapsync live --onsets FILE`: one JSON line per onset the session handled, as it is found, so
/// a run can be looked at afterwards (what was found, how loud, what it became) and set against
/// the sound that was played. Keys sorted, as the trace's:
///
/// `{"centroid_hz":H,"first_sound_frame":C,"frame":F,"loudness":L,"outcome":O,"time":S,"transient_ns":T}`
///
/// - `frame`: the capture frame the detector places its start at, on its 1 ms grid (frame 0 is
///   the capture's first; a capture made anew, after a server restart or a growth, numbers on
///   without the gap between the two); `time`: the same in seconds;
/// - `first_sound_frame`: the capture's first frame with sound (a sample beyond ±0.0001): where a
///   file played into the sink begins, so frame − first_sound_frame is the onset's frame in it
///   (short by the gap after a capture made anew);
/// - `loudness` (0...1) and `centroid_hz`: the detector's;
/// - `outcome`: `transient` (played at its moment), `late` (found after its moment, played at
///   once: most of them with `--no-delay`), `merged` (the engine's rate limit merged it into the transient before), `below
///   floor` (under the profile's floor: nothing played), `unplaced` (before the sound played on
///   had its distance, or in sound it skipped), `lost` (the engine refused its player), `not played` (a style without
///   transients); on a second line for the same onset, `moved` (its transient, not yet released
///   when the sound's distance was set anew, moved to where its sound now plays) or `dropped`
///   (its sound skipped by the new distance: its transient dropped); `settled` keeps the last;
/// - `transient_ns`: when the session asked for its transient, CLOCK_MONOTONIC ns (the trace's
///   `scheduled_ns` for a `transient` or a `moved` one, for a `late` one the moment it was found);
///   null when none was asked for, or it was dropped.
///
/// The session's thread hands each line to a writer queue of its own and never waits for the
/// file (a FIFO read slowly would otherwise hold the transients up); more than `backlog` lines
/// waiting are dropped and counted. The file is named by the user: `OutputFile`'s rules (an
/// existing file replaced only with `--force`). A write that fails stops the log, the file cut
/// back to its last whole line, and `failure` says why; the run goes on.
package final class LiveOnsetLog: @unchecked Sendable {
    /// What became of an onset.
    enum Outcome: String {
        case transient
        case late
        case merged
        case belowFloor = "below floor"
        case unplaced
        case lost
        case notPlayed = "not played"
        /// A second line: its transient moved to where its sound plays after the distance was fixed anew.
        case moved
        /// A second line: its transient dropped, its sound skipped by a distance fixed anew.
        case dropped
    }

    /// One line (the encoder sorts its keys), as written and as `read` gives it back.
    package struct Line: Codable, Sendable, Equatable {
        /// The onset's capture frame.
        package var frame: Int64
        /// `frame` in seconds.
        package var time: Double
        /// The capture's first frame with sound, nil before there was any.
        package var firstSound: Int64?
        /// The detector's loudness, 0...1.
        package var loudness: Double
        /// The detector's spectral centroid, Hz.
        package var centroid: Double
        /// What became of the onset: an `Outcome`'s raw value.
        package var outcome: String
        /// When its transient was asked for, CLOCK_MONOTONIC ns; nil when none was.
        package var transientAt: UInt64?

        enum CodingKeys: String, CodingKey {
            case frame, time
            case firstSound = "first_sound_frame"
            case loudness
            case centroid = "centroid_hz"
            case outcome
            case transientAt = "transient_ns"
        }

        /// Every key, a missing value as null.
        package func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(frame, forKey: .frame)
            try c.encode(time, forKey: .time)
            try c.encode(firstSound, forKey: .firstSound)
            try c.encode(loudness, forKey: .loudness)
            try c.encode(centroid, forKey: .centroid)
            try c.encode(outcome, forKey: .outcome)
            try c.encode(transientAt, forKey: .transientAt)
        }
    }

    /// Every line of the log at `path`, in file order (blank lines skipped). Throws
    /// `TraceRecord.ReadError` naming the file and the first line that is not an onset line.
    package static func read(contentsOf path: String) throws(TraceRecord.ReadError) -> [Line] {
        try TraceRecord.readLines(Line.self, contentsOf: path, what: "an onset line")
    }

    /// Each onset's last word, in file order of the onsets: a `moved` or `dropped` line (its
    /// transient placed again after a new distance) stands in for the onset's earlier line.
    package static func settled(_ lines: [Line]) -> [Line] {
        var last: [Int64: Int] = [:]
        var result: [Line] = []
        for line in lines {
            if line.outcome == Outcome.moved.rawValue || line.outcome == Outcome.dropped.rawValue, let i = last[line.frame] {
                result[i] = line
            } else {
                last[line.frame] = result.count
                result.append(line)
            }
        }
        return result
    }

    /// Lines that may wait for the writer before new ones are dropped.
    static let backlog = 4_096

    /// The path as the user gave it.
    let path: String
    private let rate: Double
    private let encoder = TraceRecord.makeEncoder()
    private let queue = DispatchQueue(label: "hapsync-live-onsets")
    /// The writer's: the file (nil once stopped or closed), onsets' lines written, second lines
    /// written (`moved`, `dropped`), why it stopped.
    private let writer: Locked<(file: OutputFile?, written: Int, second: Int, failure: OutputFile.Failure?)>
    private let waiting = Locked((lines: 0, dropped: 0))

    /// Opens `path` (replacing a regular file only when `replacing`) for a capture at `rate` Hz.
    init(path: String, replacing: Bool, rate: Double) throws(OutputFile.Failure) {
        writer = Locked((try OutputFile.create(path, replacing: replacing, mode: .stream), 0, 0, nil))
        self.path = path
        self.rate = rate
    }

    /// Hands one onset's line to the writer. Session thread; does not wait for the file.
    func record(frame: Int64, firstSound: Int64?, loudness: Double, centroid: Double, outcome: Outcome, transientAt: UInt64?) {
        let line = Line(frame: frame, time: Double(frame) / rate, firstSound: firstSound, loudness: loudness, centroid: centroid,
                        outcome: outcome.rawValue, transientAt: transientAt)
        // Numbers (non-finite ones as strings) and plain strings: the encoder does not fail.
        guard let data = try? encoder.encode(line) else { return }
        let text = String(decoding: data, as: UTF8.self) + "\n"
        let taken = waiting.withLock { (w: inout (lines: Int, dropped: Int)) -> Bool in
            guard w.lines < Self.backlog else {
                w.dropped += 1
                return false
            }
            w.lines += 1
            return true
        }
        guard taken else { return }
        let second = outcome == .moved || outcome == .dropped
        queue.async { [writer, waiting] in
            writer.withLock { w in
                guard let file = w.file else { return }
                let whole = file.bytesWritten
                do throws(OutputFile.Failure) {
                    try file.write(text)
                    if second { w.second += 1 } else { w.written += 1 }
                } catch {
                    // What stays ends with a whole line.
                    try? file.truncate(to: whole)
                    file.discard()
                    (w.file, w.failure) = (nil, error)
                }
            }
            waiting.withLock { $0.lines -= 1 }
        }
    }

    /// Waits for the lines handed on, then closes the file; its failure, if any (a close can
    /// report a write the system deferred). Control side, after the session's thread has ended.
    func close() -> OutputFile.Failure? {
        queue.sync {}
        return writer.withLock { w -> OutputFile.Failure? in
            if let file = w.file {
                do throws(OutputFile.Failure) { try file.commit() } catch { w.failure = error }
                w.file = nil
            }
            return w.failure
        }
    }

    /// Closes the file and removes it if it made it: a run that failed before it began leaves
    /// nothing behind. Control side, before any line.
    func removeCreated() {
        queue.sync {}
        writer.withLock { w in
            w.file?.removeCreated()
            w.file = nil
        }
    }

    /// The summary's line: how many lines were written where, how many dropped, or why the log
    /// stopped.
    var summaryLine: String {
        let (written, second, failure) = writer.withLock { ($0.written, $0.second, $0.failure) }
        let dropped = waiting.withLock { $0.dropped }
        var line = "onsets: \(written) written to \(path)"
        if second > 0 { line += " (and \(second) second lines, for transients placed again)" }
        if dropped > 0 { line += ", \(dropped) dropped (the file took them slower than they came)" }
        if let failure { line += ", then the log stopped: \(failure)" }
        return line
    }
}
