#include <string.h>
#include "CHapSync.h"

/* One message per thread: the last failure's. */
static _Thread_local char last_error[4096];

const char *hs_last_error_message(void) { return last_error; }

void hs_internal_set_error(const char *message) {
    if (message == NULL) message = "";
    strncpy(last_error, message, sizeof last_error - 1);
    last_error[sizeof last_error - 1] = '\0';
}
