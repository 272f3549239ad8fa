// The audio output front ends use: the sound servers' outputs and the file decoders, re-exported
// so that `import HapSyncAudioOutput` is the one import the CLI, serve, `import CoreHaptics` and the C
// API need. Each server's library is linked by its own module (HapSyncPulseAudio: libpulse;
// HapSyncPipeWire: libpipewire-0.3), decoding by HapSyncAudioFiles (libsndfile, libsamplerate,
// FFmpeg), and what every stream renders is HapSyncAudioStream, which links none of them.
@_exported import HapSyncAudioFiles
@_exported import HapSyncAudioStream
@_exported import HapSyncPipeWire
@_exported import HapSyncPulseAudio
