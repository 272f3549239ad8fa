import Foundation
import Testing
@testable import HapSyncGeneration

/// `LiveProfile`: the built-ins, the level rule, and a profile file's every fault named.
@Suite("Live profiles")
struct LiveProfileTests {
    static func parse(_ json: String) throws(LiveProfile.LoadError) -> LiveProfile {
        try LiveProfile.parse(Data(json.utf8), source: "p.json")
    }

    static func problem(_ json: String) -> String {
        do {
            _ = try parse(json)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test func builtInsByName() throws {
        #expect(try LiveProfile.named("dualsense") == .dualsense)
        #expect(try LiveProfile.named("rumble") == .rumble)
        #expect(try LiveProfile.named("shaker").lowPassHz == 120)
        #expect(throws: LiveProfile.LoadError.self) { try LiveProfile.named("dualshock") }
        do {
            _ = try LiveProfile.named("dualshock")
        } catch {
            #expect(error.description.contains("not a built-in (dualsense, rumble, shaker)"))
        }
    }

    @Test func levelFollowsGainCurveAndFloor() {
        var p = LiveProfile.dualsense
        p.gain = 1
        p.curve = 1
        p.floor = 0
        #expect(p.level(loudness: 0) == 0.3)
        #expect(p.level(loudness: 1) == 1)
        p.curve = 2
        #expect(abs(p.level(loudness: 0)! - 0.09) < 1e-12)
        p.gain = 4
        #expect(p.level(loudness: 1) == 1)   // clamped
        p.gain = 1
        p.floor = 0.5
        #expect(p.level(loudness: 0) == nil)
        #expect(p.level(loudness: .nan) == nil)   // treated as silence: under the floor
        p.gain = 0
        p.floor = 0
        #expect(p.level(loudness: 1) == nil)      // nothing to play
    }

    @Test func aFileOverridesTheDualSenseDefaults() throws {
        let p = try Self.parse(#"{"gain": 2, "floor": 0.2, "lowPassHz": 80}"#)
        #expect(p.gain == 2 && p.floor == 0.2 && p.lowPassHz == 80)
        #expect(p.curve == LiveProfile.dualsense.curve && p.name == "p.json")
        #expect(try Self.parse(#"{"lowPassHz": null}"#).lowPassHz == nil)
    }

    @Test func everyFaultIsNamed() {
        #expect(Self.problem(#"{"gian": 2}"#) == "profile p.json: unknown key 'gian' (known: gain, curve, floor, rumble, voiceCoil, lowPassHz)")
        #expect(Self.problem(#"{"gain": 5}"#) == "profile p.json: 'gain' is 5.0, outside 0...4")
        #expect(Self.problem(#"{"gain": "2"}"#) == "profile p.json: 'gain' must be a number in 0...4, got the string \"2\"")
        #expect(Self.problem(#"{"floor": true}"#) == "profile p.json: 'floor' must be a number in 0...1, got true")
        #expect(Self.problem(#"{"curve": 0.1}"#) == "profile p.json: 'curve' is 0.1, outside 0.25...4")
        #expect(Self.problem(#"{"lowPassHz": 5000}"#) == "profile p.json: 'lowPassHz' is 5000.0, outside 20...1000")
        #expect(Self.problem("[1, 2]").contains("must be a JSON object of settings"))
        #expect(Self.problem("{").hasPrefix("profile p.json: is not JSON"))
        #expect(Self.problem("").hasPrefix("profile p.json: is not JSON"))
    }

    @Test func aMissingOrHugeFileIsNamed() throws {
        do {
            _ = try LiveProfile.named("/nonexistent/p.json")
            Issue.record("no error")
        } catch {
            #expect(error.description.hasPrefix("profile /nonexistent/p.json: cannot open /nonexistent/p.json"), "\(error)")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("live-profile-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let big = dir.appendingPathComponent("big.json")
        try Data(repeating: 0x20, count: 70_000).write(to: big)
        do {
            _ = try LiveProfile.named(big.path)
            Issue.record("no error")
        } catch {
            #expect(error.description.contains("is over 65536 bytes"))
        }
        do {
            _ = try LiveProfile.named("/dev/zero")
            Issue.record("no error")
        } catch {
            #expect(error.description.contains("not a regular file"), "\(error)")
        }
    }
}
