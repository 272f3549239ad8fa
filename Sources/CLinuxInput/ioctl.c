#include "CLinuxInput.h"
#include <sys/ioctl.h>

int hapsync_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }
int hapsync_ioctl_int(int fd, unsigned long request, int arg) { return ioctl(fd, request, arg); }
