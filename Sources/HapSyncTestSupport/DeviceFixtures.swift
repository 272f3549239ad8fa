import Foundation

/// Recorded devices for discovery tests, in Tests/Fixtures: sysfs trees (sysfs-dualsense/*.tree,
/// built into a folder that stands for the machine's root) and sound servers' sink listings
/// (sinks/*.txt, as `pactl list sinks` prints them). Each file's header says what it records and
/// where its details come from.
public enum DeviceFixtures {
    /// Tests/Fixtures.
    public static let folder = TestFiles.packageRoot.appendingPathComponent("Tests/Fixtures")

    /// A fixture file that could not be read or built, naming it and the line.
    public struct Invalid: Error, CustomStringConvertible {
        /// What was wrong, and where.
        public let description: String
    }

    /// Builds the trees of `names` (sysfs-dualsense/NAME.tree) in `root`, one after another, so
    /// that `root`/sys is laid out as the kernel's /sys would be with those devices plugged in.
    ///
    /// A tree is a list of lines: `cd DIR` (the folder the next paths start from; at first the
    /// root), `PATH = CONTENT` (a file holding CONTENT and a newline), `PATH/` (a folder),
    /// `PATH -> TARGET` (a symbolic link, its target as written: relative, as the kernel's are);
    /// `#` starts a comment line. Folders are made as needed.
    public static func buildSysfs(_ names: [String], in root: URL) throws {
        for name in names {
            let url = folder.appendingPathComponent("sysfs-dualsense/\(name).tree")
            let text = try String(contentsOf: url, encoding: .utf8)
            var current = root
            for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = raw.trimmingCharacters(in: .whitespaces)
                guard !line.isEmpty, !line.hasPrefix("#") else { continue }
                let fm = FileManager.default
                if line.hasPrefix("cd ") {
                    current = root.appendingPathComponent(String(line.dropFirst(3)))
                } else if let arrow = line.range(of: " -> ") {
                    let link = current.appendingPathComponent(String(line[..<arrow.lowerBound]))
                    try fm.createDirectory(at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try fm.createSymbolicLink(atPath: link.path, withDestinationPath: String(line[arrow.upperBound...]))
                } else if let equals = line.range(of: " = ") {
                    let file = current.appendingPathComponent(String(line[..<equals.lowerBound]))
                    try fm.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Data((line[equals.upperBound...] + "\n").utf8).write(to: file)
                } else if line.hasSuffix("/") {
                    try fm.createDirectory(at: current.appendingPathComponent(line), withIntermediateDirectories: true)
                } else {
                    throw Invalid(description: "\(url.lastPathComponent):\(number + 1): not cd, a file, a folder or a link: '\(line)'")
                }
            }
        }
    }

    /// A sink as a listing records it.
    public struct RecordedSink: Sendable {
        /// `Name:`.
        public var name: String
        /// `Description:`.
        public var description: String
        /// The channel count of `Sample Specification:` ("s16le 4ch 48000Hz": 4).
        public var channels: Int
        /// `Properties:`, unquoted.
        public var properties: [String: String]
    }

    /// The sinks of a recorded `pactl list sinks` (sinks/NAME.txt), in order.
    public static func sinks(_ name: String) throws -> [RecordedSink] {
        let url = folder.appendingPathComponent("sinks/\(name).txt")
        let text = try String(contentsOf: url, encoding: .utf8)
        var sinks: [RecordedSink] = []
        var inProperties = false
        for raw in text.split(separator: "\n") where !raw.hasPrefix("#") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if raw.hasPrefix("Sink #") {
                sinks.append(RecordedSink(name: "", description: "", channels: 0, properties: [:]))
                inProperties = false
            } else if sinks.isEmpty {
                throw Invalid(description: "\(url.lastPathComponent): '\(line)' before the first 'Sink #'")
            } else if line == "Properties:" {
                inProperties = true
            } else if inProperties, let equals = line.range(of: " = ") {
                let value = line[equals.upperBound...]
                sinks[sinks.count - 1].properties[String(line[..<equals.lowerBound])] = String(value.dropFirst().dropLast())
            } else if line.hasPrefix("Name: ") {
                sinks[sinks.count - 1].name = String(line.dropFirst(6))
            } else if line.hasPrefix("Description: ") {
                sinks[sinks.count - 1].description = String(line.dropFirst(13))
            } else if line.hasPrefix("Sample Specification: "), let ch = line.split(separator: " ").first(where: { $0.hasSuffix("ch") }) {
                sinks[sinks.count - 1].channels = Int(ch.dropLast(2)) ?? 0
            } else if line.hasSuffix(":") {
                inProperties = false
            }
        }
        return sinks
    }
}
