/* The C API's header for the Swift side that implements it, plus the per-thread error store. */
#include "hapsync.h"

/** Stores MESSAGE (copied, cut at 4 KiB) as this thread's last error. Internal to libhapsync. */
void hs_internal_set_error(const char *message);
