import Foundation

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
