import Foundation
import Glibc
import HapSyncAudioOutput
import HapSyncAudioStream
import HapSyncConcurrency
import HapSyncGeneration
import HapSyncHapticOutput
import HapSyncLiveTesting
import HapSyncMeasurement
import HapSyncPulseAudio
import HapSyncRuntime
import HapSyncTestSupport
import Testing

@testable import HapSyncCLI

// In the `hapsync live` suite: it makes the live sink too, so it may not run beside that
// suite's tests (serialized there).
extension LiveTests {
    /// A started engine writing its trace to `trace`, its audio output (as `--audio CHOICE`
    /// picks it, `auto` by default; 20 ms latency) to `sink` carrying `passThrough`: what
    /// `hapsync live` plays on through.
    static func tracedEngine(playingOnTo sink: String, passThrough: PassThroughAudio, trace: String,
                             choice: AudioServerChoice = .auto) throws -> (audio: SoundServerOutput, engine: HapticEngine) {
        let audio = try #require(choice.output(sink: sink, latency: 0.02, environment: ProcessInfo.processInfo.environment,
                                               passThrough: passThrough))
        let engine = try HapticEngine(configuration: HapticEngine.Configuration(backend: TraceBackend(path: trace, replacing: true), audio: audio))
        try engine.start()
        return (audio, engine)
    }

    /// `hapsync live`'s pieces made by hand through PulseAudio's protocol (pipewire-pulse): the
    /// live sink playing on to `real`, a 20 ms pass-through, a traced engine playing on to the
    /// real sink (its output as `--audio CHOICE` picks it), and the feed (its notes kept,
    /// `calmSeconds` before a step back), started.
    final class PulseFeedRig {
        let control: PulseConnection
        let liveSink: LiveSink
        let rate: Double
        let passThrough: PassThroughAudio
        let audio: SoundServerOutput
        let engine: HapticEngine
        let feed: LiveFeed
        let notes = Locked<[String]>([])
        let tracePath: String

        init(playingOnTo realName: String, trace: String, calmSeconds: Double = LiveFeed.calmSeconds, choice: AudioServerChoice = .auto) throws {
            control = try PulseConnection(clientName: "HapSync test", server: nil, threadName: "hapsync-test")
            do {
                let real = try LiveRun.realSink(realName, on: control)
                liveSink = try LiveRun.makeLiveSink(on: control, playingOnTo: real)
            } catch {
                control.close()
                throw error
            }
            rate = Double(liveSink.rate)
            passThrough = PassThroughAudio(capacityFrames: 1 << 16, hold: LiveRun.holdFrames(delayMs: 20, rate: rate), sampleRate: rate)
            tracePath = trace
            do {
                let (audio, engine) = try LiveTests.tracedEngine(playingOnTo: realName, passThrough: passThrough, trace: trace, choice: choice)
                (self.audio, self.engine) = (audio, engine)
                let detector = StreamingOnsetDetector(sampleRate: rate)
                feed = LiveFeed(engine: engine, audio: audio, passThrough: passThrough, captureSink: liveSink.name, channels: liveSink.channels,
                                rate: rate, source: .monitor(server: nil), profile: .dualsense, sensitivity: detector.sensitivity, minimumGap: detector.minimumGap,
                                calmSeconds: calmSeconds)
            } catch {
                _ = try? liveSink.remove()
                control.close()
                throw error
            }
            let notes = notes
            feed.onNote = { note in notes.withLock { $0.append(note) } }
            do {
                try feed.start()
            } catch {
                close()
                throw error
            }
        }

        /// Stops the feed and the engine, removes the live sink, closes the connection.
        func close() {
            feed.stop()
            _ = engine.stop()
            _ = try? liveSink.remove()
            control.close()
        }
    }

    /// `hapsync live`'s feed on pipewire-pulse, told its played-on stream underran (as the session
    /// tells it): the capture is made anew with 10 ms, then 20 ms fragments (at most a step a second,
    /// none past 20 ms), the sound held back 25, then 35 ms (its lag says so), and a click track
    /// played into the live sink afterwards is still felt where the real sink (a pipe sink read at
    /// SCHED_FIFO) plays it.
    @Test(.needsPipeWirePulse) func afterUnderrunsOnPipeWireTheCaptureTakesLongerFragmentsAndClicksStayInSync() async throws {
        let paplay = try #require(Self.which("paplay"), "paplay from pulseaudio-utils (.ci/install-deps --tests)")
        let folder = try TemporaryDirectory("live-growth")
        defer { folder.remove() }
        let track = try Self.clickTrack(in: folder.url)
        try await retryingWhenStalled("live growth, pipe sink") { watch in
            let reader = PipeSinkReader()
            try reader.start()
            defer { reader.stop() }
            let rig = try PulseFeedRig(playingOnTo: reader.sinkName, trace: folder.url.appendingPathComponent("t.jsonl").path)
            defer { rig.close() }
            let (liveSink, rate, passThrough, engine, feed, notes, tracePath) = (rig.liveSink, rig.rate, rig.passThrough, rig.engine, rig.feed, rig.notes, rig.tracePath)
            // Three underruns told a second and a bit apart: two steps, then none past 20 ms.
            for step in 1...3 {
                feed.session.onUnderran?()
                #expect(poll(seconds: 5) { notes.withLock { $0.count } >= min(step, 2) }, "notes: \(notes.withLock { $0 })")
                usleep(1_100_000)
            }
            let said = notes.withLock { $0 }
            #expect(said.count == 2, "\(said)")
            #expect(said.first?.contains("10 ms fragments") == true && said.first?.contains("25.0 ms behind") == true, "\(said)")
            #expect(said.last?.contains("20 ms fragments") == true && said.last?.contains("35.0 ms behind") == true, "\(said)")
            #expect(passThrough.hold == LiveRun.holdFrames(delayMs: 35, rate: rate))
            // The server was asked for the longer fragment (pipewire-pulse grants what is asked).
            #expect(abs(feed.captureFragmentFrames - Int(0.020 * rate)) <= Int(0.001 * rate), "granted \(feed.captureFragmentFrames) frames")
            let played = try Self.run(paplay, ["--device=\(liveSink.name)", track.path])
            #expect(played.status == 0, "\(played.out)")
            usleep(300_000)
            feed.stop()
            #expect(feed.summary.contains("the capture took 20 ms fragments"), "\(feed.summary)")
            #expect(feed.failure == nil, "\(feed.failure ?? "")")
            // The capture in force (the grown one) asked for real-time scheduling as the first did
            // (as root: granted, at the engine's capture priority), and the summary says what it got.
            let captureThread = feed.captureThread
            #expect(captureThread?.name == MonitorCapture.threadName && feed.realtimeStatus.threads.last == captureThread, "\(feed.realtimeStatus)")
            if getuid() == 0 {
                #expect(captureThread.map { $0.granted && $0.priority == engine.configuration.captureThreadPriority } == true, "\(feed.realtimeStatus)")
            }
            // Played on 35 ms behind the capture, and the stream to the pipe on top of that.
            let lag = try #require(feed.session.counts.lags.percentileMs(50))
            #expect(lag >= 35, "the sound played on \(lag) ms after it reached the live sink")
            _ = engine.stop()
            Self.expectClicksFelt(reader: reader, trace: tracePath, summary: feed.summary, watch: watch,
                                  what: "capture grown to 20 ms (\(feed.captureFragmentFrames) frames granted, lag p50 \(String(format: "%.1f", lag)) ms)")
        }
    }

    /// The native PipeWire sink, told its played-on stream underran: it asks for 10 ms cycles and
    /// holds the sound further back; once the sound has gone a calm spell (2 s here, a minute in
    /// `hapsync live`) without another, in silence, it asks for 5 ms cycles again and the sound
    /// is held where it began (the lag the underrun added comes off), and a click track played
    /// into the sink after that is felt where the real sink (a pipe sink read at SCHED_FIFO)
    /// plays it, its lag the run's first.
    @Test(.needsPulseAudio, .enabled(if: nativePipeWire, "PipeWire does not answer natively (run under bash .ci/with-pipewire)"))
    func aNativeSinkGrownAfterAnUnderrunStepsBackAfterACalmSpell() async throws {
        let paplay = try #require(Self.which("paplay"), "paplay from pulseaudio-utils (.ci/install-deps --tests)")
        let folder = try TemporaryDirectory("live-settle")
        defer { folder.remove() }
        let track = try Self.clickTrack(in: folder.url)
        try await retryingWhenStalled("live step back, native sink") { watch in
            let reader = PipeSinkReader()
            try reader.start()
            defer { reader.stop() }
            let group = "hapsync-test-\(getpid())"
            let passThrough = PassThroughAudio(capacityFrames: 1 << 16, hold: LiveRun.holdFrames(delayMs: 20, rate: 48_000), sampleRate: 48_000)
            let audio = try #require(AudioServerChoice.pipewire.output(sink: reader.sinkName, latency: LiveFeed.fragmentSteps[0],
                                                                       environment: ProcessInfo.processInfo.environment, passThrough: passThrough, group: group))
            let tracePath = folder.url.appendingPathComponent("t.jsonl").path
            let engine = try HapticEngine(configuration: HapticEngine.Configuration(backend: TraceBackend(path: tracePath, replacing: true), audio: audio))
            try engine.start()
            defer { _ = engine.stop() }
            let rate = audio.clock.fit.sampleRate
            try #require(rate == 48_000, "the graph runs at \(rate) Hz")
            let initialHold = passThrough.hold
            let detector = StreamingOnsetDetector(sampleRate: rate)
            let feed = LiveFeed(engine: engine, audio: audio, passThrough: passThrough, captureSink: LiveCommand.sinkName, channels: 2, rate: rate,
                                source: .pipeWireSink(remote: nil, group: group), profile: .dualsense, sensitivity: detector.sensitivity,
                                minimumGap: detector.minimumGap, calmSeconds: 2)
            let notes = Locked<[String]>([])
            feed.onNote = { note in notes.withLock { $0.append(note) } }
            try feed.start()
            defer { feed.stop() }
            let firstCycle = feed.captureFragmentFrames
            feed.session.onUnderran?()
            #expect(poll(seconds: 5) { !notes.withLock { $0 }.isEmpty }, "no growth")
            let grown = notes.withLock { $0.first } ?? ""
            #expect(grown.contains("10 ms cycles") && passThrough.hold > initialHold, "\(grown); hold \(passThrough.hold)")
            // The calm spell (2 s, no underrun, nothing playing: quiet), then the step back.
            #expect(poll(seconds: 8) { notes.withLock { $0.count } >= 2 }, "no step back: \(notes.withLock { $0 })")
            let back = notes.withLock { $0.last } ?? ""
            #expect(back.contains("5 ms cycles again") && back.contains("skipped while quiet"), "\(back)")
            #expect(passThrough.hold == initialHold, "hold \(passThrough.hold), at first \(initialHold)")
            #expect(poll(seconds: 2) { feed.captureFragmentFrames == firstCycle }, "the sink's cycle \(feed.captureFragmentFrames) frames, at first \(firstCycle)")
            // The lag is the first cycle's again: the 20 ms hold and a 5.3 ms cycle, not the grown 25.7 and 10.7.
            try Self.expectSteppedBack(paplay: paplay, track: track, into: LiveCommand.sinkName, feed: feed, engine: engine, reader: reader,
                                       trace: tracePath, watch: watch, what: "native sink stepped back", lagUnder: 30)
        }
    }

    /// The same through pipewire-pulse, where the capture is made anew to change its fragment,
    /// and the sound played on through PulseAudio's protocol too (`--audio pulse`), its writer
    /// starved until the server runs it dry (a real underrun, which grows its stream's tlength):
    /// grown to 10 ms fragments (the sound 25 ms behind), back to 5 ms and the 20 ms hold after a
    /// calm spell in silence, the stream's latency back to where it began with the server
    /// granting it, the clicks played after that felt where the pipe plays them, the lag the
    /// run's first.
    @Test(.needsPipeWirePulse) func aCaptureGrownThroughPipeWirePulseStepsBackAfterACalmSpell() async throws {
        let paplay = try #require(Self.which("paplay"), "paplay from pulseaudio-utils (.ci/install-deps --tests)")
        let folder = try TemporaryDirectory("live-settle")
        defer { folder.remove() }
        let track = try Self.clickTrack(in: folder.url)
        try await retryingWhenStalled("live step back, pipewire-pulse") { watch in
            let reader = PipeSinkReader()
            try reader.start()
            defer { reader.stop() }
            let rig = try PulseFeedRig(playingOnTo: reader.sinkName, trace: folder.url.appendingPathComponent("t.jsonl").path, calmSeconds: 2,
                                       choice: .pulse)
            defer { rig.close() }
            let (liveSink, rate, passThrough, engine, feed, notes, tracePath) = (rig.liveSink, rig.rate, rig.passThrough, rig.engine, rig.feed, rig.notes, rig.tracePath)
            let output = try #require(rig.audio as? PulseAudioOutput)
            let began = try #require(output.grantedLatency, "no stream open")
            let before = output.underruns
            try #require(output.runDry(), "the server reported no underrun after five starved writes")
            let underruns = output.underruns - before
            #expect(poll(seconds: 5) { !notes.withLock { $0 }.isEmpty }, "no growth")
            #expect(output.currentLatency > 0.02, "the stream's latency did not grow: \(output.currentLatency)")
            #expect(notes.withLock { $0.first }?.contains("10 ms fragments") == true, "\(notes.withLock { $0 })")
            #expect(poll(seconds: 8) { notes.withLock { $0.count } >= 2 }, "no step back: \(notes.withLock { $0 })")
            let back = notes.withLock { $0.last } ?? ""
            #expect(back.contains("5 ms fragments again") && back.contains("20.0 ms behind instead of 25.0"), "\(back)")
            #expect(passThrough.hold == LiveRun.holdFrames(delayMs: 20, rate: rate))
            #expect(abs(feed.captureFragmentFrames - Int(0.005 * rate)) <= Int(0.001 * rate), "granted \(feed.captureFragmentFrames) frames")
            #expect(output.currentLatency == 0.02, "the stream's latency did not step back: \(output.currentLatency)")
            #expect(poll(seconds: 2) { abs((output.grantedLatency ?? 0) - began) < 0.0015 },
                    "the server grants \(output.grantedLatency ?? 0) s, at first \(began) s")
            // The first hold's and latency's lag (45.5 ms here, the output's stream through
            // pipewire-pulse too): under the 25 ms hold and the grown stream's (about 10 ms more).
            try Self.expectSteppedBack(paplay: paplay, track: track, into: liveSink.name, feed: feed, engine: engine, reader: reader,
                                       trace: tracePath, watch: watch, what: "pipewire-pulse capture stepped back", lagUnder: 49,
                                       underrunsMade: underruns)
        }
    }

    /// After a step back: the click track played into `sink`, the feed and the engine stopped; the
    /// summary says it stepped back once and ended as it began, every click is felt where the pipe
    /// hears it (`expectClicksFelt`), and the lag is under `lagUnder` ms. Underruns beyond the
    /// test's own (`underrunsMade`) are a busy machine's: the attempt runs again.
    static func expectSteppedBack(paplay: String, track: URL, into sink: String, feed: LiveFeed, engine: HapticEngine, reader: PipeSinkReader,
                                  trace: String, watch: StallWatch, what: String, lagUnder: Double, underrunsMade: Int = 0,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        let played = try run(paplay, ["--device=\(sink)", track.path])
        #expect(played.status == 0, "\(played.out)", sourceLocation: sourceLocation)
        usleep(300_000)
        feed.stop()
        let summary = feed.summary
        // A real underrun (a busy machine) grows and steps back on its own: this attempt says so and runs again.
        if feed.playedOn.underruns > underrunsMade {
            watch.report("the sound played on underran \(plural(feed.playedOn.underruns - underrunsMade, "time")) by itself")
        }
        #expect(summary.contains("stepped back 1 time") && summary.contains("ending with 5 ms fragments, the sound 20.0 ms behind"),
                "\(summary)", sourceLocation: sourceLocation)
        _ = engine.stop()
        expectClicksFelt(reader: reader, trace: trace, summary: summary, watch: watch, what: what, sourceLocation: sourceLocation)
        let lag = try #require(feed.session.counts.lags.percentileMs(50), sourceLocation: sourceLocation)
        #expect(lag < lagUnder, "the sound played on \(lag) ms after it reached the live sink", sourceLocation: sourceLocation)
    }

    /// Every click of the click track reached the pipe and got its transient in `trace` (the
    /// k-th in time), the transients at the clicks' spacing; each click the pipe times heard
    /// within 10 ms of its transient, the median within 1 ms. The pipe's reads time a click by
    /// those within half a second of it: where the pipe sink's own timing jumped there, its
    /// server hiccuped and the click is not timed (seen as paplay's stream began, in about one
    /// run in six with the other live suite beside this one, the capture from the same server
    /// coming late at that moment too). With fewer than half left, `watch` hears of it and the
    /// attempt fails, to run again. Printed with `summary`.
    static func expectClicksFelt(reader: PipeSinkReader, trace: String, summary: String, watch: StallWatch, what: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        let clicks = ClickOnsets.frames(in: reader.recording)
        let taps = transients(URL(fileURLWithPath: trace)).sorted()
        #expect(clicks.count == Self.clicks, "found \(clicks.count) clicks in the pipe", sourceLocation: sourceLocation)
        #expect(taps.count == Self.clicks, "\(taps.count) transients in the trace; \(summary)", sourceLocation: sourceLocation)
        guard clicks.count == Self.clicks, taps.count == Self.clicks else { return }
        // The transients come at the clicks' spacing (the k-th is the k-th click's, also for
        // clicks the pipe cannot time below): none missing with a stray one in its place.
        let gaps = zip(taps.dropFirst(), taps).map { Double($0 - $1) / 1e9 }
        #expect(gaps.allSatisfy { abs($0 - Self.spacing) <= 0.05 }, "transients' gaps (s): \(gaps)", sourceLocation: sourceLocation)
        let window = Int64(reader.sampleRate / 2)
        let jumps = reader.discontinuities
        let nearJump = clicks.map { frame in jumps.contains { abs($0.frame - Int64(frame)) <= window } }
        let offsets = clicks.indices.filter { !nearJump[$0] }.map { k in
            reader.heardTime(ofFrame: Int64(clicks[k])).map { Double(Int64($0) - taps[k]) / 1e6 } ?? .infinity
        }
        if offsets.count < (Self.clicks + 1) / 2 {
            watch.report("the pipe sink's timing jumped near \(Self.clicks - offsets.count) of the clicks ("
                + jumps.map { String(format: "%+.1f ms at frame %lld", $0.jump / 1e6, $0.frame) }.joined(separator: ", ") + ")")
        }
        // Too few to judge: this attempt fails (as a stall, just reported) and runs again.
        #expect(offsets.count >= (Self.clicks + 1) / 2, "only \(offsets.count) of \(Self.clicks) clicks timed by the pipe", sourceLocation: sourceLocation)
        print("live, \(what): heard by the pipe − the transient's time (ms): \(offsets.map { String(format: "%.2f", $0) }.joined(separator: " "))"
              + (offsets.count < Self.clicks ? " (\(Self.clicks - offsets.count) near a jump of the pipe's timing, not timed)" : "") + "\n\(summary)")
        let sorted = offsets.sorted()
        #expect(!sorted.isEmpty && abs(sorted[sorted.count / 2]) <= 1, "median off by more than 1 ms: \(offsets)", sourceLocation: sourceLocation)
        #expect(offsets.allSatisfy { abs($0) <= 10 }, "a click more than 10 ms from its transient (or not timed by the pipe): \(offsets); \(summary)",
                sourceLocation: sourceLocation)
    }
}
