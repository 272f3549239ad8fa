// liblo, the standard C library for Open Sound Control (Debian: liblo-dev).
#include <lo/lo.h>
