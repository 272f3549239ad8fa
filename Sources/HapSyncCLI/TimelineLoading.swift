import AHAP
import Foundation
import HapSyncCore

/// A pattern read, checked and compiled for `render` and `plot`, with what was learned of its audio.
struct LoadedTimeline {
    /// The file's check (nil for a built-in pattern).
    let check: FileCheck?
    let timeline: PatternTimeline
    /// Resolved audio file by waveform path.
    let audio: [String: URL]

    /// Reads and compiles `file`; on errors prints them and returns the exit status instead.
    static func load(_ file: String, resources: [URL], options: RenderOptions, console: HapSyncCLI.Console) -> Result<LoadedTimeline, ExitStatus> {
        let check = FileCheck(file: file, resources: resources, strict: false)
        guard let pattern = check.pattern else {
            for d in check.diagnostics where d.severity == .error { console.err(d.description + "\n") }
            console.err("error: \(file) has \(plural(check.errorCount, "error"))\nhint: 'hapsync validate \(file)' lists them with warnings\n")
            return .failure(ExitStatus(HapSyncCLI.ExitCode.failure))
        }
        for d in check.diagnostics where d.code == .resourceNotFound {
            console.err("warning: \(d.path): \(d.message); the voice's length is unknown unless EventDuration gives it\n")
        }
        var lengths: [String: Double] = [:]
        for (path, url) in check.audio {
            if let info = try? AudioFileInfo(contentsOf: url) { lengths[path] = info.duration } else {
                console.err("warning: cannot read the header of \(url.path); its length is unknown\n")
            }
        }
        do {
            let timeline = try PatternTimeline(pattern: pattern, options: options) { lengths[$0] }
            return .success(LoadedTimeline(check: check, timeline: timeline, audio: check.audio))
        } catch {
            console.err("error: \(file): \(error.description)\n")
            return .failure(ExitStatus(HapSyncCLI.ExitCode.failure))
        }
    }
}

/// An exit status carried through a `Result`.
struct ExitStatus: Error {
    var code: Int32
    init(_ code: Int32) { self.code = code }
}

/// Output to a file that must not already exist (unless forced), or to standard output.
struct OutputTarget {
    let path: String?
    let force: Bool

    /// Writes `text`; returns an error message instead of overwriting what the user owns.
    func write(_ text: String, console: HapSyncCLI.Console) -> String? {
        guard let path else {
            console.out(text)
            return nil
        }
        if FileManager.default.fileExists(atPath: path), !force {
            return "\(path) already exists; not overwriting it (pass --force to replace it)"
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            return "cannot write \(path): \(error.localizedDescription)"
        }
        return nil
    }
}

/// A number for machine output: microsecond resolution, locale-independent.
func number(_ x: Double) -> String { AHAPWriter.formatRounded(x) }
