import HapSyncRuntime

/// Output to a file the user named (by `OutputFile`'s rules: a regular file is replaced only with
/// `--force`, a device or FIFO is written into, a directory refused), or to standard output.
struct OutputTarget {
    let path: String?
    let force: Bool

    /// Writes `text`; returns an error message instead of overwriting what the user owns.
    func write(_ text: String, console: HapSyncCLI.Console) -> String? {
        guard let path else {
            console.out(text)
            return nil
        }
        do {
            try OutputFile.write(text, to: path, replacing: force)
        } catch .exists {
            return "\(OutputFile.Failure.exists(path: path)) (pass --force to replace it)"
        } catch {
            return error.description
        }
        return nil
    }
}
