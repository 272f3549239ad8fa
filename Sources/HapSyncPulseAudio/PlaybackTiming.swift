import CPulse
import HapSyncRuntime

extension PulseAudioOutput {
    /// Which frame of a playback stream is heard at the moment a timing reply was taken, from that
    /// reply's read index, sink latency and transport latency: the one place where the server's
    /// timing becomes "frame F heard at T". Pure, so tests drive it with made-up replies.
    ///
    /// - **PulseAudio**: the server had read up to `read_index` and the sink held `sink_usec`
    ///   more when it took the reply's figures; a reply from the same machine is stamped with
    ///   the server's clock when it was sent (`timestamp`; libpulse's "synchronized clocks"),
    ///   and `transport_usec` is the time from our request to that stamp. The figures were
    ///   taken within that time (the request reached the server, its sink's thread was asked,
    ///   then the reply was stamped), so the frame heard at the stamp is taken to be
    ///   `read_index` − `sink_usec` + half of `transport_usec`: off by at most half of it either
    ///   way (a reply stamped with our own clock, the server's not in step, is taken as it is:
    ///   its stamp already adds half the round trip). `pa_stream_get_time` adds all of it, which
    ///   places every frame up to the transport time early (measured through a real ALSA card in
    ///   the VM test, where transport is about 2 ms: clicks played 0.1-1.9 ms after their taps'
    ///   times in five runs, one within 1 ms; with half, six of eight within ±1 ms).
    /// - **PipeWire** (pipewire-pulse, found by its server name): the read index counts what the
    ///   graph took at the start of its last cycle for that cycle, one quantum that is only
    ///   beginning to play, and the sink latency is only the device's delay (0 for a null or pipe
    ///   sink) and leaves that quantum out (its `pulse-server.c`: `do_process_done` adds the
    ///   cycle's `read_inc` to `read_index`; `do_get_playback_latency` replies with the stream's
    ///   `delay` and `now`). So the frame heard at the cycle's start is `read_index` − one
    ///   quantum; taken as is, haptics came one quantum early (−5.3 ms at the 20 ms default
    ///   latency, a 256-frame quantum; −10.5 ms at 50 ms). The quantum is what the server took per
    ///   cycle: the smallest step of the read index between replies, which needs replies from
    ///   consecutive cycles (the output asks after every write there). The reply comes after the
    ///   cycle started (it answers the request our write sent after that cycle's data request), so
    ///   the frame heard at the reply is later still; the transport latency is the part of that
    ///   wait known from the reply, and what is left (the server's request reaching us, our
    ///   write) makes the estimate late by a fraction of a millisecond, never early.
    ///
    /// Does not allocate, lock or block.
    package struct PlaybackTiming: Sendable {
        /// The server the replies come from.
        package let server: PulseConnection.Server
        /// Frames per second of the stream.
        package let sampleRate: Double
        /// PipeWire's quantum, frames (0 until two replies from consecutive cycles were seen).
        package private(set) var quantum: Int64 = 0
        private var lastRead: Int64 = -1
        // A larger quantum is believed only after `quantumPatience` replies without the old step.
        private var largerStep: Int64 = .max
        private var repliesWithoutQuantum = 0
        private static let quantumPatience = 16
        /// Replies left during which a larger step is believed at once (`quantumMayGrow`).
        private var expectingGrowth = 0
        /// How many replies after our own latency change a larger step is believed at once.
        package static let growthWindow = 32
        /// Bytes per frame of the stream (8: stereo float).
        private let frameBytes: Int64
        /// How far the last reply's frame lagged the clock's line, when that was a jump not yet
        /// believed (`believe(lineAhead:)`), frames.
        private var lateCandidate: Int64?
        /// The read index (frames) of the reply that made `lateCandidate`.
        private var lateCandidateRead: Int64 = -1

        /// Timing for a stream at `sampleRate` on `server`, of `frameBytes` bytes a frame.
        package init(server: PulseConnection.Server, sampleRate: Double, frameBytes: Int64 = 8) {
            self.server = server
            self.sampleRate = sampleRate
            self.frameBytes = frameBytes
        }

        /// The frame heard when the reply was taken, from its read index (bytes), sink latency and
        /// transport latency (µs), and whether libpulse found the server's clock in step with
        /// ours (`synchronized_clocks`: the reply is stamped with the server's time; if not, with
        /// ours plus half the round trip, when the figures are taken to be current); nil on
        /// PipeWire until its quantum is known. Does not allocate, lock or block.
        package mutating func heardFrame(readIndex: Int64, sinkUsec: UInt64, transportUsec: UInt64, synchronizedClocks: Bool = true) -> Int64? {
            let read = readIndex / frameBytes
            let sink = Double(sinkUsec), transport = Double(transportUsec)
            switch server {
            case .pulseAudio:
                let taken = synchronizedClocks ? transport / 2 : 0
                return read - Int64(((sink - taken) * sampleRate / 1e6).rounded())
            case .pipeWire:
                let unsure = noteStep(read - lastRead)
                lastRead = read
                guard quantum > 0, !unsure else { return nil }
                return read - quantum - Int64(((sink - transport) * sampleRate / 1e6).rounded())
            }
        }

        /// Whether a reply whose frame the clock's line already places `lineAhead` frames further
        /// on (the reply says that frame is heard later than the line does) is to be observed. On
        /// PipeWire a reply taken late (our request delayed: the mainloop thread preempted, or
        /// stalled past an underrun) carries the last cycle's read index with a later time, and
        /// places frames late by up to a quantum (seen: 8-24 ms, taking the clock's line with it
        /// for a cycle, and the haptics released by it late). Such a jump, later by more than
        /// the clock's step threshold, is believed only when the next reply from a later cycle (a
        /// read index of its own: replies of one cycle are one opinion) says the same within
        /// 1 ms (the audio did move later); an earlier one, which a late reply cannot make, at
        /// once. PulseAudio's replies carry the sink's latency at the time taken: all believed.
        /// Called after `heardFrame` for the same reply. Does not allocate, lock or block.
        package mutating func believe(lineAhead: Int64) -> Bool {
            guard server == .pipeWire, Double(lineAhead) * 1e9 / sampleRate > AudioClock.stepThreshold else {
                lateCandidate = nil
                return true
            }
            // A reply from the same cycle (the same read index, taken late as well) is no second
            // opinion (seen: two such replies moving the line 21 ms late after an underrun).
            if lateCandidate != nil, lastRead == lateCandidateRead { return false }
            guard let previous = lateCandidate, abs(previous - lineAhead) <= Int64(sampleRate * 0.001) else {
                lateCandidate = lineAhead
                lateCandidateRead = lastRead
                return false
            }
            lateCandidate = nil   // believed: the line moves to it
            return true
        }

        /// `heardFrame` for a reply as libpulse gives it; nil for one whose read index it marked
        /// corrupt. Does not allocate, lock or block.
        package mutating func heardFrame(_ info: pa_timing_info) -> Int64? {
            guard info.read_index_corrupt == 0 else { return nil }
            return heardFrame(readIndex: info.read_index, sinkUsec: info.sink_usec, transportUsec: info.transport_usec,
                              synchronizedClocks: info.synchronized_clocks != 0)
        }

        /// Turns a timing reply taken at monotonic time `at` into "frame F was heard at T" for
        /// `clock` (nothing for a corrupt reply, or on PipeWire before its quantum is known).
        /// Mainloop thread.
        package mutating func observe(_ info: pa_timing_info, at: UInt64, into clock: AudioClock) {
            guard let frame = heardFrame(info) else { return }
            clock.observe(frame: frame, heardAt: at)
        }

        /// The stream's buffer was just made longer (after an underrun): on PipeWire its graph's
        /// quantum may grow with it, and until the estimate follows, frames are taken to be heard
        /// a quantum's growth early (seen: a tap 21 ms early after 1024 → 2048). For the next
        /// `growthWindow` replies a larger step is believed at once for the replies after it; the
        /// reply with that step places nothing, as it may as well span two cycles of the old
        /// quantum (a reply delayed under load) and would place frames late by one (seen: taps
        /// 8-30 ms late around underruns). The next reply's step settles it: the same again, or a
        /// smaller one that brings the estimate back. Does not allocate, lock or block.
        package mutating func quantumMayGrow() {
            expectingGrowth = Self.growthWindow
        }

        /// Learns the quantum from a step of the read index: the smallest step seen (cycles taken
        /// one at a time), or, after `quantumPatience` replies that all stepped further (at once
        /// while `quantumMayGrow` holds), the smallest of those (the quantum grew). Returns whether
        /// the step is not to be trusted for the frame it places: one that grew the quantum at once.
        private mutating func noteStep(_ step: Int64) -> Bool {
            guard lastRead >= 0, step > 0 else { return false }
            let expecting = expectingGrowth > 0
            if expecting { expectingGrowth -= 1 }
            if quantum > 0, step > quantum, expecting {
                quantum = step
                largerStep = .max
                repliesWithoutQuantum = 0
                return true
            } else if quantum == 0 || step <= quantum {
                quantum = step
                largerStep = .max
                repliesWithoutQuantum = 0
            } else {
                largerStep = min(largerStep, step)
                repliesWithoutQuantum += 1
                if repliesWithoutQuantum >= Self.quantumPatience {
                    quantum = largerStep
                    largerStep = .max
                    repliesWithoutQuantum = 0
                }
            }
            return false
        }
    }
}
