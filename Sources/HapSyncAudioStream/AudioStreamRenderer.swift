import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import Synchronization

/// What every sound server's playback stream renders, written once: the scheduler's messages
/// taken, the players' voices mixed (`AudioMixer`) at the frames the stream's clock places them,
/// the engine's mute, and, when a waveform output rides in the stream, its drive signal added on
/// the driven channels. `PulseAudioOutput` calls `render` from libpulse's write callback,
/// `PipeWireOutput` from its process callback in PipeWire's data thread.
///
/// `prepare` runs on the control side before a stream starts; `render` on the stream's audio
/// thread only, and does not allocate, lock or block.
package final class AudioStreamRenderer: @unchecked Sendable {
    /// Scheduler → audio thread.
    package let messages = SPSCRing<AudioMessage>(capacity: 1024)
    /// Voices the mixer can hold at once (a started player reserves all its voices).
    package static let voiceCapacity = 256
    /// The name of the thread that renders, on every server (what `.ci/rt-alloc-check` watches).
    package static let threadName = "hapsync-audio"
    /// The name of a live capture's thread, which hands what it captured to the pass-through (the
    /// PulseAudio capture's mainloop, or the native PipeWire sink's data thread): one name, so that
    /// `ps -L`, the real-time line and `.ci/rt-alloc-check` find it either way.
    package static let captureThreadName = "hapsync-capture"
    /// Largest player slot the engine uses.
    package let maxPlayers: Int

    private var mixer = AudioMixer(sampleRate: AudioDecodingBudget.assumedOutputRate, capacity: AudioStreamRenderer.voiceCapacity)
    private let sources: UnsafeMutablePointer<Unmanaged<PlayerAudio>?>
    private let dropped = Atomic<Int>(0)
    private let written = Atomic<Int64>(0)
    private let muted = Atomic<Bool>(false)
    /// The drive mixed into the running stream: set by `prepare` before the stream starts,
    /// cleared by `finish` after its audio thread has stopped; the only one `render` reads.
    package private(set) var drive: WaveformDrive?
    /// With `drive`: what each of the stream's channels carries (`AudioChannelPosition.audio`,
    /// and whether the drive is added), and the blocks the audio (stereo) and the drive (mono)
    /// are rendered into before interleaving.
    private var channelRoles: [(audio: AudioChannelContent, drive: Bool)] = []
    private var stereoBlock: UnsafeMutablePointer<Float>?
    private var driveBlock: UnsafeMutablePointer<Float>?
    private var blockFrames = 0
    /// Captured audio played on in the stream (`hapsync live`), set by `prepare`; the only one
    /// `render` reads.
    package private(set) var passThrough: PassThroughAudio?

    /// A renderer for players in slots 0..<maxPlayers.
    package init(maxPlayers: Int) {
        self.maxPlayers = max(maxPlayers, 1)
        sources = .allocate(capacity: self.maxPlayers)
        sources.initialize(repeating: nil, count: self.maxPlayers)
    }

    deinit {
        sources.deallocate()
        stereoBlock?.deallocate()
        driveBlock?.deallocate()
    }

    /// Channels of each frame `render` writes: 2, or the drive's layout.
    package var channels: Int { drive == nil ? 2 : channelRoles.count }
    /// The most frames one `render` call fills (`Int.max` without a drive).
    package var maxFrames: Int { drive == nil ? .max : blockFrames }
    /// The first frame not yet rendered. Does not allocate, lock or block.
    package var nextFrame: Int64 { written.load(ordering: .acquiring) }
    /// Voices not played because the mixer was full.
    package var droppedVoices: Int { dropped.load(ordering: .relaxed) }
    /// Whether voices play silenced.
    package var isMuted: Bool {
        get { muted.load(ordering: .relaxed) }
        set { muted.store(newValue, ordering: .relaxed) }
    }
    /// Whether voices are playing or about to. Audio thread (or while it does not run).
    package var isPlaying: Bool { mixer.isPlaying }
    /// Makes `frame` the next frame to render, forward or back: silence left out or repeated, so
    /// that the stream's frames stay where the clock's line puts them. Only while no voice plays
    /// or waits and no drive rides in the stream; returns whether it did. Audio thread; does not
    /// allocate, lock or block.
    package func realignSilence(to frame: Int64) -> Bool {
        guard drive == nil, passThrough?.isActive != true, !mixer.isPlaying, frame >= 0 else { return false }
        written.store(frame, ordering: .releasing)
        return true
    }

    /// Registers a player's audio (control thread, before its start message reaches the audio thread).
    package func setSource(slot: Int, _ source: Unmanaged<PlayerAudio>?) {
        guard slot >= 0, slot < maxPlayers else { return }
        sources[slot] = source
    }

    /// Starts over for a stream at `sampleRate` (frame 0 next), with a drive signal mixed in on
    /// the channels of its layout (`WaveformChannels.layout`), or stereo audio alone, and
    /// captured audio played on (`passThrough`, which fixes its distance anew). Control side,
    /// before the stream starts.
    package func prepare(sampleRate: Double, live: LiveParameters?, drive: WaveformDrive?, passThrough: PassThroughAudio? = nil) {
        mixer = AudioMixer(sampleRate: sampleRate, capacity: Self.voiceCapacity)
        mixer.live = live
        written.store(0, ordering: .releasing)
        passThrough?.unfix()
        self.passThrough = passThrough
        self.drive = drive
        channelRoles = drive.map(Self.roles(for:)) ?? []
        if let drive {
            drive.reset(sampleRate: sampleRate)
            stereoBlock?.deallocate()
            driveBlock?.deallocate()
            blockFrames = Int(sampleRate)   // a second: more than any request
            stereoBlock = .allocate(capacity: 2 * blockFrames)
            driveBlock = .allocate(capacity: blockFrames)
        }
    }

    /// What each channel of a drive's layout carries: its position's audio and whether the drive
    /// is added. The one rule for every stream a drive rides in.
    package static func roles(for drive: WaveformDrive) -> [(audio: AudioChannelContent, drive: Bool)] {
        let layout = drive.channels.layout
        return zip(layout.positions, layout.driven).map { ($0.audio, $1) }
    }

    /// Forgets the drive and the pass-through once the stream's audio thread has stopped.
    /// Control side.
    package func finish() {
        drive = nil
        passThrough = nil
    }

    /// Takes the scheduler's messages and renders `frames` frames (at most `maxFrames`) of
    /// `channels` interleaved floats into `out`, placed by `clock`; returns the frames rendered.
    /// A stream that writes ahead (`AudioDevice.writesAhead`) tells the clock what it writes, so
    /// that frames written late get their floor (`AudioClock.noteWrite`); a pull stream, placed by
    /// its cycle's own timing, does not. Audio thread; does not allocate, lock or block.
    package func render(into out: UnsafeMutablePointer<Float>, frames requested: Int, clock: AudioClock, writesAhead: Bool) -> Int {
        while let m = messages.pop() {
            switch m.kind {
            case .start:
                if m.slot >= 0, Int(m.slot) < maxPlayers, let source = sources[Int(m.slot)] {
                    let lost = mixer.start(slot: m.slot, audio: source, startFrame: m.frame, from: m.from, rate: m.rate)
                    if lost > 0 { dropped.add(lost, ordering: .relaxed) }
                }
            case .stop: mixer.stop(slot: m.slot, atFrame: m.frame)
            case .stopAll: mixer.stopAll()
            }
        }
        let frames = min(requested, maxFrames)
        let first = written.load(ordering: .relaxed)
        // Frames written now are heard no earlier than now: after an underrun, the clock's floor.
        if writesAhead { clock.noteWrite(frame: first, at: MonotonicClock.nanoseconds()) }
        // The audio thread publishes the clock's fit, so reading it here never retries.
        let fit = clock.fit
        let blockTime = fit.time(ofFrame: first)
        let silent = muted.load(ordering: .relaxed)
        if let drive, let stereoBlock, let driveBlock {
            mixer.render(into: stereoBlock, frames: frames, firstFrame: first, blockTime: blockTime, nsPerFrame: fit.slope)
            if silent { stereoBlock.update(repeating: 0, count: frames * 2) }
            passThrough?.mix(into: stereoBlock, frames: frames, firstFrame: first)
            drive.render(into: driveBlock, frames: frames, time: blockTime ?? 0)
            interleave(audio: stereoBlock, drive: driveBlock, into: out, frames: frames)
        } else {
            mixer.render(into: out, frames: frames, firstFrame: first, blockTime: blockTime, nsPerFrame: fit.slope)
            if silent { out.update(repeating: 0, count: frames * 2) }
            passThrough?.mix(into: out, frames: frames, firstFrame: first)
        }
        // Releasing: the scheduler reading this knows these frames are committed.
        written.store(first + Int64(frames), ordering: .releasing)
        return frames
    }

    /// The stream's frames from the audio (stereo) and the drive signal (mono): the audio on the
    /// front pair (their mean on a mono layout), the drive added on the driven channels. Does not
    /// allocate, lock or block.
    private func interleave(audio: UnsafeMutablePointer<Float>, drive: UnsafeMutablePointer<Float>, into out: UnsafeMutablePointer<Float>,
                            frames: Int) {
        channelRoles.withUnsafeBufferPointer { roles in
            let n = roles.count
            for i in 0..<frames {
                let l = audio[2 * i], r = audio[2 * i + 1], d = drive[i]
                for c in 0..<n {
                    let role = roles[c]
                    var v: Float = switch role.audio {
                    case .left: l
                    case .right: r
                    case .mean: (l + r) / 2
                    case .none: 0
                    }
                    if role.drive { v += d }
                    out[i * n + c] = v
                }
            }
        }
    }
}
