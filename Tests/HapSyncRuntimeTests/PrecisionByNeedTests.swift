import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// Precision by need, on the manual clock: with a backend of 10 ms resolution the scheduler lets
/// level changes wait up to 10 ms to go out together, and keeps taps exact; `precise` (or a
/// backend that needs it) releases everything at its deadline.
@Suite("Precision by need")
struct PrecisionByNeedTests {
    /// A continuous event under an intensity curve of 10 ms ramps (a level change every
    /// millisecond), and two taps.
    static let pattern = try! AHAPPatternBuilder()
        .continuous(at: 0, duration: 0.5, intensity: 1, sharpness: 0.5)
        .curve(.hapticIntensityControl, at: 0, points: (0...50).map { (Double($0) / 100, $0 % 2 == 0 ? 0.3 : 0.9) })
        .transient(at: 0.1003, intensity: 1, sharpness: 1).transient(at: 0.3007, intensity: 0.5, sharpness: 0).build()

    /// Runs the pattern to its end as the real-time loop would: each pass at the time the last
    /// one asked for. Returns the commands applied and the passes made.
    static func run(resolution: UInt64, precise: Bool) throws -> (commands: [OutputCommand], passes: Int) {
        let clock = ManualClock()
        let backend = RecordingHapticBackend()
        backend.resolution = resolution
        let engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, precise: precise))
        try engine.start()
        #expect(engine.timingResolution == (precise ? 0 : resolution))
        let player = try engine.makePlayer(with: pattern)
        try player.start(atTime: 0)
        var passes = 0
        var next = engine.pump()
        while next != .max, passes < 100_000 {
            clock.set(nanoseconds: max(next, clock.now()))
            next = engine.pump()
            passes += 1
        }
        return (backend.entries.map(\.command), passes)
    }

    @Test func levelsGoOutTogetherWithinTheResolutionAndTapsStayExact() throws {
        let coarse = try Self.run(resolution: 10_000_000, precise: false)
        let exact = try Self.run(resolution: 10_000_000, precise: true)
        let levels = coarse.commands.filter { $0.kind == .level }
        let taps = coarse.commands.filter { $0.kind == .transient }
        #expect(levels.count > 300 && taps.count == 2)
        // The same commands, in the same order.
        #expect(coarse.commands.map(\.scheduled) == exact.commands.map(\.scheduled))
        #expect(coarse.commands.map(\.intensity) == exact.commands.map(\.intensity))
        for c in levels {
            #expect(c.released >= c.scheduled && c.released - c.scheduled <= 10_000_000, "a level \(c.released - c.scheduled) ns late")
        }
        for c in taps { #expect(c.released == c.scheduled, "a tap exactly at its time") }
        for c in exact.commands { #expect(c.released == c.scheduled) }
        // A pass per level change when precise; about one per 10 ms (and per tap) otherwise.
        #expect(exact.passes >= levels.count)
        #expect(coarse.passes <= 500 / 10 + 10, "\(coarse.passes) passes for \(levels.count) level changes")
        print("precision by need: \(levels.count) level changes in \(coarse.passes) passes at 10 ms resolution, \(exact.passes) precise")
    }

    @Test func anExactBackendBesideACoarseOneKeepsEverythingExact() throws {
        let r = try Self.run(resolution: 0, precise: false)
        for c in r.commands { #expect(c.released == c.scheduled) }
    }
}
