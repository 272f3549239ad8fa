import CLo
import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncMeasurement
import HapSyncOSC
import HapSyncRuntime
import Synchronization

/// serve: the OSC service in this process on loopback UDP, fed by a client socket here, its OSC
/// encoded by liblo. Latency from the datagram sent to the haptic applied, immediate and
/// time-tagged, each beside the same start made in process on the same engine in the same run;
/// throughput with nothing lost; 100,000 random and mutated packets, then a status request that
/// must be answered.
func serveBenchmark(count: Int, packets: Int) throws -> (distributions: [Distribution], rows: [Row]) {
    let backend = LastAppliedBackend()
    let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: true))
    try engine.start()
    defer { engine.stop() }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-bench-serve-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    try #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#
        .write(to: dir.appendingPathComponent("tap.ahap"), atomically: true, encoding: .utf8)
    var configuration = OSCService.Configuration(endpoints: [.udp(host: "127.0.0.1", port: 0)], resourceRoots: [dir])
    configuration.maxMessagesPerSecond = 10_000_000
    let service = try OSCService(engine: engine, configuration: configuration)
    try service.commands.preload(name: "tap", file: dir.appendingPathComponent("tap.ahap"))
    let serving = Thread { service.run() }
    serving.start()
    defer { service.stop() }
    let client = BenchClient(port: service.boundPorts[0])
    let play = client.message("/hapsync/play", ["tap", Int32(1)])
    let player = try engine.makePlayer(with: try AHAPPatternBuilder().transient(at: 0).build())

    func waitApplied(after t: UInt64) -> UInt64 {
        let giveUp = MonotonicClock.nanoseconds() + 2_000_000_000
        while backend.last.load(ordering: .acquiring) < t {
            if MonotonicClock.nanoseconds() > giveUp {
                FileHandle.standardError.write(Data("error: serve: no output within 2 s\n".utf8))
                exit(1)
            }
        }
        return backend.last.load(ordering: .acquiring)
    }

    var oscNow: [Double] = [], localNow: [Double] = [], oscTagged: [Double] = [], localTagged: [Double] = []
    // Interleaved, 10 warm-up rounds not counted.
    for i in 0..<(count + 10) {
        Thread.sleep(forTimeInterval: 0.02)
        client.drainReplies()
        let sentAt = MonotonicClock.nanoseconds()
        client.send(play)
        let a = waitApplied(after: sentAt)
        Thread.sleep(forTimeInterval: 0.02)
        let t0 = MonotonicClock.nanoseconds()
        try player.start(atTime: HapticEngine.timeImmediate)
        let b = waitApplied(after: t0)
        // Tagged 20 ms ahead: lateness of the output after the tag (the wall clock mapped).
        Thread.sleep(forTimeInterval: 0.02)
        let wallOffset = OSCTime.wallOffset().offset
        let tagMono = OSCTime.monotonic() + 0.02
        client.send(client.bundle(at: tagMono + wallOffset, "/hapsync/play", ["tap", Int32(1)]))
        let c = waitApplied(after: UInt64(tagMono * 1e9) - 1_000_000)
        Thread.sleep(forTimeInterval: 0.02)
        let localTag = OSCTime.monotonic() + 0.02
        try player.start(atTime: localTag)
        let d = waitApplied(after: UInt64(localTag * 1e9) - 1_000_000)
        if i >= 10 {
            oscNow.append(Double(Int64(a) - Int64(sentAt)) / 1000)
            localNow.append(Double(Int64(b) - Int64(t0)) / 1000)
            oscTagged.append(Double(Int64(c) - Int64(tagMono * 1e9)) / 1000)
            localTagged.append(Double(Int64(d) - Int64(localTag * 1e9)) / 1000)
        }
    }
    print("serve: 10 warm-up + \(count) rounds, each: an OSC /hapsync/play datagram and start(atTime: immediate) in process, then a bundle tagged 20 ms ahead and start(atTime: now + 20 ms), on one running engine (\(engine.realtimeStatus))")

    // Throughput: 20,000 messages a second, 20 every millisecond, for 2 s (every one must be
    // handled), then as fast as the client can send, in bursts, to find the service's ceiling.
    let mute = client.message("/hapsync/mute", ["haptics", Int32(0)])
    func pump(_ n: Int, perMillisecond: Int?) -> (handled: Int, seconds: Double) {
        let before = service.statistics.messages
        let start = MonotonicClock.nanoseconds()
        var sent = 0
        while sent < n {
            let slice = min(perMillisecond ?? 200, n - sent)
            for _ in 0..<slice { client.send(mute) }
            sent += slice
            client.drainReplies()
            if let per = perMillisecond {
                let due = start + UInt64(sent / per) * 1_000_000
                while MonotonicClock.nanoseconds() < due { usleep(100) }
            } else {
                // Unpaced: wait only while the service is more than a burst behind.
                while sent - (service.statistics.messages - before) > 2_000 { client.drainReplies(); usleep(100) }
            }
        }
        let giveUp = MonotonicClock.nanoseconds() + 2_000_000_000
        var last = MonotonicClock.nanoseconds()
        while service.statistics.messages - before < n, MonotonicClock.nanoseconds() < giveUp {
            client.drainReplies()
            usleep(200)
            if service.statistics.messages - before >= n { last = MonotonicClock.nanoseconds() }
        }
        if service.statistics.messages - before >= n { last = MonotonicClock.nanoseconds() }
        return (service.statistics.messages - before, Double(last - start) / 1e9)
    }
    let paced = pump(40_000, perMillisecond: 20)
    let ceiling = pump(40_000, perMillisecond: nil)
    print("serve throughput: 40,000 /hapsync/mute messages at 20,000/s, \(paced.handled) handled (\(40_000 - paced.handled) lost); then 40,000 as fast as the service takes them: \(ceiling.handled) handled in \(String(format: "%.2f", ceiling.seconds)) s")
    let n = 40_000, handled = paced.handled, rate = Double(paced.handled) / paced.seconds
    let top = Double(ceiling.handled) / ceiling.seconds

    // Robustness: random and mutated packets, then a status request that must be answered.
    var generator = SystemRandomNumberGenerator()
    let seeds = [play, mute, client.message("/hapsync/load", ["x", "tap.ahap"]), client.bundle(at: 0, "/hapsync/play", ["tap", Int32(2)]),
                 client.message("/hapsync/curve", [Int32(1), "HapticIntensityControl", Float(0), Float(1), Float(0.1), Float(0.5)])]
    let malformedBefore = service.statistics.malformed
    for k in 0..<packets {
        var bytes = seeds[k % seeds.count]
        switch k % 4 {
        case 0: for _ in 0..<(1 + Int.random(in: 0..<4, using: &generator)) { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
        case 1: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
        case 2: bytes = (0..<Int.random(in: 1..<512, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        default: bytes += (0..<Int.random(in: 1..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        client.send(bytes)
        if k % 200 == 199 { client.drainReplies(); usleep(500) }
    }
    usleep(200_000)
    client.drainReplies()
    let answered = client.ask(client.message("/hapsync/status", []))
    let s = service.statistics
    print("serve robustness: \(packets) random and mutated packets; \(s.malformed - malformedBefore) malformed, \(s.errors) error replies in all; the service then answered /hapsync/status: \(answered ? "yes" : "NO")")
    if !answered { exit(1) }
    return ([Distribution(benchmark: "serve", subject: "OSC /hapsync/play datagram → haptic applied", values: oscNow),
             Distribution(benchmark: "serve", subject: "baseline: start(atTime: immediate) in process → applied", values: localNow),
             Distribution(benchmark: "serve", subject: "OSC bundle tagged 20 ms ahead: applied − tag", values: oscTagged),
             Distribution(benchmark: "serve", subject: "baseline: start(atTime: now + 20 ms) in process: applied − time", values: localTagged)],
            [Row(benchmark: "serve", subject: "OSC messages sent at 20,000/s: handled per second (\(n - handled) of \(n) lost)", unit: "msg/s",
                 median: rate, min: rate, max: rate, ratioToBaseline: nil),
             Row(benchmark: "serve", subject: "OSC messages as fast as the service takes them (\(n - ceiling.handled) of \(n) lost)", unit: "msg/s",
                 median: top, min: top, max: top, ratioToBaseline: nil),
             Row(benchmark: "serve", subject: "random and mutated packets survived, then answered status", unit: "packets",
                 median: Double(packets), min: Double(packets), max: Double(packets), ratioToBaseline: nil)])
}

/// The benchmark's OSC client: a loopback UDP socket; messages and bundles encoded by liblo.
final class BenchClient {
    let fd: Int32
    var server = sockaddr_in()

    init(port: UInt16) {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        server.sin_family = sa_family_t(AF_INET)
        server.sin_port = port.bigEndian
        server.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    private func build(_ args: [Any]) -> lo_message {
        let m = lo_message_new()!
        for a in args {
            switch a {
            case let s as String: lo_message_add_string(m, s)
            case let i as Int32: lo_message_add_int32(m, i)
            case let f as Float: lo_message_add_float(m, f)
            default: break
            }
        }
        return m
    }

    /// An OSC message's bytes.
    func message(_ address: String, _ args: [Any]) -> [UInt8] {
        let m = build(args)
        defer { lo_message_free(m) }
        var size = 0
        let p = lo_message_serialise(m, address, nil, &size)!
        defer { free(p) }
        return Array(UnsafeRawBufferPointer(start: p, count: size))
    }

    /// A bundle's bytes: one message, time tag at Unix time `at` (0: immediately).
    func bundle(at: Double, _ address: String, _ args: [Any]) -> [UInt8] {
        var tag = lo_timetag(sec: 0, frac: 1)
        if at > 0 {
            let ntp = at + OSCTime.ntpToUnix
            tag = lo_timetag(sec: UInt32(ntp), frac: UInt32((ntp - ntp.rounded(.down)) * 4_294_967_296))
        }
        let b = lo_bundle_new(tag)!
        let m = build(args)
        lo_bundle_add_message(b, address, m)
        defer { lo_bundle_free_recursive(b) }
        var size = 0
        let p = lo_bundle_serialise(b, nil, &size)!
        defer { free(p) }
        return Array(UnsafeRawBufferPointer(start: p, count: size))
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &server) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }

    /// Reads and drops every reply waiting.
    func drainReplies() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    /// Sends `bytes` and waits up to 2 s for a reply.
    func ask(_ bytes: [UInt8]) -> Bool {
        send(bytes)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 2000) > 0
    }
}

/// serve (audio): the OSC service in this process with audio, to a pipe sink read by a SCHED_FIFO
/// reader: `count` bundles playing Assets/clicks.ahap (8 clicks, each with a tap), each tagged
/// 150 ms ahead, `spacing` s apart. Per tap, against its place by the tag (tag + its pattern
/// time): when the haptic went out, and when its click was read from the pipe. Through PulseAudio's
/// protocol and, when a PipeWire server answers, natively; each also with the plays 5 s apart, so
/// that each finds the stream paused for want of sound. µs.
func serveAudioBenchmark(count: Int, assets: URL) throws -> [Distribution] {
    var result: [Distribution] = []
    for run in PipeSinkRun.all() {
        let (server, spacing) = (run.server, run.spacing)
        let reader = PipeSinkReader(seconds: Double(count) * spacing + 10)
        try reader.start()
        defer { reader.stop() }
        let rig = try AudioRig(sink: reader.sinkName, server: server)
        defer { rig.stop() }
        var configuration = OSCService.Configuration(endpoints: [.udp(host: "127.0.0.1", port: 0)], resourceRoots: [assets])
        configuration.maxMessagesPerSecond = 10_000
        let service = try OSCService(engine: rig.engine, configuration: configuration)
        try service.commands.preload(name: "clicks", file: assets.appendingPathComponent("clicks.ahap"))
        let serving = Thread { service.run() }
        serving.start()
        defer { service.stop() }
        let client = BenchClient(port: service.boundPorts[0])
        Thread.sleep(forTimeInterval: run.settle)
        var tags: [UInt64] = []
        var paused = 0
        for _ in 0..<count {
            if rig.audio.isPaused { paused += 1 }
            let wallOffset = OSCTime.wallOffset().offset
            let tag = OSCTime.monotonic() + 0.15
            client.send(client.bundle(at: tag + wallOffset, "/hapsync/play", ["clicks", Int32(1)]))
            tags.append(UInt64(tag * 1e9))
            Thread.sleep(forTimeInterval: spacing)
            client.drainReplies()
        }
        let times = (1...8).map { 0.25 * Double($0) }   // the clicks and taps of clicks.ahap
        let expected = tags.flatMap { tag in times.map { tag + UInt64($0 * 1e9) } }
        let released = rig.engine.statistics.commands.filter { $0.patternTime >= 0 }.map { $0.applied }
        let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
        func offsets(_ xs: [UInt64]) -> [Double] {
            expected.compactMap { e in
                guard let x = xs.min(by: { abs(Int64(bitPattern: $0 &- e)) < abs(Int64(bitPattern: $1 &- e)) }) else { return nil }
                let d = Double(Int64(bitPattern: x &- e)) / 1000
                return abs(d) < 100_000 ? d : nil
            }
        }
        var label = server == .pipewire ? "native PipeWire" : rig.audio.serverDescription
        if run.findsStreamPaused { label += ", plays finding the stream paused" }
        print("serve (audio): \(label): \(count) bundles tagged 150 ms ahead, \(spacing) s apart; \(released.count) taps, \(onsets.count) clicks read from the pipe; \(rig.audio.underruns) underruns"
              + (run.findsStreamPaused ? "; the stream was paused at \(paused) of the sends" : ""))
        result.append(Distribution(benchmark: "serve", subject: "\(label): OSC bundle with audio, haptic applied − its time by the tag", values: offsets(released)))
        result.append(Distribution(benchmark: "serve", subject: "\(label): OSC bundle with audio, click read from the pipe − its time by the tag", values: offsets(onsets)))
    }
    return result
}
