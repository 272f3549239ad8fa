import AHAP
import AudioOutput
import Foundation
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// A stream that pauses for want of sound (`IdlePause`): PulseAudio's protocol corks it, PipeWire
/// natively pauses it. Each server that answers now is tested: PulseAudio (or pipewire-pulse)
/// under .ci/with-pulse and .ci/with-pipewire, PipeWire natively under .ci/with-pipewire.
@Suite("Idle pause", .serialized)
struct IdlePauseTests {
    /// The servers that answer now, by the protocol each output speaks.
    static let servers: [AudioServerChoice] = (PulseAudioOutput().canConnect() ? [.pulse] : [])
        + (PipeWireOutput.answers() ? [.pipewire] : [])

    /// An output on `server` to `sink` whose stream pauses after `pause` seconds of silence.
    static func output(_ server: AudioServerChoice, sink: String? = nil, pause: Double) -> any SoundServerOutput {
        server == .pipewire ? PipeWireOutput(configuration: .init(sink: sink, pauseWhenIdle: pause))
                            : PulseAudioOutput(configuration: .init(sink: sink, pauseWhenIdle: pause))
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

    static let clickFile = SyncTests.clicks.deletingLastPathComponent().appendingPathComponent("audio/click-48k-mono-16.wav")
    static let files = ["audio/click-48k-mono-16.wav": clickFile]

    /// An engine with nothing to play pauses its stream (no cycles or writes: no CPU, no device
    /// kept awake); a start with audio runs it again before it is placed, and the clicks are heard
    /// where the engine put them, by a pipe sink's reader; then it pauses again.
    @Test(.enabled(if: !servers.isEmpty, "no sound server answers"), arguments: servers)
    func anIdleStreamPausesAndAStartRunsItAgainInTime(server: AudioServerChoice) throws {
        let reader = PipeSinkReader()
        try reader.start()
        defer { reader.stop() }
        let audio = Self.output(server, sink: reader.sinkName, pause: 0.3)
        let haptics = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: haptics, lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        #expect(Self.waitUntil(seconds: 5) { audio.isPaused }, "\(server): the stream did not pause")
        let pattern = try AHAPReader().read(contentsOf: SyncTests.clicks).pattern
        let player = try engine.makePlayer(with: pattern, audioFiles: Self.files)
        try player.start(atTime: engine.currentTime + 0.1)
        #expect(!audio.isPaused, "\(server): the start ran the stream again")
        Thread.sleep(forTimeInterval: 2.6)
        let taps = haptics.entries.filter { $0.command.kind == .transient }
        let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
        let byPipe = SyncTests.offsets(taps.map(\.command.released), from: onsets)
        print("pause (\(server)): haptic release − click heard by the pipe after a pause (ms): \(SyncTests.text(byPipe))")
        SyncTests.expectEight(byPipe, median: 1, each: 10, "\(server): haptic release − click heard by the pipe, the stream paused before")
        #expect(Self.waitUntil(seconds: 5) { audio.isPaused }, "\(server): the stream did not pause again")
    }

    /// A player following the audio clock whose sound has ended plays on while the stream pauses
    /// (its taps on the clock's line); another player's start runs the stream again, and the
    /// frames go on where the line puts them, so the first player's later taps keep their times.
    @Test(.enabled(if: !servers.isEmpty, "no sound server answers"), arguments: servers)
    func aPauseAndAResumeLeaveAPlayingPatternsTapsInPlace(server: AudioServerChoice) throws {
        let audio = Self.output(server, pause: 0.2)
        let haptics = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: haptics, lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        // A click at 0, then taps every 0.25 s to 3 s with no sound.
        var builder = AHAPPatternBuilder().audioCustom(at: 0, path: "audio/click-48k-mono-16.wav", useVolumeEnvelope: false)
        for k in 0...12 { builder = builder.transient(at: Double(k) * 0.25, intensity: 1, sharpness: 0.5) }
        let first = try engine.makePlayer(with: try builder.build(), audioFiles: Self.files)
        let start = engine.currentTime + 0.3
        try first.start(atTime: start)
        #expect(Self.waitUntil(seconds: 2) { audio.isPaused }, "\(server): the stream did not pause under the playing pattern")
        let second = try engine.makePlayer(with: try AHAPPatternBuilder().audioCustom(at: 0, path: "audio/click-48k-mono-16.wav", useVolumeEnvelope: false).build(),
                                           audioFiles: Self.files)
        try second.start(atTime: HapticEngine.timeImmediate)
        #expect(!audio.isPaused)
        Thread.sleep(forTimeInterval: max(0, start + 3.3 - engine.currentTime))
        let taps = haptics.entries.filter { $0.command.kind == .transient && $0.command.player == first.id }
        #expect(taps.count == 13)
        // Each against its time on the engine clock (the line barely moves in 3 s: a few µs).
        let late = taps.map { (Double($0.command.released) / 1e9 - start - $0.command.patternTime) * 1000 }
        print("pause (\(server)): the first player's taps against their times (ms): \(SyncTests.text(late))")
        #expect(late.allSatisfy { abs($0) < 2 }, "\(server): \(late)")
    }
}
