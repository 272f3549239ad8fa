import HapSyncCore
import HapSyncRuntime

/// A manual-clock engine with a recording backend, started: the rig the scheduling, player and
/// lifecycle tests drive. Time moves only when the test moves it.
public struct ManualRig {
    /// The engine's clock.
    public let clock = ManualClock()
    /// Every command the engine applied, with the time.
    public let backend = RecordingHapticBackend()
    /// The engine, in `Threading.manual`.
    public let engine: HapticEngine

    /// A started engine with `maxPlayers` slots, its commands released `hapticLatency` (ns)
    /// before they are to be felt.
    public init(maxPlayers: Int = 8, hapticLatency: UInt64 = 0) throws {
        engine = try HapticEngine(configuration: .init(backend: backend, clock: clock, threading: .manual, maxPlayers: maxPlayers,
                                                       hapticLatency: hapticLatency))
        try engine.start()
    }

    /// Sets the clock to `seconds` of engine time and pumps once.
    public func at(_ seconds: Double) {
        clock.set(nanoseconds: Self.nanoseconds(seconds))
        engine.pump()
    }

    /// Runs the engine to `seconds`, moving the clock exactly to each deadline on the way, so
    /// every command is released at its deadline.
    public func run(until seconds: Double) {
        let end = Self.nanoseconds(seconds)
        var guardCount = 0
        while guardCount < 1_000_000 {
            guardCount += 1
            let next = engine.pump()
            if next > end { break }
            if next > clock.now() { clock.set(nanoseconds: next) }
        }
        if clock.now() < end { clock.set(nanoseconds: end) }
        engine.pump()
    }

    /// The commands applied so far.
    public var commands: [OutputCommand] { backend.entries.map(\.command) }

    /// Seconds as engine nanoseconds, rounded.
    public static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(nanosecondsOf: seconds) }
}
