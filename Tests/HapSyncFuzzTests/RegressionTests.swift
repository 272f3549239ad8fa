import Foundation
import HapSyncFuzz
import HapSyncTestSupport
import Testing

/// Every input the fuzzer ever crashed on, kept in `Tests/Fuzz/regressions/<target>/`, replayed
/// through its target in the ordinary test run (a crash here is a regression), and every seed
/// the fuzzer starts from run once too.
@Suite("Fuzz regressions")
struct RegressionTests {
    static let root = TestFiles.packageRoot.appendingPathComponent("Tests/Fuzz/regressions")

    static func inputs(_ target: String) -> [URL] {
        let folder = root.appendingPathComponent(target)
        return ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { !$0.lastPathComponent.hasPrefix(".") }.sorted { $0.path < $1.path }
    }

    @Test(arguments: FuzzTargets.all.map(\.name))
    func keptInputsStillPass(_ target: String) throws {
        let run = try #require(FuzzTargets.all.first { $0.name == target }?.run)
        for input in Self.inputs(target) {
            run(try Data(contentsOf: input))
        }
    }

    /// The targets accept what they will be seeded with: the repository's own patterns and audio.
    @Test func seedsPass() throws {
        let assets = Self.root.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Assets")
        let files = (FileManager.default.enumerator(at: assets, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? [])
        #expect(files.count > 10)
        for file in files where ["ahap", "wav", "flac", "aiff", "caf", "mp3", "m4a"].contains(file.pathExtension) {
            let data = try Data(contentsOf: file)
            for target in FuzzTargets.all { target.run(data) }
        }
    }
}
