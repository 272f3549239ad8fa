import Foundation
import Glibc
import HapSyncAudioOutput
import HapSyncAudioStream
import HapSyncConcurrency
import HapSyncGeneration
import HapSyncHapticOutput
import HapSyncLiveTesting
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Synchronization
import Testing

@testable import HapSyncCLI

/// `hapsync live`'s session when the pass-through's distance is fixed anew while a transient
/// waits for its release: a click track fed to the session as a capture would (5 ms fragments at
/// the capture's pace, from a thread of the test's), played on through the engine's real audio
/// output to a pipe sink (the real sink, read at SCHED_FIFO with a timestamp per read), held
/// 100 ms behind so that each transient waits long for its release. Right after one click's
/// onset is found, the test disturbs the capture as a stall or a capture made anew does; every
/// click the pipe hears must have its transient where it hears it, and none may be felt without
/// its click.
@Suite("live: transients placed again after a new distance, end to end")
struct LivePlacedAgainTests {
    static let rate = 48_000.0
    static let clicks = 6
    static let spacing = 0.4
    /// When the first click begins, s: after the output's clock has fitted more than half a
    /// second of cycles, as it has in a live run by the time anything plays into its sink. At
    /// 0.25 s the first clicks were now and then heard 2-4 ms after their transients (the
    /// clock's first fit), closing in click by click to the others' 0.4 ms.
    static let firstClick = 0.75
    /// The click whose onset has just been found when the capture is disturbed.
    static let disturbed = 2
    static let hold = 4_800

    /// What the test does to the capture right after click `disturbed`'s onset was found.
    enum Disturbance {
        /// It stops for 40 ms and the distance is fixed anew as it goes on (a stall): the sound
        /// from then on plays 35 ms later than its transient was placed for.
        case stall
        /// It is made anew (`PassThroughAudio.activate`, as `LiveFeed`'s growth does): the old
        /// capture's tail, with the click in it, is skipped.
        case newCapture
        /// It is made anew 125 ms after the click began: the click was rendered (the sound is
        /// played on 100 ms behind the capture, the output's blocks rendered up to that distance
        /// behind the newest capture, give or take a block: 110 ms left it a few ms to spare,
        /// and a late block dropped it in about one run in four) and is on its way to the pipe,
        /// so it is heard where its transient was placed, which stays.
        case newCaptureAfterTheClickWentOut

        /// How long after the click began the capture is disturbed, s.
        var after: Double { self == .newCaptureAfterTheClickWentOut ? 0.125 : 0.025 }
    }

    /// The click track as the capture hands it on: mono, clicks as `LiveTests.clickTrack`'s
    /// (decaying 180 Hz bursts, 30 ms), `spacing` apart from `firstClick`.
    static func track() -> [Float] {
        var mono = [Float](repeating: 0, count: Int((firstClick + spacing * Double(clicks) + 0.5) * rate))
        let length = Int(rate) * 3 / 100, decay = rate / 250
        for k in 0..<clicks {
            let start = Int((firstClick + spacing * Double(k)) * rate)
            for i in 0..<length {
                mono[start + i] = 0.8 * Float(exp(-Double(i) / decay) * sin(2 * .pi * 180 * Double(i) / rate))
            }
        }
        return mono
    }

    @Test(.needsPulseAudio) func aStallMovesTheWaitingTransientToWhereItsClickNowPlays() async throws {
        try await run(.stall)
    }

    @Test(.needsPulseAudio) func aCaptureMadeAnewDropsTheTransientOfTheClickItSkips() async throws {
        try await run(.newCapture)
    }

    @Test(.needsPulseAudio) func aClickAlreadyOnItsWayKeepsItsTransient() async throws {
        try await run(.newCaptureAfterTheClickWentOut)
    }

    private func run(_ disturbance: Disturbance) async throws {
        let folder = try TemporaryDirectory("live-placed-again")
        defer { folder.remove() }
        try await retryingWhenStalled("live, placed again after \(disturbance)") {
            let reader = PipeSinkReader(sampleRate: Self.rate, seconds: 10)
            try reader.start()
            defer { reader.stop() }
            let passThrough = PassThroughAudio(capacityFrames: 1 << 16, hold: Self.hold, sampleRate: Self.rate)
            let tracePath = folder.url.appendingPathComponent("t-\(disturbance).jsonl").path
            let (audio, engine) = try LiveTests.tracedEngine(playingOnTo: reader.sinkName, passThrough: passThrough, trace: tracePath)
            defer { _ = engine.stop() }
            let session = LiveSession(engine: engine, detector: StreamingOnsetDetector(sampleRate: Self.rate), profile: .dualsense,
                                      passThrough: passThrough, audio: audio)
            let logPath = folder.url.appendingPathComponent("onsets-\(disturbance).jsonl").path
            let log = try LiveOnsetLog(path: logPath, replacing: true, rate: Self.rate)
            session.onsetLog = log
            let stopping = Atomic<Bool>(false)
            let ended = DispatchSemaphore(value: 0)
            Thread {
                session.run { stopping.load(ordering: .acquiring) }
                ended.signal()
            }.start()
            var running = true
            func endSession() {
                guard running else { return }
                running = false
                stopping.store(true, ordering: .releasing)
                ended.wait()
            }
            defer { endSession() }
            feed(Self.track(), to: session, passThrough: passThrough, disturbance: disturbance)
            usleep(400_000)
            let counts = session.counts
            _ = engine.stop()
            endSession()
            #expect(log.close() == nil)
            // The onset log's last word on each onset: the disturbed click's transient moved (to
            // the trace's time for it) or dropped, every other one a transient.
            let lines = LiveOnsetLog.settled(try LiveOnsetLog.read(contentsOf: logPath))
            let disturbed = switch disturbance {
            case .stall: "moved"
            case .newCapture: "dropped"
            case .newCaptureAfterTheClickWentOut: "transient"
            }
            #expect(lines.map(\.outcome) == (0..<Self.clicks).map { $0 != Self.disturbed ? "transient" : disturbed }, "\(lines)")

            let heard = ClickOnsets.frames(in: reader.recording)
            let taps = LiveTests.transients(URL(fileURLWithPath: tracePath)).sorted()
            let expected = disturbance == .newCapture ? Self.clicks - 1 : Self.clicks
            let said = "moved \(counts.moved), dropped \(counts.droppedAfterFix), \(counts.transients) transients, \(counts.unplaced) unplaced"
            #expect(heard.count == expected, "the pipe heard \(heard.count) clicks; \(said)")
            #expect(taps.count == expected, "\(taps.count) transients in the trace; \(said)")
            #expect(counts.transients == expected, "\(said)")
            switch disturbance {
            case .stall: #expect(counts.moved == 1 && counts.droppedAfterFix == 0, "\(said)")
            case .newCapture: #expect(counts.droppedAfterFix == 1 && counts.moved == 0, "\(said)")
            case .newCaptureAfterTheClickWentOut: #expect(counts.droppedAfterFix == 0 && counts.moved == 0, "\(said)")
            }
            guard heard.count == expected, taps.count == expected else { return }
            let offsets = zip(heard, taps).map { frame, tap in
                reader.heardTime(ofFrame: Int64(frame)).map { Double(Int64($0) - tap) / 1e6 } ?? .infinity
            }
            let placed = lines.compactMap(\.transientAt)
            #expect(LiveTests.logMatchesTrace(placed, taps), "the log's transients are the trace's: \(placed) against \(taps)")
            print("live, placed again after \(disturbance): heard by the pipe − the transient's time (ms): "
                  + offsets.map { String(format: "%.2f", $0) }.joined(separator: " ") + "; \(said)")
            #expect(offsets.allSatisfy { abs($0) <= 2 }, "a click more than 2 ms from its transient: \(offsets)")
        }
    }

    /// Hands `track` to `session` in 5 ms fragments at the capture's pace (each when its last
    /// frame would have reached a monitor), and disturbs the capture `disturbance.after` after
    /// click `disturbed` began (25 ms: its onset found, the detector looking 15 ms ahead).
    private func feed(_ track: [Float], to session: LiveSession, passThrough: PassThroughAudio, disturbance: Disturbance) {
        let fragment = Int(Self.rate) / 200
        let disturbAt = Int((Self.firstClick + Self.spacing * Double(Self.disturbed) + disturbance.after) * Self.rate)
        var start = MonotonicClock.nanoseconds()
        var first = 0, disturbed = false
        while first < track.count {
            let count = min(fragment, track.count - first)
            let due = start &+ UInt64(Double(first + count) / Self.rate * 1e9)
            let now = MonotonicClock.nanoseconds()
            if due > now { usleep(UInt32((due - now) / 1_000)) }
            track[first..<(first + count)].withUnsafeBufferPointer {
                session.captured($0, channels: 1, firstFrame: Int64(first))
            }
            first += count
            guard !disturbed, first >= disturbAt else { continue }
            disturbed = true
            switch disturbance {
            case .stall:
                // Nothing for 40 ms, then the distance fixed anew from the next fragment on: the
                // capture's pace goes on from there (the stall's 40 ms never come).
                passThrough.unfix()
                usleep(40_000)
                start &+= 40_000_000
            case .newCapture, .newCaptureAfterTheClickWentOut:
                passThrough.activate(hold: Self.hold)
            }
        }
    }
}
