import Foundation
import HapSyncAudioOutput
import HapSyncCore
import HapSyncHapticOutput
import HapSyncRuntime

/// The options `play` and `feedback` share, declared once: where haptics and audio go, timing,
/// looping, and the accessibility policy (from the HAPSYNC_* environment, then the flags, which win).
struct PlaybackOptions {
    /// Where `--haptics` sends commands.
    typealias HapticsTarget = HapticOutputSpec

    /// `--audio`.
    typealias AudioChoice = AudioServerChoice

    // MARK: - Declarations

    static let haptics = Option<[HapticsTarget]>(repeatable: "haptics", "TARGET", ValueParser(
        expectation: HapticOutputSpec.expectation,
        convert: { HapticOutputSpec(parsing: $0) }, show: { "\($0)" }), help: """
            where haptic commands go (repeatable: evdev and a trace together):
              evdev:PATH  rumble a gamepad (/dev/input/eventN; see 'hapsync devices')
              evdev:auto  the first rumble-capable device this user can open
              waveform:SINK[:rear|mono|left|right|all]
                          a voice-coil actuator's drive signal on an audio sink:
                          rear = a DualSense's (4 channels), mono = a bass
                          shaker; default rear on 4-channel sinks, else all;
                          with the audio on the same sink, one stream
                          carries both, sample-locked
              waveform:auto  a DualSense's sink, found by its ids and paired
                          with its rumble pad through /sys (rear channels)
              trace:PATH  record every command with its scheduled, released and
                          applied times (CLOCK_MONOTONIC ns): PATH.jsonl gives
                          JSON Lines, PATH.json Chrome trace events (Perfetto)
              none        no haptic output (default; timing is still measured)
            """)
    static let audio = Option<AudioChoice?>("audio", nil, .choice, help: """
            where audio events play (when the pattern has any): auto (default; also
            HAPSYNC_AUDIO) = PipeWire natively when a PipeWire server answers, else
            PulseAudio's protocol; pipewire; pulse (PulseAudio or pipewire-pulse); none
            """)
    static let sink = Option<String?>("sink", "NAME", .text, help: "the sink: PulseAudio's sink name, or PipeWire's node.name or node id (default: the server's default)")
    static let latency = Option<Double>("latency-ms", "N", .decimal("milliseconds", .from(1, to: 2000)), default: 20,
                                        help: "target latency of the audio stream; after underruns it grows by half, to 100 ms at most (the summary says so)")
    static let hapticLatency = Option<Double>("haptic-latency-ms", "N", .decimal("milliseconds", .from(0, to: 1000)), default: 0,
                                              help: "release haptics this much early (before their audio is heard, or their time), to make up for the haptic device's delay")
    static let rumbleInterval = Option<Double>("rumble-interval", "MS", .decimal("milliseconds", .from(1, to: 10_000)), default: 10,
                                               help: "shortest time between two rumble updates")
    static let rumbleBurst = Option<Double>("rumble-burst", "MS", .decimal("milliseconds", .from(1, to: 10_000)), default: 30,
                                            help: "shortest rumble a transient makes")
    static let precise = Option(flag: "precise", help: "release every command as exactly as the machine allows, whatever the output can use (measurement runs; a trace is exact anyway)")
    static let force = Option(flag: "force", help: "replace the trace file if it exists (with feedback --export: the AHAP files)")
    static let at: Option<Double> = {
        let milliseconds = ValueParser<Double>.decimal("milliseconds", .from(0, to: 3_600_000))
        return Option("at", "+MS", ValueParser(expectation: "+MS, \(milliseconds.expectation) from now", rangeText: milliseconds.rangeText,
                                               convert: { milliseconds.convert($0.hasPrefix("+") ? String($0.dropFirst()) : $0) },
                                               show: { "+" + number($0) }),
                      default: 50, help: "start MS milliseconds from now")
    }()
    static let loop = Option<Int>("loop", "N", .integer(nil, 1...1_000_000), default: 1, help: "play N times back to back")
    static let playbackRate = Option<Double>("playback-rate", "X", .decimal(nil, .from(HapticPatternPlayer.playbackRates.lowerBound, to: HapticPatternPlayer.playbackRates.upperBound)), default: 1,
                                             help: "play X times faster: times and durations scale, audio pitch does not")
    static let from = Option<Double>("from", "S", .decimal("seconds", .atLeast(0)), default: 0,
                                     help: "start S seconds into the pattern; audio starts part-way")

    static let noHaptics = Option(flag: "no-haptics", help: "haptics off, audio still plays; also HAPSYNC_HAPTICS=off")
    static let intensityScale = Option<Double?>("intensity-scale", "X", .decimal(nil, .from(0, to: 1)),
                                                help: "scale every haptic intensity (reduced-motion settings commonly use 0.4-0.5); also HAPSYNC_INTENSITY_SCALE")
    static let rateLimit = Option<Double>("rate-limit-ms", "N", .decimal("milliseconds", .from(0, to: 60_000)),
                                          default: HapticPolicy().rateLimitInterval * 1000,
                                          help: "merge starts from one source closer than N ms; also HAPSYNC_RATE_LIMIT_MS")

    /// The playback options under `title` (nil: `OPTIONS`), then the accessibility options.
    static func groups(title: String? = nil) -> [OptionGroup] {
        [OptionGroup(title, [haptics, audio, sink, latency, hapticLatency, rumbleInterval, rumbleBurst, precise, force, at, loop,
                             CommonOptions.controlRate, CommonOptions.resources, playbackRate, from]),
         OptionGroup("ACCESSIBILITY (also from the environment; flags win)", [noHaptics, intensityScale, rateLimit])]
    }

    // MARK: - Values

    /// The trace file, if any.
    var tracePath: String?
    /// The evdev device path or `auto`, if any.
    var evdevPath: String?
    /// The waveform output's sink and channels, if any.
    var waveform: (sink: String, channels: HapticOutputSpec.WaveformChannels?)?
    /// `--audio`, else `HAPSYNC_AUDIO`, else auto.
    var audioChoice: AudioChoice
    /// The environment the sound servers are found by (PULSE_SERVER, PIPEWIRE_REMOTE).
    var environment: [String: String]
    var sinkName: String?
    /// Seconds.
    var audioLatency: Double
    /// The engine's haptic latency, nanoseconds: `--haptic-latency-ms` and a waveform stream's lead.
    var hapticLatencyNanoseconds: UInt64
    /// `--haptic-latency-ms` alone, nanoseconds (the actuator's own delay).
    var userHapticLatencyNanoseconds: UInt64
    var rumbleIntervalNanoseconds: UInt64
    var rumbleBurstNanoseconds: UInt64
    var replacesTrace: Bool
    /// `--precise`.
    var precise: Bool
    /// Seconds from now to the start.
    var startDelay: Double
    var loops: Int
    var render: RenderOptions
    var resources: [URL]
    /// Pattern seconds per second.
    var playbackRate: Double
    /// Pattern seconds skipped at the start.
    var startOffset: Double
    var policy: HapticPolicy

    /// Makes the audio output `--audio` (or HAPSYNC_AUDIO) chooses, on `--sink` at `--latency-ms`
    /// (nil: none), its stream also playing on `passThrough` (live haptics), and, a native
    /// PipeWire stream, in node group `group` (for a live sink made natively beside it later).
    /// With auto, asks PipeWire first (at most 1 s): call it once.
    func makeAudioOutput(passThrough: PassThroughAudio? = nil, group: String? = nil) -> SoundServerOutput? {
        audioChoice.output(sink: sinkName, latency: audioLatency, environment: environment, passThrough: passThrough, group: group)
    }

    /// The engine these options ask for, on `backend` with `audio`: memory locked, the haptic
    /// latency, the accessibility policy and `--precise` (`play`, `feedback`, `serve`, `live`).
    func engineConfiguration(backend: HapticBackend, audio: SoundServerOutput?) -> HapticEngine.Configuration {
        .init(backend: backend, lockMemory: true, audio: audio, hapticLatency: hapticLatencyNanoseconds, policy: policy, precise: precise)
    }

    /// Reads the options; a second trace or evdev target, or a bad HAPSYNC_* variable, is a usage error.
    init(_ parsed: ParsedArguments, environment: [String: String]) throws(CLIError) {
        for target in parsed[Self.haptics] {
            switch target {
            case .none: break
            case .trace(let path):
                if let first = tracePath { throw .usage("--haptics trace: given twice ('trace:\(first)' and 'trace:\(path)'); one trace at a time") }
                tracePath = path
            case .evdev(let path):
                if let first = evdevPath { throw .usage("--haptics evdev: given twice ('evdev:\(first)' and 'evdev:\(path)'); one device at a time") }
                evdevPath = path
            case .waveform(let sink, let channels):
                if let first = waveform { throw .usage("--haptics waveform: given twice ('waveform:\(first.sink)' and 'waveform:\(sink)'); one at a time") }
                waveform = (sink, channels)
            }
        }
        // The flag wins: HAPSYNC_AUDIO is read (and must be a choice) only without it.
        if let flag = parsed[Self.audio] {
            audioChoice = flag
        } else {
            switch AudioServerChoice.from(environment: environment) {
            case .success(let fromEnvironment): audioChoice = fromEnvironment
            case .failure(let error): throw .usage(error.description)
            }
        }
        self.environment = environment
        sinkName = parsed[Self.sink]
        audioLatency = parsed[Self.latency] / 1000
        userHapticLatencyNanoseconds = UInt64(nanosecondsOf: parsed[Self.hapticLatency] / 1000)
        hapticLatencyNanoseconds = userHapticLatencyNanoseconds
        // A waveform stream needs its commands its buffer early (WaveformOutput.lead).
        if waveform != nil { hapticLatencyNanoseconds += WaveformOutput.lead(latency: audioLatency) }
        rumbleIntervalNanoseconds = UInt64(nanosecondsOf: parsed[Self.rumbleInterval] / 1000)
        rumbleBurstNanoseconds = UInt64(nanosecondsOf: parsed[Self.rumbleBurst] / 1000)
        replacesTrace = parsed[Self.force]
        precise = parsed[Self.precise]
        startDelay = parsed[Self.at] / 1000
        loops = parsed[Self.loop]
        render = RenderOptions(controlRate: parsed[CommonOptions.controlRate])
        resources = parsed[CommonOptions.resources]
        playbackRate = parsed[Self.playbackRate]
        startOffset = parsed[Self.from]
        do { policy = try HapticPolicy().applying(environment: environment) } catch { throw .usage(error.description) }
        if parsed[Self.noHaptics] { policy.hapticsEnabled = false }
        if let scale = parsed[Self.intensityScale] { policy.intensityScale = scale }
        if parsed.isGiven(Self.rateLimit) { policy.rateLimitInterval = parsed[Self.rateLimit] / 1000 }
    }
}
