import HapSyncAHAP
import HapSyncTestSupport

/// A pattern from builder calls.
func pattern(_ build: (AHAPPatternBuilder) -> AHAPPatternBuilder) throws -> AHAPPattern { try build(AHAPPatternBuilder()).build() }

/// Seconds as engine nanoseconds.
func ns(_ s: Double) -> UInt64 { ManualRig.nanoseconds(s) }
