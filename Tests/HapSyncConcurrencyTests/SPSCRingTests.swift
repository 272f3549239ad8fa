import Foundation
@testable import HapSyncConcurrency
import Testing

@Suite("SPSC ring")
struct SPSCRingTests {
    /// Every capacity 2...32 × every start offset × every count up to capacity + 2: FIFO order,
    /// exactly `capacity` accepted, the rest refused and counted, nothing left behind.
    @Test func exhaustiveSmallCases() {
        for capacity in [2, 4, 8, 16, 32] {
            for offset in 0..<(2 * capacity) {
                for count in 0...(capacity + 2) {
                    let ring = SPSCRing<UInt32>(capacity: capacity)
                    // Move the indices to `offset` (wrapping past the end when offset > capacity).
                    for i in 0..<offset {
                        #expect(ring.push(UInt32(i)))
                        #expect(ring.pop() == UInt32(i))
                    }
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
