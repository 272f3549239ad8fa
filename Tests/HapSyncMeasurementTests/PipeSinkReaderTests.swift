import HapSyncMeasurement
import Testing

/// The pipe sink reader keeps each server's contract with whoever reads its pipe (the reading itself
/// is exercised against both real servers by `SyncTests` in HapSyncAudioOutputTests).
@Suite("Pipe sink reader")
struct PipeSinkReaderTests {
    @Test func eachServersPipeSinkIsReadAsItsContractSays() {
        // PipeWire's pipe sink writes every graph cycle on its own clock: a block is heard as it comes.
        #expect(PipeSinkReader.Pacing(serverName: "PulseAudio (on PipeWire 0.3.65)") == .asWritten)
        // PulseAudio's writes whenever the pipe has room and counts the pipe as latency: the reader
        // is its sound card and takes frames at the nominal rate.
        #expect(PipeSinkReader.Pacing(serverName: "pulseaudio") == .nominalRate)
    }

    @Test func eachReaderMakesASinkOfItsOwn() {
        #expect(PipeSinkReader().sinkName != PipeSinkReader().sinkName)
        #expect(PipeSinkReader(sinkName: "speaker").sinkName == "speaker")
    }
}
