import CLo
import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapSyncSystem
import Synchronization

/// Errors liblo reported through its error handler, by the thread it reported them on. The
/// handler has no context pointer, but liblo calls it on the thread decoding the packet (inside
/// `lo_server_dispatch_data`), so each service, decoding on its own thread, sees only its own: a
/// process-wide count made one service answer another's malformed packets as its own.
private let libloErrors = Locked<[pthread_t: Int]>([:])

/// liblo's errors reported so far on the calling thread.
private func libloErrorsOnThisThread() -> Int { libloErrors.withLock { $0[pthread_self()] ?? 0 } }

/// `hapsync serve`'s engine front end: OSC datagrams in (decoded by liblo, bundles and time tags
/// included), commands on one running `HapticEngine`, replies to each sender.
///
/// One thread (`run`) receives and handles everything; the engine's own threads play. Bad input
/// never ends the service: malformed, oversized and rate-limited packets are counted (and answered
/// when there is a message to answer), and every command error is a `/hapsync/error` reply naming
/// the address, the argument and the value.
public final class OSCService: @unchecked Sendable {
    /// Limits and roots.
    public struct Configuration: Sendable {
        /// Where to listen (at least one).
        public var endpoints: [OSCEndpoint]
        /// The only folders `/hapsync/load` reads from (as `EventWaveformPath`: relative paths,
        /// no `..`, no symbolic link out).
        public var resourceRoots: [URL]
        /// Patterns held at once.
        public var maxPatterns: Int = 256
        /// Players held at once.
        public var maxPlayers: Int = 32
        /// Messages handled per second (a burst of as many is allowed); beyond, dropped and counted.
        public var maxMessagesPerSecond: Double = Self.defaultMaxMessagesPerSecond
        /// How patterns are compiled.
        public var renderOptions: RenderOptions = RenderOptions()
        /// How far ahead a bundle's time tag may schedule, seconds (default 300): a later tag is an
        /// error reply, so that tags years ahead cannot hold every player slot.
        public var maxScheduleAhead: Double = Self.defaultMaxScheduleAhead

        /// Bytes the loaded patterns may hold together, their compiled timelines and decoded audio
        /// (each distinct pattern once; `PatternLibrary`).
        public var maxPatternMemory: Int = Self.defaultMaxPatternMemory

        /// What `/hapsync/live` drives (nil: those addresses answer that the service has no live
        /// haptics, e.g. started without audio).
        public var live: (any LiveControl)?

        /// `maxPatternMemory` unless set (`serve --pattern-memory`): 1 GiB, or a quarter of the
        /// machine's memory where that is less.
        public static var defaultMaxPatternMemory: Int { min(1 << 30, Int(clamping: ProcessInfo.processInfo.physicalMemory / 4)) }
        /// `maxMessagesPerSecond` unless set (`serve --max-rate`): 20,000.
        public static let defaultMaxMessagesPerSecond = 20_000.0
        /// `maxScheduleAhead` unless set (`serve --max-ahead`): 300 s.
        public static let defaultMaxScheduleAhead = 300.0

        /// Makes a configuration.
        public init(endpoints: [OSCEndpoint], resourceRoots: [URL]) {
            self.endpoints = endpoints
            self.resourceRoots = resourceRoots
        }
    }

    /// Counts since start, as `/hapsync/status` reports them.
    public struct Statistics: Sendable, Equatable {
        /// Datagrams received.
        public var packets = 0
        /// Messages handled (a bundle holds several).
        public var messages = 0
        /// Messages answered with `/hapsync/error`.
        public var errors = 0
        /// Packets liblo could not decode.
        public var malformed = 0
        /// Datagrams larger than the service reads (32 KiB, as liblo's own limit).
        public var oversized = 0
        /// Time-tagged messages whose time had passed when they arrived (played at once).
        public var late = 0
        /// Messages dropped by the rate limit.
        public var rateLimited = 0
        /// Replies that could not be sent.
        public var unsent = 0
    }

    /// The largest datagram read whole.
    public static let maxDatagram = 32_768

    let engine: HapticEngine
    let configuration: Configuration
    /// The address space (patterns, players) this service drives.
    public let commands: OSCCommands
    private var sockets: [OSCSocket] = []
    private let lo: lo_server
    private let loDirectory: String
    private let stats = Locked(Statistics())
    private let stopping = Atomic<Bool>(false)

    // The message being handled (only the run thread touches these).
    private var currentSocket: OSCSocket?
    private var currentPeer = OSCSocket.Peer()
    /// Where to answer messages whose answer comes later (`OSCCommands.Outcome.later`), by token.
    private var waitingClients: [Int: (socket: OSCSocket, peer: OSCSocket.Peer)] = [:]
    private var nextClient = 1
    /// A pipe the loader thread (or the live changes' queue) writes a byte into when a load or a
    /// live change has finished: its read end wakes `run`'s poll (both ends non-blocking: a full
    /// pipe already has a wake-up in it).
    private let lateAnswersReady: (read: Int32, write: Int32)
    private var tokens: Double
    /// Messages of the current packet dispatched so far (its first rides on the packet's token).
    private var messagesInPacket = 0
    private var lastRefill = OSCTime.monotonic()

    /// Opens the sockets (they exist when this returns) over `engine`, which must be started.
    public init(engine: HapticEngine, configuration: Configuration) throws(OSCSocketError) {
        self.engine = engine
        self.configuration = configuration
        tokens = configuration.maxMessagesPerSecond
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw OSCSocketError(description: "cannot make a pipe for the loader: \(SystemErrno.current.message)") }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        lateAnswersReady = (ends[0], ends[1])
        let wake = ends[1]
        commands = OSCCommands(engine: engine, configuration: configuration, wake: {
            var one: UInt8 = 1
            _ = Glibc.write(wake, &one, 1)
        })
        // liblo decodes; it needs a server object, which needs a socket: a Unix one in a private
        // folder, removed at once, so nothing can reach it. Our own sockets carry the traffic.
        var template = Array("/tmp/hapsync-lo-XXXXXX".utf8CString)
        guard let dir = mkdtemp(&template) else { throw OSCSocketError(description: "cannot make a private folder for liblo: \(SystemErrno.current.message)") }
        loDirectory = String(cString: dir)
        let loPath = loDirectory + "/unused"
        guard let server = lo_server_new_with_proto(loPath, LO_UNIX, { _, _, _ in libloErrors.withLock { $0[pthread_self(), default: 0] += 1 } }) else {
            rmdir(loDirectory)
            close(ends[0])
            close(ends[1])
            throw OSCSocketError(description: "liblo could not make its server object")
        }
        unlink(loPath)
        rmdir(loDirectory)
        lo = server
        // Time tags are ours to schedule on the engine clock: liblo must hand bundles over at once.
        lo_server_enable_queue(server, 0, 1)
        for endpoint in configuration.endpoints { sockets.append(try OSCSocket(endpoint)) }
        lo_server_add_method(server, nil, nil, { path, types, argv, argc, message, user in
            guard let user, let path, let types else { return 1 }
            let service = Unmanaged<OSCService>.fromOpaque(user).takeUnretainedValue()
            service.dispatch(path: String(cString: path), types: types, argv: argv, argc: Int(argc), message: message)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        commands.stopLoading()
        // No change may wake the pipe once it is closed.
        commands.finishLiveChanges()
        lo_server_free(lo)
        close(lateAnswersReady.read)
        close(lateAnswersReady.write)
    }

    /// The UDP ports bound, in endpoint order (0 for a Unix socket): what `udp:HOST:0` got.
    public var boundPorts: [UInt16] { sockets.map(\.boundPort) }

    /// The counts so far.
    public var statistics: Statistics {
        stats.withLock { $0 }
    }

    /// Makes `run` return after the packet it is handling (any thread; a signal handler's queue).
    public func stop() { stopping.store(true, ordering: .relaxed) }

    /// Receives and handles datagrams until `stop()`; checks for it every 100 ms.
    public func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.maxDatagram, alignment: 8)
        defer { buffer.deallocate() }
        var fds = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        fds.append(pollfd(fd: lateAnswersReady.read, events: Int16(POLLIN), revents: 0))
        defer {
            commands.stopLoading()
            commands.finishLiveChanges()
            // The live changes refused or done at the end are answered.
            sendLateAnswers()
        }
        while !stopping.load(ordering: .relaxed) {
            guard poll(&fds, nfds_t(fds.count), 100) > 0 else { continue }
            if fds[sockets.count].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while Glibc.read(lateAnswersReady.read, &drained, drained.count) > 0 {}
                sendLateAnswers()
            }
            for (i, socket) in sockets.enumerated() where fds[i].revents != 0 {
                // Drain what is there, a bounded batch per socket so each gets its turn.
                for _ in 0..<256 {
                    guard let (length, peer) = socket.receive(into: buffer, timeoutMilliseconds: 0) else { break }
                    handle(datagram: UnsafeRawBufferPointer(rebasing: buffer[0..<min(length, buffer.count)]), length: length,
                           from: peer, on: socket)
                }
            }
        }
    }

    /// Sends the answers of finished loads and of the messages that waited for them, and of
    /// live changes done.
    private func sendLateAnswers() {
        for late in commands.completed() {
            guard let target = waitingClients.removeValue(forKey: late.client.id) else { continue }
            currentSocket = target.socket
            currentPeer = target.peer
            answer(late.outcome, to: late.address)
        }
    }

    /// One datagram: counted, size-checked, rate-limited, then decoded by liblo.
    /// Handles `datagram` as if it had arrived, from a sender nothing can be sent back to (its
    /// replies are dropped), then waits for the live changes and loads it started and handles
    /// what waited for them: one packet's whole effect, for the fuzzer and tests. Call it only
    /// while `run` is not running.
    public func process(_ datagram: UnsafeRawBufferPointer) {
        handle(datagram: datagram, length: datagram.count, from: OSCSocket.Peer(), on: nil)
        commands.waitForLiveChanges()
        sendLateAnswers()
        while commands.loadsUnderWay > 0, commands.waitForLoad() { sendLateAnswers() }
    }

    private func handle(datagram: UnsafeRawBufferPointer, length: Int, from peer: OSCSocket.Peer, on socket: OSCSocket?) {
        stats.withLock { $0.packets += 1 }
        currentSocket = socket
        currentPeer = peer
        // Every packet spends a token first, and every message in it one more (`dispatch`), so
        // no packet is answered beyond the rate, however it is made.
        guard takeToken() else { return }
        guard length <= Self.maxDatagram else {
            stats.withLock { $0.oversized += 1 }
            reply(error: "(packet)", "a packet of \(length) bytes is larger than \(Self.maxDatagram); dropped")
            return
        }
        messagesInPacket = 0
        let before = libloErrorsOnThisThread()
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(datagram.count, 1), alignment: 8)
        defer { copy.deallocate() }
        copy.copyMemory(from: datagram)
        let rc = lo_server_dispatch_data(lo, copy.baseAddress, datagram.count)
        // Not decodable: liblo said so, or failed without saying.
        if rc < 0 || libloErrorsOnThisThread() != before {
            stats.withLock { $0.malformed += 1 }
            reply(error: "(packet)", "a packet of \(datagram.count) bytes is not valid OSC; dropped")
        }
    }

    /// Spends one of the rate limit's tokens (refilled at `maxMessagesPerSecond`, at most a
    /// second's worth held); false, and counted, when none is left.
    private func takeToken() -> Bool {
        let now = OSCTime.monotonic()
        tokens = min(configuration.maxMessagesPerSecond, tokens + (now - lastRefill) * configuration.maxMessagesPerSecond)
        lastRefill = now
        guard tokens >= 1 else {
            stats.withLock { $0.rateLimited += 1 }
            return false
        }
        tokens -= 1
        return true
    }

    /// One decoded message (liblo's handler, on the run thread).
    private func dispatch(path: String, types: UnsafePointer<CChar>, argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?,
                          argc: Int, message: lo_message?) {
        // A bundle's second and later messages spend tokens of their own.
        if messagesInPacket > 0, !takeToken() { return }
        messagesInPacket += 1
        let args = OSCValue.arguments(types: types, argv: argv, count: argc)
        // A time tag (from a bundle) on the engine clock; nil for "immediately".
        var at: Double?
        if let message {
            let tag = lo_message_get_timestamp(message)
            if let unix = OSCTime.unixSeconds(seconds: tag.sec, fraction: tag.frac) {
                let clock = OSCTime.wallOffset()
                commands.noteClockOffset(clock)
                let engineTime = unix - clock.offset
                let now = engine.currentTime
                if engineTime <= now {
                    stats.withLock { $0.late += 1 }
                } else if engineTime - now > configuration.maxScheduleAhead {
                    // Far-future tags would hold player slots nobody could see coming.
                    stats.withLock { $0.messages += 1; $0.errors += 1 }
                    reply(error: path, "the bundle's time tag is \(Self.seconds(engineTime - now)) s ahead; at most \(Self.seconds(configuration.maxScheduleAhead)) s ahead is scheduled (--max-ahead)")
                    return
                } else {
                    at = engineTime
                }
            }
        }
        stats.withLock { $0.messages += 1 }
        let status = statistics
        let client = OSCCommands.Client(id: nextClient)
        let outcome = commands.handle(address: path, args: args, at: at, statistics: status, from: client)
        if outcome == .later, let socket = currentSocket {
            // Answered from `sendLateAnswers`; the token is freed with its answer.
            waitingClients[client.id] = (socket, currentPeer)
            nextClient = nextClient == Int.max ? 1 : nextClient + 1
        }
        answer(outcome, to: path)
    }

    /// Sends a command's outcome for `address` to the current sender.
    private func answer(_ outcome: OSCCommands.Outcome, to address: String) {
        switch outcome {
        case .ok(let extra): send("/hapsync/ok", [.string(address)] + extra)
        case .reply(let replyAddress, let values): send(replyAddress, values)
        case .error(let message):
            stats.withLock { $0.errors += 1 }
            reply(error: address, message)
        case .later: break
        }
    }

    /// Seconds as a message shows them: up to 3 decimals, no exponent below 1e15.
    static func seconds(_ x: Double) -> String {
        x.isFinite && abs(x) < 1e15 ? String(format: "%.3f", x).replacingOccurrences(of: #"\.?0+$"#, with: "", options: .regularExpression) : "\(x)"
    }

    /// Sends `/hapsync/error ADDRESS MESSAGE` to the current sender.
    private func reply(error address: String, _ message: String) {
        send("/hapsync/error", [.string(address), .string(message)])
    }

    /// Encodes a reply with liblo and sends it to the current sender.
    private func send(_ address: String, _ values: [OSCValue]) {
        guard let socket = currentSocket, let m = lo_message_new() else { return }
        defer { lo_message_free(m) }
        for v in values {
            switch v {
            case .int(let x): if let small = Int32(exactly: x) { lo_message_add_int32(m, small) } else { lo_message_add_int64(m, x) }
            case .float(let x): lo_message_add_double(m, x)
            case .string(let s): lo_message_add_string(m, s)
            case .bool(let b): if b { lo_message_add_true(m) } else { lo_message_add_false(m) }
            case .other: lo_message_add_nil(m)
            }
        }
        var size = 0
        guard let bytes = lo_message_serialise(m, address, nil, &size) else { return }
        defer { free(bytes) }
        if !socket.send(UnsafeRawBufferPointer(start: bytes, count: size), to: currentPeer) {
            stats.withLock { $0.unsent += 1 }
        }
    }
}
