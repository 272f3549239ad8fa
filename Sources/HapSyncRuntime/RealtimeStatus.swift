import HapSyncSystem

/// What the system granted when the engine asked for real-time conditions. The engine runs either
/// way; this says how well it can keep time.
public struct RealtimeStatus: Sendable, Equatable, CustomStringConvertible {
    /// The SCHED_FIFO priority the scheduler thread runs at, or nil when refused.
    public var fifoPriority: Int32?
    /// Whether RealtimeKit granted the scheduler thread's SCHED_FIFO (the process having no right
    /// to it itself).
    public var fifoThroughRealtimeKit = false
    /// Why SCHED_FIFO was refused (e.g. "Operation not permitted (errno 1)").
    public var fifoError: String?
    /// Whether mlockall succeeded (nil when not asked for).
    public var memoryLocked: Bool?
    /// Why mlockall failed.
    public var memoryLockError: String?
    /// The timer slack set on the scheduler thread, ns, or nil when refused.
    public var timerSlack: UInt?
    /// Every real-time thread and what it got, the engine's first (scheduler, output), then its
    /// outputs' (a sound server's mainloop that renders audio, a waveform stream's); empty
    /// before `start()` and with a manual clock.
    public var threads: [RealtimeThread] = []

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

    /// "SCHED_FIFO 80 granted, memory locked, timer slack 1000 ns" or what was refused and why;
    /// with `threads`, each thread by name: "SCHED_FIFO hapsync-sched 80, hapsync-output 79,
    /// hapsync-audio 78, memory locked, timer slack 1000 ns", those refused grouped by reason
    /// ("SCHED_FIFO refused (Operation not permitted (errno 1)) for hapsync-sched 80,
    /// hapsync-output 79: normal priority, expect wake-ups up to a few ms late").
    public var description: String {
        var parts: [String] = []
        if !threads.isEmpty {
            func named(_ ts: [RealtimeThread]) -> String { ts.map { "\($0.name) \($0.priority)" }.joined(separator: ", ") }
            let granted = threads.filter(\.granted)
            if !granted.isEmpty {
                let kit = granted.contains(where: \.throughRealtimeKit)
                parts.append("SCHED_FIFO " + named(granted) + (kit ? " (through RealtimeKit)" : ""))
            }
            // Refused threads grouped by reason, in order: one unprivileged run, one sentence.
            var reasons: [String] = []
            for case let e? in threads.map(\.error) where !reasons.contains(e) { reasons.append(e) }
            for e in reasons {
                let late = fifoPriority == nil && e == fifoError ? ", expect wake-ups up to a few ms late" : ""
                parts.append("SCHED_FIFO refused (\(e)) for \(named(threads.filter { $0.error == e })): normal priority\(late)")
            }
        } else if let p = fifoPriority { parts.append("SCHED_FIFO \(p) granted" + (fifoThroughRealtimeKit ? " through RealtimeKit" : "")) } else if let e = fifoError {
            parts.append("SCHED_FIFO refused (\(e)): normal priority, expect wake-ups up to a few ms late")
        }
        if let locked = memoryLocked { parts.append(locked ? "memory locked" : "memory not locked (\(memoryLockError ?? "refused"))") }
        if let slack = timerSlack { parts.append("timer slack \(slack) ns") }
        return parts.isEmpty ? "not applicable (manual clock)" : parts.joined(separator: ", ")
    }
}

/// One thread that asked for real-time scheduling, and what the system gave it.
public struct RealtimeThread: Sendable, Equatable {
    /// The thread's name, as `top -H` and `ps -L` show it ("hapsync-audio").
    public var name: String
    /// The SCHED_FIFO priority it asked for.
    public var priority: Int32
    /// Why SCHED_FIFO was refused (nil: granted).
    public var error: String?
    /// Whether RealtimeKit granted it (at `priority`, moved under its limit), the process having
    /// no right to SCHED_FIFO itself.
    public var throughRealtimeKit: Bool

    /// Makes one.
    public init(name: String, priority: Int32, error: String? = nil, throughRealtimeKit: Bool = false) {
        self.name = name
        self.priority = priority
        self.error = error
        self.throughRealtimeKit = throughRealtimeKit
    }

    /// What thread `name` got when it asked for `asked`: the granted priority, or the refusal.
    public init(name: String, asked: Int32, result: Result<RealtimeGrant, RealtimeRefusal>) {
        switch result {
        case .success(let g): self.init(name: name, priority: g.priority, throughRealtimeKit: g.throughRealtimeKit)
        case .failure(let r): self.init(name: name, priority: asked, error: r.description)
        }
    }

    /// Whether it runs at SCHED_FIFO `priority`.
    public var granted: Bool { error == nil }
}

/// An output with threads of its own that work on the engine's behalf (a sound server's mainloop
/// that renders and writes audio): the engine asks them to run at real-time priority, below its
/// scheduler and output threads, so that a busy desktop cannot starve them.
public protocol RealtimeThreaded: AnyObject {
    /// The SCHED_FIFO priority the output's threads ask for as they start (nil: they stay at
    /// normal priority). The engine sets it before `open()` when it runs real-time threads.
    var threadPriority: Int32? { get set }
    /// The output's threads and what each got (known once open; empty when none asked).
    var realtimeThreads: [RealtimeThread] { get }
}

/// SCHED_FIFO as a thread got it.
public struct RealtimeGrant: Sendable, Equatable {
    /// The priority it runs at: the one asked for, or under RealtimeKit the one it was moved to
    /// (`RealtimeKit.priority(for:limit:)`).
    public var priority: Int32
    /// Whether RealtimeKit granted it.
    public var throughRealtimeKit: Bool

    /// Makes one.
    public init(priority: Int32, throughRealtimeKit: Bool) {
        self.priority = priority
        self.throughRealtimeKit = throughRealtimeKit
    }
}

/// Why a thread did not get SCHED_FIFO: the system's answer, and RealtimeKit's when it was asked
/// (after a refusal for lack of permission).
public struct RealtimeRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// pthread_setschedparam's answer.
    public var direct: SystemErrno
    /// Why RealtimeKit did not grant it either (nil: not asked).
    public var realtimeKit: String?

    /// Makes one.
    public init(direct: SystemErrno, realtimeKit: String? = nil) {
        self.direct = direct
        self.realtimeKit = realtimeKit
    }

    /// "Operation not permitted (errno 1); RealtimeKit: no system bus (...)".
    public var description: String { direct.description + (realtimeKit.map { "; RealtimeKit: \($0)" } ?? "") }
}
