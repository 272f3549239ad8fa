import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncRuntime

/// `hapsync plot FILE --out PATH.svg`: the picture people want of a pattern.
enum PlotCommand {
    static let out = Option<String>(required: "out", "PATH.svg", .text,
                                    help: "the SVG file to write; an existing file is not replaced unless --force is given")
    static let width = Option<Int>("width", "PX", .integer("pixels", 300...20_000), default: 1000, help: "picture width")
    static let waveform = Option<String?>("waveform", "PROFILE", .oneOf(ActuatorProfile.all.map(\.name)),
        help: "also draw the drive signal a voice-coil actuator gets (\(ActuatorProfile.all.map(\.name).joined(separator: ", ")))")

    static let command = Command(
        name: "plot", summary: "draw a pattern as SVG: intensity, sharpness, transients, audio voices",
        about: """
            Draws a pattern as SVG: intensity (filled) and sharpness (line) of the continuous
            haptic signal over time, transients as stems (height = intensity, colour =
            sharpness), audio voices as bars with their file names and gain, time axis in ms.
            An AudioCustom voice's lane shows its file's waveform where it plays, with a thin
            line at each transient; a file that cannot be decoded keeps its bar and says why.
            With --waveform PROFILE, a lane shows the drive signal a voice-coil actuator
            (a DualSense's, a bass shaker) would get for it.
            """,
        groups: [OptionGroup([out, CommonOptions.forceOutput, width, waveform, CommonOptions.resources])], positionals: .one("FILE"), run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let file = parsed.positional[0]
        let playable = try PlayablePattern.load(file, resources: parsed[CommonOptions.resources], options: RenderOptions(), console: context.console)
        let profile = parsed[waveform].flatMap { name in ActuatorProfile.all.first { $0.name == name } }
        let svg = PatternPlot.svg(playable.timeline, title: (file as NSString).lastPathComponent, width: parsed[width], waveform: profile,
                                  audio: voiceAudio(playable, console: context.console))
        if let problem = OutputTarget(path: parsed[out], force: parsed[CommonOptions.forceOutput]).write(svg, console: context.console) {
            throw .failure(problem)
        }
    }

    /// The highest rate a file is decoded at for its waveform: files up to 48 kHz keep their own
    /// rate (no conversion, so the picture shows every peak and decoding is only reading); faster
    /// ones are converted down, so a file never takes more memory here than played at 48 kHz (and
    /// mostly less: playback decodes as far as the slowest player rate reaches,
    /// `PatternAudioLoader.secondsRead`).
    static let maxWaveformRate = 48_000

    /// Each voice's file decoded for its waveform lane (nil for tones), or why it cannot be drawn.
    ///
    /// Files are those the pattern's loading resolved (`PlayablePattern.audio`), decoded by
    /// `AudioFileDecoder` at their own rate up to `maxWaveformRate`, each once, as far as its
    /// voices can read it at player rate 1 (a looping voice's file whole), all within the
    /// decoder's limit a pattern (`AudioFileDecoder.maxDecodedBytes`). A file that fails to decode
    /// is a warning and a note in its lane, never a failed plot; a file not found or with an
    /// unreadable header was already warned about by loading and is only noted.
    static func voiceAudio(_ playable: PlayablePattern, console: HapSyncCLI.Console) -> [PatternPlot.VoiceAudio?] {
        let timeline = playable.timeline
        let references = Dictionary(playable.audio.map { ($0.entryIndex, $0) }, uniquingKeysWith: { first, _ in first })
        // What each file must provide: the most seconds any of its voices reads at player rate 1 and
        // the highest AudioPitch (nil: all of it), merged as playback merges them.
        var reads: [(file: URL, seconds: Double?)] = []
        var fileRates: [URL: Int] = [:]
        for v in timeline.voices {
            guard case .file = v.source, let reference = references[v.entryIndex], let url = reference.file, let info = reference.info else { continue }
            fileRates[url] = info.sampleRate
            reads.append((url, v.loop ? nil : v.end.map { max(0, $0 - v.start) * AudioDecodingBudget.fastestPitchRate }))
        }
        let limit = AudioFileDecoder.maxDecodedBytes
        var used = 0
        var decoded: [URL: Result<PatternPlot.VoiceAudio, AudioFileDecoder.LoadError>] = [:]
        for (url, seconds) in AudioDecodingBudget.reach(reads) {
            let rate = Double(min(fileRates[url] ?? maxWaveformRate, maxWaveformRate))
            do throws(AudioFileDecoder.LoadError) {
                let samples = try AudioFileDecoder.decode(url, sampleRate: rate, seconds: seconds, limitBytes: limit - used)
                used += AudioDecodingBudget.bytes(frames: samples.frames)
                decoded[url] = .success(.samples(samples, sampleRate: rate))
            } catch {
                var error = error
                // The decoder was given what is left of the pattern's limit: say it as the limit and the rest.
                if case .tooLarge(let path, let bytes, let seconds, let sampleRate, _, _) = error {
                    error = .tooLarge(path: path, bytes: bytes, seconds: seconds, sampleRate: sampleRate, limit: limit, others: used)
                }
                console.err("warning: no waveform in the plot: \(error.description)\n")
                decoded[url] = .failure(error)
            }
        }
        return timeline.voices.map { v -> PatternPlot.VoiceAudio? in
            guard case .file = v.source, let reference = references[v.entryIndex] else { return nil }
            guard let url = reference.file else { return .unavailable("file not found") }
            guard reference.info != nil else { return .unavailable("header unreadable") }
            switch decoded[url] {
            case .success(let audio): return audio
            case .failure(let error): return .unavailable(note(error))
            case nil: return nil
            }
        }
    }

    /// A decoding failure in a few words, for the lane (the warning names the file).
    static func note(_ error: AudioFileDecoder.LoadError) -> String {
        switch error {
        case .unreadable(_, let reason), .unplayable(_, let reason), .resampling(_, let reason): return reason
        case .empty: return "no audio frames"
        case .tooLarge(_, _, _, _, let limit, _): return "over the \(limit >> 20) MiB decoding limit"
        }
    }
}
