import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime

extension PlayablePattern {
    /// Loads FILE for `render`, `plot` and `play`: errors become a failure listing them, and what
    /// leaves an audio voice's length unknown (a file not found, a header not readable) is a warning.
    static func load(_ file: String, resources: [URL], options: RenderOptions, console: HapSyncCLI.Console) throws(CLIError) -> PlayablePattern {
        let playable: PlayablePattern
        do {
            playable = try PlayablePattern(contentsOf: URL(fileURLWithPath: file), resources: resources, options: options)
        } catch {
            throw .loading(error)
        }
        for d in playable.diagnostics where d.code == .resourceNotFound {
            console.err("warning: \(d.path): \(d.message); the voice's length is unknown unless EventDuration gives it (--resources DIR adds a folder to search)\n")
        }
        var unreadable: [URL] = []
        for a in playable.audio where a.info == nil {
            if let url = a.file, !unreadable.contains(url) { unreadable.append(url) }
        }
        for url in unreadable { console.err("warning: cannot read the header of \(url.path); its length is unknown\n") }
        return playable
    }
}

extension CLIError {
    /// A pattern that could not be made playable: its errors, or why it does not compile.
    static func loading(_ error: PlayablePattern.LoadError) -> CLIError {
        if let renderError = error.renderError { return .failure("\(error.name): \(renderError.description)") }
        return .invalidPattern(error.name, errors: error.errors, unlisted: error.omitted.errors)
    }

    /// A pattern with errors: each finding as compilers print it, one line saying how many, and
    /// where to see the warnings too. `consequence` says what the command could not do; `unlisted`
    /// counts errors over the findings limit, which are not in `errors`.
    static func invalidPattern(_ name: String, errors: [AHAPDiagnostic], unlisted: Int = 0, consequence: String? = nil) -> CLIError {
        CLIError(.failure, ["\(name) has \(plural(errors.count + unlisted, "error"))" + (consequence.map { "; " + $0 } ?? "")],
                 hints: ["'hapsync validate \(name)' lists them with warnings"],
                 details: errors.map(\.description) + (unlisted > 0 ? ["... and \(unlisted) more not listed"] : []))
    }
}
