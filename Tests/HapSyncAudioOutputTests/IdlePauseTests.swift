import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// A stream that pauses for want of sound (`IdlePause`): PulseAudio's protocol corks it, PipeWire
/// natively pauses it, never while a player with audio plays. Each server that answers now is tested: PulseAudio (or pipewire-pulse)
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
        let haptics = RecordingHapticBackend(reserving: 4096)   // rt-alloc-check runs this suite
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

    /// A looping player with audio whose sound is short beside its loop: the scheduler starts
    /// each pass's audio itself (no `willPlay`), so the stream must not pause under it, however
    /// long the silence between passes; every pass's click is heard where its tap goes out.
    @Test(.enabled(if: !servers.isEmpty, "no sound server answers"), arguments: servers)
    func aLoopingPlayerKeepsTheStreamRunning(server: AudioServerChoice) throws {
        let reader = PipeSinkReader()
        try reader.start()
        defer { reader.stop() }
        let audio = Self.output(server, sink: reader.sinkName, pause: 0.2)
        let haptics = RecordingHapticBackend(reserving: 4096)   // rt-alloc-check runs this suite
        let engine = try HapticEngine(configuration: .init(backend: haptics, lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        // A click and a tap at 0, each pass's first frames (its audio start goes out ahead of
        // the wrap); the loop is 0.7 s long: 0.6 s of silence in each pass.
        let pattern = try AHAPPatternBuilder().audioCustom(at: 0, path: "audio/click-48k-mono-16.wav", useVolumeEnvelope: false)
            .transient(at: 0, intensity: 1, sharpness: 0.5).build()
        let player = try engine.makePlayer(with: pattern, audioFiles: Self.files)
        try player.setLoop(true, end: 0.7)
        try player.start(atTime: engine.currentTime + 0.1)
        var pausedMeanwhile = false
        let until = Date().addingTimeInterval(2.4)
        while Date() < until {
            pausedMeanwhile = pausedMeanwhile || audio.isPaused
            Thread.sleep(forTimeInterval: 0.01)
        }
        try player.stop(atTime: HapticEngine.timeImmediate)
        #expect(!pausedMeanwhile, "\(server): the stream paused under a looping player with audio")
        let taps = haptics.entries.filter { $0.command.kind == .transient }
        let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
        let byPipe = SyncTests.offsets(taps.map(\.command.released), from: onsets)
        print("pause (\(server)): a looping player's \(taps.count) taps − their clicks heard by the pipe (ms): \(SyncTests.text(byPipe)); \(onsets.count) clicks heard")
        #expect(taps.count >= 3, "\(server): \(taps.count) passes")
        // Within 1 ms at the median; each within 20 ms (a stall of this shared VM moves one).
        let median = byPipe.isEmpty ? .infinity : byPipe.sorted()[byPipe.count / 2]
        #expect(byPipe.count == taps.count && abs(median) < 1 && byPipe.allSatisfy { abs($0) < 20 }, "\(server): \(byPipe)")
        #expect(Self.waitUntil(seconds: 3) { audio.isPaused }, "\(server): the stream did not pause once the loop stopped")
    }
}
