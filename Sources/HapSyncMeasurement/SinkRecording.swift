import Foundation
import Glibc
import HapSyncCore

/// Runs the sound server's command-line tools (`pactl`, `parec`, pulseaudio-utils) with
/// posix_spawn and the signal mask cleared: Foundation's `Process` is not reaped once a private
/// pulseaudio runs in the same process, and a child inheriting a test's blocked SIGTERM could not
/// be stopped.
public enum SoundTools {
    /// Starts `args` (found on PATH), its standard output into `output`; its PID, or −1.
    public static func spawn(_ args: [String], output: String = "/dev/null") -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = args.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, args[0], &actions, &attributes, argv, environ) == 0 else { return -1 }
        return pid
    }

    /// Waits for a spawned program; its wait status.
    @discardableResult
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return status
    }

    /// Runs `args` to its end; what it printed, trimmed.
    public static func run(_ args: [String]) -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-run-\(UUID().uuidString)").path
        defer { unlink(out) }
        let pid = spawn(args, output: out)
        guard pid > 0 else { return "" }
        wait(pid)
        return ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A four-channel null sink (front-left, front-right, rear-left, rear-right at 48 kHz: a
/// DualSense's layout) loaded for a measurement, and its monitor recorded by `parec` in all four
/// channels. `finish()` stops the recording, unloads the sink and returns the channels.
public final class QuadSinkRecording {
    /// Why the sink or the recorder could not start.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// The sink's name.
    public let sink: String
    private let server: [String]
    private let module: String
    private let file: URL
    private var recorder: pid_t

    /// Loads the sink on `server` (nil: the default) and starts recording its monitor.
    public init(server: String?) throws(Failure) {
        self.server = server.map { ["-s", $0] } ?? []
        sink = "quad-\(UUID().uuidString.prefix(8))"
        module = SoundTools.run(["pactl"] + self.server + ["load-module", "module-null-sink", "sink_name=\(sink)", "channels=4",
                                                       "channel_map=front-left,front-right,rear-left,rear-right", "rate=48000"])
        guard Int(module) != nil else { throw Failure(description: "pactl could not load a 4-channel null sink: '\(module)'") }
        file = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-quad-\(UUID().uuidString).raw")
        recorder = SoundTools.spawn(["parec"] + self.server + ["-d", "\(sink).monitor", "--format=float32le", "--channels=4",
                                                           "--channel-map=front-left,front-right,rear-left,rear-right", "--rate=48000",
                                                           "--latency-msec=10", "--raw", file.path])
        guard recorder > 0 else {
            _ = SoundTools.run(["pactl"] + self.server + ["unload-module", module])
            throw Failure(description: "parec (pulseaudio-utils) could not be started")
        }
        usleep(300_000)
    }

    deinit {
        if recorder > 0 { _ = try? finish() }
    }

    /// Playback streams on the sink now (`pactl list short sink-inputs`): one when audio and
    /// haptics share a stream.
    public func playbackStreams() -> Int {
        let sinks = SoundTools.run(["pactl"] + server + ["list", "short", "sinks"]).split(separator: "\n")
        guard let index = sinks.first(where: { $0.split(separator: "\t").dropFirst().first.map(String.init) == sink })?
            .split(separator: "\t").first else { return -1 }
        let inputs = SoundTools.run(["pactl"] + server + ["list", "short", "sink-inputs"]).split(separator: "\n")
        return inputs.filter { $0.split(separator: "\t").dropFirst().first == index }.count
    }

    /// Stops the recording (after 0.3 s for what the monitor still buffers: PipeWire hands it on in
    /// larger pieces), unloads the sink, and returns the four channels.
    public func finish() throws -> [[Float]] {
        usleep(300_000)
        if recorder > 0 {
            kill(recorder, SIGTERM)
            SoundTools.wait(recorder)
            recorder = -1
            _ = SoundTools.run(["pactl"] + server + ["unload-module", module])
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let bytes = try Data(contentsOf: file)
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (0..<4).map { c in stride(from: c, to: samples.count, by: 4).map { samples[$0] } }
    }
}

/// How haptic bursts in a drive signal line up with clicks in the audio, to the sample.
public enum BurstAlignment {
    /// Where the signal starts after at least `quiet` frames at or below `threshold`.
    public static func onsets(_ x: [Float], threshold: Float = 0.02, quiet: Int = 2_400) -> [Int] {
        var found: [Int] = [], silent = Int.max
        for (i, v) in x.enumerated() {
            if abs(v) > threshold {
                if silent >= quiet { found.append(i) }
                silent = 0
            } else if silent < Int.max {
                silent += 1
            }
        }
        return found
    }

    /// The burst `WaveformSynth` makes for a tap on a silent actuator (its first `frames` frames).
    public static func burst(profile: ActuatorProfile, intensity: Double, sharpness: Double, sampleRate: Double = 48_000,
                             frames: Int = 480) -> [Float] {
        var synth = WaveformSynth(profile: profile, sampleRate: sampleRate)
        synth.trigger(intensity: intensity, sharpness: sharpness)
        var out = [Float](repeating: 0, count: frames)
        out.withUnsafeMutableBufferPointer { synth.render(into: $0.baseAddress!, count: frames) }
        return out
    }

    /// Click onsets in `audio` (each click's first sample is loud: the threshold finds it), burst
    /// starts in `drive`, and per pair the burst's start − the click's onset in frames. A burst's
    /// start is found to the sample by matching `burst` (least squares) at each lag up to 96
    /// frames before where it crosses the threshold (a Hann-windowed burst crosses any threshold
    /// some frames after it starts).
    public static func measure(audio: [Float], drive: [Float], burst: [Float]) -> (clicks: [Int], bursts: [Int], offsets: [Int]) {
        let clicks = onsets(audio)
        let crossings = onsets(drive, threshold: 0.02)
        var bursts: [Int] = []
        for onset in crossings where onset + burst.count <= drive.count {
            let lags = max(0, onset - 96)...onset
            var best = onset, bestError = Float.infinity
            for lag in lags {
                var e: Float = 0
                for k in burst.indices { let d = drive[lag + k] - burst[k]; e += d * d }
                if e < bestError { bestError = e; best = lag }
            }
            bursts.append(best)
        }
        // Pair each click with the nearest burst within 50 ms.
        var offsets: [Int] = []
        for c in clicks {
            if let b = bursts.min(by: { abs($0 - c) < abs($1 - c) }), abs(b - c) < 2_400 { offsets.append(b - c) }
        }
        return (clicks, bursts, offsets)
    }
}
