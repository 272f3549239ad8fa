import Foundation
import Glibc
import HapSyncHapticOutput
import HapSyncLiveTesting
import HapSyncTestSupport
import Testing

/// `hapsync serve` driven by clients nobody here wrote: python-osc (PyPI) and liblo's `oscsend`.
/// What is checked is what the service answered and what its trace holds; times are compared as
/// the engine scheduled them (its logic), never as measured durations.
@Suite("hapsync serve over OSC", .serialized)
struct ServeTests {
    /// The python-osc client: every reply, the tags it sent (on CLOCK_MONOTONIC) as JSON.
    static let client = #"""
        import json, socket, sys, time
        from pythonosc.osc_message_builder import OscMessageBuilder
        from pythonosc.osc_bundle_builder import OscBundleBuilder
        from pythonosc.osc_message import OscMessage
        port, pattern = int(sys.argv[1]), sys.argv[2]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.settimeout(10)
        def msg(address, *args):
            b = OscMessageBuilder(address=address)
            for a in args:
                b.add_arg(a)
            return b.build()
        def bundle(at, *messages):
            b = OscBundleBuilder(at)
            for m in messages:
                b.add_content(m)
            return b.build()
        def ask(packet):
            s.sendto(packet if isinstance(packet, bytes) else packet.dgram, ("127.0.0.1", port))
            m = OscMessage(s.recvfrom(65536)[0])
            return [m.address] + list(m.params)
        r = {}
        r["help"] = ask(msg("/hapsync/help"))
        r["load"] = ask(msg("/hapsync/load", "p", pattern))
        r["now"] = ask(msg("/hapsync/play", "p", 1))
        offset = time.time() - time.monotonic()
        tags = [time.time() + 0.4, time.time() + 0.7]
        r["tag1"] = ask(bundle(tags[0], msg("/hapsync/play", "p", 7)))
        r["tag2"] = ask(bundle(tags[1], msg("/hapsync/play", "p", 8)))
        r["past"] = ask(bundle(time.time() - 5, msg("/hapsync/play", "p", 9)))
        r["dotdot"] = ask(msg("/hapsync/load", "x", "../Package.ahap"))
        r["notahap"] = ask(msg("/hapsync/load", "x", "README.md"))
        r["absolute"] = ask(msg("/hapsync/load", "x", "/etc/passwd.ahap"))
        r["unknown"] = ask(msg("/hapsync/nope"))
        r["type"] = ask(msg("/hapsync/play", 3))
        r["count"] = ask(msg("/hapsync/stop"))
        r["noplayer"] = ask(msg("/hapsync/stop", 12345))
        r["range"] = ask(msg("/hapsync/rate", 1, 250.0))
        r["garbage"] = ask(b"\x00\x01garbage")
        r["oversized"] = ask(msg("/hapsync/load", "x", "y" * 40000))
        time.sleep(1.2)
        r["status"] = ask(msg("/hapsync/status"))
        print(json.dumps({"replies": r, "tags": [t - offset for t in tags]}))
        """#

    private func scratch() throws -> TemporaryDirectory {
        try TemporaryDirectory("serve")
    }

    private static let assets = TestFiles.assets

    /// Runs a program to its end (at most 60 s) and returns its status and output.
    private func run(_ program: String, _ args: [String], in dir: URL) throws -> (status: Int32, out: String, err: String) {
        let p = try BackgroundRun(args, in: dir.appendingPathComponent(UUID().uuidString, isDirectory: true).creatingDirectory(),
                                  executable: URL(fileURLWithPath: program))
        let r = p.finish(atMost: 60)
        return (r.status, r.out, r.err)
    }

    /// Starts `hapsync serve` on a free loopback port; returns it and the port.
    private func serve(_ extra: [String], in dir: URL) throws -> (BackgroundRun, UInt16) {
        let s = try BackgroundRun(["serve", "--osc", "udp:127.0.0.1:0", "--resources", Self.assets.path] + extra, in: dir)
        guard let port = s.servicePort(atMost: 60) else {
            let err = (try? String(contentsOf: s.err, encoding: .utf8)) ?? ""
            kill(s.process.processIdentifier, SIGKILL)
            throw ServeTestError(description: "serve did not start: \(err)")
        }
        return (s, port)
    }

    struct ServeTestError: Error, CustomStringConvertible { let description: String }

    private static func which(_ program: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(dir)/\(program)"
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }

    /// Transient records of a JSON Lines trace: scheduled time (ns).
    private static func taps(_ trace: URL) -> [Int64] {
        ((try? TraceRecord.read(contentsOf: trace.path))?.commands ?? []).filter { $0.kind == .transient }.map { Int64($0.scheduledNs) }
    }

    @Test func pythonOSCAndOscsendPlayAtTheirTimeTagsAndBadInputGetsErrors() throws {
        let python = try #require(Self.which("python3"), "python3 with python-osc (.ci/install-deps --tests)")
        let oscsend = try #require(Self.which("oscsend"), "oscsend from liblo-tools (.ci/install-deps --tests)")
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let trace = dir.appendingPathComponent("t.jsonl")
        let (service, port) = try serve(["--haptics", "trace:\(trace.path)", "--audio", "none"], in: dir)
        defer { if service.process.isRunning { kill(service.process.processIdentifier, SIGKILL) } }
        let script = dir.appendingPathComponent("client.py")
        try Self.client.write(to: script, atomically: true, encoding: .utf8)

        // A pattern of three taps, the first at 0 s.
        let c = try run(python, [script.path, "\(port)", "taps.ahap"], in: dir)
        try #require(c.status == 0, "python-osc client: \(c.err)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(c.out.utf8)) as? [String: Any])
        let r = try #require(result["replies"] as? [String: [Any]])
        func reply(_ key: String) -> [String] { (r[key] ?? []).map { "\($0)" } }
        #expect(reply("help").first == "/hapsync/help" && reply("help").count == 23, "\(reply("help"))")
        #expect(reply("load") == ["/hapsync/ok", "/hapsync/load", "p"])
        #expect(reply("now") == ["/hapsync/ok", "/hapsync/play", "1"])
        #expect(reply("tag1") == ["/hapsync/ok", "/hapsync/play", "7"] && reply("tag2") == ["/hapsync/ok", "/hapsync/play", "8"])
        #expect(reply("past") == ["/hapsync/ok", "/hapsync/play", "9"], "a past tag plays now")
        let errors: [(String, String)] = [("dotdot", "'..'"), ("notahap", "must name an .ahap file"), ("absolute", "is absolute"), ("unknown", "unknown address"),
                                          ("type", "argument 1 (name) must be a string, got i:3"), ("count", "takes i:player, got 0 arguments"),
                                          ("noplayer", "no player 12345"), ("range", "argument 2 (rate) 250.0 is outside 0.01...100.0"),
                                          ("garbage", "not valid OSC"), ("oversized", "larger than 32768")]
        for (key, text) in errors {
            #expect(reply(key).first == "/hapsync/error" && reply(key).last?.contains(text) == true, "\(key): \(reply(key))")
        }
        let status = reply("status")
        func count(_ name: String) -> Int? { status.firstIndex(of: name).flatMap { Int(status[$0 + 1]) } }
        #expect(count("late") == 1 && count("malformed") == 1 && count("oversized") == 1 && count("errors") == 8, "\(status)")

        // oscsend: a play with no reply read, and a bad one that must not end the service.
        #expect(try run(oscsend, ["127.0.0.1", "\(port)", "/hapsync/play", "s", "p"], in: dir).status == 0)
        #expect(try run(oscsend, ["127.0.0.1", "\(port)", "/hapsync/seek", "s", "x"], in: dir).status == 0)
        usleep(800_000)
        #expect(service.process.isRunning, "bad input never ends the service")
        kill(service.process.processIdentifier, SIGTERM)
        let end = service.finish()
        #expect(end.status == 0, "\(end.err)")
        #expect(end.out.contains("hapsync serve: stopped;"), "\(end.out)")

        // Each time-tagged play's first tap was scheduled at its tag (the wall clock mapped onto
        // CLOCK_MONOTONIC at receipt, within its measured uncertainty and a millisecond).
        let taps = Self.taps(trace)
        let tags = try #require(result["tags"] as? [Double]).map { Int64($0 * 1e9) }
        for tag in tags {
            let nearest = taps.map { abs($0 - tag) }.min() ?? .max
            #expect(nearest < 1_000_000, "a tap within 1 ms of the tag \(tag): nearest \(nearest) ns")
        }
        // Plays 1, 7, 8, 9 and oscsend's: five runs of three taps.
        #expect(taps.count == 15, "\(taps.count) taps")
        #expect(trace.lastRecord?.contains("stop-all") == true, "the trace is whole after SIGTERM")
    }

    /// python-osc's True and False (the T and F tags, which carry no data), a bundle tagged five
    /// years ahead (refused), the player list and stop-all, and a trace that cannot be written
    /// (/dev/full) showing in the status while the service runs.
    @Test func pythonOSCBooleansFarTagsPlayersAndOutputFailures() throws {
        let python = try #require(Self.which("python3"), "python3 with python-osc (.ci/install-deps --tests)")
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let (service, port) = try serve(["--haptics", "trace:/dev/full", "--audio", "none"], in: dir)
        defer { if service.process.isRunning { kill(service.process.processIdentifier, SIGKILL) } }
        let script = dir.appendingPathComponent("hardening.py")
        try #"""
            import json, socket, sys, time
            from pythonosc.osc_message_builder import OscMessageBuilder
            from pythonosc.osc_bundle_builder import OscBundleBuilder
            from pythonosc.osc_message import OscMessage
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(10)
            def msg(address, *args):
                b = OscMessageBuilder(address=address)
                for a in args: b.add_arg(a)
                return b.build()
            def ask(m, at=None):
                if at is not None:
                    b = OscBundleBuilder(at); b.add_content(m); m = b.build()
                s.sendto(m.dgram, ("127.0.0.1", int(sys.argv[1])))
                r = OscMessage(s.recvfrom(65536)[0]); return [r.address] + list(r.params)
            r = {}
            r["muteT"] = ask(msg("/hapsync/mute", "haptics", True))
            r["muteF"] = ask(msg("/hapsync/mute", "haptics", False))
            r["load"] = ask(msg("/hapsync/load", "b", "heartbeat.ahap"))
            r["play"] = ask(msg("/hapsync/play", "b", 3))
            r["loopT"] = ask(msg("/hapsync/loop", 3, True, 0.5))
            r["far"] = ask(msg("/hapsync/play", "b"), at=time.time() + 5 * 365 * 86400)
            r["later"] = ask(msg("/hapsync/play", "b", 5), at=time.time() + 30)
            r["players"] = ask(msg("/hapsync/players"))
            time.sleep(0.5)
            r["status"] = ask(msg("/hapsync/status"))
            r["stopall"] = ask(msg("/hapsync/stop-all"))
            print(json.dumps(r))
            """#.write(to: script, atomically: true, encoding: .utf8)
        let c = try run(python, [script.path, "\(port)"], in: dir)
        try #require(c.status == 0, "python-osc client: \(c.err)")
        let r = try #require(try JSONSerialization.jsonObject(with: Data(c.out.utf8)) as? [String: [Any]])
        func reply(_ key: String) -> [String] { (r[key] ?? []).map { "\($0)" } }
        #expect(reply("muteT") == ["/hapsync/ok", "/hapsync/mute", "haptics", "1"], "\(reply("muteT"))")
        #expect(reply("muteF") == ["/hapsync/ok", "/hapsync/mute", "haptics", "0"], "\(reply("muteF"))")
        #expect(reply("loopT") == ["/hapsync/ok", "/hapsync/loop", "3"], "\(reply("loopT"))")
        #expect(reply("far").first == "/hapsync/error" && reply("far").last?.contains("at most 300 s ahead") == true, "\(reply("far"))")
        #expect(reply("later") == ["/hapsync/ok", "/hapsync/play", "5"])
        let players = reply("players")
        #expect(players.first == "/hapsync/players" && players.count == 10 && players[1] == "2", "\(players)")
        #expect(players.contains("scheduled") && players.contains("playing"), "\(players)")
        let status = reply("status")
        let failure = status.firstIndex(of: "output-failure").map { status[$0 + 1] } ?? ""
        #expect(failure.contains("/dev/full"), "the failed trace shows while serving: \(status)")
        #expect(reply("stopall") == ["/hapsync/ok", "/hapsync/stop-all", "2"], "\(reply("stopall"))")
        kill(service.process.processIdentifier, SIGTERM)
        let end = service.finish()
        #expect(end.status == 1 && end.err.contains("/dev/full"), "the trace's failure is the exit status: \(end.err)")
    }

    /// With PulseAudio's protocol (CI runs the tests under .ci/with-pulse, and this suite under
    /// .ci/with-pipewire) and with PipeWire natively (under .ci/with-pipewire): a time-tagged play
    /// of a pattern with audio starts on the audio clock at its tag; its taps are scheduled there.
    @Test(.needsPulseAudio) func aTimeTaggedPlayWithAudioStartsAtItsTagOnPulseAudio() throws {
        try timeTaggedPlayWithAudio(audio: "pulse")
    }

    @Test(.needsPipeWire) func aTimeTaggedPlayWithAudioStartsAtItsTagOnPipeWire() throws {
        try timeTaggedPlayWithAudio(audio: "pipewire")
    }

    private func timeTaggedPlayWithAudio(audio: String) throws {
        let pactl = try #require(Self.which("pactl"), "pactl from pulseaudio-utils (.ci/install-deps --tests)")
        let python = try #require(Self.which("python3"))
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let trace = dir.appendingPathComponent("t.jsonl")
        let (service, port) = try serve(["--haptics", "trace:\(trace.path)", "--audio", audio], in: dir)
        defer { if service.process.isRunning { kill(service.process.processIdentifier, SIGKILL) } }
        let script = dir.appendingPathComponent("tagged.py")
        try #"""
            import json, socket, sys, time
            from pythonosc.osc_message_builder import OscMessageBuilder
            from pythonosc.osc_bundle_builder import OscBundleBuilder
            from pythonosc.osc_message import OscMessage
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(10)
            def send(packet):
                s.sendto(packet.dgram, ("127.0.0.1", int(sys.argv[1])))
                m = OscMessage(s.recvfrom(65536)[0]); return [m.address] + list(m.params)
            m = OscMessageBuilder(address="/hapsync/load"); m.add_arg("beat"); m.add_arg("heartbeat.ahap")
            load = send(m.build())
            offset = time.time() - time.monotonic()
            tag = time.time() + 0.5
            b = OscBundleBuilder(tag); m = OscMessageBuilder(address="/hapsync/play"); m.add_arg("beat"); b.add_content(m.build())
            play = send(b.build())
            time.sleep(2)
            print(json.dumps({"load": load, "play": play, "tag": tag - offset}))
            """#.write(to: script, atomically: true, encoding: .utf8)
        let c = try run(python, [script.path, "\(port)"], in: dir)
        try #require(c.status == 0, "\(c.err)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(c.out.utf8)) as? [String: Any])
        #expect("\(result["play"] ?? "")".contains("/hapsync/ok"), "\(result)")
        kill(service.process.processIdentifier, SIGTERM)
        let end = service.finish()
        #expect(end.status == 0, "\(end.err)")
        #expect(end.out.contains("audio \(audio)"), "\(end.out)")
        // heartbeat.ahap's taps at 0 and 0.9 s, from the tag, on the audio clock (its fit to
        // CLOCK_MONOTONIC and a frame's rounding: within 2 ms), judged so on PulseAudio. After an
        // underrun the audio plays later by the gap and the haptics follow it (the design), and
        // pipewire-pulse's timing at a stream's start (latency reported as 0, a read index a
        // period ahead) has put both taps 4-80 ms after the tag on this VM while the pipe-sink
        // sync tests agreed within 1 ms: there the taps are only never early, and print where
        // they landed. PipeWire natively gives each cycle's timing: there they are held to 1 ms.
        let tag = Int64(try #require(result["tag"] as? Double) * 1e9)
        let taps = Self.taps(trace)
        let underruns = Self.underruns(end.out)
        let onPipeWire = audio == "pulse" && ((try? run(pactl, ["info"], in: dir))?.out ?? "").contains("PipeWire")
        let bound: Int64 = audio == "pipewire" ? 1_000_000 : 2_000_000
        #expect(taps.count == 2, "\(taps)")
        if taps.count == 2 {
            if underruns == 0 && !onPipeWire {
                #expect(abs(taps[0] - tag) < bound && abs(taps[1] - (tag + 900_000_000)) < bound, "taps \(taps), tag \(tag)")
                print("serve (\(audio)): taps \(Double(taps[0] - tag) / 1e6) and \(Double(taps[1] - tag - 900_000_000) / 1e6) ms after their times")
            } else {
                #expect(taps[0] - tag > -2_000_000 && taps[1] - taps[0] > 898_000_000, "never early: taps \(taps), tag \(tag)")
                print("serve (\(onPipeWire ? "PipeWire" : "PulseAudio"), \(underruns ?? -1) underruns): taps \(Double(taps[0] - tag) / 1e6) and "
                      + "\(Double(taps[1] - tag - 900_000_000) / 1e6) ms after their times")
            }
        }
        #expect(underruns != nil, "the stop line counts audio underruns: \(end.out)")
    }

    @Test func itListensOnLoopbackOnlyUnlessToldAndUnixSocketsAreOwnerOnly() throws {
        let dirFolder = try scratch()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let remote = try BinaryTests.run(["serve", "--osc", "udp:0.0.0.0:0", "--audio", "none"])
        #expect(remote.status == 64 && remote.err.contains("--allow-remote"), "\(remote.err)")
        let socket = dir.appendingPathComponent("s.sock").path
        let s = try BackgroundRun(["serve", "--osc", "unix:\(socket)", "--audio", "none"], in: dir)
        _ = s.wait(atMost: 60) { FileManager.default.fileExists(atPath: socket) }
        var st = stat()
        #expect(stat(socket, &st) == 0 && st.st_mode & 0o777 == 0o600, "mode \(String(st.st_mode & 0o777, radix: 8))")
        kill(s.process.processIdentifier, SIGTERM)
        #expect(s.finish().status == 0)
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket is removed at the end")
        // A socket left by a killed service is taken over; one a service listens on is not.
        let stale = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in socket.utf8.enumerated() { raw[i] = b } }
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        let busy = try BinaryTests.run(["serve", "--osc", "unix:\(socket)", "--audio", "none"])
        #expect(busy.status == 1 && busy.err.contains("a service listens on it"), "\(busy.err)")
        close(stale)
        let again = try BackgroundRun(["serve", "--osc", "unix:\(socket)", "--audio", "none"], in: try dir.appendingPathComponent("again").creatingDirectory())
        #expect(again.wait(atMost: 60) { ((try? String(contentsOf: again.out, encoding: .utf8)) ?? "").contains("listening on unix:") }, "a stale socket is taken over")
        kill(again.process.processIdentifier, SIGTERM)
        #expect(again.finish().status == 0)
        // An existing file is never replaced.
        _ = FileManager.default.createFile(atPath: socket, contents: Data("keep".utf8))
        let taken = try BinaryTests.run(["serve", "--osc", "unix:\(socket)", "--audio", "none"])
        #expect(taken.status == 1 && taken.err.contains("already exists and is not a socket"), "\(taken.err)")
        #expect((try? String(contentsOfFile: socket, encoding: .utf8)) == "keep")
    }

    /// The audio underruns `serve`'s stop line reports (nil when it reports none).
    static func underruns(_ out: String) -> Int? {
        guard let range = out.range(of: #"; (\d+) audio underruns"#, options: .regularExpression) else { return nil }
        return Int(out[range].dropFirst(2).split(separator: " ")[0])
    }
}

extension URL {
    fileprivate func creatingDirectory() throws -> URL {
        try FileManager.default.createDirectory(at: self, withIntermediateDirectories: true)
        return self
    }

    /// The last line of a text file.
    var lastRecord: String? {
        ((try? String(contentsOf: self, encoding: .utf8)) ?? "").split(separator: "\n").last.map(String.init)
    }

}
