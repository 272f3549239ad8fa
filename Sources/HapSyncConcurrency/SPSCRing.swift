import Synchronization

/// A lock-free ring buffer for exactly one producer thread and one consumer thread.
///
/// Contract:
/// - Single producer, single consumer. `push` may be called only from one thread at a time (the
///   producer), `pop` only from one (the consumer). Debug builds trap when a second thread does,
///   unless the ring was made with `serializedProducers: true`: then several threads may push as
///   long as they take turns under a lock (the lock orders their writes), and only the consumer is
///   checked. Likewise `serializedConsumers: true` lets several consumers take turns (the output
///   ring: the output thread, or the scheduler handing a command straight on, under a flag that
///   orders them).
/// - Fixed capacity, a power of two, chosen at creation; the storage is allocated once.
/// - When full, `push` does not block and does not overwrite: it returns false and the item is
///   counted in `overflowCount`.
/// - Cost: `push` and `pop` are O(1): one relaxed load of the caller's own index, one copy of the
///   element and one releasing store. Each side keeps the other's index as it last read it (in
///   its own cache line) and reads the shared one (an acquiring load, which pulls the other
///   core's line over) only when the cached value says full or empty: a running stream touches
///   the other side's line once per lap, not once per item. `push(contentsOf:)` and
///   `pop(into:)` move a batch for one store of the index. None of them allocate, lock or block,
///   so the real-time threads use them.
/// - Elements are `BitwiseCopyable` (copied as bytes; no reference counting on the real-time path).
///
/// The producer's `tail` and the consumer's `head` sit 128 bytes apart (two cache lines, against
/// adjacent-line prefetch) so the two threads do not falsely share a line; each side's cached copy
/// of the other's index sits beside its own index.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    /// Number of slots.
    public let capacity: Int
    @usableFromInline let mask: Int
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    /// head at offset 0 (written by the consumer) with the consumer's cached tail at 8, tail at
    /// offset 128 (written by the producer) with the producer's cached head at 136, overflow
    /// count at offset 256 (written by the producer).
    @usableFromInline let indices: UnsafeMutableRawPointer
    @usableFromInline var head: UnsafeMutablePointer<Atomic<Int>> { indices.assumingMemoryBound(to: Atomic<Int>.self) }
    /// The consumer's copy of `tail` as it last read it (only the consumer uses it; atomic with
    /// relaxed ordering so that a role handed to another thread stays race-free).
    @usableFromInline var cachedTail: UnsafeMutablePointer<Atomic<Int>> { (indices + 8).assumingMemoryBound(to: Atomic<Int>.self) }
    @usableFromInline var tail: UnsafeMutablePointer<Atomic<Int>> { (indices + 128).assumingMemoryBound(to: Atomic<Int>.self) }
    /// The producer's copy of `head` as it last read it.
    @usableFromInline var cachedHead: UnsafeMutablePointer<Atomic<Int>> { (indices + 136).assumingMemoryBound(to: Atomic<Int>.self) }
    @usableFromInline var overflows: UnsafeMutablePointer<Atomic<Int>> { (indices + 256).assumingMemoryBound(to: Atomic<Int>.self) }
    @usableFromInline let serializedProducers: Bool
    @usableFromInline let serializedConsumers: Bool
    #if DEBUG
    @usableFromInline let producerThread = ThreadRole()
    @usableFromInline let consumerThread = ThreadRole()
    #endif

    /// Makes an empty ring of `capacity` slots; `capacity` must be a power of two ≥ 2.
    /// `serializedProducers` (`serializedConsumers`): several producer (consumer) threads take
    /// turns under their own lock or flag.
    public init(capacity: Int, serializedProducers: Bool = false, serializedConsumers: Bool = false) {
        self.serializedProducers = serializedProducers
        self.serializedConsumers = serializedConsumers
        precondition(capacity >= 2 && capacity & (capacity - 1) == 0, "SPSCRing capacity must be a power of two ≥ 2, got \(capacity)")
        self.capacity = capacity
        self.mask = capacity - 1
        self.storage = .allocate(capacity: capacity)
        // Written once now, so its pages are faulted in (and, under mlockall, locked) here rather
        // than on a real-time thread's first push.
        UnsafeMutableRawPointer(storage).initializeMemory(as: UInt8.self, repeating: 0, count: capacity * MemoryLayout<Element>.stride)
        self.indices = .allocate(byteCount: 384, alignment: 128)
        for offset in [0, 8, 128, 136, 256] {
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
        // Relaxed: only this thread writes tail (and the cached head).
        let t = tail.pointee.load(ordering: .relaxed)
        if t &- cachedHead.pointee.load(ordering: .relaxed) == capacity {
            // Acquiring: the consumer's releasing store of head happens after it finished reading
            // the slot we are about to overwrite.
            let h = head.pointee.load(ordering: .acquiring)
            cachedHead.pointee.store(h, ordering: .relaxed)
            if t &- h == capacity {
                // Relaxed: a statistic, read by others only as a count.
                overflows.pointee.add(1, ordering: .relaxed)
                return false
            }
        }
        storage[t & mask] = element
        // Releasing: publishes the slot's contents before the consumer can see the new tail.
        tail.pointee.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Appends as many of `elements` as there is room for, in order, with one store of the index;
    /// returns how many (those refused are counted in `overflowCount`). Producer only. Does not
    /// allocate, lock or block.
    @inlinable @discardableResult
    public func push(contentsOf elements: UnsafeBufferPointer<Element>) -> Int {
        #if DEBUG
        if !serializedProducers { producerThread.check("producer", of: "SPSCRing") }
        #endif
        let t = tail.pointee.load(ordering: .relaxed)
        var room = capacity &- (t &- cachedHead.pointee.load(ordering: .relaxed))
        if room < elements.count {
            // Acquiring: as in `push`.
            let h = head.pointee.load(ordering: .acquiring)
            cachedHead.pointee.store(h, ordering: .relaxed)
            room = capacity &- (t &- h)
        }
        let n = min(room, elements.count)
        for i in 0..<n { storage[(t &+ i) & mask] = elements[i] }
        if n < elements.count { overflows.pointee.add(elements.count - n, ordering: .relaxed) }
        if n > 0 { tail.pointee.store(t &+ n, ordering: .releasing) }
        return n
    }

    /// Removes the oldest element, or nil when empty. Consumer only.
    /// Does not allocate, lock or block.
    @inlinable
    public func pop() -> Element? {
        #if DEBUG
        if !serializedConsumers { consumerThread.check("consumer", of: "SPSCRing") }
        #endif
        // Relaxed: only this thread writes head (and the cached tail).
        let h = head.pointee.load(ordering: .relaxed)
        if h == cachedTail.pointee.load(ordering: .relaxed) {
            // Acquiring: pairs with the producer's releasing store, so the slots' contents up to
            // the tail read are visible (also later, through the cached copy).
            let t = tail.pointee.load(ordering: .acquiring)
            cachedTail.pointee.store(t, ordering: .relaxed)
            if h == t { return nil }
        }
        let element = storage[h & mask]
        // Releasing: the slot has been read before the producer may reuse it.
        head.pointee.store(h &+ 1, ordering: .releasing)
        return element
    }

    /// Removes up to `buffer.count` of the oldest elements into `buffer`, in order, with one store
    /// of the index; returns how many. Consumer only. Does not allocate, lock or block.
    @inlinable
    public func pop(into buffer: UnsafeMutableBufferPointer<Element>) -> Int {
        #if DEBUG
        if !serializedConsumers { consumerThread.check("consumer", of: "SPSCRing") }
        #endif
        let h = head.pointee.load(ordering: .relaxed)
        var available = cachedTail.pointee.load(ordering: .relaxed) &- h
        if available < buffer.count {
            // Acquiring: as in `pop`.
            let t = tail.pointee.load(ordering: .acquiring)
            cachedTail.pointee.store(t, ordering: .relaxed)
            available = t &- h
        }
        let n = min(available, buffer.count)
        for i in 0..<n { buffer[i] = storage[(h &+ i) & mask] }
        if n > 0 { head.pointee.store(h &+ n, ordering: .releasing) }
        return n
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
