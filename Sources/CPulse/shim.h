// PulseAudio's asynchronous API (threaded mainloop).
#include <pulse/pulseaudio.h>
