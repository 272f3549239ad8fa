import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime

/// `hapsync render FILE`: the offline haptic command stream and audio-voice plan, no device.
enum RenderCommand {
    /// The output formats.
    enum Format: String, CaseIterable, Sendable {
        case jsonl, csv
    }

    static let format = Option<Format>("format", nil, .choice, default: .jsonl, help: "the output format")
    static let out = Option<String?>("out", "PATH", .text,
                                     help: "write to PATH instead of standard output; an existing file is not replaced unless --force is given")

    static let command = Command(
        name: "render", summary: "the offline haptic command stream and audio-voice plan (jsonl or csv)",
        about: """
            Renders what a pattern means over time, with no device: the haptic command stream
            (level changes of the continuous signal on a control-rate grid, emitted only when
            intensity or sharpness moves more than 0.001, and transient taps at their exact
            times) and the audio-voice plan (each voice's start, end, source and settings,
            then its gain, pan, pitch and brightness whenever they change).

            jsonl: one JSON object per line; the first is {"type":"pattern",...}, then one
            {"type":"voice",...} per voice, then "level", "transient" and "voice-params"
            records in time order. csv: columns
            time,type,voice,intensity,sharpness,gain,pan,pitch,brightness,source
            with types level, transient, voice-start, voice-params, voice-end.
            Times are seconds of pattern time.
            """,
        groups: [OptionGroup([CommonOptions.controlRate, format, out, CommonOptions.forceOutput, CommonOptions.resources])],
        positionals: .one("FILE"), run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let file = parsed.positional[0]
        let playable = try PlayablePattern.load(file, resources: parsed[CommonOptions.resources],
                                                options: RenderOptions(controlRate: parsed[CommonOptions.controlRate]), console: context.console)
        let automation: [VoiceAutomationPoint]
        do {
            automation = try playable.timeline.voiceAutomation()
        } catch {
            throw .failure("\(file): \(error.description)")
        }
        // Written as it is formatted: to standard output in chunks, stopping once it is gone.
        let writer = OutputTarget(path: parsed[out], force: parsed[CommonOptions.forceOutput]).writer(console: context.console)
        if parsed[format] == .csv {
            csv(playable.timeline, automation: automation, emit: writer.append)
        } else {
            jsonl(playable, file: file, automation: automation, emit: writer.append)
        }
        if let problem = writer.finish() { throw .failure(problem) }
    }

    /// Records of the stream in time order: commands and voice automation merged.
    enum Record {
        case command(HapticCommand)
        case voice(VoiceAutomationPoint)
        var time: Double {
            switch self {
            case .command(let c): return c.time
            case .voice(let v): return v.time
            }
        }
    }

    static func records(_ t: PatternTimeline, automation: [VoiceAutomationPoint]) -> [Record] {
        (t.commands.map(Record.command) + automation.map(Record.voice)).enumerated()
            .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    static func sourceJSON(_ v: AudioVoice) -> (String, String?) {
        if case .file(let p) = v.source { return ("file", p) }
        return ("tone", nil)
    }

    /// The jsonl stream, a line at a time to `emit`, until it returns false.
    static func jsonl(_ playable: PlayablePattern, file: String, automation: [VoiceAutomationPoint], emit: (String) -> Bool) {
        let t = playable.timeline, files = playable.audioFiles
        func line(_ members: [(String, JSONValue)]) -> String { JSONWriter.string(.object(members), pretty: false) + "\n" }
        func num(_ x: Double) -> JSONValue { JSONValue(.number(JSONNumber(x, literal: number(x)))) }
        guard emit(line([("type", .string("pattern")), ("file", .string(file)), ("duration", num(t.duration)), ("end", num(t.end)),
                        ("rate", num(t.options.controlRate)), ("transientLength", num(t.options.transientLength)),
                        ("commands", .integer(t.commands.count)), ("voices", .integer(t.voices.count))])) else { return }
        for (i, v) in t.voices.enumerated() {
            let (kind, path) = sourceJSON(v)
            var m: [(String, JSONValue)] = [("type", .string("voice")), ("voice", .integer(i)), ("entry", .string("Pattern[\(v.entryIndex)].Event")),
                                            ("source", .string(kind))]
            if let path {
                m.append(("path", .string(path)))
                m.append(("resolved", files[path].map { .string($0.path) } ?? JSONValue(.null)))
                m.append(("fileLength", v.fileLength.map(num) ?? JSONValue(.null)))
            }
            m += [("start", num(v.start)), ("end", v.end.map(num) ?? JSONValue(.null)), ("loop", .bool(v.loop)),
                  ("volumeEnvelope", .bool(v.useVolumeEnvelope)), ("volume", num(v.volume)), ("pan", num(v.pan)),
                  ("pitch", num(v.pitch)), ("brightness", num(v.brightness))]
            guard emit(line(m)) else { return }
        }
        for r in records(t, automation: automation) {
            let text: String
            switch r {
            case .command(let c):
                text = line([("type", .string(c.kind == .level ? "level" : "transient")), ("t", num(c.time)),
                             ("intensity", num(c.intensity)), ("sharpness", num(c.sharpness))])
            case .voice(let p):
                text = line([("type", .string("voice-params")), ("voice", .integer(p.voice)), ("t", num(p.time)),
                             ("gain", num(p.state.gain)), ("pan", num(p.state.pan)), ("pitch", num(p.state.pitch)),
                             ("brightness", num(p.state.brightness))])
            }
            guard emit(text) else { return }
        }
    }

    /// The csv table, a line at a time to `emit`, until it returns false.
    static func csv(_ t: PatternTimeline, automation: [VoiceAutomationPoint], emit: (String) -> Bool) {
        var rows: [(Double, Int, String)] = []
        for (i, v) in t.voices.enumerated() {
            let (kind, path) = sourceJSON(v)
            let source = path.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" } ?? kind
            rows.append((v.start, rows.count, "\(number(v.start)),voice-start,\(i),,,\(number(v.volume)),\(number(v.pan)),\(number(v.pitch)),\(number(v.brightness)),\(source)"))
            if let end = v.end { rows.append((end, rows.count, "\(number(end)),voice-end,\(i),,,,,,,\(source)")) }
        }
        for r in records(t, automation: automation) {
            switch r {
            case .command(let c):
                rows.append((c.time, rows.count, "\(number(c.time)),\(c.kind == .level ? "level" : "transient"),,\(number(c.intensity)),\(number(c.sharpness)),,,,,"))
            case .voice(let p):
                rows.append((p.time, rows.count, "\(number(p.time)),voice-params,\(p.voice),,,\(number(p.state.gain)),\(number(p.state.pan)),\(number(p.state.pitch)),\(number(p.state.brightness)),"))
            }
        }
        guard emit("time,type,voice,intensity,sharpness,gain,pan,pitch,brightness,source\n") else { return }
        for row in rows.sorted(by: { ($0.0, $0.1) < ($1.0, $1.1) }) {
            guard emit(row.2 + "\n") else { return }
        }
    }
}
