import AHAP
import Foundation

/// The package root, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// ../shared/conformance/apple-unityplugins beside the checkout.
let conformanceRoot = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/conformance/apple-unityplugins")

/// Every .ahap file under a folder, sorted.
func ahapFiles(under dir: URL) -> [URL] {
    guard let e = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil) else { return [] }
    return e.compactMap { $0 as? URL }.filter { $0.pathExtension == "ahap" }.sorted { $0.path < $1.path }
}

/// Reads AHAP text and returns every finding.
func diagnose(_ text: String, limits: AHAPLimits = .default) -> AHAPReader.Report {
    AHAPReader(limits: limits).diagnose(data: Data(text.utf8), file: "test.ahap")
}

/// A whole AHAP document around pattern entries given as JSON text.
func document(_ entries: String...) -> String {
    "{ \"Version\": 1.0, \"Pattern\": [\n" + entries.joined(separator: ",\n") + "\n] }"
}

/// A temporary folder removed by the caller.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
