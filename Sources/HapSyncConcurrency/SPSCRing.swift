import Synchronization

/// A lock-free ring buffer for exactly one producer thread and one consumer thread.
///
/// Contract:
/// - Single producer, single consumer. `push` may be called only from one thread at a time (the
///   producer), `pop` only from one (the consumer). Debug builds trap when a second thread does,
///   unless the ring was made with `serializedProducers: true`: then several threads may push as
///   long as they take turns under a lock (the lock orders their writes), and only the consumer is
///   checked.
/// - Fixed capacity, a power of two, chosen at creation; the storage is allocated once.
/// - When full, `push` does not block and does not overwrite: it returns false and the item is
///   counted in `overflowCount`.
/// - Cost: `push` and `pop` are O(1): one relaxed load of the caller's own index, one acquiring
///   load of the other side's index, one copy of the element and one releasing store. They never
///   allocate, lock or block, so the real-time threads use them.
/// - Elements are `BitwiseCopyable` (copied as bytes; no reference counting on the real-time path).
///
/// The producer's `tail` and the consumer's `head` sit 128 bytes apart (two cache lines, against
/// adjacent-line prefetch) so the two threads do not falsely share a line.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    /// Number of slots.
    public let capacity: Int
    @usableFromInline let mask: Int
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    /// head at offset 0 (written by the consumer), tail at offset 128 (written by the producer),
    /// overflow count at offset 256 (written by the producer).
    @usableFromInline let indices: UnsafeMutableRawPointer
    @usableFromInline var head: UnsafeMutablePointer<Atomic<Int>> { indices.assumingMemoryBound(to: Atomic<Int>.self) }
    @usableFromInline var tail: UnsafeMutablePointer<Atomic<Int>> { (indices + 128).assumingMemoryBound(to: Atomic<Int>.self) }
    @usableFromInline var overflows: UnsafeMutablePointer<Atomic<Int>> { (indices + 256).assumingMemoryBound(to: Atomic<Int>.self) }
    @usableFromInline let serializedProducers: Bool
    #if DEBUG
    @usableFromInline let producerThread = ThreadRole()
    @usableFromInline let consumerThread = ThreadRole()
    #endif

    /// Makes an empty ring of `capacity` slots; `capacity` must be a power of two ≥ 2.
    /// `serializedProducers`: several producer threads take turns under their own lock.
    public init(capacity: Int, serializedProducers: Bool = false) {
        self.serializedProducers = serializedProducers
        precondition(capacity >= 2 && capacity & (capacity - 1) == 0, "SPSCRing capacity must be a power of two ≥ 2, got \(capacity)")
        self.capacity = capacity
        self.mask = capacity - 1
        self.storage = .allocate(capacity: capacity)
        // Written once now, so its pages are faulted in (and, under mlockall, locked) here rather
        // than on a real-time thread's first push.
        UnsafeMutableRawPointer(storage).initializeMemory(as: UInt8.self, repeating: 0, count: capacity * MemoryLayout<Element>.stride)
        self.indices = .allocate(byteCount: 384, alignment: 128)
        for offset in [0, 128, 256] {
            (indices + offset).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic<Int>(0))
        }
    }

    deinit {
        storage.deallocate()
        indices.deallocate()
    }

    // MARK: - Real-time (producer and consumer threads)

    /// Appends an element; false (and counted) when the ring is full. Producer only.
    /// Does not allocate, lock or block.
    /// (Inlinable so that callers specialize it for their element type: plain loads and stores,
    /// which ThreadSanitizer can see.)
    @inlinable @discardableResult
    public func push(_ element: Element) -> Bool {
        #if DEBUG
        if !serializedProducers { producerThread.check("producer", of: "SPSCRing") }
        #endif
        // Relaxed: only this thread writes tail.
        let t = tail.pointee.load(ordering: .relaxed)
        // Acquiring: the consumer's releasing store of head happens after it finished reading the
        // slot we are about to overwrite.
        let h = head.pointee.load(ordering: .acquiring)
        if t &- h == capacity {
            // Relaxed: a statistic, read by others only as a count.
            overflows.pointee.add(1, ordering: .relaxed)
            return false
        }
        storage[t & mask] = element
        // Releasing: publishes the slot's contents before the consumer can see the new tail.
        tail.pointee.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Removes the oldest element, or nil when empty. Consumer only.
    /// Does not allocate, lock or block.
    @inlinable
    public func pop() -> Element? {
        #if DEBUG
        consumerThread.check("consumer", of: "SPSCRing")
        #endif
        // Relaxed: only this thread writes head.
        let h = head.pointee.load(ordering: .relaxed)
        // Acquiring: pairs with the producer's releasing store, so the slot's contents are visible.
        let t = tail.pointee.load(ordering: .acquiring)
        if h == t { return nil }
        let element = storage[h & mask]
        // Releasing: the slot has been read before the producer may reuse it.
        head.pointee.store(h &+ 1, ordering: .releasing)
        return element
    }

    /// Elements waiting (exact for the two owners, a snapshot for anyone else).
    public var count: Int {
        // Acquiring both: a consistent-enough snapshot; tail is read second so count is never negative
        // for the consumer.
        let h = head.pointee.load(ordering: .acquiring)
        return tail.pointee.load(ordering: .acquiring) &- h
    }

    /// Elements pushed since creation (wrapping): exact for the producer, a lower bound for anyone
    /// else. With a consumer's count of elements it has finished with, it tells whether an element
    /// pushed earlier has been dealt with. Does not allocate, lock or block.
    @inlinable
    public var pushedCount: Int {
        // Acquiring: pairs with the producer's releasing store of tail.
        tail.pointee.load(ordering: .acquiring)
    }

    /// Pushes refused because the ring was full, since creation.
    public var overflowCount: Int {
        // Relaxed: a monotonically growing statistic.
        overflows.pointee.load(ordering: .relaxed)
    }

    // MARK: - Control side

    /// Forgets which threads own the two roles, for handing a ring to new threads after the
    /// previous owners have been joined. Only debug builds track owners; otherwise it does nothing.
    public func resetOwnership() {
        #if DEBUG
        producerThread.release()
        consumerThread.release()
        #endif
    }
}
