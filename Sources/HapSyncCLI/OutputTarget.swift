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

    /// A writer for text produced piece by piece (`render`'s records).
    func writer(console: HapSyncCLI.Console) -> Writer { Writer(target: self, console: console) }

    /// Text produced piece by piece for one target. Standard output gets it in chunks of
    /// `chunkBytes` as it comes, so memory holds a chunk and the producer learns at once that
    /// standard output is gone (a closed pipe, a full disk) and stops; a file gets it whole at the
    /// end (`write`: readers never see half a file).
    final class Writer {
        /// Bytes gathered before a chunk goes to standard output.
        static let chunkBytes = 64 << 10
        private let target: OutputTarget
        private let console: HapSyncCLI.Console
        private var pending = ""

        init(target: OutputTarget, console: HapSyncCLI.Console) {
            self.target = target
            self.console = console
        }

        /// Adds `text`; false once standard output cannot be written: produce no more.
        func append(_ text: String) -> Bool {
            pending += text
            guard target.path == nil else { return true }
            if pending.utf8.count >= Self.chunkBytes { flush() }
            return !console.outputFailed
        }

        /// Writes what is left; returns an error message when the file could not be written.
        func finish() -> String? {
            guard target.path != nil else {
                flush()
                return nil
            }
            return target.write(pending, console: console)
        }

        private func flush() {
            if !pending.isEmpty, !console.outputFailed { console.out(pending) }
            pending = ""
        }
    }
}
