import Foundation

/// One audio voice of a pattern: an `AudioCustom` file or an `AudioContinuous` tone, with when it
/// plays and its own settings. Dynamic audio parameters act on it through `PatternTimeline.voiceState`.
///
/// Semantics (docs/rendering.md):
/// - `AudioCustom` without EventDuration plays its file once: it ends when the file runs out at
///   the playback rate in force when it starts. With EventDuration it ends at start + EventDuration:
///   a longer file is cut, a shorter one is followed by silence, or repeated when looping.
/// - With `EventWaveformUseVolumeEnvelope` (default true) an `AudioCustom` voice fades in over its
///   first and out over its last `RenderOptions.audioFadeLength` (5 ms) so it never clicks; without
///   it the file starts and stops at full level. Attack/decay/release do not act on files.
/// - `AudioContinuous` is a synthesized tone under the same envelope as a continuous haptic (driven
///   by the Audio...TimeControl parameters): frequency 220 Hz × 2^pitch (110 to 440 Hz), and a
///   timbre that goes from a pure sine at brightness 0 to a band-limited sawtooth (harmonics 1...8
///   at 1/n) at brightness 1, mixed linearly.
/// - Pitch of a file is a playback rate of 2^pitch (one octave down to one octave up, duration
///   changing with it). Brightness of a file is a low-pass filter with cutoff 200 Hz × 100^brightness
///   (200 Hz to 20 kHz; brightness 1 is no filtering).
public struct AudioVoice: Sendable, Equatable {
    /// Where the samples come from.
    public enum Source: Sendable, Equatable {
        /// An audio file, by its `EventWaveformPath`.
        case file(String)
        /// The synthesized tone of an `AudioContinuous` event.
        case tone
    }

    /// Index of the event in the pattern's `Pattern` array.
    public var entryIndex: Int
    /// File or tone.
    public var source: Source
    /// Pattern time the voice starts, seconds.
    public var start: Double
    /// Pattern time the voice ends, seconds; nil when the file's length is unknown and no
    /// EventDuration bounds it.
    public var end: Double?
    /// The file's own length in seconds at its natural rate, when known.
    public var fileLength: Double?
    /// `EventWaveformLoopEnabled`.
    public var loop: Bool
    /// `EventWaveformUseVolumeEnvelope` (files) or true (tones, which always use their envelope).
    public var useVolumeEnvelope: Bool
    /// Event parameters: AudioVolume, AudioPan, AudioPitch, AudioBrightness.
    public var volume: Double
    /// AudioPan, -1...1.
    public var pan: Double
    /// AudioPitch, -1...1.
    public var pitch: Double
    /// AudioBrightness, 0...1.
    public var brightness: Double
    /// The tone's envelope (tones only).
    public var envelope: Envelope?

    /// Base frequency of the synthesized tone at pitch 0, Hz.
    public static let toneBaseFrequency = 220.0

    /// Playback rate of a file for a pitch: 2^pitch.
    public static func playbackRate(pitch: Double) -> Double { pow(2, pitch) }
    /// Low-pass cutoff for a brightness: 200 Hz × 100^brightness.
    public static func cutoff(brightness: Double) -> Double { 200 * pow(100, brightness) }
    /// Tone frequency for a pitch: 220 Hz × 2^pitch.
    public static func toneFrequency(pitch: Double) -> Double { toneBaseFrequency * pow(2, pitch) }
}

/// The settings of one voice at one moment, dynamic parameters applied.
public struct AudioVoiceState: Sendable, Equatable {
    /// Linear gain: volume × AudioVolumeControl × envelope or fades (0 when not playing).
    public var gain: Double
    /// Pan −1...1 (AudioPan + AudioPanControl, clamped).
    public var pan: Double
    /// Pitch −1...1 (AudioPitch + AudioPitchControl, clamped).
    public var pitch: Double
    /// Brightness 0...1 (AudioBrightness + AudioBrightnessControl, clamped).
    public var brightness: Double

    /// Makes a state.
    public init(gain: Double, pan: Double, pitch: Double, brightness: Double) {
        self.gain = gain
        self.pan = pan
        self.pitch = pitch
        self.brightness = brightness
    }
}
