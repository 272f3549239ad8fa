import Foundation

/// Reads AHAP files the way Core Haptics loads them, and says precisely what is wrong with them.
///
/// Apple's rules: unknown keys are ignored, missing entries take their defaults, out-of-range
/// values are clamped, entries may come in any order. Each of those leniencies, and the
/// "JSON-like" syntax real files use (trailing commas, `"Value"` for `"ParameterValue"`), is
/// reported as a warning with its JSON path. Anything that cannot be given a meaning is an error
/// with its path and, when read from text, line and column. All findings of a file are collected
/// in one pass.
public struct AHAPReader: Sendable {
    /// The bounds enforced while reading.
    public var limits: AHAPLimits

    /// Makes a reader.
    public init(limits: AHAPLimits = .default) { self.limits = limits }

    /// The outcome of reading: the pattern when there were no errors, and every finding.
    public struct Report: Sendable {
        /// The pattern, nil when any error was found.
        public var pattern: AHAPPattern?
        /// Every finding, in source order, up to `AHAPLimits.maxFindings` (errors are listed before
        /// warnings are; the rest are counted in `omitted`).
        public var diagnostics: [AHAPDiagnostic]
        /// Findings over `AHAPLimits.maxFindings`, counted and not listed.
        public var omitted: AHAPOmittedFindings = .none
        /// Only the errors.
        public var errors: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .error } }
        /// Only the warnings.
        public var warnings: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .warning } }
        /// The parsed document (nil when the text is not JSON), kept to locate paths.
        var root: JSONValue?
        var source: SourceText?

        /// Line and column where the value at `path` starts in the source text, if it is there.
        public func location(of path: AHAPPath) -> (line: Int, column: Int)? {
            guard var node = root, let source else { return nil }
            for component in path.components {
                switch (component, node.kind) {
                case (.key(let k), .object(let members)):
                    guard let m = members.last(where: { $0.key == k }) else { return nil }
                    node = m.value
                case (.index(let i), .array(let items)) where items.indices.contains(i):
                    node = items[i]
                default:
                    return nil
                }
            }
            return node.offset.map { source.lineColumn(of: $0) }
        }

        /// The same diagnostics with line and column filled in from their paths where missing.
        public func located(_ diagnostics: [AHAPDiagnostic]) -> [AHAPDiagnostic] {
            diagnostics.map { d in
                guard d.line == nil, let lc = location(of: d.path) else { return d }
                var located = d
                located.line = lc.line
                located.column = lc.column
                return located
            }
        }
    }

    /// Reads a file and returns the pattern, or throws every finding when there is an error.
    public func read(contentsOf url: URL) throws(AHAPReadError) -> (pattern: AHAPPattern, warnings: [AHAPDiagnostic]) {
        let report = diagnose(contentsOf: url)
        guard let pattern = report.pattern else { throw AHAPReadError(diagnostics: report.diagnostics) }
        return (pattern, report.warnings)
    }

    /// Reads AHAP text and returns the pattern, or throws every finding when there is an error.
    public func read(data: Data, file: String? = nil) throws(AHAPReadError) -> (pattern: AHAPPattern, warnings: [AHAPDiagnostic]) {
        let report = diagnose(data: data, file: file)
        guard let pattern = report.pattern else { throw AHAPReadError(diagnostics: report.diagnostics) }
        return (pattern, report.warnings)
    }

    /// Reads a file and reports every finding without throwing.
    public func diagnose(contentsOf url: URL) -> Report {
        switch contents(of: url) {
        case .success(let data): return diagnose(data: data, file: Self.name(of: url))
        case .failure(let unreadable): return unreadable.report
        }
    }

    /// A file's name in findings: a file URL's path as given, another URL whole.
    public static func name(of url: URL) -> String { url.isFileURL ? url.relativePath : url.absoluteString }

    /// Why a file's bytes could not be had: its one finding, as a report.
    public struct Unreadable: Error, Sendable {
        /// A report holding that finding and no pattern.
        public let report: Report
    }

    /// The bytes of the AHAP file at `url`, read by the reader's rules: a file URL only (nothing is
    /// fetched; another scheme's path is not read as a local one), a regular file only (opened so
    /// that a FIFO or a device can never block or be read), at most `limits.maxFileBytes`. The
    /// first step of `diagnose(contentsOf:)`, for callers that keep the bytes (to share identical
    /// files); the second is `diagnose(data:file:)`.
    public func contents(of url: URL) -> Result<Data, Unreadable> {
        let name = Self.name(of: url)
        func unreadable(_ message: String, _ code: AHAPDiagnostic.Code = .fileUnreadable) -> Result<Data, Unreadable> {
            .failure(Unreadable(report: Report(pattern: nil, diagnostics: [AHAPDiagnostic(code, path: .root, message: message, file: name)])))
        }
        guard url.isFileURL else {
            return unreadable("is not a file URL; only files are read (nothing is downloaded)")
        }
        let handle: FileHandle
        do {
            handle = try RegularFile.open(url.path)
        } catch .notRegular(_, let kind) {
            return unreadable("is \(kind), not an AHAP file")
        } catch {
            return unreadable(FileManager.default.fileExists(atPath: url.path) ? "cannot read the file: \(error)" : "no such file")
        }
        defer { try? handle.close() }
        // One byte past the limit tells a file over it from one exactly at it.
        let data: Data
        do { data = try handle.read(upToCount: limits.maxFileBytes + 1) ?? Data() } catch {
            return unreadable("cannot read the file: \(error.localizedDescription)")
        }
        if data.count > limits.maxFileBytes {
            let size = (try? handle.seekToEnd()).map { Int($0) } ?? data.count
            return unreadable("file is \(size) bytes; the limit is \(limits.maxFileBytes) bytes", .limitExceeded)
        }
        return .success(data)
    }

    /// Reads AHAP text and reports every finding without throwing.
    public func diagnose(data: Data, file: String? = nil) -> Report {
        if data.count > limits.maxFileBytes {
            return Report(pattern: nil, diagnostics: [AHAPDiagnostic(.limitExceeded, path: .root,
                message: "input is \(data.count) bytes; the limit is \(limits.maxFileBytes) bytes", file: file)])
        }
        let bytes = [UInt8](data)
        let source = SourceText(bytes)
        var parser = JSONParser(bytes: bytes, maxDepth: limits.maxNestingDepth, maxWarnings: max(limits.maxFindings, 0))
        var decoder = PatternDecoder(limits: limits, source: source, file: file)
        let root: JSONValue
        do {
            root = try parser.parseDocument()
        } catch {
            for w in parser.warnings { decoder.report(w.0, w.1, offset: w.2, w.3) }
            decoder.countUnrecordedWarnings(parser.unrecordedWarnings)
            let code: AHAPDiagnostic.Code = error.message.hasPrefix("nesting deeper") ? .limitExceeded : .jsonSyntax
            decoder.report(code, error.path, offset: error.offset, error.message)
            return Report(pattern: nil, diagnostics: decoder.sortedDiagnostics, omitted: decoder.omitted)
        }
        for w in parser.warnings { decoder.report(w.0, w.1, offset: w.2, w.3) }
        decoder.countUnrecordedWarnings(parser.unrecordedWarnings)
        let pattern = decoder.decodePattern(root)
        return Report(pattern: decoder.hasErrors ? nil : pattern, diagnostics: decoder.sortedDiagnostics, omitted: decoder.omitted,
                      root: root, source: source)
    }

    /// Applies the loading rules to an already-parsed JSON document (used for patterns built in code).
    public func diagnose(json: JSONValue, file: String? = nil) -> Report {
        var decoder = PatternDecoder(limits: limits, source: nil, file: file)
        let pattern = decoder.decodePattern(json)
        return Report(pattern: decoder.hasErrors ? nil : pattern, diagnostics: decoder.sortedDiagnostics, omitted: decoder.omitted)
    }
}
