import Testing
@testable import HapSyncRuntime

@Suite("Scheduler: pattern time to engine nanoseconds never traps")
struct CheckedConversionTests {
    @Test func spansSaturate() {
        #expect(Scheduler.span(1, rate: 1) == 1_000_000_000)
        #expect(Scheduler.span(0.5, rate: 2) == 250_000_000)
        #expect(Scheduler.span(9.2e9, rate: 1) == 9_200_000_000_000_000_000)
        #expect(Scheduler.span(1.9e10, rate: 1) == .max, "1.9e19 ns is past UInt64")
        #expect(Scheduler.span(1e308, rate: 1) == .max)
        #expect(Scheduler.span(1, rate: 0) == .max, "a zero rate never gets there")
        #expect(Scheduler.span(-1, rate: 1) == 0 && Scheduler.span(.nan, rate: 1) == 0)
    }
}
