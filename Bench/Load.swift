import Foundation
import HapSyncTestSupport
import Synchronization

/// The benchmark's load option: busy threads at normal priority (SCHED_OTHER, nice 0), what a
/// game plus a build do to a desktop. Real-time threads (the engine's, the sound server's data
/// threads, the pipe sink's reader) should survive them; normal-priority ones do not.
final class BusyLoad: @unchecked Sendable {
    /// How many threads spin.
    let threads: Int
    private let running = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)

    /// `threads` busy threads, not yet started.
    init(threads: Int) { self.threads = threads }

    /// `--load`'s value: "none" (0), "auto" (two per core) or a count (0 to 64); nil for anything else.
    static func threads(parsing text: String) -> Int? {
        switch text {
        case "none": return 0
        case "auto": return 2 * ProcessInfo.processInfo.activeProcessorCount
        default: return Int(text).flatMap { (0...64).contains($0) ? $0 : nil }
        }
    }

    /// Starts the threads spinning (each adds to a counter so the loop is not optimized away).
    func start() {
        guard threads > 0, !running.load(ordering: .relaxed) else { return }
        running.store(true, ordering: .releasing)
        for k in 0..<threads {
            let thread = Thread { [self] in
                var random = SeededRandom(seed: 0)
                while running.load(ordering: .relaxed) {
                    for _ in 0..<10_000 { _ = random.next() }
                }
                if random.state == 42 { print("") }   // keeps the work from being optimized away
                exited.signal()
            }
            thread.name = "bench-busy-\(k)"
            thread.start()
        }
    }

    /// Stops them and waits until all have ended.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for _ in 0..<threads { exited.wait() }
    }

    /// How a row under this load is labelled (" under 4 busy threads"), empty without load.
    var label: String { threads == 0 ? "" : " under \(threads) busy threads" }
}
