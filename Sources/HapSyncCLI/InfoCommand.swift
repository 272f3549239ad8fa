import AHAP
import Foundation

/// `hapsync info FILE`: what a pattern holds, its duration as Core Haptics defines it, and whether
/// each of its audio files resolves.
enum InfoCommand {
    static let help = """
        USAGE: hapsync info [--json] [--resources DIR]... FILE

        Describes a pattern: version, duration (as Core Haptics defines it: the latest
        start of an event or parameter plus that entry's duration; an AudioCustom event
        without EventDuration lasts as long as its audio file), event counts per type,
        dynamic parameters, parameter curves, metadata, and each audio file with where
        it resolves (format, rate, channels, bits, length) or why it does not.

        OPTIONS:
          --json              print one JSON document for machines
          --resources DIR     also look for audio files here; repeatable, searched
                              after the AHAP file's own folder
          -h, --help          show this help

        Exit status: 0 when the file reads without errors, 1 otherwise, 64 usage error.

        """

    /// One audio file of the pattern and what became of it.
    struct Audio {
        var entryPath: String
        var waveformPath: String
        var resolved: URL?
        var info: AudioFileInfo?
        var problem: String?
    }

    static func run(_ args: [String], console: HapSyncCLI.Console) throws(CommandLineArguments.UsageError) -> Int32 {
        let parsed = try CommandLineArguments(args, options: [
            .init(name: "json", takesValue: false), .init(name: "resources", takesValue: true, repeatable: true),
        ], command: "hapsync info")
        if parsed.has("help") { console.out(help); return HapSyncCLI.ExitCode.success }
        guard parsed.positional.count == 1, let file = parsed.positional.first else {
            throw .init(message: parsed.positional.isEmpty ? "info needs a FILE" : "info takes one FILE (got \(parsed.positional.count))")
        }
        let roots = try HapSyncCLI.resourceRoots(parsed.all("resources"))
        let check = FileCheck(file: file, resources: roots, strict: false)
        guard let pattern = check.pattern else {
            for d in check.diagnostics where d.severity == .error { console.err(d.description + "\n") }
            console.err("error: \(file) has \(plural(check.errorCount, "error")); nothing to describe\nhint: 'hapsync validate \(file)' lists warnings too\n")
            return HapSyncCLI.ExitCode.failure
        }

        var audio: [Audio] = []
        for (i, entry) in pattern.entries.enumerated() {
            guard case .event(let e) = entry, let p = e.waveformPath else { continue }
            var a = Audio(entryPath: "Pattern[\(i)].Event", waveformPath: p)
            if let url = check.audio[p] {
                a.resolved = url
                do { a.info = try AudioFileInfo(contentsOf: url) } catch { a.problem = error.description }
            } else {
                a.problem = check.diagnostics.first { $0.path.description == "Pattern[\(i)].Event.EventWaveformPath" }?.message ?? "not resolved"
            }
            audio.append(a)
        }
        var lengths: [String: Double] = [:]
        for a in audio { if let d = a.info?.duration { lengths[a.waveformPath] = d } }
        let duration = pattern.duration { lengths[$0] }
        let unknownLengths = audio.contains { a in
            a.info == nil && pattern.events.contains { $0.waveformPath == a.waveformPath && $0.duration == nil }
        }

        if parsed.has("json") {
            console.out(JSONWriter.string(json(file: file, pattern: pattern, duration: duration, exact: !unknownLengths, audio: audio, check: check)))
        } else {
            console.out(text(file: file, pattern: pattern, duration: duration, exact: !unknownLengths, audio: audio, check: check))
        }
        return HapSyncCLI.ExitCode.success
    }

    static func eventCounts(_ pattern: AHAPPattern) -> [(AHAPEventType, Int)] {
        AHAPEventType.allCases.map { t in (t, pattern.events.filter { $0.type == t }.count) }
    }

    static func describe(_ info: AudioFileInfo) -> String {
        let ch = info.channels == 1 ? "mono" : info.channels == 2 ? "stereo" : "\(info.channels) channels"
        return "\(info.format.rawValue), \(info.sampleRate) Hz, \(ch), \(info.bitsPerSample)-bit\(info.isFloat ? " float" : ""), \(seconds(info.duration))"
    }

    static func text(file: String, pattern: AHAPPattern, duration: Double, exact: Bool, audio: [Audio], check: FileCheck) -> String {
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
        line("audio", audio.isEmpty ? "none" : "\(audio.count) (\(audio.filter { $0.resolved != nil }.count) resolved)")
        for a in audio {
            out += "  \(a.entryPath): \(a.waveformPath)\n"
            if let url = a.resolved {
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

    static func json(file: String, pattern: AHAPPattern, duration: Double, exact: Bool, audio: [Audio], check: FileCheck) -> JSONValue {
        .object([
            ("file", .string(file)),
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
            ("audio", .array(audio.map { a in
                var m: [(String, JSONValue)] = [("entry", .string(a.entryPath)), ("path", .string(a.waveformPath)),
                                                ("resolved", a.resolved.map { .string($0.path) } ?? JSONValue(.null))]
                if let i = a.info {
                    m += [("format", .string(i.format.rawValue)), ("sampleRate", .integer(i.sampleRate)),
                          ("channels", .integer(i.channels)), ("bitsPerSample", .integer(i.bitsPerSample)),
                          ("seconds", .number(i.duration))]
                }
                if let p = a.problem { m.append(("problem", .string(p))) }
                return .object(m)
            })),
            ("metadata", pattern.metadata ?? JSONValue(.null)),
            ("warnings", check.diagnosticsJSON),
        ])
    }
}
