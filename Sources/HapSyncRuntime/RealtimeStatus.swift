/// What the system granted when the engine asked for real-time conditions. The engine runs either
/// way; this says how well it can keep time.
public struct RealtimeStatus: Sendable, Equatable, CustomStringConvertible {
    /// The SCHED_FIFO priority the scheduler thread runs at, or nil when refused.
    public var fifoPriority: Int32?
    /// Why SCHED_FIFO was refused (e.g. "Operation not permitted (errno 1)").
    public var fifoError: String?
    /// Whether mlockall succeeded (nil when not asked for).
    public var memoryLocked: Bool?
    /// Why mlockall failed.
    public var memoryLockError: String?
    /// The timer slack set on the scheduler thread, ns, or nil when refused.
    public var timerSlack: UInt?

    /// Nothing asked yet.
    public static let unknown = RealtimeStatus()

    /// Makes a status.
    public init(fifoPriority: Int32? = nil, fifoError: String? = nil, memoryLocked: Bool? = nil, memoryLockError: String? = nil, timerSlack: UInt? = nil) {
        self.fifoPriority = fifoPriority
        self.fifoError = fifoError
        self.memoryLocked = memoryLocked
        self.memoryLockError = memoryLockError
        self.timerSlack = timerSlack
    }

    /// "SCHED_FIFO 80 granted, memory locked, timer slack 1000 ns" or what was refused and why.
    public var description: String {
        var parts: [String] = []
        if let p = fifoPriority { parts.append("SCHED_FIFO \(p) granted") } else if let e = fifoError {
            parts.append("SCHED_FIFO refused (\(e)): normal priority, expect wake-ups up to a few ms late")
        }
        if let locked = memoryLocked { parts.append(locked ? "memory locked" : "memory not locked (\(memoryLockError ?? "refused"))") }
        if let slack = timerSlack { parts.append("timer slack \(slack) ns") }
        return parts.isEmpty ? "not applicable (manual clock)" : parts.joined(separator: ", ")
    }
}
