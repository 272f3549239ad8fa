import CoreHaptics
import Foundation
import HapSyncTestSupport
import Testing

/// Core Haptics code as Apple's documentation writes it, compiled with `import CoreHaptics` and
/// read by HapSync's AHAP reader.
@Suite("CoreHaptics: patterns")
struct CoreHapticsPatternTests {
    /// Apple's "Playing a Single-tap Haptic Pattern": a transient from a dictionary.
    @Test func aTransientFromADictionary() throws {
        let hapticDict = [
            CHHapticPattern.Key.pattern: [
                [CHHapticPattern.Key.event: [
                    CHHapticPattern.Key.eventType: CHHapticEvent.EventType.hapticTransient,
                    CHHapticPattern.Key.time: CHHapticTimeImmediate,
                    CHHapticPattern.Key.eventDuration: 1.0,
                ]],
            ],
        ]
        let pattern = try CHHapticPattern(dictionary: hapticDict)
        #expect(pattern.ahapPattern.events.count == 1)
        #expect(pattern.ahapPattern.events.first?.type == .hapticTransient)
    }

    /// Events and parameter curves made in code, as in Apple's "Updating Continuous and Transient
    /// Haptic Parameters in Real Time".
    @Test func eventsAndCurves() throws {
        let intensity = CHHapticEventParameter(parameterID: .hapticIntensity, value: 1.0)
        let sharpness = CHHapticEventParameter(parameterID: .hapticSharpness, value: 0.3)
        let continuous = CHHapticEvent(eventType: .hapticContinuous, parameters: [intensity, sharpness],
                                       relativeTime: 0, duration: 1.5)
        let tap = CHHapticEvent(eventType: .hapticTransient, parameters: [intensity], relativeTime: 0.5)
        let start = CHHapticParameterCurve.ControlPoint(relativeTime: 0, value: 1)
        let end = CHHapticParameterCurve.ControlPoint(relativeTime: 1.5, value: 0)
        let curve = CHHapticParameterCurve(parameterID: .hapticIntensityControl, controlPoints: [start, end], relativeTime: 0)
        let pattern = try CHHapticPattern(events: [continuous, tap], parameterCurves: [curve])
        #expect(pattern.duration == 1.5)
        #expect(pattern.ahapPattern.curves.count == 1)
        // Float values keep their decimal form: 0.3, not 0.30000001192092896.
        let exported = try pattern.exportDictionary()
        let entries = try #require(exported[.pattern] as? [Any])
        #expect(entries.count == 3)
        let again = try CHHapticPattern(dictionary: exported)
        #expect(again.ahapPattern == pattern.ahapPattern, "export then import gives the same pattern")
        #expect(pattern.ahapPattern.events.first?.parameters.first { $0.id == .hapticSharpness }?.value == 0.3)

        let parameter = CHHapticDynamicParameter(parameterID: .hapticSharpnessControl, value: -0.2, relativeTime: 0.25)
        let withParameters = try CHHapticPattern(events: [continuous], parameters: [parameter])
        #expect(withParameters.ahapPattern.parameters.count == 1)
    }

    /// An audio event made from a registered resource's ID carries the name the engine maps back.
    @Test func anAudioResourceEvent() throws {
        let event = CHHapticEvent(audioResourceID: 7, parameters: [CHHapticEventParameter(parameterID: .audioVolume, value: 0.5)],
                                  relativeTime: 0.1)
        #expect(event.type == .audioCustom)
        let pattern = try CHHapticPattern(events: [event], parameters: [])
        #expect(pattern.ahapPattern.events.first?.waveformPath == CHHapticPattern.waveformPath(forResource: 7))
    }

    /// Errors are `CHHapticError` with Apple's codes, naming the entry and field.
    @Test func errorsNameWhatIsWrong() throws {
        let late = CHHapticEvent(eventType: .hapticTransient, parameters: [], relativeTime: -0.25)
        do {
            _ = try CHHapticPattern(events: [late], parameters: [])
            Issue.record("a negative time must not make a pattern")
        } catch let error as CHHapticError {
            #expect(error.code == .invalidPatternData && error.code.rawValue == -4813)
            #expect(error.message.contains("Pattern[0].Event.Time"), "\(error)")
        }
        do {
            _ = try CHHapticPattern(dictionary: [.pattern: [[CHHapticPattern.Key.event: [CHHapticPattern.Key.time: Date()]]]])
            Issue.record("a Date is not a pattern value")
        } catch CHHapticError.invalidPatternDictionary {
            // Matched by code, as on Apple's platforms.
        }
        do {
            _ = try CHHapticPattern(contentsOf: URL(fileURLWithPath: "/nonexistent/x.ahap"))
            Issue.record("a missing file must not read")
        } catch let error as CHHapticError {
            #expect(error.code == .fileNotFound, "\(error)")
        }
    }

    /// An AHAP file from Apple's sample code reads as Core Haptics reads it.
    @Test func anAppleSampleFile() throws {
        let file = TestFiles.conformance.appendingPathComponent("SampleAHAPs/Effects/Heartbeats.ahap")
        try #require(FileManager.default.fileExists(atPath: file.path), "../shared/conformance is beside the checkout")
        let pattern = try CHHapticPattern(contentsOf: file)
        #expect(pattern.duration > 0)
        #expect(!pattern.ahapPattern.events.isEmpty)
    }
}
