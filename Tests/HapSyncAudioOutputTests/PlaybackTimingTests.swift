import Testing
@testable import HapSyncAudioOutput

/// `PulseAudioOutput.PlaybackTiming` against made-up timing replies. For PipeWire the replies come
/// from a model of pipewire-pulse (its `pulse-server.c`, 0.3.65 and later): every `quantum` frames
/// the graph runs a cycle; at cycle k (time k·quantum/rate) it takes frames [k·q, (k+1)·q) for that
/// cycle, which start to be heard then (a null or pipe sink: device delay 0), and the read index
/// becomes (k+1)·q; a reply taken a little after the cycle (our request follows our write, which
/// follows the cycle's data request) reports that read index, sink latency 0 and the time from our
/// request to the server as transport latency. The truth at a reply taken `after` seconds into
/// cycle k is frame k·q + after·rate.
@Suite("Playback timing: which frame a server's reply says is heard")
struct PlaybackTimingTests {
    static let rate = 48_000.0

    /// A pipewire-pulse reply taken `after` s into cycle `cycle` of a `quantum`-frame graph, and the
    /// frame truly heard then.
    static func pipeWireReply(cycle: Int64, after: Double, quantum: Int64, transport: Double)
        -> (readIndex: Int64, sinkUsec: UInt64, transportUsec: UInt64, truth: Double) {
        ((cycle + 1) * quantum * 8, 0, UInt64(transport * 1e6), Double(cycle * quantum) + after * rate)
    }

    @Test func pulseAudioIsTheReadIndexLessTheSinkLatencyPlusHalfTheTransport() {
        var timing = PulseAudioOutput.PlaybackTiming(server: .pulseAudio, sampleRate: Self.rate)
        // Read up to 96,000 frames; 5 ms in the sink (240 frames); 1 ms from our request to the
        // reply's stamp (48 frames), the figures taken somewhere within it: half of it.
        let frame = timing.heardFrame(readIndex: 96_000 * 8, sinkUsec: 5_000, transportUsec: 1_000)
        let expected: Int64 = 96_000 - 240 + 24
        #expect(frame == expected)
        // A server whose clock is not in step with ours: the reply's stamp is our own time plus
        // half the round trip already, taken as it is.
        let unsynchronized = timing.heardFrame(readIndex: 96_000 * 8, sinkUsec: 5_000, transportUsec: 1_000, synchronizedClocks: false)
        let asTaken: Int64 = 96_000 - 240
        #expect(unsynchronized == asTaken)
        #expect(timing.quantum == 0)
    }

    @Test func theServerKindComesFromItsName() {
        #expect(PulseConnection.Server(serverName: "pulseaudio") == .pulseAudio)
        #expect(PulseConnection.Server(serverName: "PulseAudio (on PipeWire 0.3.65)") == .pipeWire)
        #expect(PulseConnection.Server(serverName: "PulseAudio (on PipeWire 1.2.7)") == .pipeWire)
        #expect(PulseConnection.Server(serverName: "") == .pulseAudio)
    }

    /// Replies one per cycle, 0.1-0.9 ms after it, 30 µs of transport: each frame given is the
    /// truth or before it (by no more than the reply's wait beyond the transport), never after.
    /// Read as PulseAudio is read, the same replies were one quantum ahead: haptics one quantum early.
    @Test(arguments: [Int64(256), 512, 1024])
    func pipeWireRepliesGiveTheFrameHeardNeverOneAhead(quantum: Int64) throws {
        var timing = PulseAudioOutput.PlaybackTiming(server: .pipeWire, sampleRate: Self.rate)
        var asIfPulseAudio = PulseAudioOutput.PlaybackTiming(server: .pulseAudio, sampleRate: Self.rate)
        let transport = 30e-6
        for cycle in Int64(0)..<200 {
            let after = 100e-6 + Double(cycle % 9) * 100e-6
            let r = Self.pipeWireReply(cycle: cycle, after: after, quantum: quantum, transport: transport)
            let frame = timing.heardFrame(readIndex: r.readIndex, sinkUsec: r.sinkUsec, transportUsec: r.transportUsec)
            let read = asIfPulseAudio.heardFrame(readIndex: r.readIndex, sinkUsec: r.sinkUsec, transportUsec: r.transportUsec)
            let uncorrected = try #require(read)
            #expect(Double(uncorrected) - r.truth > Double(quantum) - after * Self.rate)
            guard cycle > 0 else {
                #expect(frame == nil, "the quantum is not known from one reply")
                continue
            }
            let f = Double(try #require(frame))
            #expect(f <= r.truth + 1)
            #expect(r.truth - f <= (after - transport) * Self.rate + 1)
        }
        #expect(timing.quantum == quantum)
    }

    @Test func aMissedCycleDoesNotChangeTheQuantum() {
        var timing = PulseAudioOutput.PlaybackTiming(server: .pipeWire, sampleRate: Self.rate)
        // Replies after cycles 0, 1, 3, 4, 7: steps of 1, 2, 1 and 3 quanta.
        for cycle: Int64 in [0, 1, 3, 4, 7] {
            let r = Self.pipeWireReply(cycle: cycle, after: 200e-6, quantum: 256, transport: 0)
            _ = timing.heardFrame(readIndex: r.readIndex, sinkUsec: r.sinkUsec, transportUsec: r.transportUsec)
        }
        #expect(timing.quantum == 256)
    }

    /// Other clients change the graph's quantum: a smaller one is taken at the first step that
    /// shows it; a larger one once 16 replies in a row stepped further than the old.
    /// pipewire-pulse replies whose read index steps as told (sink and transport latency 0).
    struct Replies {
        var timing = PulseAudioOutput.PlaybackTiming(server: .pipeWire, sampleRate: PlaybackTimingTests.rate)
        /// The read index so far, frames.
        var read: Int64 = 0
        /// A reply `step` frames on from the last; the frame it says is heard.
        mutating func reply(step: Int64) -> Int64? {
            read += step
            return timing.heardFrame(readIndex: read * 8, sinkUsec: 0, transportUsec: 0)
        }
    }

    @Test func theQuantumFollowsTheGraph() {
        var replies = Replies()
        for _ in 0..<10 { _ = replies.reply(step: 512) }
        #expect(replies.timing.quantum == 512)
        let afterSmaller = replies.reply(step: 128)
        #expect(afterSmaller == replies.read - 128)
        #expect(replies.timing.quantum == 128)
        for k in 1...16 {
            _ = replies.reply(step: 1024)
            #expect(replies.timing.quantum == (k < 16 ? 128 : 1024))
        }
        let afterLarger = replies.reply(step: 1024)
        #expect(afterLarger == replies.read - 1024)
    }

    /// After our own stream's buffer grew (an underrun), a larger step is believed at once for
    /// `growthWindow` replies: the quantum is never taken smaller than it is while the graph
    /// follows (the frames would be placed early). A step over two old cycles, taken for the
    /// quantum meanwhile, places frames late until the next single step brings it back; after the
    /// window, growth needs the 16 replies again.
    /// On PipeWire a reply taken late places its frames late by up to a quantum: a jump of the
    /// line later by more than the clock's step is believed only when the next reply agrees.
    @Test func aLateReplyAloneDoesNotMoveTheLineOnPipeWire() {
        // Each reply from its own cycle (read index one quantum on), unless `sameCycle`.
        var read: Int64 = 0
        func believed(_ timing: inout PulseAudioOutput.PlaybackTiming, _ lineAhead: Int64, sameCycle: Bool = false) -> Bool {
            if !sameCycle { read += 1024 }
            _ = timing.heardFrame(readIndex: read * 8, sinkUsec: 0, transportUsec: 0)
            return timing.believe(lineAhead: lineAhead)
        }
        var pipeWire = PulseAudioOutput.PlaybackTiming(server: .pipeWire, sampleRate: Self.rate)
        let late = Int64(0.012 * Self.rate)   // 12 ms: a reply taken 12 ms after its cycle
        #expect(believed(&pipeWire, 0) == true)
        #expect(believed(&pipeWire, Int64(0.004 * Self.rate)) == true, "within the step threshold: slewed as usual")
        #expect(believed(&pipeWire, late) == false, "one late reply: not observed")
        #expect(believed(&pipeWire, 2) == true, "the next on the line: observed")
        #expect(believed(&pipeWire, late) == false)
        #expect(believed(&pipeWire, late + 20) == true, "two agreeing within 1 ms: the audio did move later")
        #expect(believed(&pipeWire, late) == false)
        #expect(believed(&pipeWire, 2 * late) == false, "two that disagree: neither")
        #expect(believed(&pipeWire, -late) == true, "earlier: a late reply cannot make that")
        #expect(believed(&pipeWire, late) == false)
        #expect(believed(&pipeWire, late, sameCycle: true) == false, "a reply from the same cycle is no second opinion")
        #expect(believed(&pipeWire, late + 10) == true, "the next cycle's agrees: believed")
        var pulse = PulseAudioOutput.PlaybackTiming(server: .pulseAudio, sampleRate: Self.rate)
        #expect(believed(&pulse, late) == true, "PulseAudio's replies carry the latency at the time taken")
    }

    @Test func afterOurBufferGrewALargerStepIsBelievedAtOnce() {
        var replies = Replies()
        for _ in 0..<10 { _ = replies.reply(step: 1024) }
        replies.timing.quantumMayGrow()
        _ = replies.reply(step: 1024)
        #expect(replies.timing.quantum == 1024)
        let grown = replies.reply(step: 2048)
        #expect(replies.timing.quantum == 2048, "believed at the first larger step")
        #expect(grown == nil, "the reply with that step places nothing: it may span two cycles of the old quantum")
        let confirmed = replies.reply(step: 2048)
        #expect(confirmed == replies.read - 2048, "the same step again: frames placed by the new quantum")
        let spanning = replies.reply(step: 4096)   // a reply that spans two cycles
        #expect(replies.timing.quantum == 4096 && spanning == nil, "believed for the replies after, placing nothing itself")
        let back = replies.reply(step: 2048)
        #expect(replies.timing.quantum == 2048 && back == replies.read - 2048, "the next single step brings it back, never late by a cycle")
        for _ in 0..<(PulseAudioOutput.PlaybackTiming.growthWindow) { _ = replies.reply(step: 2048) }
        _ = replies.reply(step: 4096)
        #expect(replies.timing.quantum == 2048, "past the window, one larger step is not believed")
    }
}
