import HapSyncAudioOutput
import HapSyncHapticOutput
import HapSyncRuntime

/// `--haptics waveform:auto[:CHANNELS]` (and `HAPSYNC_HAPTICS=waveform:auto`): the sink of the
/// DualSense (or DualSense Edge) the sound server has, its actuators on the rear channels.
///
/// - A sink is a DualSense's by its `device.vendor.id` and `device.product.id` (the ids of
///   `GamepadModel.known`'s models with voice-coil actuators), or, when the server gives no ids,
///   by its name (`WaveformOutput.Sink.isDualSense`).
/// - One such sink: that one. Several: the one paired (`DualSensePairing`) with the rumble pad,
///   the `evdev:` output's pad when one is given, else the pad `evdev:auto` would choose; among
///   what is left, the only one with four channels. Otherwise it fails, listing them.
/// - A DualSense sink of fewer than four channels (a stereo card profile) has no rear channels
///   for the actuators: it fails, saying how to choose the 4-channel profile, unless the channels
///   were given as `mono`, `left`, `right` or `all`.
public enum WaveformAutoSink {
    /// The sink chosen, and why.
    public struct Choice: Sendable, Equatable {
        /// The sink.
        public var sink: WaveformOutput.Sink
        /// The channels to drive, as asked (nil: the sink's layout decides, `rear` on its four).
        public var channels: HapticOutputSpec.WaveformChannels?
        /// The pad paired with it, if one is.
        public var pad: InputDeviceInfo?
        /// Why this one, for a note: "the only DualSense sink", "the only DualSense sink paired with
        /// /dev/input/event16, the rumble pad".
        public var reason: String
    }

    /// Why no sink was chosen: what was looked for and found, and what to do.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The text for the user.
        public var description: String
    }

    /// Chooses the sink from the server's `sinks` (or why it did not answer) and the input
    /// `devices`, pairing them through `sysfs`; `rumblePad` is the path of the pad the rumble
    /// output plays on (nil: the one `evdev:auto` would choose among `devices`); `channels` as
    /// the spec gave them.
    public static func choose(sinks: Result<[WaveformOutput.Sink], any Error>, devices: [InputDeviceInfo], rumblePad: String?,
                              channels: HapticOutputSpec.WaveformChannels?, sysfs: SysfsReading) throws(Failure) -> Choice {
        let listed: [WaveformOutput.Sink]
        switch sinks {
        case .success(let found): listed = found
        case .failure(let error):
            // The server's own reason, without the audio output's advice to play without audio.
            var why = "\(error)"
            if case .noServer(let reason)? = error as? PulseAudioOutput.PulseError { why = reason }
            throw Failure(description: "no sound server answers (\(why)), so there is no DualSense sink to play waveform haptics on; "
                              + "start one (PipeWire or PulseAudio), or check PULSE_SERVER")
        }
        let pairs = DualSensePairing.pairs(devices: devices, sinks: listed, sysfs: sysfs)
        let candidates = listed.filter(\.isDualSense)
        guard !candidates.isEmpty else { throw Failure(description: noneFound(among: listed.count, pairs: pairs)) }
        let pad = rumblePad.map(InputDeviceProbe.eventNodePath) ?? InputDeviceProbe.firstRumbleDevice(in: devices)?.path
        var left = candidates
        var reasons: [String] = []
        if left.count > 1, let pad {
            let paired = left.filter { sink in pairs.contains { $0.sink == sink && $0.pad?.path == pad } }
            if !paired.isEmpty {
                left = paired
                reasons.append("paired with \(pad), the rumble pad")
            }
        }
        if left.count > 1 {
            let quad = left.filter { $0.channels >= 4 }
            if quad.count == 1 {
                left = quad
                reasons.append("of four channels")
            }
        }
        guard left.count == 1, let sink = left.first else {
            throw Failure(description: several(left, pairs: pairs))
        }
        if sink.channels < 4, channels == nil || channels == .rear {
            throw Failure(description: "\(sink.name), the DualSense's sink, has \(sink.channels) channel\(sink.channels == 1 ? "" : "s"): "
                              + "its card's profile is not the 4-channel one, so there are no rear channels for the actuators. "
                              + "Choose its Analog Surround 4.0 profile ('pactl list cards' names it; 'pactl set-card-profile CARD PROFILE')")
        }
        let reason = candidates.count == 1 ? "the only DualSense sink" : "the only DualSense sink " + reasons.joined(separator: ", and ")
        let paired = pairs.first { $0.sink == sink }?.pad
        return Choice(sink: sink, channels: channels, pad: paired, reason: reason)
    }

    /// The text when no sink is a DualSense's: what was looked for, among how many, and what to do
    /// (a pad on Bluetooth is named: its actuators are not reachable there).
    private static func noneFound(among count: Int, pairs: [DualSensePair]) -> String {
        let models = GamepadModel.withVoiceCoilActuators.map { "a \($0.name)'s (\($0.idsText))" }.joined(separator: " or ")
        var text = "no DualSense sink on the sound server: looked among its \(count) sink\(count == 1 ? "" : "s") for one whose "
            + "device.vendor.id and device.product.id are \(models), or, without ids, whose name says DualSense or Wireless_Controller. "
        for pair in pairs where pair.sink == nil {
            guard let pad = pair.pad else { continue }
            text += "\(pad.path) is a \(pair.model.name) without a sink: \(pair.note ?? "not paired"). "
        }
        return text + "A DualSense's actuators are a sound card on USB: plug it in with a cable; 'hapsync devices' lists the sinks "
            + "(name one with --haptics waveform:SINK:rear)"
    }

    /// The text when several remain, each with its pairing.
    private static func several(_ sinks: [WaveformOutput.Sink], pairs: [DualSensePair]) -> String {
        let listed = sinks.map { sink in
            let pair = pairs.first { $0.sink == sink }
            let model = pair?.model.name ?? sink.actuatorModel?.name ?? "DualSense"
            return "\(sink.name) (\(model), \(sink.channels) channels, " + (pair?.pad.map { "paired with \($0.path)" } ?? "no pad paired") + ")"
        }
        return "\(sinks.count) DualSense sinks, and nothing tells which to play on: "
            + listed.joined(separator: "; ")
            + ". Name one with --haptics waveform:SINK:rear, or give its pad with --haptics evdev:PATH ('hapsync devices' shows the pairs)"
    }
}
