// PulseAudio's asynchronous API (threaded mainloop): the playback stream and the monitor recorder.
#include <pulse/pulseaudio.h>
#include <pulse/error.h>
