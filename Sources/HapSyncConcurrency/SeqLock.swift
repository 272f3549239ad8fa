import Synchronization

/// A sequence lock over a fixed-size value: one writer publishes whole values, any number of
/// readers take consistent copies, and no reader ever waits for the writer.
///
/// Contract:
/// - One writer at a time. `write` may be called from several threads only if they take turns
///   under a lock of their own; debug builds trap when two writes overlap.
/// - Any number of readers, on any threads. A reader never gets a torn value: it gets one that was
///   published whole (the latest, or the one before it while a write is under way).
/// - Readers never wait for the writer. The value is kept twice (a "latch", like the Linux
///   kernel's `seqcount_latch`): the writer fills one copy while readers read the other, so a
///   writer preempted in the middle of a write (a normal-priority control thread on a busy core)
///   holds no reader up: readers take the other copy, which is complete. A reader retries only
///   when the writer *finished* half a publication during its read: when the writer ran, never
///   because it stalled.
/// - Real-time readers read through a `Snapshot` of their own: `refresh` costs one acquiring load
///   when nothing was published since the snapshot was taken; otherwise it copies the value, in at
///   most `maxAttempts` attempts. If the writer published during every attempt (it would have to
///   publish `maxAttempts` times within as many short reads) it keeps the last complete snapshot and
///   returns false. It does not allocate, lock or block.
/// - `read()` is for other threads: it retries until its copy is consistent (again only while the
///   writer is making progress, never because the writer was preempted).
/// - Cost: a write stores the value twice (relaxed 8-byte atomic stores), two sequence stores and
///   two fences; a read copies it once (relaxed loads) between two sequence loads and one fence.
/// - `Value` is `BitwiseCopyable` and lives in 8-byte atomic words, so every shared access is
///   atomic (ThreadSanitizer sees no plain race) and a read does no reference counting. A copy that
///   turns out torn is discarded, but it is assembled in a local `Value` first: every bit pattern
///   must be a valid `Value` (integers, floating-point numbers, and structs, tuples and
///   `InlineArray`s of them).
///
/// Memory ordering, argued once here and named at each operation. A publication of value n + 1,
/// with the sequence at 2n and both copies holding value n, is:
///   1. sequence ← 2n + 1, releasing: readers now read copy 1, which holds n (written after the
///      store of 2n by the previous publication; this releasing store publishes it);
///   2. release fence: orders the store of step 1 before the data stores of step 3;
///   3. copy 0 ← n + 1 (relaxed stores);
///   4. sequence ← 2n + 2, releasing: readers now read copy 0, which this store publishes;
///   5. release fence; 6. copy 1 ← n + 1 (relaxed stores).
/// A reader loads the sequence s (acquiring: it sees copy[s & 1] as published), copies copy[s & 1]
/// (relaxed loads), runs an acquire fence and loads the sequence again. If it read any store of
/// step 3 or 6, the fence pair (the writer's release fence before that store, the reader's acquire
/// fence after its load) makes the sequence store before the writer's fence visible to the
/// second load: the sequence has moved and the copy is discarded. A releasing store alone does not
/// keep the stores after it behind it, and an acquiring load does not keep the loads before it in
/// front of it: the fences are what make this correct on weakly ordered CPUs (ARM), not only on
/// x86.
public final class SeqLock<Value: BitwiseCopyable & Sendable>: @unchecked Sendable {
    /// Attempts `refresh` makes before it keeps the last complete snapshot.
    public static var maxAttempts: Int { 4 }

    /// A real-time reader's copy of the value, and the publication it came from.
    public struct Snapshot: Sendable {
        /// The last complete value this reader read.
        public fileprivate(set) var value: Value
        /// The sequence number it was read at.
        @usableFromInline var version: UInt64
    }

    /// 8-byte words per copy.
    let wordCount: Int
    private let sequence = Atomic<UInt64>(0)
    /// Two copies of `wordCount` words: copy c starts at c × wordCount.
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    /// The initial value: where a reader's copy starts before its bits are overwritten.
    private let blank: Value
    #if DEBUG
    private let writing = Atomic<Bool>(false)
    #endif

    /// A lock holding `initial` (in both copies).
    public init(_ initial: Value) {
        wordCount = max(1, (MemoryLayout<Value>.size + 7) / 8)
        blank = initial
        words = .allocate(capacity: 2 * wordCount)
        for i in 0..<(2 * wordCount) { (words + i).initialize(to: Atomic(0)) }
        store(initial, into: 0)
        store(initial, into: 1)
    }

    deinit {
        words.deinitialize(count: 2 * wordCount)
        words.deallocate()
    }

    // MARK: - Writer

    /// Publishes `value`. One writer at a time (see the contract); never waits for readers. Does
    /// not allocate, lock or block.
    public func write(_ value: Value) {
        writeSteps(value, 0..<stepCount)
    }

    /// The stores a publication makes, in order: step 0 moves readers to copy 1, steps 1...w fill
    /// copy 0 word by word, step w + 1 moves readers to copy 0, steps w + 2...2w + 1 fill copy 1.
    var stepCount: Int { 2 * wordCount + 2 }

    /// Makes the steps `steps` of a publication of `value` (all of them: `write`). Tests stop a
    /// writer part-way through with it, as a preempted thread would be, and finish it later.
    func writeSteps(_ value: Value, _ steps: Range<Int>) {
        #if DEBUG
        // Relaxed: only detects overlap; the caller's own lock orders serialized writers.
        precondition(!writing.exchange(true, ordering: .relaxed), "SeqLock: two writes overlap; writers must take turns")
        defer { writing.store(false, ordering: .relaxed) }
        #endif
        // Relaxed: only the writer stores the sequence. Which publication this is: before step 0
        // the sequence is even (2n); steps 1...w + 1 come after 2n + 1, later ones after 2n + 2.
        let current = sequence.load(ordering: .relaxed)
        let first = steps.lowerBound
        let base = first == 0 ? current : first <= wordCount + 1 ? current &- 1 : current &- 2
        let w = wordCount
        withUnsafeBytes(of: value) { bytes in
            for step in steps {
                switch step {
                case 0:
                    // Step 1 (releasing) and step 2 (the fence) of the type's argument.
                    sequence.store(base &+ 1, ordering: .releasing)
                    atomicMemoryFence(ordering: .releasing)
                case 1...w:
                    storeWord(bytes, step - 1, into: 0)
                case w + 1:
                    // Steps 4 and 5.
                    sequence.store(base &+ 2, ordering: .releasing)
                    atomicMemoryFence(ordering: .releasing)
                default:
                    storeWord(bytes, step - w - 2, into: 1)
                }
            }
        }
    }

    private func store(_ value: Value, into copy: Int) {
        withUnsafeBytes(of: value) { bytes in for i in 0..<wordCount { storeWord(bytes, i, into: copy) } }
    }

    @inline(__always)
    private func storeWord(_ bytes: UnsafeRawBufferPointer, _ i: Int, into copy: Int) {
        var word: UInt64 = 0
        let offset = i * 8
        if offset + 8 <= bytes.count {
            word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        } else {
            withUnsafeMutableBytes(of: &word) { w in
                for k in 0..<(bytes.count - offset) { w[k] = bytes[offset + k] }
            }
        }
        // Relaxed: ordered by the sequence stores and fences around it (see the type's argument).
        words[copy * wordCount + i].store(word, ordering: .relaxed)
    }

    // MARK: - Readers on any thread

    /// A snapshot for a real-time reader, taken now (control side, before the reader runs; it
    /// retries like `read`).
    public func snapshot() -> Snapshot {
        var copy = blank
        while true {
            if let version = attempt(into: &copy) { return Snapshot(value: copy, version: version) }
        }
    }

    /// A consistent copy of the value, for threads that are not real-time: it retries until no
    /// publication overlapped its read. Does not allocate, lock or block.
    public func read() -> Value { snapshot().value }

    // MARK: - Real-time (reader threads)

    /// Brings `snapshot` up to date: true when it now holds the latest published value (or the
    /// one before it, while a write is under way), false when the writer published during each of
    /// `maxAttempts` attempts and the last complete snapshot was kept. Does not allocate, lock or
    /// block.
    @inline(__always)
    public func refresh(_ snapshot: inout Snapshot) -> Bool {
        // Acquiring: pairs with the writer's releasing sequence stores. Unchanged: nothing new.
        if sequence.load(ordering: .acquiring) == snapshot.version { return true }
        return refreshSlowly(&snapshot, between: nil)
    }

    /// `refresh` past its fast path; `between` (tests only) runs between the reader's steps. Does
    /// not allocate, lock or block (when `between` does not).
    func refreshSlowly(_ snapshot: inout Snapshot, between: ((Int) -> Void)?) -> Bool {
        var copy = snapshot.value
        for _ in 0..<Self.maxAttempts {
            if let version = attempt(into: &copy, between: between) {
                snapshot.value = copy
                snapshot.version = version
                return true
            }
        }
        return false
    }

    /// One read attempt into `value`: the sequence number read at, or nil when a publication
    /// overlapped it (then `value` holds a torn copy). `between` (tests only) runs after the first
    /// sequence load (step 0) and after each word (steps 1...w). Does not allocate, lock or block.
    @inline(__always)
    func attempt(into value: inout Value, between: ((Int) -> Void)? = nil) -> UInt64? {
        // Acquiring: the copy this number points at was published before it (steps 1 and 4).
        let s1 = sequence.load(ordering: .acquiring)
        between?(0)
        let base = Int(s1 & 1) * wordCount
        withUnsafeMutableBytes(of: &value) { bytes in
            for i in 0..<wordCount {
                // Relaxed: validated by the fence and the second sequence load below.
                let word = words[base + i].load(ordering: .relaxed)
                let offset = i * 8
                if offset + 8 <= bytes.count {
                    bytes.storeBytes(of: word, toByteOffset: offset, as: UInt64.self)
                } else {
                    withUnsafeBytes(of: word) { w in for k in 0..<(bytes.count - offset) { bytes[offset + k] = w[k] } }
                }
                between?(i + 1)
            }
        }
        // Acquire fence: if a load above read a store made after one of the writer's release
        // fences, the sequence store before that fence is visible to the load below.
        atomicMemoryFence(ordering: .acquiring)
        // Relaxed: ordered by the fence.
        return sequence.load(ordering: .relaxed) == s1 ? s1 : nil
    }
}
