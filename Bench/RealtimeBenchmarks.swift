import CHapSync
import Foundation
import HapSyncAHAP
import HapSyncCAPI
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Synchronization

/// ring: the SPSC ring against a Mutex-protected queue of the same capacity, two threads, same run.
func ringBenchmark(items: Int) -> [Row] {
    final class MutexQueue: @unchecked Sendable {
        let state: Mutex<(buffer: [UInt64], head: Int, tail: Int)>
        init(capacity: Int) { state = Mutex(([UInt64](repeating: 0, count: capacity), 0, 0)) }
        func push(_ v: UInt64) -> Bool {
            state.withLock { s in
                if s.tail - s.head == s.buffer.count { return false }
                s.buffer[s.tail % s.buffer.count] = v
                s.tail += 1
                return true
            }
        }
        func pop() -> UInt64? {
            state.withLock { s in
                if s.head == s.tail { return nil }
                defer { s.head += 1 }
                return s.buffer[s.head % s.buffer.count]
            }
        }
    }
    func run(push: @escaping @Sendable (UInt64) -> Bool, pop: () -> UInt64?) -> Double {
        let done = DispatchSemaphore(value: 0)
        let t0 = now()
        let producer = Thread {
            var i: UInt64 = 0
            while i < UInt64(items) { if push(i) { i += 1 } }
            done.signal()
        }
        producer.start()
        var got = 0
        var sum: UInt64 = 0
        while got < items { if let v = pop() { sum &+= v; got += 1 } }
        done.wait()
        precondition(sum == UInt64(items) * UInt64(items - 1) / 2, "lost or duplicated items")
        return Double(items) / (Double(now() - t0) / 1e9)
    }
    /// The same stream moved in batches of `batch` (`push(contentsOf:)`, `pop(into:)`).
    func runBatched(_ ring: SPSCRing<UInt64>, batch: Int) -> Double {
        let done = DispatchSemaphore(value: 0)
        let t0 = now()
        let producer = Thread {
            var chunk = [UInt64](repeating: 0, count: batch)
            var i = 0
            chunk.withUnsafeMutableBufferPointer { c in
                while i < items {
                    let n = min(batch, items - i)
                    for k in 0..<n { c[k] = UInt64(i + k) }
                    var sent = 0
                    while sent < n { sent += ring.push(contentsOf: UnsafeBufferPointer(rebasing: c[sent..<n])) }
                    i += n
                }
            }
            done.signal()
        }
        producer.start()
        var got = 0
        var sum: UInt64 = 0
        var out = [UInt64](repeating: 0, count: batch)
        out.withUnsafeMutableBufferPointer { o in
            while got < items {
                let n = ring.pop(into: o)
                for k in 0..<n { sum &+= o[k] }
                got += n
            }
        }
        done.wait()
        precondition(sum == UInt64(items) * UInt64(items - 1) / 2, "lost or duplicated items")
        return Double(items) / (Double(now() - t0) / 1e9)
    }
    var spsc: [Double] = [], batched: [Double] = [], locked: [Double] = []
    for _ in 0..<3 {
        let ring = SPSCRing<UInt64>(capacity: 1024)
        spsc.append(run(push: { ring.push($0) }, pop: { ring.pop() }))
        batched.append(runBatched(SPSCRing<UInt64>(capacity: 1024), batch: 64))
        let queue = MutexQueue(capacity: 1024)
        locked.append(run(push: { queue.push($0) }, pop: { queue.pop() }))
    }
    print("ring: \(items) items producer → consumer, capacity 1024, 3 interleaved rounds (one at a time; in batches of 64; the mutex queue)")
    return [Row(benchmark: "ring", subject: "SPSCRing (lock-free), one item at a time", unit: "items/s", median: median(spsc), min: spsc.min()!, max: spsc.max()!,
                ratioToBaseline: median(zip(spsc, locked).map { $0 / $1 })),
            Row(benchmark: "ring", subject: "SPSCRing, batches of 64 (push(contentsOf:), pop(into:))", unit: "items/s", median: median(batched),
                min: batched.min()!, max: batched.max()!, ratioToBaseline: median(zip(batched, locked).map { $0 / $1 })),
            Row(benchmark: "ring", subject: "baseline: Mutex-protected queue", unit: "items/s", median: median(locked), min: locked.min()!, max: locked.max()!, ratioToBaseline: nil)]
}

/// A backend that remembers when the last command was applied (for the trigger benchmark).
final class LastAppliedBackend: HapticBackend, @unchecked Sendable {
    let last = Atomic<UInt64>(0)
    /// When the scheduler released the last tap.
    let released = Atomic<UInt64>(0)
    var name: String { "bench" }
    func open() {}
    func apply(_ command: OutputCommand, appliedAt: UInt64) {
        guard command.kind == .transient else { return }
        released.store(command.released, ordering: .relaxed)
        last.store(appliedAt, ordering: .releasing)
    }
    func stopAll() {}
    func close() {}
}

/// trigger: on a running engine, start(atTime: immediate) to the first command applied, against
/// the floor of the same mechanism (a semaphore post waking another thread), same run.
func triggerBenchmark(count: Int) throws -> [Distribution] {
    let backend = LastAppliedBackend()
    let engine = try HapticEngine(configuration: .init(backend: backend, lockMemory: true))
    try engine.start()
    defer { engine.stop() }
    let player = try engine.makePlayer(with: try AHAPPatternBuilder().transient(at: 0).build())
    var triggers: [Double] = [], toRelease: [Double] = [], toReturn: [Double] = []
    // The first 10 starts are a warm-up and not counted.
    for i in 0..<(count + 10) {
        Thread.sleep(forTimeInterval: 0.03)
        let t0 = MonotonicClock.nanoseconds()
        try player.start(atTime: HapticEngine.timeImmediate)
        let returned = MonotonicClock.nanoseconds()
        while backend.last.load(ordering: .acquiring) < t0 {
            if MonotonicClock.nanoseconds() - t0 > 2_000_000_000 {
                FileHandle.standardError.write(Data("error: trigger: no output within 2 s of a start\n".utf8))
                exit(1)
            }
        }
        if i >= 10 {
            let applied = backend.last.load(ordering: .acquiring)
            triggers.append(Double(applied - t0) / 1000)
            toRelease.append(Double(backend.released.load(ordering: .relaxed) &- t0) / 1000)
            toReturn.append(Double(returned - t0) / 1000)
        }
    }
    // Floor: how long a post on one thread takes to wake a waiting thread.
    let wake = DispatchSemaphore(value: 0), woke = Atomic<UInt64>(0), posted = Atomic<UInt64>(0)
    var floor: [Double] = []
    let waiter = Thread {
        for _ in 0..<count {
            wake.wait()
            woke.store(MonotonicClock.nanoseconds(), ordering: .releasing)
        }
    }
    waiter.start()
    for _ in 0..<count {
        Thread.sleep(forTimeInterval: 0.01)
        let t0 = MonotonicClock.nanoseconds()
        posted.store(t0, ordering: .releasing)
        wake.signal()
        while woke.load(ordering: .acquiring) < t0 {
            if MonotonicClock.nanoseconds() - t0 > 2_000_000_000 { break }
        }
        floor.append(Double(woke.load(ordering: .acquiring) - t0) / 1000)
    }
    // The same through the C API (libhapsync's entry points, called as C calls them), on the
    // same engine, interleaved with as many Swift starts so both see the same machine.
    let cEngine = hsEngineHandle(wrapping: engine)
    defer { _ = Handles.release(cEngine) }
    var builder: OpaquePointer?, cPattern: OpaquePointer?, cPlayer: OpaquePointer?
    guard hs_pattern_builder_create(&builder) == HS_OK, hs_pattern_builder_add_transient(builder, 0, 1, 0.5) == HS_OK,
          hs_pattern_builder_build(builder, &cPattern) == HS_OK, hs_player_create(cEngine, cPattern, &cPlayer) == HS_OK else {
        FileHandle.standardError.write(Data("error: trigger: the C API: \(String(cString: hs_last_error_message()))\n".utf8))
        exit(1)
    }
    defer { hs_player_destroy(cPlayer); hs_pattern_destroy(cPattern); hs_pattern_builder_destroy(builder) }
    var cTriggers: [Double] = [], swiftTriggers: [Double] = []
    for i in 0..<(count + 10) {
        for viaC in [true, false] {
            Thread.sleep(forTimeInterval: 0.03)
            let t0 = MonotonicClock.nanoseconds()
            if viaC { _ = hs_player_start(cPlayer, HS_TIME_IMMEDIATE) } else { try player.start(atTime: HapticEngine.timeImmediate) }
            while backend.last.load(ordering: .acquiring) < t0 {
                if MonotonicClock.nanoseconds() - t0 > 2_000_000_000 { break }
            }
            if i >= 10 {
                let v = Double(backend.last.load(ordering: .acquiring) - t0) / 1000
                if viaC { cTriggers.append(v) } else { swiftTriggers.append(v) }
            }
        }
    }
    print("trigger: 10 warm-up + \(count) immediate starts of a one-tap pattern on a running engine (\(engine.realtimeStatus)); then \(count) through the C API interleaved with \(count) more Swift ones")
    return [Distribution(benchmark: "trigger", subject: "start(atTime: immediate) → first output applied", values: triggers),
            Distribution(benchmark: "trigger", subject: "  of which: the start call itself (control side)", values: toReturn),
            Distribution(benchmark: "trigger", subject: "  of which: start → the scheduler released the tap", values: toRelease),
            Distribution(benchmark: "trigger", subject: "C API hs_player_start(HS_TIME_IMMEDIATE) → applied", values: cTriggers),
            Distribution(benchmark: "trigger", subject: "Swift start(atTime: immediate), interleaved with the C calls", values: swiftTriggers),
            Distribution(benchmark: "trigger", subject: "floor: semaphore post → other thread awake", values: floor)]
}

/// The dense patterns of the dispatch benchmark.
func densePatterns(seconds: Double) throws -> [(String, AHAPPattern)] {
    // 1 kHz: a sawtooth curve every 10 ms (0.2 ↔ 0.8) makes every 1 ms sample a new level command.
    let points = (0...Int(seconds * 100)).map { (time: Double($0) / 100, value: $0 % 2 == 0 ? 0.2 : 0.8) }
    var sawtooth = AHAPPatternBuilder()
    var t = 0.0
    while t < seconds {
        let d = min(30, seconds - t)
        sawtooth = sawtooth.continuous(at: t, duration: d, intensity: 1, sharpness: 0.5)
        t += 30
    }
    var curveStart = 0
    while curveStart < points.count {
        let chunk = Array(points[curveStart..<min(points.count, curveStart + 4000)])
        let base = chunk[0].time
        sawtooth = sawtooth.curve(.hapticIntensityControl, at: base, points: chunk.map { ($0.time - base, $0.value) })
        curveStart += 4000
    }
    // Texture-like: taps 10-30 ms apart (a fixed pseudo-random sequence).
    var texture = AHAPPatternBuilder()
    // The gaps come from the linear congruential sequence (Knuth's MMIX constants) the dispatch
    // tables in Bench/README.md were measured with; `SeededRandom` would change the pattern.
    var x: UInt64 = 12345, tap = 0.0
    while tap < seconds {
        texture = texture.transient(at: tap, intensity: 0.8, sharpness: 0.6)
        x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        tap += 0.010 + Double(x >> 33 % 21) / 1000
    }
    return [("1 kHz level stream", try sawtooth.build()), ("taps 10-30 ms apart", try texture.build())]
}

/// dispatch: release − scheduled for dense patterns on the engine, beside naive schedulers
/// (Thread.sleep and DispatchQueue.asyncAfter per command) and cyclictest at 1 kHz, same run.
/// After a warm-up (one second of each, discarded), `rounds` rounds of `seconds / rounds` each
/// interleave the subjects so that each sees the same machine; values of all rounds are pooled,
/// and each round's p99 is kept to show how steady it was.
func dispatchBenchmark(seconds: Double, rounds: Int) throws -> [Distribution] {
    let each = seconds / Double(rounds)
    let patterns = try densePatterns(seconds: each).map { ($0.0, try PatternTimeline(pattern: $0.1)) }
    var status = ""
    func engineRun(_ timeline: PatternTimeline) throws -> [Double] {
        let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: true, statisticsCapacity: timeline.commands.count + 16))
        try engine.start()
        let player = try engine.makePlayer(timeline: timeline)
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: engine.currentTime + 0.1)
        _ = done.wait(timeout: .now() + timeline.end + 10)
        status = "\(engine.realtimeStatus)"
        engine.stop()
        return engine.statistics.dispatchErrors.map { Double($0) / 1000 }
    }
    // Naive: one thread sleeping with Thread.sleep until each deadline.
    func sleepRun(_ timeline: PatternTimeline, limit: Double = .infinity) -> [Double] {
        let start = MonotonicClock.nanoseconds() + 100_000_000
        var naive: [Double] = []
        naive.reserveCapacity(timeline.commands.count)
        for c in timeline.commands where c.time <= limit {
            let deadline = start + UInt64(c.time * 1e9)
            let now = MonotonicClock.nanoseconds()
            if deadline > now { Thread.sleep(forTimeInterval: Double(deadline - now) / 1e9) }
            naive.append(Double(Int64(bitPattern: MonotonicClock.nanoseconds() &- deadline)) / 1000)
        }
        return naive
    }
    // Naive: DispatchQueue.asyncAfter for each command, scheduled up front.
    func asyncRun(_ timeline: PatternTimeline, limit: Double = .infinity) -> [Double] {
        let queue = DispatchQueue(label: "naive")
        let late = Mutex<[Double]>([])
        let group = DispatchGroup()
        let start = DispatchTime.now().uptimeNanoseconds + 100_000_000
        for c in timeline.commands where c.time <= limit {
            let deadline = start + UInt64(c.time * 1e9)
            group.enter()
            queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline)) {
                let error = Double(Int64(bitPattern: DispatchTime.now().uptimeNanoseconds &- deadline)) / 1000
                late.withLock { $0.append(error) }
                group.leave()
            }
        }
        group.wait()
        return late.withLock { $0 }
    }
    // Warm-up: a second of each subject (caches, page faults, CPU frequency), discarded.
    let warm = try PatternTimeline(pattern: try densePatterns(seconds: 1)[0].1)
    _ = try engineRun(warm)
    _ = sleepRun(warm, limit: 0.3)
    _ = asyncRun(warm, limit: 0.3)
    var pooled: [String: [Double]] = [:], perRound: [String: [Double]] = [:], order: [String] = []
    func add(_ subject: String, _ values: [Double]) {
        if pooled[subject] == nil { order.append(subject) }
        pooled[subject, default: []] += values
        perRound[subject, default: []].append(Distribution(benchmark: "", subject: "", values: values).percentile(99))
    }
    for _ in 0..<rounds {
        for (name, timeline) in patterns {
            add("engine: \(name)", try engineRun(timeline))
            add("naive Thread.sleep: \(name)", sleepRun(timeline))
            add("naive asyncAfter: \(name)", asyncRun(timeline))
        }
        // The kernel's own wake-up latency at the same rate and duration: the floor for pure sleeping.
        if let cyclic = cyclictest(seconds: each) { add("cyclictest 1 kHz (SCHED_FIFO 80, clock_nanosleep)", cyclic) }
    }
    for (name, timeline) in patterns {
        print("dispatch (\(name)): \(timeline.commands.count) commands per round, \(rounds) rounds of \(String(format: "%.1f", each)) s after a warm-up; engine \(status)")
    }
    if perRound["cyclictest 1 kHz (SCHED_FIFO 80, clock_nanosleep)"] == nil {
        print("dispatch: cyclictest not installed (apt-get install rt-tests); its floor is left out")
    }
    return order.map { Distribution(benchmark: "dispatch", subject: $0, values: pooled[$0]!, roundP99: perRound[$0]!) }
}

/// Runs cyclictest at 1 kHz for `seconds` and expands its histogram (µs) into values.
func cyclictest(seconds: Double) -> [Double]? {
    guard let path = ["/usr/bin/cyclictest", "/usr/local/bin/cyclictest"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = ["-m", "-p", "80", "-i", "1000", "-l", "\(Int(seconds * 1000))", "-q", "-h", "20000"]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = Pipe()
    guard (try? p.run()) != nil else { return nil }
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    var values: [Double] = []
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if f.count >= 2, let us = Double(f[0]), let n = Int(f[1]), n > 0 { values += Array(repeating: us, count: n) }
    }
    return values.isEmpty ? nil : values
}
