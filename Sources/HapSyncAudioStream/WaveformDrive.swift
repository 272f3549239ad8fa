import Foundation
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import Synchronization

/// The drive signal of a waveform haptic output, as the stream that carries it wants it: commands
/// placed at stream frames (from the output thread), rendered block by block (on the audio thread)
/// with `WaveformSynth`, each command at its frame or, if that frame has gone, at the block's start
/// (counted late). One of these feeds either the waveform output's own stream or, when the audio
/// plays to the same sink, the audio output's stream, mixed there (`PulseAudioOutput`).
///
/// `place`, `render` and `silence` do not allocate, lock or block; they meet through a lock-free ring.
package final class WaveformDrive: @unchecked Sendable {
    /// One command for the audio thread: what, and at which frame.
    private struct Drive: BitwiseCopyable {
        /// What a command does to the actuators.
        enum Action: UInt8, BitwiseCopyable {
            /// Holds a level (a continuous event's intensity and sharpness).
            case level
            /// Plays a transient's burst.
            case transient
            /// Stops: level 0.
            case silence
        }
        var frame: Int64
        var kind: Action
        var intensity: Float
        var sharpness: Float
    }

    /// The channels carrying the signal, and the profile driving them.
    package let channels: HapticOutputSpec.WaveformChannels
    /// Commands whose frame had already been rendered.
    package var lateCommands: Int { late.load(ordering: .relaxed) }
    /// Commands lost because the ring was full (nothing rendered them: the stream had stopped).
    package var droppedCommands: Int { drives.overflowCount }
    /// The first frame not yet rendered. Does not allocate, lock or block.
    package var nextFrame: Int64 { rendered.load(ordering: .acquiring) }
    /// Where each block's record goes (a trace), set before the stream starts.
    package var recorder: WaveformBlockRecorder?
    /// How far ahead of its sound the stream renders (`RenderAheadGauge`), ns. Does not
    /// allocate, lock or block.
    package var renderAhead: UInt64 { gauge.value }
    /// Where `render` notes how far ahead it renders (given at init: it may outlive the drive).
    package let gauge: RenderAheadGauge

    /// Producers: the output thread, and the engine's stopping thread once the output thread has
    /// been joined: one at a time.
    private let drives = SPSCRing<Drive>(capacity: 4096, serializedProducers: true)
    private var pending: Drive?
    private var synth: WaveformSynth
    private let late = Atomic<Int>(0)
    private let rendered = Atomic<Int64>(0)
    /// A low-pass on the drive signal, Hz (a bass shaker's; nil: none). Control side, before the
    /// stream starts (`reset` makes the filter for the stream's rate).
    package var lowPassHz: Double? {
        didSet { lowPass = LowPass(cutoff: lowPassHz, sampleRate: synth.sampleRate) }
    }
    private var lowPass: LowPass?

    /// A silent drive for `channels` at `sampleRate`, noting its render-ahead in `gauge`.
    package init(channels: HapticOutputSpec.WaveformChannels, sampleRate: Double, gauge: RenderAheadGauge = RenderAheadGauge()) {
        self.channels = channels
        self.gauge = gauge
        synth = WaveformSynth(profile: channels.profile, sampleRate: sampleRate)
    }

    /// Starts afresh at frame 0 at `sampleRate` (a stream about to start; control side, with no
    /// stream rendering).
    package func reset(sampleRate: Double) {
        synth = WaveformSynth(profile: channels.profile, sampleRate: sampleRate)
        // This thread drains the ring, then hands both roles to the threads that come next.
        drives.resetOwnership()
        while drives.pop() != nil {}
        drives.resetOwnership()
        pending = nil
        rendered.store(0, ordering: .releasing)
        lowPass = LowPass(cutoff: lowPassHz, sampleRate: sampleRate)
    }

    /// Places a command at `frame` (a past frame: the next block's start). Output thread; does
    /// not allocate, lock or block.
    package func place(_ kind: OutputCommand.Kind, intensity: Float, sharpness: Float, frame: Int64) {
        let code: Drive.Action = switch kind {
        case .level: .level
        case .transient: .transient
        case .stopAll: .silence
        }
        _ = drives.push(Drive(frame: frame, kind: code, intensity: intensity, sharpness: sharpness))
    }

    /// Silences the actuators at the next frame rendered. Does not allocate, lock or block.
    package func silence() {
        _ = drives.push(Drive(frame: rendered.load(ordering: .acquiring), kind: .silence, intensity: 0, sharpness: 0))
    }

    /// Renders the next `frames` frames (mono, the drive signal) into `output`; `time`: when the
    /// block's first frame is heard (for the block record; 0 when not known yet), `now`: the
    /// clock's time at this render (for `renderAhead`: how long before its end is heard). Audio thread; does not allocate, lock or
    /// block.
    package func render(into output: UnsafeMutablePointer<Float>, frames: Int, time: UInt64, now: UInt64 = MonotonicClock.nanoseconds()) {
        // A command for the block's last frame must be here before the block is rendered.
        if time > 0 {
            let last = time &+ UInt64(Double(frames) * 1e9 / synth.sampleRate)
            gauge.note(last > now ? last - now : 0)
        }
        let first = rendered.load(ordering: .relaxed)
        var position = 0, transients: Int32 = 0
        while position < frames {
            if pending == nil { pending = drives.pop() }
            guard let d = pending else {
                synth.render(into: output + position, count: frames - position)
                position = frames
                break
            }
            let at = d.frame - first
            if at <= Int64(position) {
                // Late: its frame was already rendered (in an earlier block, or earlier in this one
                // behind a command placed before it).
                if at < Int64(position) { late.add(1, ordering: .relaxed) }
                switch d.kind {
                case .level: synth.setLevel(intensity: Double(d.intensity), sharpness: Double(d.sharpness))
                case .transient:
                    synth.trigger(intensity: Double(d.intensity), sharpness: Double(d.sharpness))
                    transients += 1
                case .silence: synth.setLevel(intensity: 0, sharpness: 0)
                }
                pending = nil
                continue
            }
            let end = Int(min(Int64(frames), at))
            synth.render(into: output + position, count: end - position)
            position = end
        }
        lowPass?.filter(output, count: frames)
        rendered.store(first + Int64(frames), ordering: .releasing)
        recorder?.record(WaveformBlock(frame: first, frames: Int32(clamping: frames), time: time, intensity: Float(synth.levelIntensity),
                                       sharpness: Float(synth.levelSharpness), frequency: Float(synth.currentFrequency), transients: transients))
    }
}

/// A second-order Butterworth low-pass (RBJ's cookbook, Q = 1/√2) over a drive signal, in place.
/// `filter` does not allocate, lock or block.
struct LowPass {
    private let b0: Double, b1: Double, b2: Double, a1: Double, a2: Double
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    /// A filter at `cutoff` Hz for `sampleRate`; nil without a cutoff, or one at or above Nyquist.
    init?(cutoff: Double?, sampleRate: Double) {
        guard let cutoff, cutoff > 0, cutoff < sampleRate / 2 else { return nil }
        let w = 2 * Double.pi * cutoff / sampleRate, alpha = sin(w) / 2.squareRoot()   // sin(w) / 2Q
        let a0 = 1 + alpha
        b0 = (1 - cos(w)) / 2 / a0
        b1 = (1 - cos(w)) / a0
        b2 = b0
        a1 = -2 * cos(w) / a0
        a2 = (1 - alpha) / a0
    }

    mutating func filter(_ x: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count {
            let input = Double(x[i])
            let y = b0 * input + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            (x2, x1, y2, y1) = (x1, input, y1, y)
            x[i] = Float(y)
        }
    }
}

/// How far ahead of its sound a stream renders a waveform drive, ns: over each `window` blocks the
/// least time from a block's render to its last frame being heard (a command for that frame must
/// be there before the block is rendered), and the greatest such least so far (a single block rendered late does not count; it only grows). A command must reach the
/// drive at least this long before its sound. Kept apart from the drive so that it outlives a
/// drive made anew when its output reopens. `value` is read from any thread; `note` is the audio
/// thread's. Neither allocates, locks or blocks.
package final class RenderAheadGauge: @unchecked Sendable {
    /// Blocks in one window (about 100 ms at 10 ms blocks).
    package static let window = 8
    private let greatest = Atomic<UInt64>(0)
    private var windowLeast: UInt64 = .max
    private var windowBlocks = 0

    /// A gauge that has seen nothing (0).
    package init() {}

    /// The greatest window least so far, ns.
    package var value: UInt64 { greatest.load(ordering: .relaxed) }

    /// Takes one block's render-ahead into the current window; a full window's least raises
    /// `value` when greater.
    package func note(_ ns: UInt64) {
        windowLeast = min(windowLeast, ns)
        windowBlocks += 1
        guard windowBlocks >= Self.window else { return }
        if windowLeast > greatest.load(ordering: .relaxed) { greatest.store(windowLeast, ordering: .relaxed) }
        windowLeast = .max
        windowBlocks = 0
    }
}
