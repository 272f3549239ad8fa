import Foundation
import HapSyncCLI
import HapSyncTestSupport
import Synchronization
import Testing

/// The checkout and the conformance set, by the test support's one locator.
let packageRoot = TestFiles.packageRoot
let conformance = TestFiles.conformance

/// What one run of a command printed and returned.
struct Run {
    var status: Int32
    var out: String
    var err: String
}

/// Runs `hapsync` in process with captured output.
func hapsync(_ args: String...) -> Run { hapsync(args) }

/// Runs `hapsync` in process with captured output, its arguments as an array.
func hapsync(_ args: [String]) -> Run {
    let out = Mutex(""), err = Mutex("")
    let console = HapSyncCLI.Console(out: { s in out.withLock { $0 += s } }, err: { s in err.withLock { $0 += s } })
    let status = HapSyncCLI.main(args, console: console)
    return Run(status: status, out: out.withLock { $0 }, err: err.withLock { $0 })
}

/// A file in a fresh temporary folder.
func temporaryFile(_ name: String, _ text: String) throws -> URL {
    let dir = try TemporaryDirectory.create("cli")
    let url = dir.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url
}

let badAHAP = """
    { "Version": 1.0, "Pattern": [
      { "Event": { "Time": -0.25, "EventType": "HapticTransient" } },
      { "Event": { "Time": 0.1, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "Value": 0.5 } ] } }
    ] }
    """

let warnOnlyAHAP = """
    { "Version": 1.0, "Pattern": [
      { "Event": { "Time": 0.1, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "Value": 0.5 }, ] } }
    ] }
    """

@Suite("hapsync in process")
struct InProcessTests {
    @Test func helpAndVersion() {
        let help = hapsync("--help")
        #expect(help.status == 0 && help.out.contains("USAGE: hapsync <command>") && help.out.contains("validate") && help.out.contains("info"))
        #expect(hapsync("--version").out == "hapsync \(HapSyncCLI.version)\n")
        for command in ["validate", "info"] {
            let r = hapsync(command, "-h")
            #expect(r.status == 0 && r.out.contains("USAGE: hapsync \(command)"))
            #expect(hapsync("help", command).out == r.out)
        }
    }

    @Test func usageErrorsExit64() {
        let none = hapsync()
        #expect(none.status == 64 && none.err.contains("USAGE"))
        let unknown = hapsync("valdate", "x")
        #expect(unknown.status == 64 && unknown.err == "error: unknown command 'valdate'\nhint: did you mean 'hapsync validate'?\nhint: 'hapsync --help' lists the commands\n")
        let option = hapsync("validate", "--bogus", "x")
        #expect(option.status == 64 && option.err == "error: unknown option '--bogus' for 'hapsync validate'\nhint: see 'hapsync validate --help'\n")
        #expect(hapsync("validate").err.hasPrefix("error: validate needs at least one FILE"))
        #expect(hapsync("validate", "--resources").err.hasPrefix("error: option '--resources' needs a value"))
        #expect(hapsync("validate", "--json=yes", "x").err.hasPrefix("error: option '--json' takes no value"))
        #expect(hapsync("info", "a", "b").err.hasPrefix("error: info takes one FILE (got 2)"))
        let notDir = hapsync("info", "--resources", "/nonexistent", "x.ahap")
        #expect(notDir.status == 64 && notDir.err.hasPrefix("error: --resources must be an existing folder, not '/nonexistent'"))
    }

    @Test func validateListsFindingsWithPaths() throws {
        let url = try temporaryFile("bad.ahap", badAHAP)
        let r = hapsync("validate", url.path)
        #expect(r.status == 1)
        #expect(r.out.contains("\(url.path):2:24: error: Pattern[0].Event.Time: Time -0.25 is negative"))
        #expect(r.out.contains("\(url.path):3:118: warning: Pattern[1].Event.EventParameters[0].Value: key \"Value\" read as \"ParameterValue\""))
        #expect(r.out.hasSuffix("\(url.path): invalid (1 error, 1 warning)\n"))
    }

    @Test func strictTurnsWarningsIntoErrors() throws {
        let url = try temporaryFile("warn.ahap", warnOnlyAHAP)
        let lenient = hapsync("validate", url.path)
        #expect(lenient.status == 0 && lenient.out.hasSuffix("valid (2 warnings)\n"))
        let strict = hapsync("validate", "--strict", url.path)
        #expect(strict.status == 1)
        #expect(strict.out.contains("error: Pattern[0].Event.EventParameters: trailing comma before ']' ignored (not JSON) (an error under --strict) [trailing-comma]"))
    }

    @Test func validateJSONIsMachineReadable() throws {
        let url = try temporaryFile("bad.ahap", badAHAP)
        let r = hapsync("validate", "--json", url.path, packageRoot.appendingPathComponent("Assets/taps.ahap").path)
        #expect(r.status == 1)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(doc["valid"] as? Bool == false)
        let files = try #require(doc["files"] as? [[String: Any]])
        #expect(files.map { $0["valid"] as? Bool } == [false, true])
        let first = try #require((files[0]["diagnostics"] as? [[String: Any]])?.first)
        #expect(first["severity"] as? String == "error")
        #expect(first["code"] as? String == "negative-time")
        #expect(first["path"] as? String == "Pattern[0].Event.Time")
        #expect(first["line"] as? Int == 2 && first["column"] as? Int == 24)
    }

    @Test func validateReportsMissingAudioAsWarningAndEscapesAsErrors() throws {
        let url = try temporaryFile("audio.ahap", """
            { "Pattern": [ { "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "nope.wav" } },
                           { "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "../../etc/passwd" } } ] }
            """)
        let r = hapsync("validate", url.path)
        #expect(r.status == 1)
        #expect(r.out.contains("error: Pattern[1].Event.EventWaveformPath: EventWaveformPath \"../../etc/passwd\" climbs out of its folder with '..'"))
        // The audio of an entry with errors is not looked up; fix the file and the missing one shows.
        let fixed = try temporaryFile("audio.ahap", """
            { "Version": 1, "Pattern": [ { "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "nope.wav" } } ] }
            """)
        let r2 = hapsync("validate", fixed.path)
        #expect(r2.status == 0)
        #expect(r2.out.contains("\(fixed.path):1:103: warning: Pattern[0].Event.EventWaveformPath: \"nope.wav\" not found; searched \(fixed.deletingLastPathComponent().path)"))
    }

    @Test func validateTheWholeConformanceCorpus() throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: conformance.appendingPathComponent("SampleAHAPs").path)
            .filter { $0.hasSuffix(".ahap") }.map { conformance.appendingPathComponent("SampleAHAPs/\($0)").path }
        #expect(files.count == 21)
        let args = ["validate", "--resources", conformance.appendingPathComponent("StreamingAssets").path] + files
        let out = Mutex(""), err = Mutex("")
        let status = HapSyncCLI.main(args, console: .init(out: { s in out.withLock { $0 += s } }, err: { s in err.withLock { $0 += s } }))
        #expect(status == 0)
        #expect(out.withLock { $0 }.hasSuffix("21 files: 21 valid, 0 invalid\n"))
        #expect(!out.withLock { $0 }.contains("not found"))
    }

    @Test func infoDescribesAPatternAndItsAudio() throws {
        let implode = conformance.appendingPathComponent("SampleAHAPs/Ricochet/Implode.ahap").path
        let r = hapsync("info", "--resources", conformance.appendingPathComponent("StreamingAssets").path, implode)
        #expect(r.status == 0)
        #expect(r.out.contains("duration    1.000 s\n"))
        #expect(r.out.contains("events      2 (HapticContinuous 1, AudioCustom 1)\n"))
        #expect(r.out.contains("  HapticIntensityControl: 5 points from 0.200 s to 1.000 s, values 0.0...1.0\n"))
        #expect(r.out.contains("audio       1 (1 resolved)\n"))
        #expect(r.out.contains("StreamingAssets/CoreHaptics/Ricochet/Implode.wav (WAV, 24-bit PCM, 48000 Hz, mono, 0.998 s)"))
        #expect(r.out.contains("  Project: HapticRicochet\n"))

        let unresolved = hapsync("info", implode)
        #expect(unresolved.status == 0)
        #expect(unresolved.out.contains("audio       1 (0 resolved)\n"))
        #expect(unresolved.out.contains("NOT RESOLVED: \"CoreHaptics/Ricochet/Implode.wav\" not found; searched"))
    }

    @Test func infoDurationCountsAudioLength() throws {
        // heartbeat.ahap ends with a 0.25 s thud at 1.08 s: later than its last haptic (1.08 + 0.12).
        let r = hapsync("info", "--json", packageRoot.appendingPathComponent("Assets/heartbeat.ahap").path)
        #expect(r.status == 0)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let duration = try #require(doc["duration"] as? Double)
        #expect(abs(duration - 1.33) < 1e-9)
        #expect(doc["durationExact"] as? Bool == true)
        let audio = try #require(doc["audio"] as? [[String: Any]])
        #expect(audio.count == 4 && audio.allSatisfy { $0["sampleRate"] as? Int == 44_100 })
    }

    @Test func infoOnABadFileFails() throws {
        let url = try temporaryFile("bad.ahap", badAHAP)
        let r = hapsync("info", url.path)
        #expect(r.status == 1)
        #expect(r.err.contains("error: Pattern[0].Event.Time"))
        #expect(r.err.contains("error: \(url.path) has 1 error; nothing to describe"))
    }
}

@Suite("hapsync binary")
struct BinaryTests {
    /// The `hapsync` executable SwiftPM built beside the test bundle.
    static func binary() throws -> URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("hapsync")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let fallback = packageRoot.appendingPathComponent(".build/debug/hapsync")
        guard FileManager.default.isExecutableFile(atPath: fallback.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: fallback.path])
        }
        return fallback
    }

    /// Runs `hapsync` (or another `executable`) with `args`, the environment's variables replaced by `environment`'s.
    static func run(_ args: [String], environment: [String: String] = [:], executable: URL? = nil) throws -> Run {
        let p = Process()
        p.executableURL = try executable ?? binary()
        p.arguments = args
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, out: String(decoding: o, as: UTF8.self), err: String(decoding: e, as: UTF8.self))
    }

    @Test func versionAndUsage() throws {
        #expect(try Self.run(["--version"]).out == "hapsync \(HapSyncCLI.version)\n")
        let usage = try Self.run(["info"])
        #expect(usage.status == 64 && usage.err.hasPrefix("error: info needs a FILE"))
    }

    @Test func validateExitStatuses() throws {
        let bad = try temporaryFile("bad.ahap", badAHAP)
        let r = try Self.run(["validate", bad.path])
        #expect(r.status == 1 && r.out.contains("Pattern[0].Event.Time: Time -0.25 is negative"))
        let good = try Self.run(["validate", packageRoot.appendingPathComponent("Assets/engine.ahap").path])
        #expect(good.status == 0 && good.out.hasSuffix("engine.ahap: valid\n"))
    }

    /// A `play` whose audio cannot open leaves no trace behind, so the same command runs again
    /// as typed (before: a 0-byte trace, then "already exists; not overwriting it").
    @Test func aPlayWhoseAudioFailsLeavesNoTraceBehind() throws {
        let folder = try TemporaryDirectory("play-no-audio")
        let trace = folder.file("t.jsonl").path
        let args = ["play", "--audio", "pulse", "--haptics", "trace:\(trace)", packageRoot.appendingPathComponent("Assets/taps.ahap").path]
        let noServer = ["PULSE_SERVER": "unix:/nonexistent-hapsync/native"]
        for attempt in 1...2 {
            let r = try Self.run(args, environment: noServer)
            #expect(r.status == 1, "attempt \(attempt): \(r.err)")
            #expect(r.err.contains("no PulseAudio server") && r.err.contains("--audio none"), "attempt \(attempt): \(r.err)")
            #expect(!r.err.contains("already exists"), "attempt \(attempt): \(r.err)")
            #expect(!FileManager.default.fileExists(atPath: trace), "attempt \(attempt) left \(trace) behind")
        }
    }

    @Test func infoOnTheMainExample() throws {
        let r = try Self.run(["info", packageRoot.appendingPathComponent("Assets/heartbeat.ahap").path])
        #expect(r.status == 0 && r.out.contains("duration    1.330 s") && r.out.contains("audio       4 (4 resolved)"))
    }
}
