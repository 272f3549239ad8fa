import Foundation
import HapSyncAHAP
import HapSyncCore

/// A pattern ready to play: read and checked, its audio files found and measured, compiled into a
/// `PatternTimeline`. The one way from an AHAP file (or a pattern built in code) to what players,
/// renderers and the command line need.
///
/// Loading runs in two stages, and each can be used alone:
/// 1. `Check`: the reader's findings (`AHAPReader.diagnose`), then every `EventWaveformPath`
///    resolved (`AHAPResourceResolver`: the AHAP file's folder, then the resource roots, in order)
///    and each resolved file's header read (`AudioFileInfo`) for its length. Never throws: a
///    validator lists what it found.
/// 2. `PlayablePattern`: a check without errors, compiled with the audio lengths it learned.
///    Throws `LoadError`, which carries every finding, when the file has errors or the pattern
///    cannot be compiled.
///
/// ```swift
/// let playable = try PlayablePattern(contentsOf: url, resources: roots)
/// let player = try engine.makePlayer(timeline: playable.timeline, audioFiles: playable.audioFiles)
/// ```
///
/// An audio file that is not found is a warning (`resource-not-found`), as Core Haptics plays the
/// rest: its voice's length is then unknown unless the event gives `EventDuration`. A path that is
/// unsafe or leads outside the roots is an error. Loading allocates and reads files; do it before
/// playing, never on a real-time thread.
public struct PlayablePattern: Sendable {
    /// One audio file a pattern names (an `AudioCustom` event's `EventWaveformPath`) and what became of it.
    public struct AudioReference: Sendable, Equatable {
        /// Index of the event in the pattern's entries.
        public var entryIndex: Int
        /// The path as the pattern writes it.
        public var waveformPath: String
        /// The file it resolved to, nil when it did not.
        public var file: URL?
        /// The file's header, nil when unresolved or unreadable.
        public var info: AudioFileInfo?
        /// Why it did not resolve, or why its header could not be read.
        public var problem: String?

        /// The event's JSON path, `Pattern[i].Event`.
        public var entryPath: AHAPPath { AHAPPath(components: [.key("Pattern"), .index(entryIndex), .key("Event")]) }
    }

    /// What reading a pattern and resolving its audio found, before compiling (stage 1).
    public struct Check: Sendable {
        /// The file as the user named it, or the name given to a pattern built in code.
        public let name: String
        /// The pattern, nil when any error was found.
        public let pattern: AHAPPattern?
        /// Every finding of the reader and the resolver, errors and warnings, with line and column
        /// where the pattern came from text; at most `AHAPLimits.maxFindings`, errors listed first
        /// (the rest are counted in `omitted`).
        public let diagnostics: [AHAPDiagnostic]
        /// Findings over `AHAPLimits.maxFindings`, counted and not listed.
        public let omitted: AHAPOmittedFindings
        /// Each audio reference in entry order (empty when the pattern has errors: audio is only
        /// looked up for a pattern that reads cleanly).
        public let audio: [AudioReference]
        /// An error (`limit-exceeded`, at the first event naming the file) when the audio its
        /// voices can reach would pass `AudioDecodingBudget.limitBytes` decoded at
        /// `AudioDecodingBudget.assumedOutputRate`, by the files' headers: what playback would
        /// refuse. Not among `diagnostics`, so the pattern still loads for `info`, `render` and
        /// `plot`, and playback applies the same rule at its stream's real rate; `validate` lists
        /// it as an error. Nil when the audio fits or the pattern has errors.
        public let audioOverLimit: AHAPDiagnostic?

        /// Reads an AHAP file and resolves its audio in its own folder, then in `resources`.
        public init(contentsOf url: URL, resources: [URL] = [], reader: AHAPReader = AHAPReader()) {
            self.init(report: reader.diagnose(contentsOf: url), from: url, resources: resources, reader: reader)
        }

        /// Reads AHAP bytes the caller read from `url` (`AHAPReader.contents(of:)`: `hapsync serve`
        /// keeps them, to share identical files) and resolves its audio as `init(contentsOf:)` does.
        public init(data: Data, from url: URL, resources: [URL] = [], reader: AHAPReader = AHAPReader()) {
            self.init(report: reader.diagnose(data: data, file: AHAPReader.name(of: url)), from: url, resources: resources, reader: reader)
        }

        private init(report: AHAPReader.Report, from url: URL, resources: [URL], reader: AHAPReader) {
            let name = AHAPReader.name(of: url)
            let resolved = report.pattern.map { AHAPResourceResolver(ahapFile: url, resources: resources).check($0, file: name) }
            self.init(name: name, pattern: report.pattern, diagnostics: report.diagnostics, omitted: report.omitted,
                      maxFindings: reader.limits.maxFindings, resolved: resolved, locate: report.located)
        }

        /// Checks a pattern built in code (it has no file) by the reader's rules (`findings()`: any
        /// finding is an error), and looks its audio up in `resources`.
        public init(pattern: AHAPPattern, name: String, resources: [URL] = []) {
            let found = pattern.findings()
            self.init(name: name, pattern: found.isEmpty ? pattern : nil, diagnostics: found, omitted: .none,
                      maxFindings: AHAPLimits.default.maxFindings,
                      resolved: AHAPResourceResolver(roots: resources).check(pattern, file: name), locate: { $0 })
        }

        /// Checks a pattern whose audio the caller has already resolved (`audioFiles`: waveform
        /// path → file) by the reader's rules (`findings()`): their headers are read; a path
        /// missing from the map is not found.
        public init(pattern: AHAPPattern, name: String, audioFiles: [String: URL]) {
            var missing: [AHAPDiagnostic] = []
            for (i, entry) in pattern.entries.enumerated() {
                guard case .event(let e) = entry, let p = e.waveformPath, audioFiles[p] == nil else { continue }
                missing.append(AHAPDiagnostic(.resourceNotFound, path: AHAPPath("Pattern[\(i)].Event.EventWaveformPath"),
                                              message: "audio file \"\(p)\" was not given", file: name))
            }
            let found = pattern.findings()
            self.init(name: name, pattern: found.isEmpty ? pattern : nil, diagnostics: found, omitted: .none,
                      maxFindings: AHAPLimits.default.maxFindings, resolved: (audioFiles, missing), locate: { $0 })
        }

        private init(name: String, pattern: AHAPPattern?, diagnostics: [AHAPDiagnostic], omitted: AHAPOmittedFindings, maxFindings: Int,
                     resolved: (resolved: [String: URL], diagnostics: [AHAPDiagnostic])?,
                     locate: ([AHAPDiagnostic]) -> [AHAPDiagnostic]) {
            self.name = name
            guard let pattern, let resolved else {
                self.pattern = nil
                self.diagnostics = diagnostics
                self.omitted = omitted
                self.audio = []
                self.audioOverLimit = nil
                return
            }
            // The resolver's findings (one at most per audio event) join the reader's under the same cap.
            let capped = AHAPDiagnostic.capped(diagnostics + locate(resolved.diagnostics), limit: maxFindings)
            let all = capped.listed
            var headers: [URL: Result<AudioFileInfo, AudioFileInfo.ReadError>] = [:]
            var audio: [AudioReference] = []
            for (i, entry) in pattern.entries.enumerated() {
                guard case .event(let e) = entry, let path = e.waveformPath else { continue }
                var reference = AudioReference(entryIndex: i, waveformPath: path)
                if let file = resolved.resolved[path] {
                    reference.file = file
                    let header = headers[file] ?? Result { () throws(AudioFileInfo.ReadError) in try AudioFileInfo(contentsOf: file) }
                    headers[file] = header
                    switch header {
                    case .success(let info): reference.info = info
                    case .failure(let error): reference.problem = error.description
                    }
                } else {
                    let waveformPath = reference.entryPath.description + ".EventWaveformPath"
                    reference.problem = resolved.diagnostics.first { $0.path.description == waveformPath }?.message ?? "not resolved"
                }
                audio.append(reference)
            }
            self.omitted = omitted + capped.omitted
            self.diagnostics = all
            self.pattern = all.contains { $0.severity == .error } || self.omitted.errors > 0 ? nil : pattern
            self.audio = audio
            self.audioOverLimit = self.pattern == nil ? nil : Self.audioOverLimit(pattern, audio, file: name).map { locate([$0])[0] }
        }

        /// The decoding limit's error for `pattern`'s audio, by `AudioDecodingBudget` at its assumed
        /// rate. A voice with EventDuration reads as far as the budget says; one without reads its
        /// file whole (its end is the file's length ÷ a pitch rate of at most 2, which the budget's
        /// reach of (end − start) × 200 puts past the file's end).
        private static func audioOverLimit(_ pattern: AHAPPattern, _ audio: [AudioReference], file name: String) -> AHAPDiagnostic? {
            let rate = AudioDecodingBudget.assumedOutputRate
            guard let overrun = AudioDecodingBudget.firstOverrun(audioReads(pattern, audio), outputRate: rate),
                  let first = audio.first(where: { $0.file?.path == overrun.path }) else { return nil }
            return AHAPDiagnostic(.limitExceeded, path: first.entryPath.key("EventWaveformPath"),
                                  message: "\(overrun), so 'hapsync play' would refuse it (\(Int(rate)) Hz is the output rate assumed here, "
                                      + "playback's own unless its sound server runs at another); cut the voice with EventDuration or use a shorter file",
                                  file: name)
        }

        /// Each resolved file with a header, as far as the pattern's voices read it, in the order
        /// playback loads them (`AudioDecodingBudget.reach`).
        private static func audioReads(_ pattern: AHAPPattern, _ audio: [AudioReference]) -> [(path: String, info: AudioFileInfo, seconds: Double?)] {
            var reads: [(file: URL, seconds: Double?)] = []
            var headers: [URL: AudioFileInfo] = [:]
            for a in audio {
                guard let url = a.file, let info = a.info, case .event(let e) = pattern.entries[a.entryIndex] else { continue }
                headers[url] = info
                reads.append((url, AudioDecodingBudget.secondsRead(start: e.time, end: e.duration.map { e.time + $0 })))
            }
            return AudioDecodingBudget.reach(reads).compactMap { r in headers[r.file].map { (path: r.file.path, info: $0, seconds: r.seconds) } }
        }

        /// The bytes playback would decode this pattern's audio to at `outputRate`, by the files'
        /// headers and `AudioDecodingBudget` (0 without audio or with errors): what a service
        /// holding many patterns counts before it decodes.
        public func audioBytes(at outputRate: Double) -> Int {
            guard let pattern else { return 0 }
            return Self.audioReads(pattern, audio).reduce(0) { sum, file in
                let (total, overflow) = sum.addingReportingOverflow(AudioDecodingBudget.frames(of: file.info, seconds: file.seconds, outputRate: outputRate).bytes)
                return overflow ? .max : total
            }
        }

        /// Only the errors (those listed).
        public var errors: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .error } }
        /// Only the warnings (those listed).
        public var warnings: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .warning } }
        /// How many errors were found, listed or not.
        public var errorCount: Int { errors.count + omitted.errors }
        /// How many warnings were found, listed or not.
        public var warningCount: Int { warnings.count + omitted.warnings }
        /// Each resolved audio file by waveform path (what a player decodes).
        public var audioFiles: [String: URL] {
            Dictionary(audio.compactMap { a in a.file.map { (a.waveformPath, $0) } }, uniquingKeysWith: { first, _ in first })
        }
        /// Each audio file's length in seconds by waveform path, where its header was read.
        public var audioLengths: [String: Double] {
            Dictionary(audio.compactMap { a in a.info.map { (a.waveformPath, $0.duration) } }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// Why a pattern could not be made playable: it has errors, or it does not compile.
    public struct LoadError: Error, Sendable, CustomStringConvertible {
        /// The file as the user named it, or the built-in pattern's name.
        public let name: String
        /// Every finding, errors and warnings, located (at most `AHAPLimits.maxFindings`).
        public let diagnostics: [AHAPDiagnostic]
        /// Findings over `AHAPLimits.maxFindings`, counted and not listed.
        public let omitted: AHAPOmittedFindings
        /// Set when the pattern read cleanly but could not be compiled.
        public let renderError: RenderError?

        /// Only the errors among the findings (those listed).
        public var errors: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .error } }
        /// How many errors were found, listed or not.
        public var errorCount: Int { errors.count + omitted.errors }

        /// A sentence for the user, then one error per line.
        public var description: String {
            if let renderError { return "\(name): \(renderError.description)" }
            let errors = errors, count = errorCount
            var lines = ["\(name) has \(count) error\(count == 1 ? "" : "s")"] + errors.map(\.description)
            if omitted.errors > 0 { lines.append("\(name): \(omitted.errors) more not listed") }
            return lines.joined(separator: "\n")
        }
    }

    /// What was read and resolved.
    public let check: Check
    /// The compiled pattern: command stream, voices, duration.
    public let timeline: PatternTimeline

    /// Compiles a check; throws when it found errors or the pattern does not compile.
    public init(_ check: Check, options: RenderOptions = RenderOptions()) throws(LoadError) {
        guard let pattern = check.pattern else {
            throw LoadError(name: check.name, diagnostics: check.diagnostics, omitted: check.omitted, renderError: nil)
        }
        let lengths = check.audioLengths
        do {
            timeline = try PatternTimeline(pattern: pattern, options: options) { lengths[$0] }
        } catch {
            throw LoadError(name: check.name, diagnostics: check.diagnostics, omitted: check.omitted, renderError: error)
        }
        self.check = check
    }

    /// Reads an AHAP file, resolves its audio (its own folder, then `resources`) and compiles it.
    public init(contentsOf url: URL, resources: [URL] = [], options: RenderOptions = RenderOptions()) throws(LoadError) {
        try self.init(Check(contentsOf: url, resources: resources), options: options)
    }

    /// Compiles a pattern built in code, its audio looked up in `resources`.
    public init(pattern: AHAPPattern, name: String, resources: [URL] = [], options: RenderOptions = RenderOptions()) throws(LoadError) {
        try self.init(Check(pattern: pattern, name: name, resources: resources), options: options)
    }

    /// The file as the user named it, or the built-in pattern's name.
    public var name: String { check.name }
    /// The pattern.
    public var pattern: AHAPPattern { timeline.pattern }
    /// The warnings reading and resolving found (a playable pattern has no errors).
    public var diagnostics: [AHAPDiagnostic] { check.diagnostics }
    /// Each audio reference in entry order, with its file, header or problem.
    public var audio: [AudioReference] { check.audio }
    /// Each resolved audio file by waveform path, as `HapticEngine.makePlayer(timeline:audioFiles:)` takes them.
    public var audioFiles: [String: URL] { check.audioFiles }
}
