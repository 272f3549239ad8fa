import CHapSyncSystem
import Foundation
import Glibc
import HapSyncCore
import Synchronization

/// The sequence lock `LiveParameters` and `AudioClock` used before `SeqLock`, kept here only as the
/// inversion benchmark's baseline: one copy of the data; the writer makes the sequence odd while it
/// writes, and a reader spins while it is odd (and retries if it changed). Same data and the same
/// query as `LiveParameters.value`: up to 64 breakpoints, the value at a time.
final class SpinningSeqLock: @unchecked Sendable {
    private let sequence = Atomic<UInt64>(0)
    private let count = Atomic<Int>(0)
    private let times: UnsafeMutablePointer<Atomic<UInt64>>
    private let values: UnsafeMutablePointer<Atomic<UInt64>>

    init() {
        times = .allocate(capacity: 64)
        values = .allocate(capacity: 64)
        for i in 0..<64 { (times + i).initialize(to: Atomic(0)); (values + i).initialize(to: Atomic(0)) }
    }

    /// Publishes `points` (time, value), as the old `LiveParameters.publish` did.
    func publish(_ points: [(UInt64, Double)]) {
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .releasing)
        for (i, p) in points.prefix(64).enumerated() {
            times[i].store(p.0, ordering: .relaxed)
            values[i].store(p.1.bitPattern, ordering: .relaxed)
        }
        count.store(min(points.count, 64), ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
    }

    /// The value held at `time` (the last breakpoint at or before it), spinning while a write is
    /// under way: the reader waits for the writer. The benchmark's reader gives up after
    /// `giveUpAfter` ns of spinning (on a kernel without RT throttling a SCHED_FIFO reader would
    /// otherwise spin for ever on the core its writer needs) and then returns nil.
    func value(at time: UInt64, giveUpAfter limit: UInt64) -> Double? {
        let start = now()
        var spins = 0
        while true {
            let s1 = sequence.load(ordering: .acquiring)
            if s1 & 1 == 1 {
                spins += 1
                if spins % 1024 == 0, now() - start > limit { return nil }
                continue
            }
            var i = count.load(ordering: .relaxed) - 1
            while i >= 0, times[i].load(ordering: .relaxed) > time { i -= 1 }
            let v = i >= 0 ? Double(bitPattern: values[i].load(ordering: .relaxed)) : 1
            if sequence.load(ordering: .acquiring) == s1 { return v }
        }
    }
}

/// inversion: a SCHED_FIFO reader and a normal-priority writer of live parameters on one core, the
/// reader sleeping 50 µs between bursts of 4 timed reads (so it wakes at random points of the
/// writer's sends, as the scheduler does). With the spinning baseline a reader that wakes while the
/// writer is half-way through a write spins until the kernel's RT throttling lets the writer
/// finish (or, where the kernel does not throttle real-time threads, gives up after 3 s: a read
/// counted as 3 s); with `SeqLock` it reads the other, complete copy at once. Each subject runs
/// `seconds`.
func inversionBenchmark(seconds: Double) -> [Distribution] {
    let points = (0..<40).map { (UInt64($0) * 1000 + 1, Double($0) / 40) }
    let live = LiveParameters(slots: 1)
    let spinning = SpinningSeqLock()
    let subjects: [(name: String, write: @Sendable () -> Void, read: @Sendable () -> Double)] = [
        ("SeqLock (LiveParameters.value)", {
            // 40 breakpoints replacing 40: always within `LiveParameters.capacity`.
            try! live.send(slot: 0, .hapticIntensity, points.map { LiveParameters.Point(time: $0.0, value: $0.1, ramp: true) })
        }, { live.value(slot: 0, .hapticIntensity, at: 20_000) }),
        ("baseline: spinning sequence lock (the design before)", {
            spinning.publish(points.map { ($0.0, $0.1) })
        }, { spinning.value(at: 20_000, giveUpAfter: 3_000_000_000) ?? 0 }),
    ]
    var result: [Distribution] = []
    var fifo = true
    for subject in subjects {
        let stop = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        let durations = Mutex<[Double]>([])
        let granted = Atomic<Bool>(false)
        Thread {
            _ = hapsync_pin_to_cpu(0, 0)
            while !stop.load(ordering: .relaxed) { subject.write() }
            done.signal()
        }.start()
        Thread {
            _ = hapsync_pin_to_cpu(0, 0)
            var p = sched_param()
            p.sched_priority = 80
            granted.store(pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &p) == 0, ordering: .relaxed)
            var local: [Double] = []
            local.reserveCapacity(Int(seconds * 80_000))
            var sink = 0.0
            let end = now() + UInt64(seconds * 1e9)
            while now() < end {
                usleep(50)
                for _ in 0..<4 {
                    let t0 = now()
                    sink += subject.read()
                    local.append(Double(now() - t0) / 1000)
                }
            }
            precondition(sink.isFinite)
            durations.withLock { $0 = local }
            stop.store(true, ordering: .relaxed)
            done.signal()
        }.start()
        done.wait()
        done.wait()
        fifo = fifo && granted.load(ordering: .relaxed)
        result.append(Distribution(benchmark: "inversion", subject: subject.name, values: durations.withLock { $0 }))
    }
    print("inversion: \(String(format: "%.0f", seconds)) s per subject, reader \(fifo ? "SCHED_FIFO 80" : "WITHOUT SCHED_FIFO (not above the writer: no inversion can arise)") and a normal-priority writer both on CPU 0; read time in µs")
    return result
}
