import HapSyncPipeWire
import HapSyncPulseAudio
import Testing

/// Which sound servers answer this test process, asked once (CI starts its servers before the
/// tests run; `.ci/with-pulse` and `.ci/with-pipewire` start them for a developer).
public enum LiveSoundServers {
    /// A server speaking the PulseAudio protocol (PulseAudio, or PipeWire's pipewire-pulse) answers
    /// where `PULSE_SERVER` or the default socket points.
    public static let pulse: Bool = PulseAudioOutput().canConnect()
    /// A PipeWire server answers over libpipewire.
    public static let pipeWire: Bool = PipeWireOutput.answers()
    /// The PulseAudio-protocol server that answers is PipeWire's, pipewire-pulse.
    public static let pipeWirePulse: Bool = {
        guard pulse, let connection = try? PulseConnection(clientName: "HapSync test", server: nil, threadName: "hapsync-test") else { return false }
        defer { connection.close() }
        return PulseConnection.Server(serverName: connection.withLock { connection.serverName() }) == .pipeWire
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when a PulseAudio-protocol server answers; otherwise it is skipped with
    /// that reason, so a plain `swift test` passes on a machine without one.
    public static var needsPulseAudio: Self {
        .enabled(if: LiveSoundServers.pulse, "no PulseAudio server answers (run the tests under bash .ci/with-pulse)")
    }

    /// Runs the test only when the PulseAudio-protocol server is pipewire-pulse; otherwise skipped
    /// with that reason.
    public static var needsPipeWirePulse: Self {
        .enabled(if: LiveSoundServers.pipeWirePulse, "the PulseAudio-protocol server is not pipewire-pulse (run the tests under bash .ci/with-pipewire)")
    }

    /// Runs the test only when a PipeWire server answers natively; otherwise skipped with that reason.
    public static var needsPipeWire: Self {
        .enabled(if: LiveSoundServers.pipeWire, "no PipeWire server answers (run the tests under bash .ci/with-pipewire)")
    }

    /// Runs the test only when `hapsync play`'s default audio (`--audio auto`: PipeWire natively,
    /// else PulseAudio) has a server to play on; otherwise skipped with that reason.
    public static var needsSoundServer: Self {
        .enabled(if: LiveSoundServers.pulse || LiveSoundServers.pipeWire,
                 "no sound server answers (run the tests under bash .ci/with-pulse or .ci/with-pipewire)")
    }
}
