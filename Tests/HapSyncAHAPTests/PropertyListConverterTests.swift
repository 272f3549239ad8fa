import Foundation
import HapSyncAHAP
import Testing

/// `PropertyListConverter` holds a value to the reader's limits, whichever they are.
@Suite("Property lists: converted within the reader's limits")
struct PropertyListConverterTests {
    /// `value` inside `levels` arrays.
    static func nested(_ value: Any, levels: Int) -> Any {
        var v = value
        for _ in 0..<levels { v = [v] }
        return v
    }

    /// The converter and the reader accept the same nesting, for any limit: as deep as the
    /// reader reads from text converts; one level deeper fails in both, with the same words.
    @Test(arguments: [1, 2, 5, 64])
    func nestingIsLimitedAsInAFile(_ maxDepth: Int) throws {
        let limits = AHAPLimits(maxFileBytes: 1 << 20, maxEntries: 10, maxCurvePoints: 10, maxNestingDepth: maxDepth)
        let converter = PropertyListConverter(limits: limits)
        for levels in 0...(maxDepth + 1) {
            let text = String(repeating: "[", count: levels) + "1" + String(repeating: "]", count: levels)
            let fromText = AHAPReader(limits: limits).diagnose(data: Data(text.utf8))
            let textFails = fromText.diagnostics.contains { $0.code == .limitExceeded }
            let converted = Result { () throws(PropertyListConverter.Failure) in try converter.json(Self.nested(1, levels: levels)) }
            switch converted {
            case .success(let json):
                #expect(!textFails, "\(levels) levels: converted, but the reader refuses the text")
                #expect(JSONWriter.string(json, pretty: false) == text)
            case .failure(let f):
                #expect(textFails, "\(levels) levels: refused (\(f)), but the reader reads the text")
                #expect(f.code == .limitExceeded && f.message == "nesting deeper than \(maxDepth) levels")
                #expect(f.path == AHAPPath(components: Array(repeating: .index(0), count: maxDepth)))
                #expect(fromText.diagnostics.first { $0.code == .limitExceeded }?.message == f.message)
            }
        }
    }

    /// The size counted is never more than the value's text: a value whose compact AHAP text is
    /// exactly the size limit converts; one byte less of limit it may, much less it does not.
    @Test func theSizeCountedIsAtMostTheText() throws {
        let values: [Any] = [
            ["Version": 1, "Pattern": [["Event": ["Time": 0.25, "EventType": "HapticTransient"]]]],
            [["a": [1, 2, 3], "bc": NSNull(), "é": true], "x", [[], [:]], false, Float(0.5)] as [Any],
            NSMutableArray(array: ["s", 1, NSMutableDictionary(dictionary: ["k": [true, false]])]),
        ]
        for value in values {
            let json = try PropertyListConverter().json(value)
            let bytes = JSONWriter.string(json, pretty: false).utf8.count
            let exact = PropertyListConverter(limits: AHAPLimits(maxFileBytes: bytes, maxEntries: 10, maxCurvePoints: 10, maxNestingDepth: 64))
            #expect(throws: Never.self, "\(bytes) bytes of text") { try exact.json(value) }
            let small = PropertyListConverter(limits: AHAPLimits(maxFileBytes: bytes / 3, maxEntries: 10, maxCurvePoints: 10, maxNestingDepth: 64))
            #expect(throws: PropertyListConverter.Failure.self) { try small.json(value) }
        }
    }

    /// Property lists from `JSONSerialization` (Foundation's collections, its true and false, its
    /// numbers) convert to what the reader reads from the same text (keys in sorted order, as
    /// the converter sorts them).
    @Test func jsonSerializationsOutputReadsAsTheText() throws {
        let text = #"{"Metadata":{"f":false,"n":1,"s":"é","t":true,"x":0.5,"z":null},"Pattern":[{"Event":{"EventType":"HapticTransient","Time":0}}],"Version":1}"#
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        let converted = try PropertyListConverter().json(object)
        let read = try #require(AHAPReader().diagnose(data: Data(text.utf8)).pattern)
        #expect(AHAPReader().diagnose(json: converted).pattern == read)
        #expect(converted.objectMembers?.first { $0.key == "Metadata" }?.value == read.metadata)
    }

    /// Numbers of every width read as numbers, Foundation's Booleans as Booleans, and 1 as 1.
    @Test func numbersOfEveryWidth() throws {
        let values: [Any] = [Int32(-3), UInt8(7), Int64(1) << 40, Float(0.3), 0.25, NSNumber(value: 1), NSNumber(value: Int8(0)),
                             NSNumber(value: true), false, NSNumber(value: 2.5)]
        let json = try PropertyListConverter().json(values)
        #expect(json == .array([.number(-3), .number(7), .number(Double(1 << 40)), .number(0.3), .number(0.25), .number(1), .number(0),
                                .bool(true), .bool(false), .number(2.5)]))
    }

    /// The caller's own types stand for strings, as values and as keys.
    @Test func theCallersTypesStandForStrings() throws {
        struct Name: Hashable { let text: String }
        let converter = PropertyListConverter { ($0 as? Name)?.text }
        let json = try converter.json([Name(text: "k"): Name(text: "v")] as [AnyHashable: Any])
        #expect(json == .object([("k", .string("v"))]))
        #expect(throws: PropertyListConverter.Failure.self) { try PropertyListConverter().json([Name(text: "v")]) }
    }
}
