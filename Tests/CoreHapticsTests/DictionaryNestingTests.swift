import CoreHaptics
import Foundation
import HapSyncTestSupport
import Testing

/// The error a dictionary gives, or nil when it makes a pattern.
private func dictionaryError(_ dictionary: [CHHapticPattern.Key: Any]) -> CHHapticError? {
    do {
        _ = try CHHapticPattern(dictionary: dictionary)
        return nil
    } catch {
        return error as? CHHapticError
    }
}

/// `value` inside `levels` arrays: `[[[value]]]` for 3.
private func nested(_ value: Any, levels: Int) -> Any {
    var v = value
    for _ in 0..<levels { v = [v] }
    return v
}

/// A pattern dictionary is held to the bounds of a file (issue 5: arrays nested 6,000 deep, or an
/// `NSMutableArray` that contains itself, crashed the process with a stack overflow).
@Suite("CoreHaptics: dictionary nesting and size")
struct DictionaryNestingTests {
    /// One transient event, with `metadata` as its pattern's metadata.
    static func pattern(metadata: Any) -> [CHHapticPattern.Key: Any] {
        [.pattern: [[CHHapticPattern.Key.event: [CHHapticPattern.Key.eventType: CHHapticEvent.EventType.hapticTransient,
                                                 CHHapticPattern.Key.time: 0.0]]],
         CHHapticPattern.Key(rawValue: "Metadata"): metadata]
    }

    @Test func arraysNestedThousandsDeepAreAnError() throws {
        let error = try #require(dictionaryError([.pattern: nested(1, levels: 6_000)]))
        #expect(error.code == .invalidPatternDictionary)
        // The first value past the limit, 64 levels down: the top-level dictionary is level 0.
        let path = "Pattern" + String(repeating: "[0]", count: 63)
        #expect(error.message == "\(path): nesting deeper than 64 levels", "\(error.message.prefix(400))")
    }

    /// The same limit as a file's: the deepest metadata a file may hold reads from a dictionary
    /// too, and one level more fails in both.
    @Test func theNestingLimitIsTheReaders() throws {
        // The event is 3 levels down (Pattern, its array, the entry); metadata is 1 level down,
        // so 62 arrays around a number put the number at level 63, the deepest allowed.
        let deepest = 62
        func text(_ levels: Int) -> String {
            #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}],"Metadata":"#
                + String(repeating: "[", count: levels) + "1" + String(repeating: "]", count: levels) + "}"
        }
        let fileFolder = try TemporaryDirectory("nesting")
        defer { fileFolder.remove() }
        let file = fileFolder.file("nesting.ahap")
        try Data(text(deepest).utf8).write(to: file)
        _ = try CHHapticPattern(contentsOf: file)
        #expect(dictionaryError(Self.pattern(metadata: nested(1, levels: deepest))) == nil)

        try Data(text(deepest + 1).utf8).write(to: file)
        #expect(throws: CHHapticError.self) { try CHHapticPattern(contentsOf: file) }
        let error = try #require(dictionaryError(Self.pattern(metadata: nested(1, levels: deepest + 1))))
        #expect(error.message.hasSuffix("nesting deeper than 64 levels"), "\(error.message.prefix(400))")
    }

    /// Casting an `NSMutableArray` that contains itself to `[Any]` bridges forever on Linux; it is
    /// read as stored and named.
    @Test func anArrayThatContainsItselfIsAnError() throws {
        let entries = NSMutableArray()
        entries.add([CHHapticPattern.Key.event: [CHHapticPattern.Key.eventType: CHHapticEvent.EventType.hapticTransient,
                                                 CHHapticPattern.Key.time: 0.0]])
        let loop = NSMutableArray()
        loop.add(1)
        loop.add(loop)
        entries.add(loop)
        defer { loop.removeAllObjects() }
        let error = try #require(dictionaryError([.pattern: entries]))
        #expect(error.code == .invalidPatternDictionary)
        #expect(error.message == "Pattern[1][1]: this array is the one at Pattern[1], which contains itself")
    }

    @Test func aDictionaryThatContainsItselfIsAnError() throws {
        let inner = NSMutableDictionary()
        inner["Title"] = "loop"
        inner["Self"] = [inner]
        defer { inner.removeAllObjects() }
        let error = try #require(dictionaryError(Self.pattern(metadata: inner)))
        #expect(error.code == .invalidPatternDictionary)
        #expect(error.message == "Metadata.Self[0]: this dictionary is the one at Metadata, which contains itself")
    }

    /// Foundation's collections read as Swift's do, numbers as numbers: `NSNumber(value: 1)` is
    /// not `true` (casting it to `Bool` succeeds), and Foundation's true is.
    @Test func foundationCollectionsReadAsSwiftOnes() throws {
        let event = NSMutableDictionary()
        event[CHHapticPattern.Key.eventType] = CHHapticEvent.EventType.audioCustom
        event["Time"] = NSNumber(value: 1)
        event["EventDuration"] = 0.5
        event["EventWaveformPath"] = "a.wav"
        event["EventWaveformLoopEnabled"] = NSNumber(value: true)
        let entries = NSMutableArray(array: [NSDictionary(dictionary: ["Event": event])])
        let pattern = try CHHapticPattern(dictionary: [.pattern: entries, CHHapticPattern.Key(rawValue: "Metadata"): ["n": NSNumber(value: 0)]])
        let e = try #require(pattern.ahapPattern.events.first)
        #expect(e.time == 1 && e.duration == 0.5 && e.loopEnabled && e.waveformPath == "a.wav")
        #expect(pattern.ahapPattern.metadata == .object([("n", .number(0))]))
    }

    /// A pattern with `null` in its metadata exports it as `NSNull`, which imports again.
    @Test func nullMetadataRoundTrips() throws {
        let pattern = try CHHapticPattern(dictionary: Self.pattern(metadata: ["none": NSNull()]))
        let again = try CHHapticPattern(dictionary: try pattern.exportDictionary())
        #expect(again.ahapPattern == pattern.ahapPattern)
    }

    /// The same key written as a `String` and as a `CHHapticPattern.Key` is not silently one of them.
    @Test func aKeyGivenTwiceIsAnError() throws {
        let event: [AnyHashable: Any] = [CHHapticPattern.Key.eventType: CHHapticEvent.EventType.hapticTransient,
                                         CHHapticPattern.Key.time: 0.0, "Time": 1.0]
        let error = try #require(dictionaryError([.pattern: [["Event": event]]]))
        #expect(error.message.hasPrefix("Pattern[0].Event.Time: the key \"Time\" is given twice"), "\(error.message)")
    }

    /// Values share storage: an array holding the same array twice, 60 levels deep, is 2^60
    /// values (here each a 64 KB string); a 1 MB string in 100 events, 100 MB. Either would be
    /// over a file's size limit as AHAP text, and stops there.
    @Test func sharedValuesCountAsOftenAsTheyAppear() throws {
        var doubling: Any = String(repeating: "s", count: 1 << 16)
        for _ in 0..<60 { doubling = [doubling, doubling] }
        let error = try #require(dictionaryError(Self.pattern(metadata: doubling)))
        #expect(error.message.hasSuffix("the pattern would be over 16777216 bytes as AHAP text, the limit on a file"), "\(error.message)")

        let name = String(repeating: "w", count: 1 << 20) + ".wav"
        let event: [CHHapticPattern.Key: Any] = [.eventType: CHHapticEvent.EventType.audioCustom, .time: 0.0, .eventWaveformPath: name]
        let many = try #require(dictionaryError([.pattern: Array(repeating: [CHHapticPattern.Key.event: event], count: 100)]))
        #expect(many.message.hasPrefix("Pattern[15].Event.EventWaveformPath: the pattern would be over"), "\(many.message.prefix(300))")
    }

    /// A value of another type is named with its key path, as before.
    @Test func aValueOfAnotherTypeIsNamed() throws {
        let error = try #require(dictionaryError([.pattern: [[CHHapticPattern.Key.event: [CHHapticPattern.Key.time: Date()]]]]))
        #expect(error.message == "Pattern[0].Event.Time: a Date is not a string, number, Boolean, array or dictionary")
    }
}
