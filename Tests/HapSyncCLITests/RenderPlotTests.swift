import Foundation
import FoundationXML
import HapSyncCLI
import HapSyncTestSupport
import Testing

/// Every .ahap file of the conformance corpus and of Assets.
let everyPattern: [String] = {
    let dirs = [conformance.appendingPathComponent("SampleAHAPs"), packageRoot.appendingPathComponent("Assets")]
    return dirs.flatMap { dir in
        ((try? FileManager.default.subpathsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".ahap") }.map { dir.appendingPathComponent($0).path }
    }.sorted()
}()

let streamingAssets = conformance.appendingPathComponent("StreamingAssets").path

@Suite("render and plot")
struct RenderPlotTests {
    @Test func everyPatternIsThere() { #expect(everyPattern.count == 43, "21 conformance files, 5 examples, 17 feedback styles") }

    @Test(arguments: everyPattern)
    func rendersBothFormats(_ file: String) throws {
        let jsonl = hapsync("render", "--resources", streamingAssets, file)
        #expect(jsonl.status == 0, "\(jsonl.err)")
        #expect(jsonl.err.isEmpty, "every audio file resolves: \(jsonl.err)")
        let lines = jsonl.out.split(separator: "\n")
        let records = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(records.first?["type"] as? String == "pattern")
        let header = records[0]
        let commands = records.filter { ["level", "transient"].contains($0["type"] as? String) }
        #expect(commands.count == header["commands"] as? Int)
        #expect(records.filter { $0["type"] as? String == "voice" }.count == header["voices"] as? Int)
        let times = records.dropFirst().compactMap { $0["t"] as? Double }
        #expect(times == times.sorted(), "records in time order")
        // The stream never leaves the actuator running: the last level command is 0.
        if let lastLevel = records.last(where: { $0["type"] as? String == "level" }) {
            #expect(lastLevel["intensity"] as? Double == 0)
        }
        let csv = hapsync("render", "--format", "csv", "--resources", streamingAssets, file)
        #expect(csv.status == 0)
        let rows = csv.out.split(separator: "\n")
        #expect(rows.first == "time,type,voice,intensity,sharpness,gain,pan,pitch,brightness,source")
        #expect(rows.dropFirst().filter { $0.contains(",level,") || $0.contains(",transient,") }.count == commands.count)
    }

    @Test(arguments: everyPattern)
    func plotsWellFormedSVG(_ file: String) throws {
        let outFolder = try TemporaryDirectory("plot")
        defer { outFolder.remove() }
        let out = outFolder.file("plot.svg")
        let r = hapsync("plot", "--resources", streamingAssets, "--out", out.path, file)
        #expect(r.status == 0, "\(r.err)")
        let data = try Data(contentsOf: out)
        let counter = ElementCounter()
        let parser = XMLParser(data: data)
        parser.delegate = counter
        #expect(parser.parse(), "SVG is well-formed XML: \(String(describing: parser.parserError))")
        #expect(counter.root == "svg")
        #expect(counter.count["polygon"] == 1, "the intensity area")
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("time (ms)"))
        // One stem per transient and one bar per voice, as the render says.
        let header = try #require(try JSONSerialization.jsonObject(with: Data(hapsync("render", "--resources", streamingAssets, file).out.split(separator: "\n")[0].utf8)) as? [String: Any])
        #expect(counter.classes["voice", default: 0] == header["voices"] as? Int)
        let transients = hapsync("render", "--resources", streamingAssets, file).out.components(separatedBy: "\"type\":\"transient\"").count - 1
        #expect(counter.classes["transient", default: 0] == transients)
    }

    @Test func outputNeverOverwritesWithoutForce() throws {
        let outFolder = try TemporaryDirectory("keep")
        defer { outFolder.remove() }
        let out = outFolder.file("keep.csv")
        try Data("precious\n".utf8).write(to: out)
        let taps = packageRoot.appendingPathComponent("Assets/taps.ahap").path
        let refused = hapsync("render", "--format=csv", "--out", out.path, taps)
        #expect(refused.status == 1)
        #expect(refused.err == "error: \(out.path) already exists; not overwriting it (pass --force to replace it)\n")
        #expect(try String(contentsOf: out, encoding: .utf8) == "precious\n")
        let plotRefused = hapsync("plot", "--out", out.path, taps)
        #expect(plotRefused.status == 1)
        #expect(try String(contentsOf: out, encoding: .utf8) == "precious\n")
        let forced = hapsync("render", "--format=csv", "--out", out.path, "--force", taps)
        #expect(forced.status == 0)
        #expect(try String(contentsOf: out, encoding: .utf8).hasPrefix("time,type,voice"))
    }

    @Test func renderUsageAndRate() throws {
        let taps = packageRoot.appendingPathComponent("Assets/taps.ahap").path
        #expect(hapsync("render", "--rate", "0", taps).status == 64)
        #expect(hapsync("render", "--format", "xml", taps).err.hasPrefix("error: --format must be jsonl or csv, not 'xml'"))
        #expect(hapsync("plot", taps).err.hasPrefix("error: plot needs --out PATH.svg"))
        let engine = packageRoot.appendingPathComponent("Assets/engine.ahap").path
        let fast = hapsync("render", engine).out.split(separator: "\n").filter { $0.contains("\"type\":\"level\"") }.count
        let slow = hapsync("render", "--rate", "100", engine).out.split(separator: "\n").filter { $0.contains("\"type\":\"level\"") }.count
        #expect(slow < fast / 5, "a tenth of the rate gives far fewer level commands (\(slow) vs \(fast))")
    }

    @Test func renderOfImplodeMatchesTheSemantics() throws {
        // Intensity curve at 0.2 s from 0.5 → 1.0 over 0.2 s: at 0.3 s (grid k = 300) 0.75.
        let implode = conformance.appendingPathComponent("SampleAHAPs/Ricochet/Implode.ahap").path
        let r = hapsync("render", "--resources", streamingAssets, implode)
        let at300 = r.out.split(separator: "\n").first { $0.contains("\"type\":\"level\",\"t\":0.3,") }
        #expect(at300 == "{\"type\":\"level\",\"t\":0.3,\"intensity\":0.75,\"sharpness\":0.2}")
        #expect(r.out.contains("\"source\":\"file\",\"path\":\"CoreHaptics/Ricochet/Implode.wav\""))
    }

    @Test func missingAudioWarnsAndStillRenders() {
        let implode = conformance.appendingPathComponent("SampleAHAPs/Ricochet/Implode.ahap").path
        let r = hapsync("render", implode)
        #expect(r.status == 0)
        #expect(r.err.contains("warning: Pattern[3].Event.EventWaveformPath: \"CoreHaptics/Ricochet/Implode.wav\" not found"))
        #expect(r.out.contains("\"end\":null"))
    }
}

/// Counts SVG elements by name and by class attribute.
final class ElementCounter: NSObject, XMLParserDelegate {
    var root: String?
    var count: [String: Int] = [:]
    var classes: [String: Int] = [:]

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        if root == nil { root = name }
        count[name, default: 0] += 1
        if let c = attributes["class"] { classes[c, default: 0] += 1 }
    }
}
