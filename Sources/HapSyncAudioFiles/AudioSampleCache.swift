import HapSyncConcurrency
import HapSyncCore

/// Decoded files shared between the players that use them, held weakly: samples live as long as
/// some player's audio holds them, so a long-running engine that plays a thousand different files
/// holds only those still in use, and a file played again while in use is not decoded again.
public final class AudioSampleCache: Sendable {
    private final class Entry: @unchecked Sendable { weak var samples: AudioSamples? }
    private let entries = Locked<[String: Entry]>([:])

    /// An empty cache.
    public init() {}

    /// The samples under `key`, if some player still holds them.
    public func samples(_ key: String) -> AudioSamples? {
        entries.withLock { $0[key]?.samples }
    }

    /// Keeps `samples` under `key` (weakly), and forgets entries whose samples are gone.
    public func store(_ samples: AudioSamples, as key: String) {
        entries.withLock { e in
            e = e.filter { $0.value.samples != nil }
            let entry = Entry()
            entry.samples = samples
            e[key] = entry
        }
    }

    /// Keys whose samples are still held (for tests and inspection).
    public var keys: [String] { entries.withLock { $0.filter { $0.value.samples != nil }.map(\.key) } }
}
