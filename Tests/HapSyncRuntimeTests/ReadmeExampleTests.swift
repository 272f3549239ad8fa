import Foundation
import HapSyncAHAP
import HapSyncHapticOutput
import HapSyncRuntime
import Testing

/// The engine example docs/swift-api.md shows, compiled here (`swift test` catches a break before
/// `.ci/doc-examples` runs it). The test below checks that the page quotes exactly these lines.
func readmeEngineExample() throws {
    // README-BEGIN
    let engine = try HapticEngine(configuration: .init(backend: TraceBackend(path: "taps.jsonl", replacing: true)))
    engine.stoppedHandler = { reason in print("engine stopped: \(reason)") }
    try engine.start()
    print(engine.capabilities.hapticBackend, engine.realtimeStatus)

    let pattern = try AHAPPatternBuilder()
        .transient(at: 0, intensity: 1, sharpness: 0.8)
        .continuous(at: 0.05, duration: 0.3, intensity: 0.6, sharpness: 0.3, release: 0.4)
        .build()
    let player = try engine.makePlayer(with: pattern)
    player.completionHandler = { completion in print("player \(completion)") }
    try player.start(atTime: HapticEngine.timeImmediate)   // returns at once
    try player.stop(atTime: engine.currentTime + 0.2)      // or let it finish

    try engine.playPattern(from: URL(fileURLWithPath: "Assets/heartbeat.ahap"))   // one-shot
    Thread.sleep(forTimeInterval: 1.5)
    engine.stop()                                           // silences everything, finishes the trace (returns its write error, if any)
    // README-END
}

@Suite("docs/swift-api.md")
struct ReadmeExampleTests {
    @Test func thePageQuotesTheCompiledExample() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "    // README-BEGIN\n")), end = try #require(source.range(of: "    // README-END"))
        let example = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
        let page = try String(contentsOf: root.appendingPathComponent("docs/swift-api.md"), encoding: .utf8)
        #expect(page.contains(example), "docs/swift-api.md must quote the example in ReadmeExampleTests.swift exactly:\n\(example)")
    }
}
