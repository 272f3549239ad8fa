import Foundation

/// Finds the audio file an `EventWaveformPath` names, inside a fixed list of resource roots.
///
/// Roots are searched in order: the AHAP file's own folder first, then each `--resources` folder.
/// A path must be relative and may not climb with `..`; after symbolic links are resolved the file
/// must still lie inside the root it was found under, and be a regular file (a FIFO would hang
/// whoever opens it; a device node is no audio file). A path that breaks these rules is an error,
/// never a file read (the type is checked with `stat`, without opening). `check` also reads each
/// resolved file's header and warns when it is not audio HapSync plays (`AudioFileInfo`).
public struct AHAPResourceResolver: Sendable {
    /// The folders searched, in order.
    public var roots: [URL]

    /// Makes a resolver over these roots, in search order.
    public init(roots: [URL]) { self.roots = roots }

    /// The usual roots for an AHAP file: its own folder, then the extra resource folders.
    public init(ahapFile: URL, resources: [URL]) {
        self.roots = [ahapFile.deletingLastPathComponent()] + resources
    }

    /// Why a resolution failed.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The path is empty, absolute or contains `..` (the associated text says which).
        case unsafe(String)
        /// Found, but a symbolic link takes it outside its root.
        case outsideRoots(path: String, root: String, target: String)
        /// Not found under any root.
        case notFound(path: String, searched: [String])
        /// Found, but not a regular file; `kind` names what it is ("a FIFO (named pipe)", ...).
        case notRegularFile(path: String, target: String, kind: String)

        /// A sentence for the user.
        public var description: String {
            switch self {
            case .unsafe(let why): return why
            case .outsideRoots(let path, let root, let target):
                return "\(AHAPQuote.quoted(path)) under \(root) is a symbolic link to \(target), outside the resource roots; refusing to read it"
            case .notFound(let path, let searched):
                return "\(AHAPQuote.quoted(path)) not found; searched \(searched.joined(separator: ", ")) (add the folder that holds it to the resource folders)"
            case .notRegularFile(let path, let target, let kind):
                return "\(AHAPQuote.quoted(path)) is \(kind) (\(target)), not a regular file; refusing to read it"
            }
        }

        /// The diagnostic code for this failure.
        public var code: AHAPDiagnostic.Code {
            switch self {
            case .unsafe: return .unsafeWaveformPath
            case .outsideRoots: return .resourceOutsideRoots
            case .notFound: return .resourceNotFound
            case .notRegularFile: return .resourceNotRegularFile
            }
        }
    }

    /// Why a path may never be resolved, judged from its text alone, or nil when it is acceptable.
    public static func staticProblem(with path: String) -> String? {
        if path.isEmpty { return "is empty" }
        if path.hasPrefix("/") || path.hasPrefix("~") { return "is absolute; waveform paths are relative to the AHAP file's folder or a resource folder" }
        if path.utf8.contains(0) { return "contains a NUL character" }
        if climbs(path) {
            return "climbs out of its folder with '..'; waveform paths must stay inside the resource folders"
        }
        return nil
    }

    /// Whether a path has a `..` component, read in one pass over its UTF-8 bytes.
    private static func climbs(_ path: String) -> Bool {
        var run = 0  // dots since the last '/', or -1 once the component has anything else
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "/"):
                if run == 2 { return true }
                run = 0
            case UInt8(ascii: "."): if run >= 0 { run += 1 }
            default: run = -1
            }
        }
        return run == 2
    }

    /// Longest path Linux opens, in bytes (`PATH_MAX`); a longer one names no file, and is not
    /// looked for.
    static let maxPathBytes = 4_096

    /// The file a waveform path names, or why there is none.
    public func resolve(_ path: String) -> Result<URL, Failure> {
        if let problem = Self.staticProblem(with: path) { return .failure(.unsafe("\(AHAPQuote.quoted(path)) \(problem)")) }
        guard path.utf8.count <= Self.maxPathBytes else { return .failure(.notFound(path: path, searched: roots.map(\.path))) }
        let fm = FileManager.default
        for root in roots {
            let candidate = root.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let realRoot = root.resolvingSymlinksInPath().standardizedFileURL.path
            let realFile = candidate.resolvingSymlinksInPath().standardizedFileURL.path
            let prefix = realRoot.hasSuffix("/") ? realRoot : realRoot + "/"
            guard realFile.hasPrefix(prefix) else {
                return .failure(.outsideRoots(path: path, root: root.path, target: realFile))
            }
            switch RegularFile.kind(of: realFile) {
            case .success(nil): return .success(URL(fileURLWithPath: realFile))
            case .success(let kind?): return .failure(.notRegularFile(path: path, target: realFile, kind: kind))
            case .failure(.cannotOpen(_, let reason)), .failure(.notRegular(_, let reason)):
                return .failure(.notRegularFile(path: path, target: realFile, kind: "a file that cannot be examined (\(reason))"))
            }
        }
        return .failure(.notFound(path: path, searched: roots.map(\.path)))
    }

    /// Resolves every audio file of a pattern and reads each resolved file's header once; a
    /// failure to resolve becomes a diagnostic at the event's JSON path, and so does a file that
    /// is not audio HapSync plays (`unplayable-audio`, a warning naming the file and the reason).
    public func check(_ pattern: AHAPPattern, file: String? = nil) -> (resolved: [String: URL], diagnostics: [AHAPDiagnostic]) {
        var resolved: [String: URL] = [:]
        var diagnostics: [AHAPDiagnostic] = []
        var headerProblems: [URL: String?] = [:]
        for (i, entry) in pattern.entries.enumerated() {
            guard case .event(let e) = entry, let p = e.waveformPath else { continue }
            let at = AHAPPath("Pattern[\(i)].Event.EventWaveformPath")
            switch resolve(p) {
            case .success(let url):
                resolved[p] = url
                let problem: String?
                if let known = headerProblems[url] {
                    problem = known
                } else {
                    do { _ = try AudioFileInfo(contentsOf: url); problem = nil } catch { problem = error.description }
                    headerProblems[url] = .some(problem)
                }
                if let problem {
                    diagnostics.append(AHAPDiagnostic(.unplayableAudio, path: at, message: "\(AHAPQuote.quoted(p)) (\(url.path)) cannot be played: \(problem)", file: file))
                }
            case .failure(let f):
                diagnostics.append(AHAPDiagnostic(f.code, path: at, message: f.description, file: file))
            }
        }
        return (resolved, diagnostics)
    }
}
