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

    /// PipeWire 0.3.65's timer drivers start the cycle after a quantum change an old quantum on
    /// (its null sink wakes by the duration it read before the change is applied): the frames
    /// after the change cycle's are heard (old − new) earlier or later than the line, which the
    /// stream says before any report shows it. Only for a timer driver, on a cycle that follows
    /// the last without a gap, rendered whole at the stream's rate; only on servers before 0.3.68.
    @Test func aQuantumChangeOnATimerDriverMovesTheFramesAfterIt() throws {
        var time = hs_pw_time()
        (time.rate_num, time.rate_denom, time.timer_driver) = (1, 48_000, 1)
        (time.duration, time.ticks) = (1024, 10_000 + 512)
        // 512 → 1024 frames: the next cycle starts 512 frames (10.7 ms) early, for good.
        let grown = try #require(PipeWireOutput.quantumStep(time, lastQuantum: 512, lastTicks: 10_000, firstFrame: 70_000, frames: 1024, sampleRate: 48_000))
        #expect(grown.frame == 71_024)
        #expect(abs(grown.ns - -10_666_666.7) < 1)
        // Back, 1024 → 512: late by as much.
        time.duration = 512
        time.ticks = 10_000 + 1024
        let back = try #require(PipeWireOutput.quantumStep(time, lastQuantum: 1024, lastTicks: 10_000, firstFrame: 0, frames: 512, sampleRate: 48_000))
        #expect(back.frame == 512 && abs(back.ns - 10_666_666.7) < 1)
        // None: the same quantum; a missed cycle before it; part of it rendered; a device's clock;
        // the graph at another rate; the first cycle.
        #expect(PipeWireOutput.quantumStep(time, lastQuantum: 512, lastTicks: 10_000 + 512, firstFrame: 0, frames: 512, sampleRate: 48_000) == nil)
        #expect(PipeWireOutput.quantumStep(time, lastQuantum: 1024, lastTicks: 9_000, firstFrame: 0, frames: 512, sampleRate: 48_000) == nil)
        #expect(PipeWireOutput.quantumStep(time, lastQuantum: 1024, lastTicks: 10_000, firstFrame: 0, frames: 256, sampleRate: 48_000) == nil)
        #expect(PipeWireOutput.quantumStep(time, lastQuantum: 1024, lastTicks: 10_000, firstFrame: 0, frames: 512, sampleRate: 44_100) == nil)
        #expect(PipeWireOutput.quantumStep(time, lastQuantum: 0, lastTicks: 0, firstFrame: 0, frames: 512, sampleRate: 48_000) == nil)
        time.timer_driver = 0
        #expect(PipeWireOutput.quantumStep(time, lastQuantum: 1024, lastTicks: 10_000, firstFrame: 0, frames: 512, sampleRate: 48_000) == nil)
        // Which servers: before 0.3.68 (fixed there upstream), by the version their core says.
        #expect(PipeWireOutput.timesOldQuantum(serverVersion: "0.3.65"))
        #expect(PipeWireOutput.timesOldQuantum(serverVersion: "0.3.67"))
        #expect(!PipeWireOutput.timesOldQuantum(serverVersion: "0.3.68"))
        #expect(!PipeWireOutput.timesOldQuantum(serverVersion: "1.0.5"))
        #expect(!PipeWireOutput.timesOldQuantum(serverVersion: ""))
        #expect(!PipeWireOutput.timesOldQuantum(serverVersion: "unknown"))
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

    /// On the server's own graph: a second stream asking for a shorter cycle joins and leaves the
    /// first's sink three times, so that its driver's quantum shrinks and grows back. On a server
    /// whose timer driver starts the cycle after such a change an old quantum on (before 0.3.68),
    /// the first stream expects each step, and PipeWire's own timing for the next cycle puts its
    /// frames nearer where the step said than the line (seen: within 6 ns, now and then 2.3-2.6
    /// ms off an 8 ms step): none withdrawn. On another server none is expected.
    @Test(.needsPipeWire)
    func aQuantumChangeIsExpectedWhereTheServerSteps() throws {
        let audio = PipeWireOutput(configuration: .init(latency: 0.020, pauseWhenIdle: nil))
        try audio.open()
        defer { audio.close() }
        Thread.sleep(forTimeInterval: 0.3)
        let first = try #require(audio.quantum)
        var quanta: Set<Int> = [first]
        for _ in 0..<3 {
            let other = PipeWireOutput(configuration: .init(latency: 0.005, pauseWhenIdle: nil))
            try other.open()
            Thread.sleep(forTimeInterval: 0.3)
            quanta.insert(audio.quantum ?? 0)
            other.close()
            Thread.sleep(forTimeInterval: 0.3)
            quanta.insert(audio.quantum ?? 0)
        }
        let fit = audio.clock.fit
        print("quantum steps (PipeWire \(audio.serverVersion), quanta \(quanta.sorted())): \(fit.stepsCame) came where expected, \(fit.stepsWithdrawn) withdrawn")
        try #require(quanta.count > 1, "the second stream did not change the first's quantum (\(quanta.sorted()))")
        if PipeWireOutput.timesOldQuantum(serverVersion: audio.serverVersion) {
            #expect(fit.stepsCame >= 4, "of 6 changes")
            #expect(fit.stepsWithdrawn == 0)
        } else {
            #expect(fit.stepsCame + fit.stepsWithdrawn == 0)
        }
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
