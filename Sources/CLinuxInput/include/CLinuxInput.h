// The kernel's input and uinput interface for Swift. <linux/input.h> defines its ioctl numbers
// with function-like macros (_IOW, _IOR, _IOC), which Swift cannot import, so they are exposed
// here as inline functions; ioctl itself is variadic, so it gets two fixed-signature wrappers.
#ifndef CLINUX_INPUT_H
#define CLINUX_INPUT_H

#include <linux/input.h>
#include <linux/uinput.h>

/// EVIOCSFF: upload (or update in place) a force-feedback effect. 0x40304580 on x86_64.
static inline unsigned long hapsync_EVIOCSFF(void) { return EVIOCSFF; }
/// EVIOCRMFF: erase an effect by id (the id is passed by value). 0x40044581.
static inline unsigned long hapsync_EVIOCRMFF(void) { return EVIOCRMFF; }
/// EVIOCGEFFECTS: how many effects the device can hold at once. 0x80044584.
static inline unsigned long hapsync_EVIOCGEFFECTS(void) { return EVIOCGEFFECTS; }
/// EVIOCGBIT(ev, len): the capability bits of event type `ev`.
static inline unsigned long hapsync_EVIOCGBIT(unsigned int ev, unsigned int len) { return EVIOCGBIT(ev, len); }
/// EVIOCGNAME(len): the device's name.
static inline unsigned long hapsync_EVIOCGNAME(unsigned int len) { return EVIOCGNAME(len); }
/// EVIOCGID: the device's bus type, vendor, product and version (struct input_id).
static inline unsigned long hapsync_EVIOCGID(void) { return EVIOCGID; }

/// uinput requests, for the fake gamepad used in the real-kernel test.
static inline unsigned long hapsync_UI_SET_EVBIT(void) { return UI_SET_EVBIT; }
static inline unsigned long hapsync_UI_SET_FFBIT(void) { return UI_SET_FFBIT; }
static inline unsigned long hapsync_UI_DEV_SETUP(void) { return UI_DEV_SETUP; }
static inline unsigned long hapsync_UI_DEV_CREATE(void) { return UI_DEV_CREATE; }
static inline unsigned long hapsync_UI_DEV_DESTROY(void) { return UI_DEV_DESTROY; }
static inline unsigned long hapsync_UI_BEGIN_FF_UPLOAD(void) { return UI_BEGIN_FF_UPLOAD; }
static inline unsigned long hapsync_UI_END_FF_UPLOAD(void) { return UI_END_FF_UPLOAD; }
static inline unsigned long hapsync_UI_BEGIN_FF_ERASE(void) { return UI_BEGIN_FF_ERASE; }
static inline unsigned long hapsync_UI_END_FF_ERASE(void) { return UI_END_FF_ERASE; }
static inline unsigned long hapsync_UI_GET_SYSNAME(unsigned int len) { return UI_GET_SYSNAME(len); }

/// ioctl with a pointer argument. Returns the result or -1 with errno set.
int hapsync_ioctl_ptr(int fd, unsigned long request, void *arg);
/// ioctl with an int argument passed by value (EVIOCRMFF, UI_SET_EVBIT, ...).
int hapsync_ioctl_int(int fd, unsigned long request, int arg);

#endif
