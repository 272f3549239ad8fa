// libdbus-1 (Debian libdbus-1-dev), for RealtimeKit: real-time scheduling for a process that has
// no right to it itself, granted over the system bus as PulseAudio and PipeWire clients get it.
#include <dbus/dbus.h>
