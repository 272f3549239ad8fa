import Foundation
import HapSyncMeasurement

/// `aubioonset` (Debian's aubio-tools): the generate benchmark's same-run baseline for onset
/// detection, run as a process on the very same files (with `SoundTools`' posix_spawn), its
/// onset times read from its standard output (seconds, one a line).
struct AubioOnset {
    /// Why a run gave no onsets.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong, naming the file.
        let description: String
    }

    /// Name in the tables.
    let name: String
    /// Options after `-i FILE`.
    let options: [String]

    /// Its default method (high-frequency content, threshold 0.3), the minimum inter-onset
    /// interval set to ours (30 ms instead of its 12 ms), so neither is scored on double hits the
    /// other's gap would have merged.
    static let standard = AubioOnset(name: "aubio default", options: ["-M", "0.03"])
    /// Spectral flux, the family our detector belongs to, same minimum gap.
    static let specflux = AubioOnset(name: "aubio specflux", options: ["-O", "specflux", "-M", "0.03"])

    /// The path of `aubioonset` on PATH, or nil when it is not installed.
    static func locate() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/aubioonset" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// aubio's version as it prints it: `aubioonset --version` where it knows the option, else
    /// `aubio --version` (the same package's Python tool); nil when neither says.
    static func version() -> String? {
        for command in [["aubioonset", "--version"], ["aubio", "--version"]] {
            let out = SoundTools.run(command)
            if let line = out.split(separator: "\n").first(where: { $0.lowercased().contains("version") }) { return String(line) }
        }
        return nil
    }

    /// Runs it on `file`: the onsets (seconds) and the process's wall time (spawn to reaped).
    func run(_ file: URL, scratch: URL) throws(Failure) -> (onsets: [Double], seconds: Double) {
        let out = scratch.appendingPathComponent("aubio-\(UUID().uuidString).txt").path
        defer { unlink(out) }
        let t0 = now()
        let pid = SoundTools.spawn(["aubioonset", "-i", file.path] + options, output: out)
        guard pid > 0 else { throw Failure(description: "cannot start aubioonset") }
        let status = SoundTools.wait(pid)
        let seconds = Double(now() - t0) / 1e9
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw Failure(description: "aubioonset \(options.joined(separator: " ")) ended with wait status \(status) on \(file.path)")
        }
        guard let text = try? String(contentsOfFile: out, encoding: .utf8) else {
            throw Failure(description: "cannot read aubioonset's output for \(file.path)")
        }
        return (text.split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }.sorted(), seconds)
    }
}
