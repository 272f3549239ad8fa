// One import for HapSync's own API: `import HapSync` brings in every public module a program
// that plays patterns uses.

// The AHAP model, reader, writer and builder.
@_exported import AHAP
// Lock-free rings, the seqlock and `Locked`, which some public signatures use.
@_exported import HapSyncConcurrency
// Timelines, rendering, feedback styles and the spring.
@_exported import HapSyncCore
// The real-time engine, players, policy and output files.
@_exported import HapSyncRuntime
// Haptic backends: evdev rumble, trace, fan-out.
@_exported import HapticOutput
// PulseAudio output and audio decoding.
@_exported import AudioOutput
// The outputs a front end asks for, assembled in one place.
@_exported import HapSyncOutputs
// Haptics generated from a sound file.
@_exported import HapticGeneration
