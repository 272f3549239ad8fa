import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncHapticOutput
import HapSyncOSC
import HapSyncRuntime

/// `hapsync serve`: one engine, started once, driven over OSC until SIGINT or SIGTERM.
enum ServeCommand {
    static let osc = Option<[OSCEndpoint]>(repeatable: "osc", "ENDPOINT", ValueParser(
        expectation: OSCEndpoint.expectation, convert: { OSCEndpoint(parsing: $0) }, show: { "\($0)" }), help: """
            where to listen (repeatable; default udp:127.0.0.1:9000):
              udp:HOST:PORT  an IPv4 address (loopback unless --allow-remote)
              udp:PORT       127.0.0.1:PORT
              unix:PATH      a Unix datagram socket, mode 0600
            """)
    static let allowRemote = Option(flag: "allow-remote", help: "allow an address other than loopback (anyone who can reach it can play)")
    static let preload = Option<[String]>(repeatable: "preload", "DIR|FILE", .text,
                                          help: "load FILE (named after it, without .ahap) or every .ahap in DIR at start (DIR also becomes a resource folder)")
    static let maxRate = Option<Int>("max-rate", "N", .integer("messages per second", 1...1_000_000), default: Int(OSCService.Configuration.defaultMaxMessagesPerSecond),
                                     help: "messages handled per second; beyond, dropped and counted")
    static let patternMemory = Option<Int>("pattern-memory", "MIB", .integer("MiB", 1...1 << 20),
                                           default: OSCService.Configuration.defaultMaxPatternMemory >> 20,
                                           help: "memory the loaded patterns may hold together (timelines and decoded audio; identical files once); default 1024, or a quarter of this machine's memory where less")
    static let maxAhead = Option<Double>("max-ahead", "S", .decimal("seconds", .from(0.001, to: AHAPLimits.default.maxTime)), default: OSCService.Configuration.defaultMaxScheduleAhead,
                                         help: "how far ahead a bundle's time tag may schedule; a later tag is an error reply")

    static let command = Command(
        name: "serve", summary: "run the engine as a service driven over OSC (UDP or a Unix socket), with time tags",
        about: """
            Starts one engine and keeps it running, driven by Open Sound Control messages
            (liblo): load patterns from the resource folders, play them at a bundle's time
            tag, stop, pause, seek, loop, send parameters, mute. Each message is answered to
            its sender with /hapsync/ok or /hapsync/error; /hapsync/help lists the addresses.
            With audio, /hapsync/live turns haptics from any sound on and off (a 'HapSync
            Live' sink, as 'hapsync live' makes). Listens on loopback (or a 0600 Unix
            socket) unless --allow-remote. Ends cleanly on SIGINT or SIGTERM (motors off,
            live sink removed, trace written).
            """,
        groups: [OptionGroup([osc, allowRemote, preload, maxRate, maxAhead, patternMemory]),
                 OptionGroup("OUTPUTS (as for 'hapsync play')", [PlaybackOptions.haptics, PlaybackOptions.audio, PlaybackOptions.sink,
                                                                  PlaybackOptions.latency, PlaybackOptions.hapticLatency,
                                                                  PlaybackOptions.rumbleInterval, PlaybackOptions.rumbleBurst,
                                                                  PlaybackOptions.force, CommonOptions.controlRate, CommonOptions.resources]),
                 OptionGroup("ACCESSIBILITY (also from the environment; flags win)",
                             [PlaybackOptions.noHaptics, PlaybackOptions.intensityScale, PlaybackOptions.rateLimit])],
        positionals: .none,
        synopsis: ["hapsync serve [--osc udp:127.0.0.1:PORT] [--osc unix:PATH] [--resources DIR]... [--preload DIR|FILE]... [outputs]"],
        run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let console = context.console
        let options = try PlaybackOptions(parsed, environment: context.environment)
        let endpoints = parsed[osc].isEmpty ? [OSCEndpoint.udp(host: "127.0.0.1", port: 9000)] : parsed[osc]
        for e in endpoints where !e.isLocal && !parsed[allowRemote] {
            throw .usage("--osc \(e) is not a loopback address; anyone who can reach it could play and load patterns. Pass --allow-remote to mean it")
        }
        // Patterns named at start: the operator's choice, any readable file. A folder given becomes
        // a resource root too (for /hapsync/load); a file's audio is found beside it.
        var preloads: [(name: String, file: URL)] = []
        var roots = options.resources
        for item in parsed[preload] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: item, isDirectory: &isDirectory) else { throw .usage("--preload \(item): no such file or folder") }
            if isDirectory.boolValue {
                let dir = URL(fileURLWithPath: item)
                roots.append(dir)
                let names = ((try? FileManager.default.contentsOfDirectory(atPath: item)) ?? []).filter { $0.hasSuffix(".ahap") }.sorted()
                preloads += names.map { (String($0.dropLast(5)), dir.appendingPathComponent($0)) }
            } else {
                // A file alone: its audio is found beside it; its folder is not opened to /hapsync/load.
                let file = URL(fileURLWithPath: item)
                preloads.append((file.deletingPathExtension().lastPathComponent, file))
            }
        }
        try PlayCommand.checkTrace(options)
        let signals = SignalWatch()
        defer { signals.cancel() }
        let trace = options.tracePath.map { TraceBackend(path: $0, replacing: options.replacesTrace) }
        // Live haptics (/hapsync/live) play the sound on through this stream: a dormant
        // pass-through rides in it until they are turned on. A native PipeWire stream sits in a
        // node group of its own, which their sink, made natively, joins (sample-locked).
        let passThrough = PassThroughAudio(hold: 0, active: false)
        let audio = options.makeAudioOutput(passThrough: passThrough, group: "hapsync-serve-\(getpid())")
        let backend = try PlayCommand.hapticBackend(options, trace: trace, audio: audio, console: console)
        let engine: HapticEngine
        do {
            engine = try HapticEngine(configuration: options.engineConfiguration(backend: backend, audio: audio))
            try engine.start()
        } catch {
            throw .failure("\(error)", hint: audio == nil ? nil : "without a sound server, pass --audio none")
        }
        var configuration = OSCService.Configuration(endpoints: endpoints, resourceRoots: roots)
        configuration.maxMessagesPerSecond = Double(parsed[maxRate])
        configuration.maxScheduleAhead = parsed[maxAhead]
        configuration.maxPatternMemory = parsed[patternMemory] << 20
        configuration.renderOptions = options.render
        let live = audio.map { ServeLive(engine: engine, audio: $0, passThrough: passThrough, options: options, console: console) }
        configuration.live = live
        let service: OSCService
        do {
            service = try OSCService(engine: engine, configuration: configuration)
            for p in preloads { try service.commands.preload(name: p.name, file: p.file) }
        } catch {
            _ = engine.stop()
            throw .failure("\(error)")
        }
        signals.onSignal = { service.stop() }
        if signals.received { service.stop() }
        let listening = zip(endpoints, service.boundPorts).map { e, port -> String in
            if case .udp(let host, 0) = e { return "udp:\(host):\(port)" }
            return e.description
        }
        console.out("hapsync serve: listening on \(listening.joined(separator: ", "))"
                    + (endpoints.allSatisfy(\.isLocal) ? " (this machine only)" : "") + "; \(preloads.count) patterns preloaded"
                    + "; haptics \(backend.name), audio \(audio?.serverDescription ?? "none")\n")
        for e in endpoints where !e.isLocal {
            console.err("warning: \(e) accepts OSC from the network: anyone who can reach it can play and load patterns from the resource folders\n")
        }
        service.run()
        _ = live?.turnOff()
        let closeError = engine.stop()
        let s = service.statistics
        console.out("hapsync serve: stopped; \(s.packets) packets, \(s.messages) messages, \(s.errors) errors, \(s.malformed) malformed, \(s.late) late, \(s.rateLimited) rate-limited"
                    + (audio == nil ? "" : "; \(engine.statistics.audioUnderruns) audio underruns") + "\n")
        if let closeError { throw .failure("\(closeError)") }
    }
}
