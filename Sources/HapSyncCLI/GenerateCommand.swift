import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncGeneration
import HapSyncRuntime

/// `hapsync generate AUDIO`: haptics from a sound file, written as canonical AHAP.
enum GenerateCommand {
    static let out = Option<String?>("out", "FILE.ahap", .text,
                                     help: "write the AHAP to FILE.ahap instead of standard output; an existing file is not replaced unless --force is given")
    static let style = Option<GenerationStyle>("style", "STYLE", .choice, default: .balanced,
                                               help: "percussive: taps over a quiet layer; ambient: the continuous layer only; balanced: both")
    static let sensitivity = Option<Double>("sensitivity", "X", .decimal(nil, .from(GenerationOptions.sensitivityRange.lowerBound, to: GenerationOptions.sensitivityRange.upperBound)),
                                            default: GenerationOptions().sensitivity, help: "onset detection, 0 (only the clearest hits) to 1 (every small one)")
    static let maxCurvePoints = Option<Int>("max-curve-points", "N", .integer("points", GenerationOptions.curvePointRange),
                                            default: GenerationOptions().maxCurvePoints,
                                            help: "most control points in one ParameterCurve (16 plays on iPhones too)")
    static let includeAudio = Option(flag: "include-audio", help: "add an AudioCustom event that plays AUDIO, so playing the AHAP plays the sound with its haptics")

    static let command = Command(
        name: "generate", summary: "haptics from a sound file: taps at its onsets, a layer following its loudness (AHAP)",
        about: """
            Reads a sound file (any format 'hapsync play' plays) and writes an AHAP pattern:
            a HapticTransient at each onset (spectral-flux onset detection with an adaptive
            threshold and a 30 ms minimum gap; intensity from the onset's strength and
            loudness, sharpness from the spectral centroid around it), and HapticContinuous
            events whose HapticIntensityControl curve follows the sound's felt loudness (low
            frequencies weighted) and whose HapticSharpnessControl curve follows its spectral
            centroid, each simplified (Douglas-Peucker) to points whose lines stay within 0.05
            of the analysed envelope and split into curves of at most --max-curve-points.
            Transients are written so that, through those curves, they are felt as intended.
            With --include-audio, an AudioCustom event at time 0 plays AUDIO, named relative to
            the output's folder, so 'hapsync play FILE.ahap' plays the sound and its haptics in
            sync. The output passes 'hapsync validate --strict'.
            """,
        groups: [OptionGroup([out, CommonOptions.forceOutput, style, sensitivity, maxCurvePoints, includeAudio])], positionals: .one("AUDIO"), run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let audio = URL(fileURLWithPath: parsed.positional[0])
        // The output is checked before the long work, and never the sound itself, even with --force.
        if let path = parsed[out] {
            if OutputFile.sameFile(path, audio.path) { throw .failure("--out \(path) is AUDIO itself; refusing to write the pattern over the sound") }
            do { try OutputFile.check(path, replacing: parsed[CommonOptions.forceOutput]) } catch {
                throw .failure(error == .exists(path: path) ? "\(error.description) (pass --force to replace it)" : error.description)
            }
        }
        var options = GenerationOptions(style: parsed[style], sensitivity: parsed[sensitivity], maxCurvePoints: parsed[maxCurvePoints])
        if parsed[includeAudio] {
            let folder = parsed[out].map { URL(fileURLWithPath: $0).deletingLastPathComponent() } ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            let named = waveformPath(for: audio, from: folder)
            options.audioPath = named.path
            if let note = named.note { context.console.err("note: \(note)\n") }
        }
        let started = Date()
        let generated: GeneratedHaptics
        do { generated = try HapticGenerator.generate(contentsOf: audio, options: options) } catch { throw .failure(error.description) }
        let seconds = Date().timeIntervalSince(started)
        let text = AHAPWriter.string(from: generated.pattern)
        // What the reader (and so `play`, `validate`) accepts: a file larger, or with more
        // entries, would be refused.
        let limits = AHAPLimits.default
        if text.utf8.count > limits.maxFileBytes || generated.pattern.entries.count > limits.maxEntries {
            throw .failure("\(audio.path): the pattern would be \(text.utf8.count) bytes with \(generated.pattern.entries.count) entries, over what AHAP readers "
                + "accept here (\(limits.maxFileBytes) bytes, \(limits.maxEntries) entries); raise --max-curve-points (now \(options.maxCurvePoints)) or generate from a shorter part")
        }
        if let problem = OutputTarget(path: parsed[out], force: parsed[CommonOptions.forceOutput]).write(text, console: context.console) {
            throw .failure(problem)
        }
        let taps = generated.transients.count
        let summary = "\(audio.lastPathComponent): \(String(format: "%.1f", generated.duration)) s of sound → \(plural(taps, "transient")) "
            + "(\(plural(generated.onsets.count, "onset")) found), \(plural(generated.curves, "curve")) of at most \(options.maxCurvePoints) points "
            + "(\(generated.curvePoints) in all), in \(String(format: "%.2f", seconds)) s"
        context.console.err(summary + (parsed[out].map { ", written to \($0)" } ?? "") + "\n")
    }

    /// The `EventWaveformPath` naming `audio` for a pattern in `folder`: relative to it when the
    /// file lies inside it; otherwise its file name, with a note saying which --resources folder
    /// `hapsync play` then needs (AHAP paths are relative and never climb with `..`). Links are
    /// resolved as the resource resolver resolves them: a link to a file outside the folder would
    /// be refused there, so the file it names is what is named.
    static func waveformPath(for audio: URL, from folder: URL) -> (path: String, note: String?) {
        let resolved = audio.standardizedFileURL.resolvingSymlinksInPath()
        let file = resolved.path
        let base = folder.standardizedFileURL.resolvingSymlinksInPath().path
        let prefix = base.hasSuffix("/") ? base : base + "/"
        if file.hasPrefix(prefix) { return (String(file.dropFirst(prefix.count)), nil) }
        let name = resolved.lastPathComponent
        let linked = file == audio.standardizedFileURL.path ? "" : " (a link to \(file))"
        return (name, "\(audio.path)\(linked) is not inside \(base); the AudioCustom event names \"\(name)\": play with --resources \(resolved.deletingLastPathComponent().path)")
    }
}

