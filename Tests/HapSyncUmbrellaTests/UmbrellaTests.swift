import Foundation
import HapSync
import HapSyncTestSupport
import Testing

/// `import HapSync` alone reaches every module a program that plays patterns uses.
@Suite("import HapSync")
struct UmbrellaTests {
    @Test func oneImportReachesEveryModule() throws {
        let pattern = try AHAPPatternBuilder().transient(at: 0, intensity: 1, sharpness: 0.5).build()   // AHAP
        let timeline = try PatternTimeline(pattern: pattern)                                             // HapSyncCore
        #expect(timeline.commands.count == 1)
        let traceFolder = try TemporaryDirectory("umbrella")
        defer { traceFolder.remove() }
        let trace = traceFolder.file("umbrella.jsonl")
        let engine = try HapticEngine(configuration: .init(backend: TraceBackend(path: trace.path)))   // HapSyncRuntime, HapSyncHapticOutput
        #expect(engine.configuration.lockMemory == false)
        _ = PulseAudioOutput.Configuration()                                                            // HapSyncAudioOutput
        _ = Locked(0)                                                                                    // HapSyncConcurrency
    }
}
