import Foundation
import HapSyncConcurrency
import Synchronization

/// The fits an audio clock has had over a run, so that when a frame was heard is read from the fit
/// that stood just after it (which includes the observations around that moment), not from the
/// final fit extrapolated back over the whole run: after an underrun the stream's frames are heard
/// later by the gap, and the final fit would misplace every frame before it by as much.
///
/// A thread of its own (normal priority, `hapsync-clkhist`) looks at the fit every 20 ms and
/// keeps it when it places the frames differently from the last one kept (by more than 2 µs), so
/// a steady clock costs a few entries; at most `capacity` are kept (then the older half goes, and
/// frames from before the oldest kept are read by the oldest).
public final class AudioClockHistory: @unchecked Sendable {
    /// One kept fit: from `since` (monotonic ns) on, frame `frame` heard at `heard`, `slope` ns
    /// per frame.
    private struct Entry {
        var since: UInt64
        var frame: Int64
        var heard: UInt64
        var slope: Double
        func time(ofFrame f: Int64) -> Double { Double(heard) + Double(f - frame) * slope }
    }

    /// The most fits kept.
    public static let capacity = 100_000
    private let clock: AudioClock
    private let entries = Locked<[Entry]>([])
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    /// Starts watching `clock`.
    public init(_ clock: AudioClock) {
        self.clock = clock
        // The fit as it stands now, kept before the thread runs (which may start late).
        note(at: MonotonicClock.nanoseconds())
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                note(at: MonotonicClock.nanoseconds())
                Thread.sleep(forTimeInterval: 0.02)
            }
            done.signal()
        }
        thread.name = "hapsync-clkhist"
        thread.start()
    }

    deinit { stop() }

    /// Stops watching (the fits kept stay readable).
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        note(at: MonotonicClock.nanoseconds())
        done.wait()
    }

    /// Keeps the clock's fit at `now` if it places frames differently from the last one kept.
    private func note(at now: UInt64) {
        let fit = clock.fit
        guard fit.isFitted, let f = fit.frame(atTime: now), let heard = fit.time(ofFrame: f) else { return }
        let entry = Entry(since: now, frame: f, heard: heard, slope: fit.slope)
        entries.withLock { all in
            if let last = all.last, abs(last.time(ofFrame: f) - Double(heard)) <= 2_000,
               abs(last.time(ofFrame: f + 48_000) - entry.time(ofFrame: f + 48_000)) <= 2_000 { return }
            if all.count >= Self.capacity { all.removeFirst(all.count / 2) }
            all.append(entry)
        }
    }

    /// When `frame` was heard: by the fit that stood 50 ms after the final fit says it was heard
    /// (the first kept fit for earlier frames; the final fit when none was kept).
    public func heard(_ frame: Int64) -> UInt64? {
        guard let final = clock.time(ofFrame: frame) else { return nil }
        let all = entries.withLock { $0 }
        let after = final &+ 50_000_000
        // The last entry kept at or before `after`.
        var lo = 0, hi = all.count
        while lo < hi { let mid = (lo + hi) / 2; if all[mid].since <= after { lo = mid + 1 } else { hi = mid } }
        guard !all.isEmpty else { return final }
        let e = all[max(0, lo - 1)]
        return UInt64(max(0, e.time(ofFrame: frame)))
    }
}
