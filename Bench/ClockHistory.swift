import Foundation
import HapSyncRuntime
import Synchronization

/// Snapshots of an audio clock's fit taken every 20 ms on a thread of its own, so that the moment a
/// frame was heard can be read afterwards from the fit as it stood just after that moment (the
/// fit then includes the observations around it), not from the final fit extrapolated back over
/// the whole run.
final class ClockHistory: @unchecked Sendable {
    private let clock: AudioClock
    private let snapshots = Mutex<[(time: UInt64, frame: Int64, nsPerFrame: Double)]>([])
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    init(_ clock: AudioClock) {
        self.clock = clock
        Thread { [self] in
            while running.load(ordering: .acquiring) {
                let t = MonotonicClock.nanoseconds()
                if let f = clock.frame(atTime: t), let heard = clock.time(ofFrame: f) {
                    let slope = clock.nanosecondsPerFrame
                    snapshots.withLock { $0.append((heard, f, slope)) }
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
            done.signal()
        }.start()
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        done.wait()
    }

    /// When `frame` was heard, by the first snapshot taken at least 50 ms after it (by the final fit
    /// if there is none).
    func heard(_ frame: Int64) -> UInt64? {
        let all = snapshots.withLock { $0 }
        guard let final = clock.time(ofFrame: frame) else { return nil }
        var lo = 0, hi = all.count
        let after = final + 50_000_000
        while lo < hi { let mid = (lo + hi) / 2; if all[mid].time < after { lo = mid + 1 } else { hi = mid } }
        guard lo < all.count else { return final }
        let s = all[lo]
        return UInt64(Double(s.time) + Double(frame - s.frame) * s.nsPerFrame)
    }
}
