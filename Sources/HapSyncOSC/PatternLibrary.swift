import Foundation
import Glibc
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime

/// The patterns `hapsync serve` holds: each distinct one compiled once, all of them within a
/// memory budget.
///
/// - **Shared.** A load reads the file's bytes once (`AHAPReader.contents(of:)`). Two loads of the
///   same bytes whose audio resolves to the same files (path, device, inode, size and modification
///   time) share one compiled pattern and its decoded audio, under any number of names.
/// - **Bounded.** The distinct patterns loaded hold at most `budget` bytes together: their
///   timelines' `memoryFootprint` and the audio decoded for them. A pattern is compiled with at
///   most the commands that fit in what is left (`RenderOptions.maxCommands`) and its audio is
///   measured by its headers before it is decoded, so one that does not fit fails before it is
///   built, with an error naming what it needs at most (a command for every control-rate step
///   its continuous events span), what is held and the budget.
/// - **Lifetime.** A pattern counts while a name holds it (`Entry`); players still playing an
///   unloaded pattern keep its timeline until they end (at most the service's players).
/// - **Threads.** `load` runs on the service's loader thread (and at start, for `--preload`):
///   one compile at a time, so two loads never both count the same free memory; the cache is
///   under a lock of its own, so `held` can be read from the service thread meanwhile.
final class PatternLibrary: @unchecked Sendable {
    /// One distinct pattern as loaded, shared by the names that hold it.
    final class Entry: @unchecked Sendable {
        /// The compiled pattern.
        let playable: PlayablePattern
        /// Its audio decoded at the engine's output rate (nil without audio, or with no audio
        /// output): held so that a player made from it finds the samples in the output's cache
        /// instead of decoding them on the service thread.
        let audio: PlayerAudio?
        /// What it holds, bytes (timeline and decoded audio).
        let bytes: Int

        init(playable: PlayablePattern, audio: PlayerAudio?, bytes: Int) {
            self.playable = playable
            self.audio = audio
            self.bytes = bytes
        }
    }

    /// What makes two loads the same pattern: the file's bytes, and each audio file's identity.
    struct Key: Hashable {
        let content: Data
        let audio: [String: String]
    }

    private final class Weak: @unchecked Sendable { weak var entry: Entry? }

    /// Bytes the loaded patterns may hold together.
    let budget: Int
    private let engine: HapticEngine
    private let resources: [URL]
    private let options: RenderOptions
    private let entries = Locked<[Key: Weak]>([:])
    private let compiling = Locked(())

    /// A library over `engine` (whose audio output decodes the patterns' audio) reading audio from
    /// `resources`, compiling with `options`, holding at most `budget` bytes.
    init(engine: HapticEngine, resources: [URL], options: RenderOptions, budget: Int) {
        self.engine = engine
        self.resources = resources
        self.options = options
        self.budget = budget
    }

    /// Bytes and distinct patterns held now.
    var held: (bytes: Int, patterns: Int) {
        entries.withLock { e in
            let alive = e.values.compactMap(\.entry)
            return (alive.reduce(0) { $0 + $1.bytes }, alive.count)
        }
    }

    /// The pattern in `file` (`what`: how the client named it), shared with an earlier load of
    /// the same content, else read, compiled and its audio decoded here. Throws the first finding
    /// of a file with errors, or a budget error. Allocates, reads files, decodes: never on the
    /// service thread.
    func load(_ file: URL, what: String) throws(OSCCommands.CommandError) -> Entry {
        let reader = AHAPReader()
        let data: Data
        switch reader.contents(of: file) {
        case .success(let d): data = d
        case .failure(let unreadable):
            throw OSCCommands.CommandError("\(what) cannot be read: \(unreadable.report.diagnostics.first?.message ?? "unreadable")")
        }
        let check = PlayablePattern.Check(data: data, from: file, resources: resources, reader: reader)
        guard check.pattern != nil else {
            let first = check.errors.first.map { ": \($0.path): \($0.message)" } ?? ""
            throw OSCCommands.CommandError("\(what) cannot be played (\(check.errorCount) errors)\(first)")
        }
        let key = Key(content: data, audio: check.audioFiles.mapValues(Self.identity))
        if let shared = entries.withLock({ $0[key]?.entry }) { return shared }
        return try compiling.withLock { (_) throws(OSCCommands.CommandError) -> Entry in
            // A load of the same content may have finished while this one waited.
            if let shared = entries.withLock({ $0[key]?.entry }) { return shared }
            let entry = try compile(check, what: what)
            entries.withLock { e in
                e = e.filter { $0.value.entry != nil }
                let weak = Weak()
                weak.entry = entry
                e[key] = weak
            }
            return entry
        }
    }

    /// Compiles a checked pattern within what the budget leaves, then decodes its audio.
    private func compile(_ check: PlayablePattern.Check, what: String) throws(OSCCommands.CommandError) -> Entry {
        let used = held.bytes
        let room = max(0, budget - used)
        let device = engine.configuration.playsHapticsOnly ? nil : engine.configuration.audio
        let audioBytes = device.map { check.audioBytes(at: $0.sampleRate) } ?? 0
        guard audioBytes <= room else {
            throw overBudget(what, needs: audioBytes, used: used, part: "its audio")
        }
        var options = options
        let stride = MemoryLayout<HapticCommand>.stride
        options.maxCommands = min(options.maxCommands, (room - audioBytes) / stride)
        let playable: PlayablePattern
        do {
            playable = try PlayablePattern(check, options: options)
        } catch {
            if case .tooManyCommands(let needed, let limit)? = error.renderError, limit < self.options.maxCommands, needed <= self.options.maxCommands {
                throw overBudget(what, needs: needed * stride + audioBytes, used: used, part: "its command stream and audio")
            }
            let first = error.errors.first.map { ": \($0.path): \($0.message)" } ?? error.renderError.map { ": \($0.description)" } ?? ""
            throw OSCCommands.CommandError("\(what) cannot be played (\(error.errors.count + error.omitted.errors) errors)\(first)")
        }
        var audio: PlayerAudio?
        if let device, !playable.timeline.voices.isEmpty {
            do { audio = try device.load(playable.timeline, files: playable.audioFiles) } catch {
                throw OSCCommands.CommandError("\(what): its audio cannot be decoded: \(error)")
            }
        }
        let bytes = playable.timeline.memoryFootprint + (audio.map(Self.decodedBytes) ?? 0)
        guard bytes <= room else { throw overBudget(what, needs: bytes, used: used, part: "it") }
        return Entry(playable: playable, audio: audio, bytes: bytes)
    }

    private func overBudget(_ what: String, needs: Int, used: Int, part: String) -> OSCCommands.CommandError {
        OSCCommands.CommandError("\(what) needs up to \(AudioDecodingBudget.mebibytes(needs)) (\(part)); the service holds \(AudioDecodingBudget.mebibytes(used)) of patterns "
                                 + "and may hold \(AudioDecodingBudget.mebibytes(budget)) (--pattern-memory): /hapsync/unload some first")
    }

    /// Bytes of the distinct sample buffers a player's audio holds.
    static func decodedBytes(_ audio: PlayerAudio) -> Int {
        var seen = Set<ObjectIdentifier>()
        var bytes = 0
        for case let samples? in audio.samples where seen.insert(ObjectIdentifier(samples)).inserted {
            bytes += AudioDecodingBudget.bytes(frames: samples.frames)
        }
        return bytes
    }

    /// A file as the cache tells versions of it apart: its path, device, inode, size and
    /// modification time (one that cannot be read matches no other load).
    static func identity(_ url: URL) -> String {
        var st = stat()
        guard stat(url.path, &st) == 0 else { return "unreadable \(UUID())" }
        return "\(url.path)|\(st.st_dev)|\(st.st_ino)|\(st.st_size)|\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }
}
