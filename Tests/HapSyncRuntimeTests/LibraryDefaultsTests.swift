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
