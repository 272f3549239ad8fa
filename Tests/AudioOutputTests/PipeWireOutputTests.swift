import AHAP
import AudioOutput
import CPipeWire
import Foundation
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// PipeWire natively (`PipeWireOutput`): faults named with the server and sink, the data thread
/// it renders on, and `--audio auto`'s choice. The tests that need a server run when one answers
/// (.ci/with-pipewire); the sync against a pipe sink is in `SyncTests`.
@Suite("PipeWire natively", .serialized)
struct PipeWireOutputTests {
    static var answers: Bool { PipeWireOutput.answers() }

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

    @Test(.enabled(if: answers, "no PipeWire server answers"))
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
    @Test(.enabled(if: answers, "no PipeWire server answers"))
    func aServerIsBackForThisOutputOnlyWithItsSink() {
        #expect(PipeWireOutput().canConnect(), "the default sink")
        #expect(PipeWireOutput(configuration: .init(sink: "hapsync")).canConnect())
        #expect(!PipeWireOutput(configuration: .init(sink: "no-such-sink-\(UUID().uuidString.prefix(8))")).canConnect())
    }

    @Test(.enabled(if: answers, "no PipeWire server answers"))
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
    @Test(.enabled(if: answers, "no PipeWire server answers"))
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

    /// An engine with nothing to play pauses its stream (no cycles: no CPU, no device kept
    /// awake); a start with audio runs it again before it is placed, and the clicks are heard where
    /// the engine put them, by a pipe sink's reader; then it pauses again.
    @Test(.enabled(if: answers, "no PipeWire server answers"))
    func anIdleStreamPausesAndAStartRunsItAgainInTime() throws {
        let reader = PipeSinkReader()
        try reader.start()
        defer { reader.stop() }
        let audio = PipeWireOutput(configuration: .init(sink: reader.sinkName, pauseWhenIdle: 0.3))
        let haptics = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: haptics, lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        #expect(Self.waitUntil(seconds: 5) { audio.isPaused }, "the stream did not pause")
        let pattern = try AHAPReader().read(contentsOf: SyncTests.clicks).pattern
        let file = SyncTests.clicks.deletingLastPathComponent().appendingPathComponent("audio/click-48k-mono-16.wav")
        let player = try engine.makePlayer(with: pattern, audioFiles: ["audio/click-48k-mono-16.wav": file])
        try player.start(atTime: engine.currentTime + 0.1)
        #expect(!audio.isPaused, "the start ran the stream again")
        Thread.sleep(forTimeInterval: 2.6)
        #expect(audio.pauses >= 1)
        let taps = haptics.entries.filter { $0.command.kind == .transient }
        let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
        let byPipe = SyncTests.offsets(taps.map(\.command.released), from: onsets)
        print("pause: haptic release − click heard by the pipe after a pause (ms): \(SyncTests.text(byPipe))")
        SyncTests.expectEight(byPipe, median: 1, each: 10, "haptic release − click heard by the pipe, the stream paused before")
        #expect(Self.waitUntil(seconds: 5) { audio.isPaused }, "the stream did not pause again")
    }

    /// Polls `condition` every 10 ms for at most `seconds`; whether it came true.
    static func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let giveUp = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > giveUp { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }

    /// A player following the audio clock whose sound has ended plays on while the stream pauses
    /// (its taps on the clock's line); another player's start runs the stream again, and the
    /// frames go on where the line puts them, so the first player's later taps keep their times.
    @Test(.enabled(if: answers, "no PipeWire server answers"))
    func aPauseAndAResumeLeaveAPlayingPatternsTapsInPlace() throws {
        let audio = PipeWireOutput(configuration: .init(pauseWhenIdle: 0.2))
        let haptics = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: haptics, lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        let click = SyncTests.clicks.deletingLastPathComponent().appendingPathComponent("audio/click-48k-mono-16.wav")
        let files = ["audio/click-48k-mono-16.wav": click]
        // A click at 0, then taps every 0.25 s to 3 s with no sound.
        var builder = AHAPPatternBuilder().audioCustom(at: 0, path: "audio/click-48k-mono-16.wav", useVolumeEnvelope: false)
        for k in 0...12 { builder = builder.transient(at: Double(k) * 0.25, intensity: 1, sharpness: 0.5) }
        let first = try engine.makePlayer(with: try builder.build(), audioFiles: files)
        let start = engine.currentTime + 0.3
        try first.start(atTime: start)
        #expect(Self.waitUntil(seconds: 2) { audio.isPaused }, "the stream did not pause under the playing pattern")
        let second = try engine.makePlayer(with: try AHAPPatternBuilder().audioCustom(at: 0, path: "audio/click-48k-mono-16.wav", useVolumeEnvelope: false).build(), audioFiles: files)
        try second.start(atTime: HapticEngine.timeImmediate)
        #expect(!audio.isPaused)
        Thread.sleep(forTimeInterval: max(0, start + 3.3 - engine.currentTime))
        let taps = haptics.entries.filter { $0.command.kind == .transient && $0.command.player == first.id }
        #expect(taps.count == 13)
        // Each against its time on the engine clock (the line barely moves in 3 s: a few µs).
        let late = taps.map { (Double($0.command.released) / 1e9 - start - $0.command.patternTime) * 1000 }
        print("pause: the first player's taps against their times (ms): \(SyncTests.text(late))")
        #expect(late.allSatisfy { abs($0) < 2 }, "\(late)")
    }

    /// The quantum the summary shows is what the graph runs with: what each cycle asks of the
    /// stream, within the node.latency asked for (the graph takes the smallest of its nodes'),
    /// not that latency itself.
    @Test(.enabled(if: answers, "no PipeWire server answers"), arguments: [0.005, 0.020])
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
        #expect((auto is PipeWireOutput) == Self.answers)
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
