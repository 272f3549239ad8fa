import Foundation
import Testing
@testable import HapSyncConcurrency

@Suite("SPSC ring")
struct SPSCRingTests {
    /// An empty ring whose indices have moved to `offset` (wrapping past the end when offset >
    /// capacity), each item on the way pushed and popped back.
    static func emptyRing(capacity: Int, movedBy offset: Int) -> SPSCRing<UInt32> {
        let ring = SPSCRing<UInt32>(capacity: capacity)
        for i in 0..<offset {
            #expect(ring.push(UInt32(i)))
            #expect(ring.pop() == UInt32(i))
        }
        return ring
    }

    /// Every capacity 2...32 × every start offset × every count up to capacity + 2: FIFO order,
    /// exactly `capacity` accepted, the rest refused and counted, nothing left behind.
    @Test func exhaustiveSmallCases() {
        for capacity in [2, 4, 8, 16, 32] {
            for offset in 0..<(2 * capacity) {
                for count in 0...(capacity + 2) {
                    let ring = Self.emptyRing(capacity: capacity, movedBy: offset)
                    var accepted: [UInt32] = []
                    for i in 0..<count where ring.push(UInt32(1000 + i)) { accepted.append(UInt32(1000 + i)) }
                    #expect(accepted.count == min(count, capacity))
                    #expect(ring.overflowCount == max(0, count - capacity))
                    #expect(ring.count == accepted.count)
                    var popped: [UInt32] = []
                    while let x = ring.pop() { popped.append(x) }
                    #expect(popped == accepted, "capacity \(capacity) offset \(offset) count \(count)")
                    #expect(ring.pop() == nil && ring.count == 0)
                }
            }
        }
    }

    /// Batches: every capacity 2...16 × start offset × batch size up to capacity + 2, mixed with
    /// single pushes and pops: FIFO order, the batch takes what fits and counts the rest, a pop
    /// batch takes what there is, up to its size.
    @Test func batchesKeepOrderAndCountWhatDidNotFit() {
        for capacity in [2, 4, 8, 16] {
            for offset in 0..<(2 * capacity) {
                for size in 0...(capacity + 2) {
                    let ring = Self.emptyRing(capacity: capacity, movedBy: offset)
                    // One single item first, then a batch: room for capacity − 1.
                    #expect(ring.push(7))
                    let batch = (0..<size).map { UInt32(100 + $0) }
                    let pushed = batch.withUnsafeBufferPointer { ring.push(contentsOf: $0) }
                    #expect(pushed == min(size, capacity - 1))
                    #expect(ring.overflowCount == size - pushed)
                    var out = [UInt32](repeating: 0, count: 3)
                    var popped: [UInt32] = []
                    while true {
                        let n = out.withUnsafeMutableBufferPointer { ring.pop(into: $0) }
                        if n == 0 { break }
                        #expect(n <= 3)
                        popped += out[0..<n]
                    }
                    #expect(popped == [7] + batch.prefix(pushed), "capacity \(capacity) offset \(offset) size \(size)")
                    #expect(ring.pop() == nil && ring.count == 0)
                }
            }
        }
    }

    /// Two threads moving four million items in batches of uneven sizes: all arrive, in order.
    @Test func twoThreadBatchStress() {
        let ring = SPSCRing<UInt64>(capacity: 256)
        let total = 4_000_000
        let done = DispatchSemaphore(value: 0)
        let producer = Thread {
            var chunk = [UInt64](repeating: 0, count: 97)
            var i = 0, size = 1
            chunk.withUnsafeMutableBufferPointer { c in
                while i < total {
                    let n = min(size, total - i)
                    for k in 0..<n { c[k] = UInt64(i + k) &* 2_654_435_761 }
                    var sent = 0
                    while sent < n { sent += ring.push(contentsOf: UnsafeBufferPointer(rebasing: c[sent..<n])) }
                    i += n
                    size = size % 97 + 1
                }
            }
            done.signal()
        }
        producer.start()
        var expected = 0
        var inOrder = true
        var out = [UInt64](repeating: 0, count: 61)
        out.withUnsafeMutableBufferPointer { o in
            while expected < total {
                let n = ring.pop(into: UnsafeMutableBufferPointer(rebasing: o[0..<(expected % 61 + 1)]))
                for k in 0..<n where o[k] != UInt64(expected + k) &* 2_654_435_761 { inOrder = false }
                expected += n
            }
        }
        done.wait()
        #expect(inOrder && expected == total)
        #expect(ring.pop() == nil)
    }

    @Test func refusesCapacitiesThatAreNotPowersOfTwo() async {
        await #expect(processExitsWith: .failure) { _ = SPSCRing<Int>(capacity: 12) }
    }

    /// Two threads, four million items through a 1024-slot ring: every item arrives, in order, and
    /// the checksums agree. Also run under ThreadSanitizer by .ci/run.
    @Test func twoThreadStress() {
        let ring = SPSCRing<UInt64>(capacity: 1024)
        let total: UInt64 = 4_000_000
        let producerSum = ManagedBox(UInt64(0))
        let done = DispatchSemaphore(value: 0)
        let producer = Thread {
            var sum: UInt64 = 0
            var i: UInt64 = 0
            while i < total {
                let value = i &* 2_654_435_761 &+ 1
                if ring.push(value) {
                    sum &+= value
                    i += 1
                }
            }
            producerSum.value = sum
            done.signal()
        }
        producer.start()
        var expected: UInt64 = 0
        var sum: UInt64 = 0
        var inOrder = true
        while expected < total {
            if let v = ring.pop() {
                if v != expected &* 2_654_435_761 &+ 1 { inOrder = false }
                sum &+= v
                expected += 1
            }
        }
        done.wait()
        #expect(inOrder)
        #expect(sum == producerSum.value)
        #expect(ring.pop() == nil)
    }
}

/// A value handed between threads after a semaphore (the semaphore orders the accesses).
final class ManagedBox<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
