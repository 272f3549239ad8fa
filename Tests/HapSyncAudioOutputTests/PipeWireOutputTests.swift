import CPipeWire
import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncLiveTesting
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// PipeWire natively (`PipeWireOutput`): faults named with the server and sink, the data thread
/// it renders on, and `--audio auto`'s choice. The tests that need a server run when one answers
/// (.ci/with-pipewire); the sync against a pipe sink is in `SyncTests`.
@Suite("PipeWire natively", .serialized)
struct PipeWireOutputTests {

    @Test func aCyclesTimingSaysWhenItsFirstFrameIsHeard() {
        var time = hs_pw_time()
        time.now = 5_000_000_000
        time.rate_num = 1
        time.rate_denom = 48_000
        time.ticks = 48_000
        time.delay = 960        // 20 ms of graph and device latency
        time.buffered = 240     // 5 ms in the resampler
        time.queued = 240       // 5 ms of ours not yet taken
        let t = PipeWireOutput.heardTime(time, sampleRate: 48_000)
        #expect(t.heard == 5_030_000_000)
        #expect(t.graph == 1_000_000_000)
        // A graph at another rate than the stream: delay in the graph's ticks, the rest in ours.
        time.rate_denom = 96_000
        #expect(PipeWireOutput.heardTime(time, sampleRate: 48_000).heard == 5_020_000_000)
        // No rate yet (not linked): the cycle's time as it is.
        time.rate_denom = 0
        #expect(PipeWireOutput.heardTime(time, sampleRate: 48_000).heard == 5_000_000_000)
    }

    @Test func noServerSaysWhereItLooked() {
        let socket = "/tmp/hapsync-no-pipewire-\(UUID().uuidString.prefix(8))"
        let audio = PipeWireOutput(configuration: .init(remote: socket))
        #expect {
            try audio.open()
        } throws: { error in
            "\(error)" == "no PipeWire server answers on \(socket) (no server's socket there)"
        }
        #expect(!audio.canConnect())
        #expect(!PipeWireOutput.answers(remote: socket))
    }

    /// A server that takes the connection and says nothing (stopped): named, and given up on in
    /// the time allowed, by `--audio auto`'s probe (1 s), by `open` (5 s) and by PulseAudio's
    /// protocol (5 s; libpulse alone waited 30 s and said "Timeout").
    @Test func aServerThatNeverAnswersIsGivenUpOnAndSaidSo() throws {
        let silent = try SilentServer()
        defer { silent.close() }
        #expect(PipeWireOutput.probe(remote: silent.path) == .silent)
        #expect(PipeWireOutput.probe(remote: silent.path + "-none") == .absent)
        #expect {
            try PipeWireOutput(configuration: .init(remote: silent.path)).open()
        } throws: { error in
            "\(error)" == "the PipeWire server on \(silent.path) accepted the connection but did not answer within 5000 ms (is it stopped?)"
        }
        #expect {
            try PulseAudioOutput(configuration: .init(server: "unix:\(silent.path)")).open()
        } throws: { error in
            "\(error)" == "the PulseAudio server accepted the connection but did not answer within 5 s (is it, or the PipeWire behind pipewire-pulse, stopped?)"
        }
    }

    @Test(.needsPipeWire)
    func anUnknownSinkIsNamed() {
        let name = "no-such-sink-\(UUID().uuidString.prefix(8))"
        let audio = PipeWireOutput(configuration: .init(sink: name))
        #expect {
            try audio.open()
        } throws: { error in
            "\(error)" == "PipeWire has no sink named or numbered '\(name)'; 'wpctl status' lists them (by id; 'pw-cli ls Node' by node.name)"
        }
    }

    /// The engine's watcher restarts on a server that came back only once it has a sink to play
    /// to (a restart before its session manager made one failed, and ended the run).
    @Test(.needsPipeWire)
    func aServerIsBackForThisOutputOnlyWithItsSink() {
        #expect(PipeWireOutput().canConnect(), "the default sink")
        #expect(PipeWireOutput(configuration: .init(sink: "hapsync")).canConnect())
        #expect(!PipeWireOutput(configuration: .init(sink: "no-such-sink-\(UUID().uuidString.prefix(8))")).canConnect())
    }

    @Test(.needsPipeWire)
    func theDataThreadRendersBelowTheEnginesThreads() throws {
        let audio = PipeWireOutput()
        let engine = try HapticEngine(configuration: .init(backend: RecordingHapticBackend(), lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        let thread = try #require(engine.realtimeStatus.threads.first { $0.name == "hapsync-audio" })
        #expect(thread.priority == engine.configuration.deviceThreadPriority)
        if getuid() == 0 { #expect(thread.granted, "\(thread.error ?? "")") }
        #expect(audio.sampleRate > 0 && audio.clock.isFitted)
        #expect(audio.serverDescription.hasPrefix("pipewire "))
    }

    /// `--sink 43`: a sink by the number `wpctl status` shows (its node id), or by its
    /// object.serial when no sink has that number as its id (the two are counted apart and can
    /// coincide), plays there, as by its name; a number no sink has is refused like an unknown name.
    @Test(.needsPipeWire)
    func aSinkByItsIdOrSerialGetsTheSound() throws {
        let reader = PipeSinkReader()
        try reader.start()
        defer { reader.stop() }
        // pipewire-pulse lists each sink's node id and serial among its properties.
        let listing = Process()
        listing.executableURL = URL(fileURLWithPath: "/usr/bin/pactl")
        listing.arguments = ["list", "sinks"]
        let out = Pipe()
        listing.standardOutput = out
        try listing.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        listing.waitUntilExit()
        let section = try #require(text.components(separatedBy: "Sink #").first { $0.contains("Name: \(reader.sinkName)\n") })
        func property(_ key: String) throws -> String {
            let line = try #require(section.split(separator: "\n").first { $0.contains("\(key) = ") }, "\(key) of \(reader.sinkName)")
            return String(line.split(separator: "\"")[1])
        }
        let ids = Set(text.split(separator: "\n").filter { $0.contains("object.id = ") }.map { String($0.split(separator: "\"")[1]) })
        let serial = try property("object.serial")
        for number in [try property("object.id")] + (ids.contains(serial) ? [] : [serial]) {
            let before = reader.recording.count
            let audio = PipeWireOutput(configuration: .init(sink: number))
            #expect(audio.canConnect(), "sink \(number)")
            let run = try SyncTests.playClicks(on: audio)
            #expect(run.taps.count == 8)
            let heard = ClickOnsets.frames(in: Array(reader.recording[before...]))
            #expect(heard.count == 8, "sink \(number) (\(reader.sinkName)): \(heard.count) clicks heard in its pipe")
        }
        let missing = PipeWireOutput(configuration: .init(sink: "999999"))
        #expect(!missing.canConnect())
        #expect(throws: PipeWireOutput.PipeWireError.self) { try missing.open() }
    }

    /// The quantum the summary shows is what the graph runs with: what each cycle asks of the
    /// stream, within the node.latency asked for (the graph takes the smallest of its nodes'),
    /// not that latency itself.
    @Test(.needsPipeWire, arguments: [0.005, 0.020])
    func theQuantumIsWhatEachCycleAsksFor(latency: Double) throws {
        let audio = PipeWireOutput(configuration: .init(latency: latency))
        #expect(audio.quantum == nil, "before the stream runs")
        try audio.open()
        defer { audio.close() }
        let quantum = try #require(audio.quantum)
        #expect(quantum > 0 && Double(quantum) <= (latency * audio.sampleRate).rounded(), "\(quantum) frames at \(latency) s")
    }

    @Test func autoTakesPipeWireWhenItAnswersAndPulseServerIsNotSet() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = nil
        environment["PIPEWIRE_REMOTE"] = nil
        let auto = AudioServerChoice.auto.output(sink: nil, latency: 0.02, environment: environment)
        #expect((auto is PipeWireOutput) == LiveSoundServers.pipeWire)
        environment["PULSE_SERVER"] = "unix:/tmp/somewhere"
        #expect(AudioServerChoice.auto.output(sink: nil, latency: 0.02, environment: environment) is PulseAudioOutput)
        #expect(AudioServerChoice.none.output(sink: nil, latency: 0.02, environment: environment) == nil)
        #expect(AudioServerChoice.from(environment: ["HAPSYNC_AUDIO": "alsa"]).failureDescription
                == "HAPSYNC_AUDIO: 'alsa' is not auto, pipewire, pulse or none")
        #expect(try AudioServerChoice.from(environment: [:]).get() == .auto)
    }
}

extension Result {
    /// The failure's description, or nil.
    var failureDescription: String? {
        if case .failure(let e) = self { return "\(e)" }
        return nil
    }
}
