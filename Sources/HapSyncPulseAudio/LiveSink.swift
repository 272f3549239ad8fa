import CPulse
import Foundation
import Glibc
import HapSyncConcurrency

/// The virtual sink `hapsync live` puts on the user's sound server: a null sink ("hapsync-live",
/// described "HapSync Live") that applications play into, whose monitor is analysed and played on
/// to the real sink. PulseAudio's protocol, so the same on PulseAudio and on PipeWire's
/// pipewire-pulse.
///
/// Contract:
/// - `create` loads module-null-sink (float32 at the given rate and channels) with sink
///   properties `device.description` and the owner's marker: `hapsync.live.owner` (its pid),
///   `hapsync.live.host` (its host name) and `hapsync.live.owner.start` (when that process
///   started, so that a pid used again by another process is not taken for the owner).
/// - A sink of that name already there is judged by its marker (`removeLeftover`, which `create`
///   calls): none → `.notOurs`, and the user's module is never touched; an owner still running
///   (or on another host, where it cannot be asked) → `.inUse`; an owner that is gone → a leftover
///   of a killed run, taken over. Taking over removes the leftover (its streams moved to the real
///   sink, its module unloaded) and creates the sink anew, then moves those streams onto it:
///   the new module carries this process's marker, which an old module cannot be given (a sink's
///   properties are fixed once it is made). Between the two the streams play on the real sink
///   for a moment, as they would without `hapsync live`.
/// - `remove()` moves every stream playing into the sink to the real sink (the one given, else
///   the server's default sink unless that is this sink, else any other sink) and unloads the
///   module; it reports what it moved. Idempotent: once the module is gone it returns nil.
/// - The sink outlives this object: without `remove()` it stays on the server, a leftover for
///   the next run's `removeLeftover`.
/// - Control side: every call takes the connection's lock and waits for the server's replies;
///   never from the connection's mainloop thread. The connection carries no stream of its own
///   here, and may be shared with `remove()` from another control thread.
package final class LiveSink: @unchecked Sendable {
    /// The sink's name unless told otherwise: what applications and `pactl` see.
    package static let defaultName = "hapsync-live"
    /// The sink's description unless told otherwise: what desktop sound settings show.
    package static let defaultDescription = "HapSync Live"
    /// The sink property holding the owner's pid (the marker that tells our sink from the user's).
    package static let ownerProperty = "hapsync.live.owner"
    /// The sink property holding the owner's host name (a pid means nothing on another host).
    package static let hostProperty = "hapsync.live.host"
    /// The sink property holding when the owner process started (clock ticks after boot, from
    /// /proc/PID/stat), so that another process given the same pid is not taken for it.
    package static let startProperty = "hapsync.live.owner.start"

    /// The connection the sink was made on (kept for `remove()`).
    package let connection: PulseConnection
    /// The sink's name; its monitor is `monitorSource`.
    package let name: String
    /// The sink's description.
    package let description: String
    /// The sink's rate, Hz.
    package let rate: UInt32
    /// The sink's channel count.
    package let channels: Int
    /// The sink `remove()` moves streams to first, if it exists (nil: the server's default).
    package let realSink: String?
    /// The server's index of the module that made the sink (what `remove()` unloads).
    package let module: UInt32
    /// The server's index of the sink.
    package let index: UInt32
    /// The server as errors name it: its name and address ("pulseaudio at unix:/run/user/1000/pulse/native").
    package let server: String
    /// The owner marked on the sink: this process.
    package let owner: Owner
    /// The leftover of a killed run that `create` found under the same name and took over: its
    /// owner, module and the streams moved off it (nil: there was none).
    package let takenOver: Removal?
    /// The taken-over leftover's streams that `create` moved onto the new sink (those the server
    /// agreed to move; empty when there was no leftover).
    package let reclaimed: [PulseConnection.SinkInputListing]
    /// Whether `remove()` has unloaded the module (or found it gone).
    private let removed = Locked<Bool>(false)

    /// The sink's monitor source, which `MonitorCapture` records: "hapsync-live.monitor".
    package var monitorSource: String { name + ".monitor" }

    private init(connection: PulseConnection, name: String, description: String, rate: UInt32, channels: Int, realSink: String?,
                 module: UInt32, index: UInt32, server: String, owner: Owner, takenOver: Removal?,
                 reclaimed: [PulseConnection.SinkInputListing]) {
        self.connection = connection
        self.name = name
        self.description = description
        self.rate = rate
        self.channels = channels
        self.realSink = realSink
        self.module = module
        self.index = index
        self.server = server
        self.owner = owner
        self.takenOver = takenOver
        self.reclaimed = reclaimed
    }

    // MARK: - Creating

    /// How long `create` waits for the sink to appear after its module loaded (pipewire-pulse
    /// adds the node a moment after it answers).
    static let appearTimeout = 2.0

    /// Makes the sink `name` (float32, `rate` Hz, `channels` channels, described `description`)
    /// on `connection`'s server, marked as this process's, taking over a leftover of a killed run
    /// (see the type's contract). `realSink` is where `remove()` and a takeover move streams.
    /// Throws `.inUse` (another `hapsync live` owns the name), `.notOurs` (the user's own sink of
    /// that name, left loaded), `.invalid` (a name or description the module arguments cannot
    /// carry), `.refused` (also when another client takes the name meanwhile), `.stillListed`,
    /// `.didNotAppear` or `.serverGone`. Control side.
    package static func create(on connection: PulseConnection, name: String = defaultName, description: String = defaultDescription,
                               rate: UInt32 = 48_000, channels: Int = 2, realSink: String? = nil) throws(LiveSinkError) -> LiveSink {
        try validate(name: name, description: description, rate: rate, channels: channels)
        let server = try describeServer(connection, sink: name)
        let takenOver = try removeLeftover(on: connection, name: name, realSink: realSink)
        // PulseAudio unloads a module a moment after it answers; a sink loaded under a name still
        // taken gets another ('hapsync-live.2'), so the leftover must be gone from the list first.
        if let takenOver, !awaitFree(name, on: connection) {
            guard connection.withLock({ connection.isReady }) else { throw .serverGone(sink: name, module: nil, server: server) }
            throw .stillListed(sink: name, module: takenOver.module, server: server, seconds: appearTimeout)
        }
        let owner = Owner.current
        let arguments = "sink_name=\(name) rate=\(rate) channels=\(channels) format=float32le "
            + "sink_properties='device.description=\"\(description)\" \(ownerProperty)=\(owner.pid) "
            + "\(hostProperty)=\"\(owner.host)\"" + (owner.start.map { " \(startProperty)=\($0)" } ?? "") + "'"
        let module: UInt32
        do {
            module = try connection.withLock { () throws(PulseConnection.PulseError) -> UInt32 in
                try connection.loadModule("module-null-sink", arguments: arguments)
            }
        } catch {
            throw .refused(sink: name, server: server, reason: error.description)
        }
        let sink: PulseConnection.SinkListing
        switch awaitSink(name, module: module, owner: owner, on: connection) {
        case .listed(let listing):
            sink = listing
        case .renamed(let other):
            // Another client made a sink of that name between the check and the load.
            _ = connection.withLock { connection.unloadModule(module) }
            throw .refused(sink: name, server: server,
                           reason: "a sink of that name appeared meanwhile, so the server named this one '\(other)'; it was unloaded again")
        case .missing:
            _ = connection.withLock { connection.unloadModule(module) }
            throw .didNotAppear(sink: name, module: module, server: server, seconds: appearTimeout)
        }
        // The leftover's streams were moved to the real sink; back onto the new sink with them.
        let reclaimed = connection.withLock {
            (takenOver?.moved ?? []).filter { connection.moveSinkInput($0.index, toSink: sink.index) }
        }
        return LiveSink(connection: connection, name: name, description: description, rate: rate, channels: channels,
                        realSink: realSink, module: module, index: sink.index, server: server, owner: owner,
                        takenOver: takenOver, reclaimed: reclaimed)
    }

    /// Removes a leftover sink `name` of a killed `hapsync live` (its streams moved to
    /// `realSink`, else the default sink, else any other; its module unloaded) and reports it;
    /// nil when no sink of that name exists. Throws `.inUse` when its owner still runs (or is on
    /// another host), `.notOurs` when it carries no marker (the user's own: never unloaded), and
    /// `.serverGone` or `.unloadRefused`. For the start of a run (`create` calls it). Control side.
    package static func removeLeftover(on connection: PulseConnection, name: String = defaultName,
                                       realSink: String? = nil) throws(LiveSinkError) -> Removal? {
        let server = try describeServer(connection, sink: name)
        return try connection.withLock { () throws(LiveSinkError) -> Removal? in
            let sinks = connection.sinks()
            // A connection that failed lists nothing: that is no answer, not "no such sink".
            guard connection.isReady else { throw .serverGone(sink: name, module: nil, server: server) }
            guard let sink = sinks.first(where: { $0.name == name }) else { return nil }
            guard let owner = Owner(properties: sink.properties) else {
                throw .notOurs(sink: name, module: sink.ownerModule.flatMap { connection.module($0) }, server: server)
            }
            guard let module = sink.ownerModule else {
                // Marked, made by no module: a native PipeWire run's own node, which goes with its
                // owner (in use while it runs); else made some other way, not ours to remove.
                if owner.isAlive { throw .inUse(sink: name, owner: owner, module: nil, server: server) }
                throw .notOurs(sink: name, module: nil, server: server)
            }
            guard !owner.isAlive else { throw .inUse(sink: name, owner: owner, module: module, server: server) }
            return try evacuate(sink, module: module, owner: owner, sinks: sinks, realSink: realSink, on: connection, server: server)
        }
    }

    // MARK: - Removing

    /// Moves every stream playing into the sink to the real sink (`realSink`, else the server's
    /// default sink unless that is this one, else any other sink), unloads the module and reports
    /// what it moved; nil once the module is gone (removed before, by this or anyone). Throws
    /// `.serverGone` (nothing could be asked; a later call may try again) or `.unloadRefused`.
    /// Control side.
    @discardableResult
    package func remove() throws(LiveSinkError) -> Removal? {
        try removed.withLock { (removed: inout Bool) throws(LiveSinkError) -> Removal? in
            guard !removed else { return nil }
            let removal = try connection.withLock { () throws(LiveSinkError) -> Removal? in
                let sinks = connection.sinks()
                // A connection that failed lists nothing: that is no answer, not "removed".
                guard connection.isReady else { throw .serverGone(sink: name, module: module, server: server) }
                if let sink = sinks.first(where: { $0.name == name && $0.ownerModule == module && Owner(properties: $0.properties) == owner }) {
                    return try Self.evacuate(sink, module: module, owner: owner, sinks: sinks, realSink: realSink, on: connection, server: server)
                }
                // The sink is gone; its module too, unless the server kept a module without it.
                // pipewire-pulse gives a freed index to the next module: unloaded only if it is
                // still the one `create` loaded.
                switch connection.lookUpModule(module) {
                case .missing: return nil
                case .listed(let listing): guard isOurs(listing) else { return nil }
                case .failed(let why):
                    throw connection.isReady ? .unloadRefused(sink: name, module: module, server: server, reason: "it could not be listed: \(why)")
                        : .serverGone(sink: name, module: module, server: server)
                }
                if let refusal = Self.unload(module, ofSink: name, on: connection) {
                    throw connection.isReady ? .unloadRefused(sink: name, module: module, server: server, reason: refusal)
                        : .serverGone(sink: name, module: module, server: server)
                }
                return Removal(sink: name, module: module, owner: owner, destination: nil, moved: [], notMoved: [])
            }
            removed = true
            return removal
        }
    }

    /// What removing a live sink did: the sink and its module, whose it was, and where its streams went.
    package struct Removal: Sendable, CustomStringConvertible {
        /// The sink's name.
        package var sink: String
        /// The module unloaded.
        package var module: UInt32
        /// The owner marked on the sink.
        package var owner: Owner
        /// The sink the streams were moved to (nil: no other sink to move them to).
        package var destination: String?
        /// The streams moved to `destination`.
        package var moved: [PulseConnection.SinkInputListing]
        /// The streams the server would not move (or that had nowhere to go): the server decides
        /// where they play once the sink is gone.
        package var notMoved: [PulseConnection.SinkInputListing]

        /// "removed hapsync-live (module 27): moved 1 stream to hapsync (paplay: Playback Stream)".
        package var description: String {
            var text = "removed \(sink) (module \(module))"
            func list(_ inputs: [PulseConnection.SinkInputListing]) -> String {
                inputs.map { $0.application.isEmpty ? $0.name : "\($0.application): \($0.name)" }.joined(separator: ", ")
            }
            if moved.isEmpty && notMoved.isEmpty { return text + ": no stream was playing into it" }
            if let destination, !moved.isEmpty {
                text += ": moved \(moved.count) stream\(moved.count == 1 ? "" : "s") to \(destination) (\(list(moved)))"
            }
            if !notMoved.isEmpty {
                text += (moved.isEmpty ? ": " : "; ") + "could not move \(list(notMoved)): the server chose where they play"
            }
            return text
        }
    }

    // MARK: - Inside the connection's lock

    /// Whether a loaded module is the one `create` loaded for this sink: module-null-sink with
    /// this sink's name and this owner's marker in its arguments (a module index may be given to
    /// another module once it is freed).
    private func isOurs(_ module: PulseConnection.ModuleListing) -> Bool {
        Self.isNullSinkModule(module, named: name) && module.arguments.contains("\(Self.ownerProperty)=\(owner.pid) ")
    }

    /// Moves the streams of `sink` to the real sink (see `destination`) and unloads `module`.
    /// Inside `withLock`.
    private static func evacuate(_ sink: PulseConnection.SinkListing, module: UInt32, owner: Owner, sinks: [PulseConnection.SinkListing],
                                 realSink: String?, on connection: PulseConnection, server: String) throws(LiveSinkError) -> Removal {
        let target = destination(for: sink, among: sinks, realSink: realSink, default: connection.defaultSinkName())
        var removal = Removal(sink: sink.name, module: module, owner: owner, destination: target?.name, moved: [], notMoved: [])
        for input in connection.sinkInputs() where input.sink == sink.index {
            if let target, connection.moveSinkInput(input.index, toSink: target.index) {
                removal.moved.append(input)
            } else {
                removal.notMoved.append(input)
            }
        }
        if let refusal = unload(module, ofSink: sink.name, on: connection) {
            throw connection.isReady ? .unloadRefused(sink: sink.name, module: module, server: server, reason: refusal)
                : .serverGone(sink: sink.name, module: module, server: server)
        }
        return removal
    }

    /// Unloads `module`, the null sink `sink`'s. Nil when it is gone: unloaded, or refused while
    /// the server says no module has that index or lists another module there (it went
    /// meanwhile: a server answers "no such entity" to a module that has just gone). Else the
    /// server's error: the refusal when the module is still that sink's or the question about it
    /// failed (nothing known: not taken for gone). Inside `withLock`.
    private static func unload(_ module: UInt32, ofSink sink: String, on connection: PulseConnection) -> String? {
        if connection.unloadModule(module) { return nil }
        let refusal = connection.errorText
        switch connection.lookUpModule(module) {
        case .missing: return nil
        case .listed(let listing): return isNullSinkModule(listing, named: sink) ? refusal : nil
        case .failed(let why): return "\(refusal); asked about it then: \(why)"
        }
    }

    /// Whether `module` is module-null-sink loaded for a sink named `sink` (its arguments start
    /// with `sink_name=SINK `, as `create` and a leftover's load write them). Pure.
    static func isNullSinkModule(_ module: PulseConnection.ModuleListing, named sink: String) -> Bool {
        module.name == "module-null-sink" && module.arguments.hasPrefix("sink_name=\(sink) ")
    }

    /// Where a live sink's streams go when it is removed: `realSink` if the server has it, else
    /// the default sink `defaultSink` unless that is the live sink itself, else the first other
    /// sink; nil when the live sink is the only one. Pure.
    static func destination(for live: PulseConnection.SinkListing, among sinks: [PulseConnection.SinkListing], realSink: String?,
                            default defaultSink: String?) -> PulseConnection.SinkListing? {
        let others = sinks.filter { $0.index != live.index && $0.name != live.name }
        if let realSink, let sink = others.first(where: { $0.name == realSink }) { return sink }
        if let defaultSink, let sink = others.first(where: { $0.name == defaultSink }) { return sink }
        return others.first
    }

    /// Waits (at most `appearTimeout`) for the sink `name` made by `module` and marked with
    /// `owner` to be listed (not a leftover just unloaded whose module index pipewire-pulse gave
    /// to the new module, still listed a moment); the listing, or nil. Takes the lock for each
    /// look, not while it sleeps.
    private static func awaitSink(_ name: String, module: UInt32, owner: Owner, on connection: PulseConnection) -> Appearance {
        let giveUp = Date().addingTimeInterval(appearTimeout)
        while true {
            let found = connection.withLock { () -> Appearance in
                guard connection.isReady else { return .missing }
                let ours = connection.sinks().filter { $0.ownerModule == module && Owner(properties: $0.properties) == owner }
                if let sink = ours.first(where: { $0.name == name }) { return .listed(sink) }
                // module-null-sink names its sink 'NAME.2' when NAME is taken.
                if let other = ours.first(where: { $0.name.hasPrefix(name + ".") }) { return .renamed(other.name) }
                return .missing
            }
            if case .missing = found, Date() < giveUp, connection.withLock({ connection.isReady }) {
                usleep(20_000)
                continue
            }
            return found
        }
    }

    /// What `awaitSink` found: the sink, the module's sink under another name, or nothing.
    private enum Appearance {
        case listed(PulseConnection.SinkListing)
        case renamed(String)
        case missing
    }

    /// Waits (at most `appearTimeout`) until no sink `name` is listed; false if one still is (or
    /// the connection failed). Takes the lock for each look, not while it sleeps.
    private static func awaitFree(_ name: String, on connection: PulseConnection) -> Bool {
        let giveUp = Date().addingTimeInterval(appearTimeout)
        while true {
            let free = connection.withLock { connection.isReady && !connection.sinks().contains { $0.name == name } }
            if free { return true }
            guard Date() < giveUp, connection.withLock({ connection.isReady }) else { return false }
            usleep(20_000)
        }
    }

    /// "pulseaudio at unix:/run/user/1000/pulse/native"; throws `.serverGone` if the connection
    /// is no longer ready.
    private static func describeServer(_ connection: PulseConnection, sink: String) throws(LiveSinkError) -> String {
        try connection.withLock { () throws(LiveSinkError) -> String in
            let address = connection.serverAddress ?? "the default server"
            guard connection.isReady else { throw .serverGone(sink: sink, module: nil, server: address) }
            let name = connection.serverName()
            return name.isEmpty ? address : "\(name) at \(address)"
        }
    }

    /// Checks what goes into the module's arguments: a name of letters, digits, '.', '_' and '-'
    /// (what a sink name may be, unquoted), a description without quotes or backslashes (it is
    /// quoted twice), a rate and a channel count the server takes. Pure.
    static func validate(name: String, description: String, rate: UInt32, channels: Int) throws(LiveSinkError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard !name.isEmpty, name.count <= 128, name.allSatisfy({ allowed.contains($0) }) else {
            throw .invalid("the live sink's name '\(name)' may hold only letters, digits, '.', '_' and '-'")
        }
        guard !description.isEmpty, !description.contains(where: { "'\"\\\n".contains($0) }) else {
            throw .invalid("the live sink's description '\(description)' may not be empty or hold quotes, backslashes or line breaks")
        }
        guard (8_000...384_000).contains(rate) else { throw .invalid("the live sink's rate \(rate) Hz is not within 8000-384000 Hz") }
        guard (1...Int(PA_CHANNELS_MAX)).contains(channels) else {
            throw .invalid("the live sink's channel count \(channels) is not within 1-\(PA_CHANNELS_MAX)")
        }
    }
}

extension LiveSink {
    /// The process a live sink's marker names, and whether it still runs.
    package struct Owner: Sendable, Equatable {
        /// Its pid.
        package var pid: Int32
        /// The host it ran on (`gethostname`).
        package var host: String
        /// When it started, clock ticks after boot (/proc/PID/stat field 22), nil when unknown.
        package var start: UInt64?

        /// An owner as given.
        package init(pid: Int32, host: String, start: UInt64?) {
            self.pid = pid
            self.host = host
            self.start = start
        }

        /// The marker read from a sink's properties; nil when it has none (not made by `create`).
        package init?(properties: [String: String]) {
            guard let text = properties[LiveSink.ownerProperty], let pid = Int32(text), pid > 0 else { return nil }
            self.init(pid: pid, host: properties[LiveSink.hostProperty] ?? "", start: properties[LiveSink.startProperty].flatMap { UInt64($0) })
        }

        /// The marker as properties, key to value (a native PipeWire sink carries them as the
        /// null sink does).
        package var properties: [(String, String)] {
            [(LiveSink.ownerProperty, "\(pid)"), (LiveSink.hostProperty, host)] + (start.map { [(LiveSink.startProperty, "\($0)")] } ?? [])
        }

        /// This process.
        package static var current: Owner {
            let pid = getpid()
            return Owner(pid: pid, host: ProcessTable.hostName, start: ProcessTable.startTime(of: pid))
        }

        /// Whether the process may still run: true on another host (it cannot be asked), or when
        /// a process of that pid exists and, where both start times are known, started when the
        /// marker says. A sink whose owner is not alive is a leftover.
        package var isAlive: Bool {
            guard host == ProcessTable.hostName else { return true }
            guard ProcessTable.exists(pid) else { return false }
            guard let start, let now = ProcessTable.startTime(of: pid) else { return true }
            return start == now
        }
    }

    /// The calls to the system a live sink's marker needs, in one place.
    enum ProcessTable {
        /// This machine's host name ("" if it has none), every character but letters, digits,
        /// '.', '_' and '-' made '_' (it goes into the module's arguments, quoted).
        static var hostName: String {
            var buffer = [CChar](repeating: 0, count: 256)
            guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
            let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
            return String(name.map { safe.contains($0) ? $0 : "_" })
        }

        /// Whether a process with `pid` exists (kill with signal 0: EPERM means it does, as another
        /// user's).
        static func exists(_ pid: Int32) -> Bool {
            kill(pid, 0) == 0 || errno == EPERM
        }

        /// When process `pid` started, clock ticks after boot (/proc/PID/stat field 22, counted
        /// after the command name, which may hold spaces and parentheses); nil if unreadable.
        static func startTime(of pid: Int32) -> UInt64? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // Fields after ")" start at field 3 (state); field 22 is the 20th of them.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count >= 20 ? UInt64(fields[19]) : nil
        }
    }
}

/// Why a live sink could not be made or removed: each names the sink, the server and, where there
/// is one, the module, with a way out.
package enum LiveSinkError: Error, Sendable, CustomStringConvertible {
    /// Another `hapsync live` (the marker's owner, still running or on another host) owns the sink.
    case inUse(sink: String, owner: LiveSink.Owner, module: UInt32?, server: String)
    /// A sink of that name exists without our marker: the user's own, left as it is (its module,
    /// if a module made it).
    case notOurs(sink: String, module: PulseConnection.ModuleListing?, server: String)
    /// A name, description, rate or channel count the sink cannot have.
    case invalid(String)
    /// The server would not load module-null-sink.
    case refused(sink: String, server: String, reason: String)
    /// The module loaded but its sink was not listed within the time allowed, seconds (the module
    /// was unloaded again).
    case didNotAppear(sink: String, module: UInt32, server: String, seconds: Double)
    /// A leftover's module was unloaded but its sink was still listed after the time allowed,
    /// seconds (the new sink was not loaded: it would have been given another name).
    case stillListed(sink: String, module: UInt32, server: String, seconds: Double)
    /// The server would not unload the sink's module and still lists it, or could not say
    /// whether it is gone (`reason`: the server's error).
    case unloadRefused(sink: String, module: UInt32, server: String, reason: String)
    /// The connection to the server is gone (the server stopped or the connection closed).
    case serverGone(sink: String, module: UInt32?, server: String)

    /// A sentence naming the sink, the server and the module, with a way out.
    package var description: String {
        switch self {
        case .inUse(let sink, let owner, let module, let server):
            let whose = owner.host == LiveSink.ProcessTable.hostName
                ? "a hapsync live that still runs (pid \(owner.pid))"
                : "a hapsync live on host '\(owner.host)' (pid \(owner.pid)), which cannot be checked from here"
            return "the sink '\(sink)' (\(module.map { "module \($0)" } ?? "a PipeWire node of its own")) on \(server) belongs to \(whose); stop that one first, "
                + "or give this one another sink name"
        case .notOurs(let sink, let module, let server):
            guard let module else {
                return "a sink named '\(sink)' on \(server) was not made by hapsync live and no module of the server owns it; "
                    + "it is left as it is: give the live sink another name"
            }
            return "a sink named '\(sink)' on \(server) was not made by hapsync live (module \(module.index): \(module.name) \(module.arguments)); "
                + "it is left as it is: unload it yourself ('pactl unload-module \(module.index)') or give the live sink another name"
        case .invalid(let why):
            return why
        case .refused(let sink, let server, let reason):
            return "\(server) would not make the sink '\(sink)': \(reason)"
        case .didNotAppear(let sink, let module, let server, let seconds):
            return "\(server) loaded module \(module) for the sink '\(sink)', but the sink did not appear within \(seconds) s; "
                + "the module was unloaded again"
        case .stillListed(let sink, let module, let server, let seconds):
            return "\(server) unloaded module \(module) of the leftover sink '\(sink)', but the sink was still listed \(seconds) s later; "
                + "run hapsync live again, or 'pactl list short sinks' shows what holds the name"
        case .unloadRefused(let sink, let module, let server, let reason):
            return "\(server) did not remove module \(module) of the sink '\(sink)' (\(reason)); "
                + "'pactl list short modules' shows whether it is still loaded, and 'pactl unload-module \(module)' removes it"
        case .serverGone(let sink, let module, let server):
            let which = module.map { " (module \($0))" } ?? ""
            return "the connection to \(server) is gone, so the sink '\(sink)'\(which) could not be managed; "
                + "if the server still runs, 'pactl list short modules' shows what is left"
        }
    }
}
