import HapSyncRuntime

/// A channel of a stream HapSync opens, by where the sound server places it. Each server's output
/// names it in its own terms (PulseAudio's `pa_channel_position_t`, PipeWire's SPA positions).
package enum AudioChannelPosition: Sendable, Equatable {
    /// Front left: the audio's left channel.
    case frontLeft
    /// Front right: the audio's right channel.
    case frontRight
    /// Rear left: on a DualSense, the left voice-coil actuator.
    case rearLeft
    /// Rear right: on a DualSense, the right voice-coil actuator.
    case rearRight
    /// The one channel of a mono stream: the mean of the audio's two.
    case mono

    /// What of the stereo audio this channel carries: its side on the front pair, both sides'
    /// mean on a mono stream, none on the rear pair.
    package var audio: AudioChannelContent {
        switch self {
        case .frontLeft: .left
        case .frontRight: .right
        case .mono: .mean
        case .rearLeft, .rearRight: .none
        }
    }
}

/// What of a stream's stereo audio one of its channels carries (`AudioChannelPosition.audio`).
package enum AudioChannelContent: Sendable, Equatable {
    /// The left channel.
    case left
    /// The right channel.
    case right
    /// The mean of both.
    case mean
    /// Silence (the drive signal alone, where one is added).
    case none
}

extension HapticOutputSpec.WaveformChannels {
    /// The stream's channel positions for this choice, and which of them carry the drive signal:
    /// the one layout every sound server's stream uses.
    package var layout: (positions: [AudioChannelPosition], driven: [Bool]) {
        switch self {
        case .rear: return ([.frontLeft, .frontRight, .rearLeft, .rearRight], [false, false, true, true])
        case .mono: return ([.mono], [true])
        case .left: return ([.frontLeft, .frontRight], [true, false])
        case .right: return ([.frontLeft, .frontRight], [false, true])
        case .all: return ([.frontLeft, .frontRight], [true, true])
        }
    }
}
