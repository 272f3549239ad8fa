import Foundation
import HapSyncOSC
import HapSyncRuntime
import HapSyncTestSupport

/// The `osc` target: the bytes as a run of datagrams to `hapsync serve`'s service (decoded by
/// liblo, bundles and time tags included), over a manual-clock engine (started at CLOCK_MONOTONIC's
/// now, onto which tags are mapped) that moves 5 ms after each,
/// with a resource folder of two patterns to load. Each datagram is a 2-byte length (little
/// endian) and that many bytes. Invariants: every datagram is handled and answered or counted,
/// never a crash or a hang (the loads it starts included); the service never holds more players
/// than its limit (far-future tags and floods included); `/hapsync/status` still answers.
public enum OSCFuzz {
    /// Datagrams read from one input.
    static let maxDatagrams = 256

    /// The resource folder, made once: a tap and a looping continuous pattern.
    static let resources: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-fuzz-osc-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try? #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#
            .write(to: dir.appendingPathComponent("tap.ahap"), atomically: true, encoding: .utf8)
        try? #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.2}}]}"#
            .write(to: dir.appendingPathComponent("buzz.ahap"), atomically: true, encoding: .utf8)
        return dir
    }()

    /// Runs one input (see the type's note): at most `maxDatagrams` datagrams.
    public static func run(_ data: Data) {
        // Started at CLOCK_MONOTONIC's now, onto which the service maps time tags: tags within
        // --max-ahead are scheduled, later ones refused, as in the real service.
        let clock = ManualClock(nanoseconds: MonotonicClock.nanoseconds())
        guard let engine = try? HapticEngine(configuration: .init(backend: NullHapticBackend(), clock: clock, threading: .manual, maxPlayers: 8)),
              (try? engine.start()) != nil else { return }
        defer { engine.stop() }
        var configuration = OSCService.Configuration(endpoints: [], resourceRoots: [resources])
        configuration.maxPlayers = 8
        configuration.maxPatterns = 8
        configuration.maxPatternMemory = 16 << 20
        guard let service = try? OSCService(engine: engine, configuration: configuration) else { return }
        let bytes = [UInt8](data)
        var i = 0, count = 0
        while i + 2 <= bytes.count, count < maxDatagrams {
            count += 1
            let length = min(Int(bytes[i]) | Int(bytes[i + 1]) << 8, bytes.count - i - 2)
            bytes[(i + 2)..<(i + 2 + length)].withUnsafeBytes { service.process($0) }
            i += 2 + length
            clock.advance(nanoseconds: 5_000_000)
            engine.pump()
            precondition(service.commands.playerCount <= configuration.maxPlayers, "\(service.commands.playerCount) players held")
        }
        let status = service.commands.handle(address: "/hapsync/status", args: [], at: nil, statistics: service.statistics)
        guard case .reply("/hapsync/status", _) = status else { preconditionFailure("status did not answer: \(status)") }
    }
}
