import Foundation
import HapSyncAHAP
import HapSyncTestSupport

/// The checkout and the conformance set, by the test support's one locator.
let packageRoot = TestFiles.packageRoot
let conformanceRoot = TestFiles.conformance

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

