import Foundation
import HapSyncAHAP
import HapSyncCore
import HapSyncTestSupport
import Testing
@testable import HapSyncRuntime

/// API times far off (a start a thousand years away) are deadlines that never come, not crashes:
/// every seconds → nanoseconds conversion saturates; times counted from a call's time are bounded
/// (a day) where they enter.
@Suite("Extreme times through the player API")
struct ExtremeTimesTests {
    @Test func farTimesNeverTrap() throws {
        let rig = try ManualRig()
        let player = try rig.engine.makeAdvancedPlayer(with: try pattern { $0.continuous(at: 0, duration: 0.5, intensity: 0.8, sharpness: 0.5) })
        try player.start(atTime: 1e300)
        rig.at(1)
        #expect(rig.commands.isEmpty, "nothing before its (never coming) start")
        try player.start(atTime: 1.5)
        // A call's own time may be as far off as it likes; times counted from it are at most a
        // day, as in a file (refused beyond, with the value named).
        try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5, time: 86_400)], atTime: 1e300)
        try player.scheduleParameterCurve(AHAPParameterCurve(.hapticIntensityControl, time: 86_400,
                                                             controlPoints: [.init(time: 0, value: 1), .init(time: 86_400, value: 0)]), atTime: 1e300)
        #expect(throws: HapticEngine.EngineError.invalidParameter("parameters[0]: time 1e+300 s is outside 0...86400.0 (at most one day after the call's time)")) {
            try player.sendParameters([AHAPDynamicParameter(.hapticIntensityControl, 0.5, time: 1e300)], atTime: 1e300)
        }
        #expect(throws: HapticEngine.EngineError.self) {
            try player.scheduleParameterCurve(AHAPParameterCurve(.hapticIntensityControl, time: 0,
                                                                 controlPoints: [.init(time: 0, value: 1), .init(time: 1e300, value: 0)]), atTime: 1e300)
        }
        rig.run(until: 3)
        #expect(rig.commands.contains { $0.kind == .level && $0.intensity == 0.8 }, "played as written: the parameters lie beyond any time")
        #expect(UInt64(nanosecondsOf: 1e300) == .max && UInt64(nanosecondsOf: -1) == 0 && UInt64(nanosecondsOf: .nan) == 0)
        #expect(UInt64.max.addingSaturated(1) == .max && UInt64(2).addingSaturated(3) == 5)
    }
}
