// The libFuzzer entry point of one fuzz target, chosen when `.ci/fuzz` compiles it
// (-D FUZZ_reader, FUZZ_render, FUZZ_plot, FUZZ_audioHeader, FUZZ_propertyList, FUZZ_player or
// FUZZ_osc). The logic is in HapSyncFuzz.
import Foundation
import HapSyncFuzz

/// libFuzzer's entry: runs the target compiled in on one input, returning 0 (kept in the corpus).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let data = bytes.map { Data(bytes: $0, count: size) } ?? Data()
    #if FUZZ_reader
    FuzzTargets.reader(data)
    #elseif FUZZ_render
    FuzzTargets.render(data)
    #elseif FUZZ_plot
    FuzzTargets.plot(data)
    #elseif FUZZ_audioHeader
    FuzzTargets.audioHeader(data)
    #elseif FUZZ_propertyList
    FuzzTargets.propertyList(data)
    #elseif FUZZ_player
    EngineFuzz.run(data)
    #elseif FUZZ_osc
    OSCFuzz.run(data)
    #else
    #error("compile with -D FUZZ_<target>")
    #endif
    return 0
}
