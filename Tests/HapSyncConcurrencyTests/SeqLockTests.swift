import Foundation
import HapSyncTestSupport
import Testing
@testable import HapSyncConcurrency

/// A value of `n` words, every word equal: a torn copy shows as words that differ.
struct Words<let n: Int>: BitwiseCopyable, Sendable, Equatable {
    var words = InlineArray<n, UInt64>(repeating: 0)
    init(_ v: UInt64) { words = InlineArray(repeating: v) }
    /// The value, or nil when the words disagree (a torn copy).
    var whole: UInt64? {
        let first = words[0]
        for i in 0..<n where words[i] != first { return nil }
        return first
    }
    static func == (a: Self, b: Self) -> Bool { a.whole != nil && a.whole == b.whole }
}

@Suite("SeqLock")
struct SeqLockTests {
    /// A writer stopped after each of its stores (as a preempted thread would be), for values of
    /// 1, 3 and 17 words and three publications in a row: readers return at once with a whole
    /// value: the old one until the writer has switched readers to the new copy, the new one after.
    @Test func aWriterStoppedAtAnyStoreHoldsNoReaderUp() {
        func check<let n: Int>(_: Words<n>.Type) {
            let lock = SeqLock(Words<n>(0))
            var reader = lock.snapshot()
            for publication in UInt64(1)...3 {
                let steps = lock.stepCount
                #expect(steps == 2 * n + 2)
                for stop in 0...steps {
                    // A fresh lock at the same point: `publication - 1` published, the next stopped at `stop`.
                    let probe = SeqLock(Words<n>(0))
                    for p in 1..<publication { probe.write(Words(p)) }
                    probe.writeSteps(Words(publication), 0..<stop)
                    let expected = stop <= n + 1 ? publication - 1 : publication
                    let got = finishes(within: 10) { probe.read().whole }
                    #expect(got == expected, "\(n) words, publication \(publication) stopped after \(stop) of \(steps) stores: read \(String(describing: got))")
                    var snapshot = probe.snapshot()
                    #expect(probe.refresh(&snapshot) && snapshot.value.whole == expected)
                    probe.writeSteps(Words(publication), stop..<steps)
                    #expect(probe.read().whole == publication)
                    #expect(probe.refresh(&snapshot) && snapshot.value.whole == publication)
                }
                lock.write(Words(publication))
                #expect(lock.refresh(&reader) && reader.value.whole == publication)
            }
        }
        check(Words<1>.self)
        check(Words<3>.self)
        check(Words<17>.self)
    }

    /// Every interleaving of one read attempt with a writer: at each step of the reader (after its
    /// first sequence load, after each word) the writer makes the first k stores of a publication,
    /// for every k, and at the next step the rest. An attempt either fails (the sequence moved) or
    /// returns a whole value, never a mix; and it fails only if the writer switched copies during it.
    @Test func everyReaderWriterInterleavingGivesAWholeValueOrARetry() {
        func check<let n: Int>(_: Words<n>.Type) {
            let reference = SeqLock(Words<n>(0))
            let steps = reference.stepCount
            for readerStep in 0...n {
                for k in 0...steps {
                    for finishAt in readerStep...n {
                        let lock = SeqLock(Words<n>(1))
                        var copy = Words<n>(0)
                        let version = lock.attempt(into: &copy) { step in
                            if step == readerStep { lock.writeSteps(Words(2), 0..<k) }
                            if step == finishAt, step > readerStep || k == steps { lock.writeSteps(Words(2), k..<steps) }
                        }
                        let finished = finishAt > readerStep || k == steps
                        // The writer's first store (k ≥ 1) moves readers to the other copy.
                        let switched = finished || k >= 1
                        #expect((version != nil) == !switched, "reader step \(readerStep), writer \(k), finish \(finishAt)")
                        if version != nil { #expect(copy.whole == 1, "torn: reader step \(readerStep), writer \(k)") }
                    }
                }
            }
        }
        check(Words<1>.self)
        check(Words<2>.self)
        check(Words<5>.self)
    }

    /// A real-time reader whose every attempt is overlapped by a whole publication gives up after
    /// `maxAttempts` and keeps its last complete snapshot; the next refresh catches up.
    @Test func boundedRefreshKeepsTheLastCompleteSnapshot() {
        let lock = SeqLock(Words<4>(7))
        var snapshot = lock.snapshot()
        var next: UInt64 = 8
        var attempts = 0
        let current = lock.refreshSlowly(&snapshot) { step in
            guard step == 1 else { return }
            attempts += 1
            lock.write(Words(next))
            next += 1
        }
        #expect(!current && attempts == SeqLock<Words<4>>.maxAttempts)
        #expect(snapshot.value.whole == 7, "the last complete snapshot is kept")
        #expect(lock.refresh(&snapshot) && snapshot.value.whole == next - 1)
    }

    /// Nothing published since the snapshot: the fast path, and the value stays.
    @Test func refreshIsCheapWhenNothingChanged() {
        let lock = SeqLock(Words<2>(3))
        var snapshot = lock.snapshot()
        var touched = false
        #expect(lock.refresh(&snapshot) && snapshot.value.whole == 3)
        _ = lock.refreshSlowly(&snapshot) { _ in touched = true }
        #expect(touched, "the slow path reads")
        lock.write(Words(4))
        #expect(lock.refresh(&snapshot) && snapshot.value.whole == 4)
    }

    /// Values whose size is not a multiple of 8 bytes round-trip.
    @Test func oddSizedValues() {
        struct Twelve: BitwiseCopyable, Sendable, Equatable { var a: UInt64; var b: UInt32 }
        let twelve = SeqLock(Twelve(a: 1, b: 2))
        twelve.write(Twelve(a: .max, b: 0xdead_beef))
        #expect(twelve.read() == Twelve(a: .max, b: 0xdead_beef))
        let byte = SeqLock(UInt8(9))
        byte.write(200)
        #expect(byte.read() == 200)
        let pair = SeqLock((Int64(-5), Double.pi))
        pair.write((-6, 2.5))
        #expect(pair.read() == (-6, 2.5))
    }

    /// One writer publishing as fast as it can, two readers (one with `read`, one with `refresh`):
    /// every value read is whole and values never go back. Also run under ThreadSanitizer.
    @Test func concurrentWriterAndReaders() {
        let lock = SeqLock(Words<16>(0))
        let total: UInt64 = 200_000
        let done = DispatchSemaphore(value: 0)
        let failures = Locked(0)
        Thread {
            for v in 1...total { lock.write(Words(v)) }
            done.signal()
        }.start()
        for useRefresh in [false, true] {
            Thread {
                var last: UInt64 = 0
                var snapshot = lock.snapshot()
                var bad = 0
                while last < total {
                    let v: UInt64?
                    if useRefresh { _ = lock.refresh(&snapshot); v = snapshot.value.whole } else { v = lock.read().whole }
                    guard let v, v >= last else { bad += 1; break }
                    last = v
                }
                failures.withLock { $0 += bad }
                done.signal()
            }.start()
        }
        for _ in 0..<3 { done.wait() }
        #expect(failures.withLock { $0 } == 0)
    }
}
