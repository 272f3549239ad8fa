import Glibc
import Synchronization

/// The calling thread's identity as a number (its `pthread_t`), for telling threads apart.
/// Does not allocate, lock or block.
@inlinable
public func currentThreadID() -> UInt {
    UInt(bitPattern: Int(bitPattern: UInt(pthread_self())))
}

/// A role that belongs to one thread at a time (a ring's producer or consumer), checked in debug
/// builds.
///
/// Contract:
/// - The first thread that calls `check` owns the role; a later `check` from another thread traps
///   with the role's name, until `release` hands the role back.
/// - `check` is one relaxed compare-exchange: only identity matters, no data is published through
///   it. It does not allocate, lock or block, so real-time paths may call it (they do so only in
///   debug builds).
public struct ThreadRole: ~Copyable, Sendable {
    @usableFromInline let owner = Atomic<UInt>(0)

    /// A role no thread owns yet.
    public init() {}

    // MARK: - Real-time (the role's thread)

    /// Claims the role for the calling thread, or traps if another thread owns it.
    @inlinable
    public func check(_ role: StaticString, of primitive: StaticString) {
        let me = currentThreadID()
        // Relaxed: only identity matters.
        let (exchanged, original) = owner.compareExchange(expected: 0, desired: me, ordering: .relaxed)
        precondition(exchanged || original == me, "\(primitive): a second \(role) thread; it allows exactly one")
    }

    // MARK: - Control side

    /// Forgets the owner, so that another thread may take the role (after the previous owner has
    /// been joined: the join orders what it did before what the next owner does).
    public func release() {
        // Relaxed: the caller has already synchronized with the old owner.
        owner.store(0, ordering: .relaxed)
    }
}
