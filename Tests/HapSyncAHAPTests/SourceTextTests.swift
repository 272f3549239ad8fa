import Foundation
import Testing
@testable import HapSyncAHAP

/// Line and column of a byte offset the slow, obvious way: count from the start.
private func naiveLineColumn(_ bytes: [UInt8], _ offset: Int) -> (line: Int, column: Int) {
    var line = 1, column = 1
    for b in bytes[..<min(max(offset, 0), bytes.count)] {
        if b == UInt8(ascii: "\n") { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
    }
    return (line, column)
}

@Suite("Source text: line and column of a byte offset")
struct SourceTextTests {
    @Test func agreesWithCountingFromTheStart() {
        // Lines of every length around the checkpoint spacing, multi-byte characters across
        // checkpoint boundaries, empty lines, no newline at the end.
        var generator = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [Array("a".utf8), Array("é".utf8), Array("😀".utf8), Array("\n".utf8), Array("{ \"Time\": 0.5 }".utf8), Array("\n\n".utf8)]
        for _ in 0..<20 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...400, using: &generator) { bytes += pieces.randomElement(using: &generator)! }
            let source = SourceText(bytes)
            for offset in -2...(bytes.count + 2) {
                let got = source.lineColumn(of: offset), want = naiveLineColumn(bytes, offset)
                #expect(got == want, "offset \(offset) of \(bytes.count)")
                if got != want { return }
            }
        }
    }

    @Test func aFindingOnALongLineCostsNoMoreThanOnAShortOne() {
        // One line of 1 MB (a minified file) and 4,000 findings spread along it. Counting from the
        // start of the line for each finding walked 2 billion bytes here (9.6 s for a 300 KB file
        // through `hapsync validate`); a lookup must not depend on the line's length.
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        let source = SourceText(bytes)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            var sum = 0
            for i in 0..<4_000 { sum &+= source.lineColumn(of: bytes.count - 1 - i * 200).column }
            #expect(sum > 0)
        }
        #expect(elapsed < .seconds(1), "4,000 lookups on a 1 MB line took \(elapsed)")
        #expect(source.lineColumn(of: bytes.count - 1) == (1, bytes.count))
    }

    @Test func aOneLineFileWithManyFindingsTakesAboutAsLongAsAMultiLineOne() {
        // 5,000 events with an unknown key each, minified on one line (~300 KB), and the same
        // with a line per event. Counting from the start of the line made the one-line file 20 to
        // 60 times slower (9.6 s against 0.43 s through `hapsync validate`).
        let entry = #"{"Event":{"Time":0,"EventType":"HapticTransient","Colour":1}}"#
        func text(_ separator: String) -> String { #"{"Version":1,"Pattern":["# + Array(repeating: entry, count: 5_000).joined(separator: separator) + "]}" }
        var limits = AHAPLimits.default
        limits.maxFindings = 10_000
        let reader = AHAPReader(limits: limits)
        let clock = ContinuousClock()
        var report: AHAPReader.Report?
        let multiLine = clock.measure { _ = reader.diagnose(data: Data(text(",\n").utf8), file: "lines.ahap") }
        let oneLine = clock.measure { report = reader.diagnose(data: Data(text(",").utf8), file: "minified.ahap") }
        #expect(oneLine < multiLine * 3 + .milliseconds(500), "one line: \(oneLine), a line per event: \(multiLine)")
        let warnings = report?.warnings ?? []
        let bytes = Array(text(",").utf8), key = Array(#""Colour""#.utf8)
        let keyOffsets = (0...(bytes.count - key.count)).filter { bytes[$0] == key[0] && Array(bytes[$0..<($0 + key.count)]) == key }
        #expect(warnings.count == keyOffsets.count)
        #expect(warnings.first?.line == 1 && warnings.first?.column == keyOffsets.first.map { $0 + 1 })
        #expect(warnings.last?.line == 1 && warnings.last?.column == keyOffsets.last.map { $0 + 1 })
    }
}
