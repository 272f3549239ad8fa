import Foundation

/// How an engine is set up: threads or manual pumping, real-time requests, capacity, audio and
/// how haptics follow it, idle shutdown, modes and policy.
extension HapticEngine {
    /// How the engine runs its scheduler.
    public enum Threading: Sendable {
        /// Real threads on CLOCK_MONOTONIC (the clock must be a `MonotonicClock`).
        case realtime
        /// No threads; the caller drives time with `pump()` (for tests with a manual clock).
        case manual
    }

    /// Settings of an engine.
    public struct Configuration {
        /// Where haptic commands go.
        public var backend: HapticBackend
        /// Engine time; `MonotonicClock` unless testing.
        public var clock: EngineClock
        /// Threads or manual pumping.
        public var threading: Threading
        /// The scheduler sleeps until this long before a deadline, then spins (default 150 µs).
        public var spinMargin: UInt64
        /// SCHED_FIFO priority asked for the scheduler thread (default 80; the output thread asks
        /// one less, `outputThreadPriority`, and the outputs' own threads two less,
        /// `deviceThreadPriority`).
        public var realtimePriority: Int32
        /// The output thread's SCHED_FIFO priority: one below the scheduler's (at least 1).
        public var outputThreadPriority: Int32 { max(1, realtimePriority - 1) }
        /// The priority the audio device's and backend's own threads (`RealtimeThreaded`: the
        /// sound server's mainloop that mixes) ask for: two below the scheduler's (at least 1),
        /// so audio rendering outranks every normal process and never the haptic threads.
        public var deviceThreadPriority: Int32 { max(1, realtimePriority - 2) }
        /// The priority of a capture thread that feeds the outputs (`hapsync live`'s recording
        /// of the live sink, which it analyses and plays on): three below the scheduler's (at
        /// least 1: a scheduler at 3 or less leaves it level with the outputs), under the outputs
        /// it feeds (they never wait on it: a frame not captured in time plays as silence) and
        /// above every normal process.
        public var captureThreadPriority: Int32 { max(1, realtimePriority - 3) }
        /// Whether to mlockall the process at start so no page fault stalls the real-time threads.
        /// Default false: a library does not lock a host process's memory unasked (`hapsync` and
        /// `hapsync-bench`, which own their process, ask for it).
        public var lockMemory: Bool
        /// Timer slack asked for the scheduler thread, ns (default 1000).
        public var timerSlack: UInt
        /// Players that can exist at once (default 32).
        public var maxPlayers: Int
        /// Output ring slots (power of two, default 4096).
        public var outputCapacity: Int
        /// Commands whose timing figures are kept for `statistics` (default 1,048,576).
        public var statisticsCapacity: Int
        /// Audio output; players whose patterns have audio follow its clock (default none).
        public var audio: AudioDevice?
        /// Haptic commands are released this long before they should be felt (for players that
        /// follow the audio: before their audio frame is heard), to make up for the haptic
        /// output's own delay: a pad's, or a waveform stream's buffer (default 0).
        public var hapticLatency: UInt64
        /// How players with audio keep their haptics in step with it (default `.followAudioClock`).
        public var audioSync: AudioSync
        /// Stop on its own after this long with no player playing (Core Haptics' auto-shutdown;
        /// default nil: never). The next start of a player starts the engine again.
        public var idleTimeout: TimeInterval?
        /// Play haptics only: audio events are ignored (Core Haptics' `playsHapticsOnly`).
        public var playsHapticsOnly: Bool
        /// Play audio only: haptics are silenced (Core Haptics' `playsAudioOnly`).
        public var playsAudioOnly: Bool
        /// Accessibility and policy settings (default: as authored, 100 ms per-source limit).
        public var policy: HapticPolicy
        /// Release every command as exactly as the machine allows (spinning the last stretch
        /// before each deadline), whatever the backend's `timingResolution`: for measurement runs
        /// (default false: precision by need; a trace is exact anyway).
        public var precise: Bool

        /// Makes a configuration; every argument has the default described on its property.
        public init(backend: HapticBackend, clock: EngineClock = MonotonicClock(), threading: Threading = .realtime,
                    spinMargin: UInt64 = 150_000, realtimePriority: Int32 = 80, lockMemory: Bool = false, timerSlack: UInt = 1000,
                    maxPlayers: Int = 32, outputCapacity: Int = 4096, statisticsCapacity: Int = 1 << 20,
                    audio: AudioDevice? = nil, hapticLatency: UInt64 = 0, audioSync: AudioSync = .followAudioClock,
                    idleTimeout: TimeInterval? = nil, playsHapticsOnly: Bool = false, playsAudioOnly: Bool = false,
                    policy: HapticPolicy = HapticPolicy(), precise: Bool = false) {
            self.precise = precise
            self.audio = audio
            self.idleTimeout = idleTimeout
            self.playsHapticsOnly = playsHapticsOnly
            self.playsAudioOnly = playsAudioOnly
            self.policy = policy
            self.audioSync = audioSync
            self.hapticLatency = hapticLatency
            self.backend = backend
            self.clock = clock
            self.threading = threading
            self.spinMargin = spinMargin
            self.realtimePriority = realtimePriority
            self.lockMemory = lockMemory
            self.timerSlack = timerSlack
            self.maxPlayers = maxPlayers
            self.outputCapacity = outputCapacity
            self.statisticsCapacity = statisticsCapacity
        }
    }

    /// How a player with audio keeps its haptics in step with the audio.
    public enum AudioSync: Sendable {
        /// Every haptic deadline is the moment its audio frame is heard by the audio clock's
        /// current fit, so haptics follow the sink's real rate and any jump in its timing.
        case followAudioClock
        /// Pattern time 0 is placed on the audio clock once, at start; after that deadlines run on
        /// the monotonic clock at the nominal rate, as a naive engine would. Offered to measure the
        /// difference (hapsync-bench drift); drifts by the sink's rate error.
        case openLoop
    }

}
