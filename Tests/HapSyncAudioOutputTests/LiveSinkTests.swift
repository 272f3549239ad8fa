import CPulse
import Foundation
import Glibc
import HapSyncConcurrency
import HapSyncLiveTesting
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing
@testable import HapSyncPulseAudio

/// `hapsync live`'s virtual sink and its monitor capture against the server the tests run with
/// (PulseAudio under .ci/with-pulse, pipewire-pulse under .ci/with-pipewire): made with its
/// description and marker; a second run, a leftover of a killed run and the user's own sink of the
/// same name each met as the contract says; streams moved off it when it goes; a WAV played into
/// it captured with its clicks where the file has them. Each test uses a sink name of its own
/// (other suites may make the default one), serialized (they start players).
@Suite("hapsync live: the live sink and its monitor capture", .serialized)
struct LiveSinkTests {
    // MARK: - Without a server

    /// What the module arguments cannot carry is refused before the server is asked, saying why.
    @Test func namesAndDescriptionsTheArgumentsCannotCarryAreRefused() {
        func refusal(_ name: String, _ description: String = "HapSync Live", channels: Int = 2) -> String? {
            do throws(LiveSinkError) {
                try LiveSink.validate(name: name, description: description, rate: 48_000, channels: channels)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refusal("hapsync-live") == nil && refusal("hapsync_live.2") == nil)
        #expect(refusal("hapsync live") == "the live sink's name 'hapsync live' may hold only letters, digits, '.', '_' and '-'")
        #expect(refusal("x'y") != nil && refusal("") != nil)
        #expect(refusal("hapsync-live", "Hap\"Sync") == "the live sink's description 'Hap\"Sync' may not be empty or hold quotes, backslashes or line breaks")
        #expect(refusal("hapsync-live", channels: 0) == "the live sink's channel count 0 is not within 1-32")
    }

    /// Where a removed sink's streams go: the real sink named, else the default sink unless it is
    /// the live sink itself, else any other; nowhere when the live sink is the only one.
    @Test func streamsGoToTheRealSinkElseTheDefaultElseAnyOther() {
        func sink(_ name: String, _ index: UInt32) -> PulseConnection.SinkListing {
            PulseConnection.SinkListing(name: name, description: "", channels: 2, index: index)
        }
        let live = sink("hapsync-live", 7), speakers = sink("speakers", 1), headphones = sink("headphones", 2)
        let all = [speakers, live, headphones]
        #expect(LiveSink.destination(for: live, among: all, realSink: "headphones", default: "speakers")?.name == "headphones")
        #expect(LiveSink.destination(for: live, among: all, realSink: "gone", default: "speakers")?.name == "speakers")
        #expect(LiveSink.destination(for: live, among: all, realSink: nil, default: "hapsync-live")?.name == "speakers")
        #expect(LiveSink.destination(for: live, among: all, realSink: "hapsync-live", default: nil)?.name == "speakers")
        #expect(LiveSink.destination(for: live, among: [live], realSink: nil, default: "hapsync-live") == nil)
    }

    /// Which module is a sink's (what an unload refused for a module no longer listed as the
    /// sink's counts as gone by): module-null-sink whose arguments begin with that sink's name,
    /// not a name it merely starts with, nor another module at a reused index.
    @Test func aSinksModuleIsTheNullSinkLoadedUnderItsName() {
        func module(_ name: String, _ arguments: String) -> PulseConnection.ModuleListing {
            PulseConnection.ModuleListing(index: 536_870_914, name: name, arguments: arguments)
        }
        #expect(LiveSink.isNullSinkModule(module("module-null-sink", "sink_name=hapsync-live rate=48000"), named: "hapsync-live"))
        #expect(!LiveSink.isNullSinkModule(module("module-null-sink", "sink_name=hapsync-live.2 rate=48000"), named: "hapsync-live"))
        #expect(!LiveSink.isNullSinkModule(module("module-null-sink", "sink_name=other rate=48000"), named: "hapsync-live"))
        #expect(!LiveSink.isNullSinkModule(module("module-pipe-sink", "sink_name=hapsync-live file=/tmp/p"), named: "hapsync-live"))
        #expect(!LiveSink.isNullSinkModule(module("module-null-sink", ""), named: "hapsync-live"))
    }

    // MARK: - On the server

    /// The sink exists with its description, the rate and channels asked for, this process's
    /// marker, and a monitor; remove() unloads it; a second remove() is fine and does nothing.
    @Test(.needsPulseAudio) func createMakesTheSinkWithItsDescriptionAndRemoveUnloadsIt() throws {
        let connection = try Self.connect()
        let name = Self.uniqueName("create")
        let live = try LiveSink.create(on: connection, name: name)
        defer { _ = try? live.remove() }
        #expect(live.takenOver == nil && live.monitorSource == "\(name).monitor")
        let sink = try #require(connection.withLock { connection.sinks() }.first { $0.name == name })
        #expect(sink.description == "HapSync Live" && sink.description == LiveSink.defaultDescription)
        #expect(sink.rate == 48_000 && sink.channels == 2 && sink.index == live.index && sink.ownerModule == live.module)
        #expect(sink.properties[LiveSink.ownerProperty] == String(getpid()))
        #expect(LiveSink.Owner(properties: sink.properties) == LiveSink.Owner.current)
        #expect(connection.withLock { connection.module(live.module)?.name } == "module-null-sink")

        let removal = try #require(try live.remove())
        #expect(removal.moved.isEmpty && removal.module == live.module)
        #expect(removal.description == "removed \(name) (module \(live.module)): no stream was playing into it")
        #expect(poll { Self.isGone(name, module: live.module, on: connection) })
        #expect(try live.remove() == nil, "removed already: nothing to do")
    }

    /// A WAV with clicks 24000 frames apart, played into the sink by paplay, is captured with its
    /// two clicks 24000 frames apart (± one fragment: the WAV's frames are the sink's, one for one,
    /// so only a lost or doubled fragment could move them), in both channels (the mono file is
    /// played on both), with the frame numbers handed to the handler running on without a gap;
    /// and the time the capture gives for the first click's frame is after paplay started plus
    /// the click's place in the file, and not after the handler had it (with 50 ms for PipeWire's
    /// quantum and scheduling: not a timing measurement, an order); nor a second later than
    /// paplay's start and the click's place (a sink left rendering 2 s ahead would be).
    @Test(.needsPulseAudio) func aWAVPlayedIntoTheSinkIsCapturedWithItsClicksInPlace() throws {
        let connection = try Self.connect()
        let name = Self.uniqueName("capture")
        let live = try LiveSink.create(on: connection, name: name)
        defer { _ = try? live.remove() }

        struct Seen {
            var clicks: [(frame: Int64, right: Bool, at: UInt64)] = []
            var expected: Int64 = 0
            var gaps = 0
            var calls = 0
        }
        let seen = Locked(Seen())
        let failures = Locked<[String]>([])
        let capture = MonitorCapture(sink: name, handler: { samples, first in
            let now = MonotonicClock.nanoseconds()
            seen.withLock { seen in
                seen.calls += 1
                if first != seen.expected { seen.gaps += 1 }
                let frames = samples.count / 2
                seen.expected = first + Int64(frames)
                for k in 0..<frames where abs(samples[2 * k]) > 0.3 {
                    let frame = first + Int64(k)
                    if let last = seen.clicks.last, frame - last.frame < 4800 { continue }
                    seen.clicks.append((frame, abs(samples[2 * k + 1]) > 0.3, now))
                }
            }
        }, onFailure: { why in failures.withLock { $0.append(why) } })
        try capture.start()
        defer { capture.stop() }
        #expect(capture.channels == 2 && capture.sampleRate == 48_000 && capture.source == "\(name).monitor")
        #expect(capture.fragmentFrames > 0 && capture.fragmentFrames <= 4800, "about 5 ms asked: \(capture.fragmentFrames) frames granted")

        let dir = try TemporaryDirectory("live-capture")
        let wav = dir.url.appendingPathComponent("clicks.wav")
        var samples = [Float](repeating: 0, count: 48_000)
        samples[12_000] = 0.9
        samples[36_000] = 0.9
        try WAVWriter.write(samples, sampleRate: 48_000, format: .float32, to: wav)
        let launched = MonotonicClock.nanoseconds()
        let player = SoundTools.spawn(["paplay", "--device=\(name)", wav.path])
        try #require(player > 0, "paplay did not start")
        let status = SoundTools.wait(player)
        #expect(status == 0, "paplay's wait status \(status)")
        // The file's last frames, the sink's latency and the last fragment.
        #expect(poll(seconds: 5) { seen.withLock { $0.clicks.count } >= 2 })
        usleep(200_000)
        let result = seen.withLock { $0 }
        capture.stop()

        let clicks = result.clicks
        try #require(clicks.count == 2, "clicks at \(clicks.map(\.frame))")
        let distance = clicks[1].frame - clicks[0].frame
        #expect(abs(distance - 24_000) <= Int64(capture.fragmentFrames), "clicks \(distance) frames apart, 24000 in the file")
        #expect(clicks.allSatisfy { $0.right }, "the mono file's clicks reach both channels")
        #expect(result.gaps == 0 && result.calls > 10, "\(result.gaps) gaps in \(result.calls) calls")
        #expect(capture.framesCaptured == result.expected && capture.lostFrames == 0 && capture.overruns == 0)
        let played = try #require(capture.playedTime(ofFrame: clicks[0].frame), "no timing reply fitted")
        let margin: UInt64 = 50_000_000
        let afterLaunch = Double(Int64(played) - Int64(launched)) / 1e6, beforeHandler = Double(Int64(clicks[0].at) - Int64(played)) / 1e6
        #expect(played + margin >= launched + 250_000_000 && played <= launched + 1_250_000_000,
                "the click entered the monitor \(afterLaunch) ms after paplay started")
        #expect(played <= clicks[0].at + margin, "the click entered the monitor \(beforeHandler) ms before the handler had it")
        let latency = try #require(capture.captureLatency)
        #expect(latency >= 0 && latency < 1_000_000, "capture latency \(latency) µs")
        #expect(failures.withLock { $0 }.isEmpty)
    }

    /// A handler that stalls 0.6 s once, with 0.1 s of buffer: whatever the server does (PulseAudio
    /// queues and loses nothing; pipewire-pulse skips what it could not queue), the frames handed
    /// over and those counted lost add up to the time the capture ran (± 50 ms), a loss is counted
    /// as an overrun, the frame numbers run on without a gap, and the clock still places the
    /// newest frame about now (a skip not taken out of it would place it the skip's length ago).
    @Test(.needsPulseAudio) func aCaptureThatFallsBehindCountsWhatItLostAndKeepsItsClock() throws {
        let connection = try Self.connect()
        let name = Self.uniqueName("behind")
        let live = try LiveSink.create(on: connection, name: name)
        defer { _ = try? live.remove() }
        let state = Locked<(calls: Int, expected: Int64, gaps: Int)>((0, 0, 0))
        let capture = MonitorCapture(sink: name, bufferSeconds: 0.1, handler: { samples, first in
            let calls = state.withLock { state in
                state.calls += 1
                if first != state.expected { state.gaps += 1 }
                state.expected = first + Int64(samples.count / 2)
                return state.calls
            }
            if calls == 100 { usleep(600_000) }
        })
        try capture.start()
        defer { capture.stop() }
        let started = MonotonicClock.nanoseconds()
        usleep(2_500_000)
        let (captured, lost, overruns) = (capture.framesCaptured, capture.lostFrames, capture.overruns)
        let elapsed = Double(MonotonicClock.nanoseconds() - started) / 1e9
        let newest = try #require(capture.playedTime(ofFrame: captured))
        let age = Double(Int64(MonotonicClock.nanoseconds()) - Int64(newest)) / 1e6
        capture.stop()

        #expect(state.withLock { $0.calls } > 100 && state.withLock { $0.gaps } == 0)
        #expect(abs(Double(captured + lost) - elapsed * 48_000) < 0.050 * 48_000,
                "\(captured) frames handed over and \(lost) lost in \(elapsed) s")
        #expect(lost == 0 ? overruns == 0 : overruns >= 1, "\(lost) frames lost, \(overruns) overruns")
        #expect(age > -10 && age < 50, "the newest frame entered the monitor \(age) ms ago")
    }

    /// Removing the sink ends the capture of its monitor (it is never moved to another source),
    /// reported once through onFailure, naming the monitor.
    @Test(.needsPulseAudio) func removingTheSinkEndsItsCaptureWithAReport() throws {
        let connection = try Self.connect()
        let name = Self.uniqueName("ends")
        let live = try LiveSink.create(on: connection, name: name)
        defer { _ = try? live.remove() }
        let failures = Locked<[String]>([])
        let capture = MonitorCapture(sink: name, handler: { _, _ in }, onFailure: { why in failures.withLock { $0.append(why) } })
        try capture.start()
        defer { capture.stop() }
        try live.remove()
        #expect(poll { !failures.withLock { $0 }.isEmpty })
        usleep(100_000)
        let reports = failures.withLock { $0 }
        #expect(reports.count == 1 && reports.first?.hasPrefix("the capture of \(name).monitor on ") == true, "\(reports)")
    }

    /// A second create of a sink whose owner still runs (this process) fails naming the sink, the
    /// module and the pid, and leaves the first as it was.
    @Test(.needsPulseAudio) func aSecondCreateWhileTheFirstLivesNamesItsPID() throws {
        let connection = try Self.connect()
        let name = Self.uniqueName("twice")
        let first = try LiveSink.create(on: connection, name: name)
        defer { _ = try? first.remove() }
        #expect {
            _ = try LiveSink.create(on: connection, name: name)
        } throws: { error in
            guard let error = error as? LiveSinkError, case .inUse(_, let owner, let module, _) = error else { return false }
            let text = error.description
            return owner.pid == getpid() && module == first.module && text.contains("'\(name)' (module \(first.module))")
                && text.contains("a hapsync live that still runs (pid \(getpid()))") && text.contains("stop that one first")
        }
        #expect(connection.withLock { connection.sinks() }.filter { $0.name == name }.map(\.ownerModule) == [first.module])
    }

    /// A sink left by a killed run (its marker's pid no longer runs), with a stream playing into
    /// it, is taken over: its module unloaded, the sink made anew with this process's marker, and
    /// the stream moved onto the new sink.
    @Test(.needsPulseAudio) func aLeftoverOfADeadOwnerIsTakenOverWithItsStreams() throws {
        let connection = try Self.connect()
        let name = Self.uniqueName("leftover")
        let dead = try Self.deadPID()
        let old = try Self.loadLeftover(name, pid: dead, on: connection)
        defer { Self.unload(old, for: name, on: connection) }
        let player = try Self.startPlayer(on: name, connection: connection)
        defer { Self.stop(player) }

        let live = try LiveSink.create(on: connection, name: name)
        defer { _ = try? live.remove() }
        let takenOver = try #require(live.takenOver)
        #expect(takenOver.owner.pid == dead && takenOver.module == old)
        #expect(takenOver.moved.map(\.processID) == [player] && live.reclaimed.map(\.processID) == [player])
        // pipewire-pulse may give the new module the old one's index: what is gone is the marker.
        #expect(!Self.isLoaded(old, for: name, marked: dead, on: connection), "the leftover's module is unloaded")
        let sinks = connection.withLock { connection.sinks() }.filter { $0.name == name }
        #expect(sinks.count == 1 && sinks.first?.ownerModule == live.module && sinks.first?.properties[LiveSink.ownerProperty] == String(getpid()))
        #expect(poll { Self.sinkOf(player, on: connection) == live.index }, "the stream plays into the new sink")
    }

    /// The start of a run removes a leftover on its own (`removeLeftover`): its stream moved to
    /// the server's default sink (no real sink named), its module unloaded; then there is none.
    @Test(.needsPulseAudio) func removeLeftoverMovesItsStreamsToTheDefaultSink() throws {
        let connection = try Self.connect()
        let name = Self.uniqueName("startup")
        let dead = try Self.deadPID()
        let old = try Self.loadLeftover(name, pid: dead, on: connection)
        defer { Self.unload(old, for: name, on: connection) }
        let player = try Self.startPlayer(on: name, connection: connection)
        defer { Self.stop(player) }

        let removal = try #require(try LiveSink.removeLeftover(on: connection, name: name))
        let defaultSink = try #require(connection.withLock { connection.defaultSinkName() })
        #expect(removal.module == old && removal.destination == defaultSink && removal.moved.map(\.processID) == [player])
        #expect(removal.description.hasPrefix("removed \(name) (module \(old)): moved 1 stream to \(defaultSink) ("))
        let target = try #require(connection.withLock { connection.sinks() }.first { $0.name == defaultSink })
        #expect(poll { Self.sinkOf(player, on: connection) == target.index }, "the stream plays into the default sink")
        #expect(poll { !Self.isLoaded(old, for: name, marked: dead, on: connection) })
        #expect(try LiveSink.removeLeftover(on: connection, name: name) == nil)
    }

    /// A null sink of the same name that the user made (no marker) is never unloaded: create
    /// fails naming the sink and its module, with the way out, and the sink stays.
    @Test(.needsPulseAudio) func theUsersOwnSinkOfThatNameIsLeftLoaded() throws {
        let connection = try Self.connect()
        let name = Self.uniqueName("users")
        let module = try connection.withLock { () throws(PulseConnection.PulseError) -> UInt32 in
            try connection.loadModule("module-null-sink", arguments: "sink_name=\(name) rate=48000")
        }
        defer { Self.unload(module, for: name, on: connection) }
        try #require(poll { connection.withLock { connection.sinks().contains { $0.name == name } } })
        #expect {
            _ = try LiveSink.create(on: connection, name: name)
        } throws: { error in
            guard let error = error as? LiveSinkError, case .notOurs(_, let listing, _) = error else { return false }
            let text = error.description
            return listing?.index == module && text.contains("a sink named '\(name)' on ") && text.contains("(module \(module): module-null-sink ")
                && text.contains("it is left as it is: unload it yourself ('pactl unload-module \(module)')")
        }
        #expect(connection.withLock { connection.module(module)?.name } == "module-null-sink", "the user's module stays loaded")
        #expect(connection.withLock { connection.sinks() }.filter { $0.name == name }.map(\.ownerModule) == [module])
    }

    /// remove() moves a stream playing into the live sink (pacat) to the real sink given, says so,
    /// and unloads the module; a second remove() does nothing.
    @Test(.needsPulseAudio) func removeMovesAPlayingStreamToTheRealSinkAndUnloads() throws {
        let connection = try Self.connect()
        let real = Self.uniqueName("real")
        let realModule = try connection.withLock { () throws(PulseConnection.PulseError) -> UInt32 in
            try connection.loadModule("module-null-sink", arguments: "sink_name=\(real) rate=48000")
        }
        defer { Self.unload(realModule, for: real, on: connection) }
        let name = Self.uniqueName("remove")
        let live = try LiveSink.create(on: connection, name: name, realSink: real)
        defer { _ = try? live.remove() }
        let player = try Self.startPlayer(on: name, connection: connection)
        defer { Self.stop(player) }
        let realSink = try #require(pollValue { connection.withLock { connection.sinks() }.first { $0.name == real } })

        let removal = try #require(try live.remove())
        #expect(removal.destination == real && removal.moved.map(\.processID) == [player] && removal.notMoved.isEmpty)
        #expect(removal.description.contains("moved 1 stream to \(real) ("))
        #expect(poll { Self.sinkOf(player, on: connection) == realSink.index }, "the stream plays into the real sink")
        #expect(poll { Self.isGone(name, module: live.module, on: connection) })
        #expect(try live.remove() == nil)
    }

    /// On a private PulseAudio server of its own (PulseAudio's null sink is the one that renders
    /// far ahead; the default name and description are used as they are): a live sink just made,
    /// and one suspended when idle (module-suspend-on-idle, as desktops load it), are both
    /// captured from the start, at least 0.3 s of frames within 0.5 s, where a sink left
    /// rendering 2 s ahead gave none (seen before `start` restarted such a sink); then the server
    /// is killed: the capture reports it once through onFailure, naming the monitor, and remove()
    /// says the server is gone, naming the sink and its module. Only without a session bus: two
    /// PulseAudio daemons on one bus (with-pipewire starts one) refuse each other's
    /// org.PulseAudio1, so this test's server would fail, or fail another test's.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] == nil,
                   "a private PulseAudio server on a session bus may clash with another test's (run under bash .ci/with-pulse)"))
    func aPrivateServersSinkIsCapturedFromTheStartAndItsLossReported() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let address = "unix:\(server.socket)"
        let connection = try PulseConnection(clientName: "HapSync live sink tests", server: address, threadName: "hapsync-live-test")
        defer { connection.close() }
        let live = try LiveSink.create(on: connection)
        #expect(live.name == "hapsync-live" && live.server.hasSuffix(" at \(address)"))
        let failures = Locked<[String]>([])
        func capture() -> MonitorCapture {
            MonitorCapture(sink: live.name, server: address, handler: { _, _ in }, onFailure: { why in failures.withLock { $0.append(why) } })
        }
        let fresh = capture()
        try fresh.start()
        usleep(500_000)
        fresh.stop()
        #expect(fresh.framesCaptured >= 14_400, "\(fresh.framesCaptured) frames from a sink just made")

        _ = try connection.withLock { () throws(PulseConnection.PulseError) -> UInt32 in
            try connection.loadModule("module-suspend-on-idle", arguments: "timeout=1")
        }
        let suspended = poll(seconds: 5) {
            connection.withLock { try? connection.sinkInfo(named: live.name) }?.state == PA_SINK_SUSPENDED
        }
        try #require(suspended, "module-suspend-on-idle suspended the sink")
        let woken = capture()
        try woken.start()
        defer { woken.stop() }
        usleep(500_000)
        #expect(woken.framesCaptured >= 14_400, "\(woken.framesCaptured) frames from a sink suspended when idle")

        server.kill()
        #expect(poll(seconds: 10) { !failures.withLock { $0 }.isEmpty })
        usleep(100_000)
        let reports = failures.withLock { $0 }
        #expect(reports.count == 1 && reports.first?.hasPrefix("the capture of hapsync-live.monitor on ") == true, "\(reports)")
        #expect {
            try live.remove()
        } throws: { error in
            guard let error = error as? LiveSinkError, case .serverGone = error else { return false }
            return error.description.contains("the sink 'hapsync-live' (module \(live.module)) could not be managed")
        }
        woken.stop()
        woken.stop()
    }

    // MARK: - Helpers

    /// A connection to the server the tests run with.
    static func connect() throws -> PulseConnection {
        try PulseConnection(clientName: "HapSync live sink tests", server: nil, threadName: "hapsync-live-test")
    }

    /// A sink name of this test's own: "hapsync-live-test-TAG-XXXXXX".
    static func uniqueName(_ tag: String) -> String { "hapsync-live-test-\(tag)-\(UUID().uuidString.prefix(6))" }

    /// The pid of a process that has ended (started and waited for here).
    static func deadPID() throws -> Int32 {
        let pid = SoundTools.spawn(["true"])
        try #require(pid > 0)
        SoundTools.wait(pid)
        return pid
    }

    /// Loads a null sink `name` marked as a live sink of `pid` on this host (what a killed run
    /// leaves); its module.
    static func loadLeftover(_ name: String, pid: Int32, on connection: PulseConnection) throws -> UInt32 {
        let host = LiveSink.Owner.current.host
        let module = try connection.withLock { () throws(PulseConnection.PulseError) -> UInt32 in
            try connection.loadModule("module-null-sink", arguments: "sink_name=\(name) rate=48000 format=float32le "
                + "sink_properties='device.description=\"HapSync Live\" \(LiveSink.ownerProperty)=\(pid) \(LiveSink.hostProperty)=\"\(host)\"'")
        }
        try #require(poll { connection.withLock { connection.sinks().contains { $0.name == name } } })
        return module
    }

    /// Starts pacat playing silence into `sink` and waits until its stream plays there; its pid.
    static func startPlayer(on sink: String, connection: PulseConnection) throws -> Int32 {
        let pid = SoundTools.spawn(["pacat", "--playback", "--device=\(sink)", "--raw", "--format=float32le", "--rate=48000",
                                    "--channels=2", "/dev/zero"])
        try #require(pid > 0, "pacat did not start")
        let index = connection.withLock { connection.sinks() }.first { $0.name == sink }?.index
        guard poll(seconds: 5, { index != nil && sinkOf(pid, on: connection) == index }) else {
            stop(pid)
            throw TestFailure("pacat's stream did not appear on \(sink)")
        }
        return pid
    }

    /// The index of the sink the stream of process `pid` plays into, nil if it has none.
    static func sinkOf(_ pid: Int32, on connection: PulseConnection) -> UInt32? {
        connection.withLock { connection.sinkInputs() }.first { $0.processID == pid }?.sink
    }

    /// Ends a player started here, by its pid, and waits for it.
    static func stop(_ pid: Int32) {
        kill(pid, SIGTERM)
        SoundTools.wait(pid)
    }

    /// Whether module `module` is loaded and is the null sink `name` (with `marked` as its
    /// marker's pid, if given): pipewire-pulse gives a freed module index to the next module.
    static func isLoaded(_ module: UInt32, for name: String, marked pid: Int32? = nil, on connection: PulseConnection) -> Bool {
        guard let arguments = connection.withLock({ connection.module(module)?.arguments }) else { return false }
        return arguments.hasPrefix("sink_name=\(name) ") && (pid.map { arguments.contains("\(LiveSink.ownerProperty)=\($0) ") } ?? true)
    }

    /// Whether the sink `name` and its module `module` are gone.
    static func isGone(_ name: String, module: UInt32, on connection: PulseConnection) -> Bool {
        !connection.withLock { connection.sinks() }.contains { $0.name == name } && !isLoaded(module, for: name, on: connection)
    }

    /// Unloads `module` if it is still the null sink `name` (a test's cleanup, after a failure midway).
    static func unload(_ module: UInt32, for name: String, on connection: PulseConnection) {
        guard isLoaded(module, for: name, on: connection) else { return }
        _ = connection.withLock { connection.unloadModule(module) }
    }

    /// A helper's failure, with what went wrong.
    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
