import HapSyncHapticOutput
import HapSyncRuntime
import Testing
@testable import HapSyncAudioOutput
@testable import HapSyncOutputs

/// The one place `import CoreHaptics` and the C API read their settings (`LibraryOutputs`): bad
/// values name where they came from; `HAPSYNC_HAPTICS` may be the policy's switch.
@Suite("Library outputs: the front ends' settings")
struct LibraryOutputsTests {
    private func failure(_ environment: [String: String], haptics: LibraryOutputs.Setting? = nil,
                         audio: LibraryOutputs.Setting? = nil) -> LibraryOutputs.Failure? {
        do throws(LibraryOutputs.Failure) {
            _ = try LibraryOutputs(environment: environment, haptics: haptics, audio: audio)
            return nil
        } catch {
            return error
        }
    }

    @Test func badValuesNameTheirSettingAndValue() {
        let haptics = failure(["HAPSYNC_HAPTICS": "rumble:pad", "HAPSYNC_AUDIO": "none"])
        #expect(haptics?.kind == .invalidValue)
        #expect(haptics?.description.hasPrefix("HAPSYNC_HAPTICS: 'rumble:pad' is not on, off or an output") == true)
        let config = failure([:], haptics: .init("rumble:pad", source: "haptics"), audio: .init("none", source: "audio"))
        #expect(config?.description.hasPrefix("haptics: 'rumble:pad' is not evdev:PATH") == true)
        let audio = failure(["HAPSYNC_HAPTICS": "none", "HAPSYNC_AUDIO": "alsa"])
        #expect(audio?.kind == .invalidValue && audio?.description == "HAPSYNC_AUDIO: 'alsa' is not auto, pipewire, pulse or none")
        let configAudio = failure([:], haptics: .init("none", source: "haptics"), audio: .init("alsa", source: "audio"))
        #expect(configAudio?.description == "audio: 'alsa' is not auto, pipewire, pulse or none")
    }

    /// `HAPSYNC_HAPTICS=off` (or 1, yes, ...) switches haptics (HapticPolicy) and names no output;
    /// a front end's own setting names outputs only.
    @Test func theEnvironmentsSwitchIsNoOutputButAConfigsIsAnError() throws {
        for value in ["off", "on", "1", "no", ""] {
            #expect(failure(["HAPSYNC_HAPTICS": value, "HAPSYNC_AUDIO": "none"]) == nil, "\(value)")
        }
        #expect(failure([:], haptics: .init("off", source: "haptics"), audio: .init("none", source: "audio"))?.kind == .invalidValue)
        let outputs = try LibraryOutputs(environment: ["HAPSYNC_HAPTICS": "evdev:auto", "HAPSYNC_AUDIO": "pulse"],
                                         haptics: .init("none", source: "haptics"), audio: .init("none", source: "audio"))
        #expect(outputs.audio == nil && outputs.backend is NullHapticBackend, "the config's settings win over the environment's")
    }

    /// `HapticOutputRequest`, which the CLI, serve and the libraries all make their backends with:
    /// none, one, or a fan-out; a waveform output with the request's stream settings.
    @Test func aRequestPutsItsBackendsTogether() throws {
        var request = HapticOutputRequest()
        #expect(try request.makeBackend(audio: nil, environment: [:]).backend is NullHapticBackend)
        let trace = TraceBackend(path: "/tmp/hapsync-request-test.jsonl", replacing: true)
        request.traces = [trace]
        #expect(try request.makeBackend(audio: nil, environment: [:]).backend is TraceBackend)
        request.evdev = "/dev/input/event-that-is-opened-at-start"
        request.rumbleInterval = 20_000_000
        #expect(try request.makeBackend(audio: nil, environment: [:]).backend is FanOutBackend)
        request.evdev = nil
        request.waveform = ("hapsync", .rear)
        request.waveformLatency = 0.05
        request.waveformAdvance = 3_000_000
        let made = try request.makeBackend(audio: nil, environment: ["PULSE_SERVER": "unix:/nowhere"])
        let waveform = try #require(made.waveform)
        #expect(made.backend is FanOutBackend && made.chosenDevice == nil)
        #expect(waveform.configuration.sink == "hapsync" && waveform.configuration.channels == .rear)
        #expect(waveform.configuration.latency == 0.05 && waveform.configuration.advance == 3_000_000)
        #expect(waveform.configuration.server == "unix:/nowhere")
    }
}
