// One import for HapSync's own API: `import HapSync` brings in every public module a program
// that plays patterns uses.

// The AHAP model, reader, writer and builder.
@_exported import HapSyncAHAP
// PulseAudio and PipeWire output and audio decoding.
@_exported import HapSyncAudioOutput
// Lock-free rings, the seqlock and `Locked`, which some public signatures use.
@_exported import HapSyncConcurrency
// Timelines, rendering, feedback styles and the spring.
@_exported import HapSyncCore
// Haptics generated from a sound file.
@_exported import HapSyncGeneration
// Haptic backends: evdev rumble, trace, fan-out.
@_exported import HapSyncHapticOutput
// The outputs a front end asks for, assembled in one place.
@_exported import HapSyncOutputs
// The real-time engine, players, policy and output files.
@_exported import HapSyncRuntime
// The system layer (`SystemErrno`, `SystemClock`), which some public signatures use.
@_exported import HapSyncSystem
