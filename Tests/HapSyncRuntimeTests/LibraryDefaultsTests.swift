import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// What an engine does to its host process when a library user asks for nothing special.
@Suite("Library defaults")
struct LibraryDefaultsTests {
    /// A library must not mlockall a host process unasked: locking memory is the caller's choice
    /// (the CLI and the benchmarks make it).
    @Test func memoryIsNotLockedUnlessAskedFor() throws {
        let configuration = HapticEngine.Configuration(backend: RecordingHapticBackend())
        #expect(configuration.lockMemory == false)
        let engine = try HapticEngine(configuration: configuration)
        try engine.start()
        defer { engine.stop() }
        #expect(engine.realtimeStatus.memoryLocked == nil, "mlockall was not asked for: \(engine.realtimeStatus)")
    }
}

/// A pattern made entry by entry gets the reader's rules when it is played, as a file would.
@Suite("Patterns made in code are checked")
struct PatternsMadeInCodeTests {
    @Test func makePlayerRefusesWhatTheReaderRefuses() throws {
        let engine = try HapticEngine(configuration: .init(backend: RecordingHapticBackend()))
        let pattern = AHAPPattern(entries: [
            .event(AHAPEvent(time: -0.25, type: .hapticTransient)),
            .event(AHAPEvent(time: 0.1, type: .hapticTransient, parameters: [AHAPEventParameter(.hapticIntensity, 1.4)])),
        ])
        do {
            _ = try engine.makePlayer(with: pattern)
            Issue.record("a negative time and an intensity of 1.4 must not play")
        } catch let error as PlayablePattern.LoadError {
            let text = "\(error)"
            #expect(text.contains("Pattern[0].Event.Time"), "\(text)")
            #expect(text.contains("Pattern[1].Event.EventParameters[0].ParameterValue: HapticIntensity value 1.4 is outside 0.0...1.0"), "\(text)")
            #expect(!text.contains("clamped to"), "\(text)")
        }
        // A valid one plays.
        let valid = AHAPPattern(entries: [.event(AHAPEvent(time: 0, type: .hapticTransient))])
        _ = try engine.makePlayer(with: valid)
    }
}
