import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncRuntime

/// `hapsync info FILE`: what a pattern holds, its duration as Core Haptics defines it, and whether
/// each of its audio files resolves.
enum InfoCommand {
    static let command = Command(
        name: "info", summary: "describe a pattern: duration, events, parameters, curves, audio files",
        about: """
            Describes a pattern: version, duration (as Core Haptics defines it: the latest
            start of an event or parameter plus that entry's duration; an AudioCustom event
            without EventDuration lasts as long as its audio file), event counts per type,
            dynamic parameters, parameter curves, metadata, and each audio file with where
            it resolves (format, rate, channels, bits, length) or why it does not.
            """,
        groups: [OptionGroup([CommonOptions.json, CommonOptions.resources])], positionals: .one("FILE"),
        footer: "Exit status: 0 when the file reads without errors, 1 otherwise, 64 usage error.", run: run)

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        let check = PlayablePattern.Check(contentsOf: URL(fileURLWithPath: parsed.positional[0]), resources: parsed[CommonOptions.resources])
        guard let pattern = check.pattern else { throw .invalidPattern(check.name, errors: check.errors, unlisted: check.omitted.errors, consequence: "nothing to describe") }
        let lengths = check.audioLengths
        let duration = pattern.duration { lengths[$0] }
        let unknownLengths = check.audio.contains { a in
            a.info == nil && pattern.events.contains { $0.waveformPath == a.waveformPath && $0.duration == nil }
        }
        if parsed[CommonOptions.json] {
            context.console.out(JSONWriter.string(json(check, pattern: pattern, duration: duration, exact: !unknownLengths)))
        } else {
            context.console.out(text(check, pattern: pattern, duration: duration, exact: !unknownLengths))
        }
    }

    static func eventCounts(_ pattern: AHAPPattern) -> [(AHAPEventType, Int)] {
        AHAPEventType.allCases.map { t in (t, pattern.events.filter { $0.type == t }.count) }
    }

    static func describe(_ info: AudioFileInfo) -> String {
        let ch = info.channels == 1 ? "mono" : info.channels == 2 ? "stereo" : "\(info.channels) channels"
        return "\(info.formatDescription), \(info.sampleRate) Hz, \(ch), \(seconds(info.duration))"
    }

    static func text(_ check: PlayablePattern.Check, pattern: AHAPPattern, duration: Double, exact: Bool) -> String {
        let file = check.name, audio = check.audio
        var out = ""
        func line(_ label: String, _ value: String) {
            out += value.isEmpty ? label + "\n" : label.padding(toLength: 12, withPad: " ", startingAt: 0) + value + "\n"
        }
        line("file", file)
        line("version", AHAPWriter.formatNumber(pattern.version))
        line("duration", seconds(duration) + (exact ? "" : " (at least: an audio file's length is unknown)"))
        let counts = eventCounts(pattern).filter { $0.1 > 0 }.map { "\($0.0.rawValue) \($0.1)" }
        line("events", "\(pattern.events.count)" + (counts.isEmpty ? "" : " (" + counts.joined(separator: ", ") + ")"))
        line("parameters", "\(pattern.parameters.count)")
        for p in pattern.parameters {
            out += "  \(p.id.rawValue) = \(AHAPWriter.formatNumber(p.value)) at \(seconds(p.time))\n"
        }
        line("curves", "\(pattern.curves.count)")
        for c in pattern.curves {
            let values = c.controlPoints.map(\.value)
            out += "  \(c.id.rawValue): \(plural(c.controlPoints.count, "point")) from \(seconds(c.time + c.controlPoints[0].time)) to \(seconds(c.time + c.controlPoints.last!.time)), values \(AHAPWriter.formatNumber(values.min()!))...\(AHAPWriter.formatNumber(values.max()!))\n"
        }
        line("audio", audio.isEmpty ? "none" : "\(audio.count) (\(audio.filter { $0.file != nil }.count) resolved)")
        for a in audio {
            out += "  \(a.entryPath): \(a.waveformPath)\n"
            if let url = a.file {
                out += "    -> \(url.path)" + (a.info.map { " (\(describe($0)))" } ?? "") + "\n"
                if let problem = a.problem { out += "    header unreadable: \(problem)\n" }
            } else {
                out += "    NOT RESOLVED: \(a.problem ?? "")\n"
            }
        }
        if let members = pattern.metadata?.objectMembers, !members.isEmpty {
            line("metadata", "")
            for m in members {
                let v: String
                if case .string(let s) = m.value.kind { v = s } else { v = JSONWriter.string(m.value, pretty: false) }
                out += "  \(m.key): \(v)\n"
            }
        }
        let warnings = check.warningCount
        if warnings > 0 { line("warnings", "\(warnings) (list them with 'hapsync validate \(file)')") }
        return out
    }

    static func json(_ check: PlayablePattern.Check, pattern: AHAPPattern, duration: Double, exact: Bool) -> JSONValue {
        .object([
            ("file", .string(check.name)),
            ("version", .number(pattern.version)),
            ("duration", .number(duration)),
            ("durationExact", .bool(exact)),
            ("events", .object(eventCounts(pattern).map { ($0.0.rawValue, .integer($0.1)) })),
            ("parameters", .array(pattern.parameters.map {
                .object([("id", .string($0.id.rawValue)), ("time", .number($0.time)), ("value", .number($0.value))])
            })),
            ("curves", .array(pattern.curves.map { c in
                .object([("id", .string(c.id.rawValue)), ("time", .number(c.time)), ("points", .integer(c.controlPoints.count)),
                         ("end", .number(c.time + c.controlPoints.last!.time))])
            })),
            ("audio", .array(check.audio.map { a in
                var m: [(String, JSONValue)] = [("entry", .string(a.entryPath.description)), ("path", .string(a.waveformPath)),
                                                ("resolved", a.file.map { .string($0.path) } ?? JSONValue(.null))]
                if let i = a.info {
                    m += [("format", .string(i.format.rawValue)), ("encoding", .string(i.encoding.rawValue)), ("sampleRate", .integer(i.sampleRate)),
                          ("channels", .integer(i.channels)), ("bitsPerSample", .integer(i.bitsPerSample)),
                          ("seconds", .number(i.duration))]
                }
                if let p = a.problem { m.append(("problem", .string(p))) }
                return .object(m)
            })),
            ("metadata", pattern.metadata ?? JSONValue(.null)),
            ("warnings", diagnosticsJSON(check.diagnostics)),
            ("omitted", .integer(check.omitted.total)),
        ])
    }
}
