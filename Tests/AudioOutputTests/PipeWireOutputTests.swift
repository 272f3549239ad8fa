import AudioOutput
import CPipeWire
import Foundation
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

    @Test(.enabled(if: answers, "no PipeWire server answers"))
    func anUnknownSinkIsNamed() {
        let name = "no-such-sink-\(UUID().uuidString.prefix(8))"
        let audio = PipeWireOutput(configuration: .init(sink: name))
        #expect {
            try audio.open()
        } throws: { error in
            "\(error)" == "PipeWire has no sink named '\(name)'; 'pw-cli ls Node' lists them (node.name)"
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
