import Foundation
import HapSyncAudioOutput
import HapSyncHapticOutput
import HapSyncMeasurement
import HapSyncRuntime

/// launch: `hapsync play` started as a user starts it, to its first command, and where its first
/// taps land. Each run spawns `hapsync play --haptics trace:TMP --force Assets/clicks.ahap` (the
/// default `--at`) with the audio to a pipe sink read by a SCHED_FIFO reader; the monotonic time
/// just before the spawn, less the trace's pattern-time-0 (its first record's scheduled time
/// less its pattern time), is launch → start. Beside it in the same run, the baseline
/// `--audio none` (no sound server: process start, engine, `--at`). For each audio path, every
/// tap of the first run's pattern is paired with its click read from the pipe: the first taps
/// are placed by a clock that has just begun, so this is where a short settling would show.
/// `runs` launches per path, interleaved. Milliseconds (launch) and µs (taps).
func launchBenchmark(runs: Int, assets: URL) throws -> [Distribution] {
    let hapsync = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("hapsync")
    guard FileManager.default.isExecutableFile(atPath: hapsync.path) else {
        throw BenchError.failed("launch needs the hapsync executable beside hapsync-bench (\(hapsync.path)): swift build -c release")
    }
    let reader = PipeSinkReader(seconds: Double(runs) * Double(pipeSinkServers().count + 1) * 2 + 20)
    try reader.start()
    defer { reader.stop() }
    let paths: [(label: String, audio: String)] = [("no audio (--audio none): baseline", "none")]
        + pipeSinkServers().map { $0 == .pipewire ? ("native PipeWire (--audio pipewire)", "pipewire") : ("\(reader.serverName) (--audio pulse)", "pulse") }
    var starts = [[Double]](repeating: [], count: paths.count)
    var taps = [[(released: UInt64, t: Double)]](repeating: [], count: paths.count)
    let trace = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-launch-\(getpid()).jsonl")
    defer { try? FileManager.default.removeItem(at: trace) }
    for _ in 0..<runs {
        for (i, path) in paths.enumerated() {
            let p = Process()
            p.executableURL = hapsync
            p.arguments = ["play", "--audio", path.audio, "--sink", reader.sinkName, "--haptics", "trace:\(trace.path)", "--force",
                           assets.appendingPathComponent("clicks.ahap").path]
            p.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            p.standardError = errors
            let launched = MonotonicClock.nanoseconds()
            try p.run()
            let message = errors.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else {
                throw BenchError.failed("launch: hapsync play --audio \(path.audio) exited \(p.terminationStatus): \(String(decoding: message, as: UTF8.self))")
            }
            let commands = try TraceRecord.read(contentsOf: trace.path).commands.filter { $0.kind == .transient }
                .map { (scheduled: $0.scheduledNs, released: $0.releasedNs, t: $0.t) }
            guard let first = commands.first else { throw BenchError.failed("launch: the trace of --audio \(path.audio) has no transient") }
            let zero = Double(first.scheduled) - first.t * 1e9
            starts[i].append((zero - Double(launched)) / 1e6)
            taps[i] += commands.map { ($0.released, $0.t) }
            Thread.sleep(forTimeInterval: 0.3)
        }
    }
    var result: [Distribution] = []
    let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
    for (i, path) in paths.enumerated() {
        result.append(Distribution(benchmark: "launch", subject: "\(path.label): launch → start (ms; first command less its pattern time)", values: starts[i]))
        guard path.audio != "none" else { continue }
        // Each tap against the nearest click the pipe heard (within 50 ms).
        let paired: [(t: Double, offset: Double?)] = taps[i].map { tap in
            guard let heard = onsets.min(by: { abs(Double($0) - Double(tap.released)) < abs(Double($1) - Double(tap.released)) }) else { return (tap.t, nil) }
            let d = (Double(tap.released) - Double(heard)) / 1e3
            return (tap.t, abs(d) < 50_000 ? d : nil)
        }
        let offsets = paired.compactMap(\.offset)
        // HAPSYNC_BENCH_DEBUG: every tap's pattern time and offset (µs; "-": no click within 50 ms).
        if ProcessInfo.processInfo.environment["HAPSYNC_BENCH_DEBUG"] != nil {
            print("launch: \(path.label): " + paired.map { "\($0.t)s " + ($0.offset.map { String(format: "%+.0f", $0) } ?? "-") }.joined(separator: ", "))
        }
        print("launch: \(path.label): \(runs) launches; \(offsets.count) of their \(taps[i].count) taps paired with clicks read from the pipe")
        result.append(Distribution(benchmark: "launch", subject: "\(path.label): every launch's taps, haptic release − click read from the pipe (µs)", values: offsets))
    }
    return result
}
