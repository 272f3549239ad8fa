// PulseAudio's asynchronous API (threaded mainloop) for playback, and the simple API for the
// monitor recorder used in tests and benchmarks.
#include <pulse/pulseaudio.h>
#include <pulse/simple.h>
#include <pulse/error.h>
