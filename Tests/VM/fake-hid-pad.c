/* fake-hid-pad: a real gamepad made through /dev/uhid, for the real-kernel test: its ids, its
 * report descriptor, and the feature reports its kernel driver asks for at probe, each answered at
 * its exact size with the report id first. The driver then exposes the gamepad's evdev node with
 * FF_RUMBLE (through ff-memless) and sends an output report whenever the motors change; every
 * output report is logged as a JSON line with CLOCK_MONOTONIC ns and its decoded motors (the
 * right, light motor = weak >> 8; the left, heavy motor = strong >> 8), so a check on the host can
 * compare what reached the "pad" with HapSync's trace.
 *
 *   dualsense   DualSense on USB (054c:0ce6), hid-playstation: features 0x09 (pairing: the MAC,
 *               20 bytes), 0x20 (firmware, 64), 0x05 (calibration, 41); output report 0x02, its
 *               valid flags in byte 1, weak >> 8 in byte 3, strong >> 8 in byte 4.
 *   dualshock4  DualShock 4 on USB (054c:09cc), hid-sony in 6.1: features 0x02 (calibration, 37
 *               bytes), 0x81 (the MAC, 7), 0xa3 (firmware, 49); output report 0x05 (32 bytes),
 *               flags in byte 1, weak >> 8 in byte 4, strong >> 8 in byte 5.
 *
 *   fake-hid-pad MODEL LOG.jsonl runs until SIGTERM (destroys the device, exits 0); SIGUSR1
 *                                destroys it at once, as an unplugged pad, and exits 0; SIGUSR2
 *                                logs a mark with the time it came (the test's "killed now").
 * Built static (cc -static) so the test VM's initramfs needs nothing else. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/uhid.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The DualSense's USB report descriptor, as the pad sends it: report 1 (input: sticks, triggers,
 * hat, 15 buttons, vendor data), report 2 (output; the real pad declares 47 bytes after the id, and
 * hid-playstation sends 63 all the same, as to the real pad), and its feature reports (0x05
 * calibration, 0x09 pairing, 0x20 firmware, ...). */
static const uint8_t dualsense_descriptor[] = {
    0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x85, 0x01, 0x09, 0x30, 0x09, 0x31, 0x09, 0x32, 0x09, 0x35,
    0x09, 0x33, 0x09, 0x34, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x06, 0x81, 0x02, 0x06,
    0x00, 0xff, 0x09, 0x20, 0x95, 0x01, 0x81, 0x02, 0x05, 0x01, 0x09, 0x39, 0x15, 0x00, 0x25, 0x07,
    0x35, 0x00, 0x46, 0x3b, 0x01, 0x65, 0x14, 0x75, 0x04, 0x95, 0x01, 0x81, 0x42, 0x65, 0x00, 0x05,
    0x09, 0x19, 0x01, 0x29, 0x0f, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x0f, 0x81, 0x02, 0x06,
    0x00, 0xff, 0x09, 0x21, 0x95, 0x0d, 0x81, 0x02, 0x06, 0x00, 0xff, 0x09, 0x22, 0x15, 0x00, 0x26,
    0xff, 0x00, 0x75, 0x08, 0x95, 0x34, 0x81, 0x02, 0x85, 0x02, 0x09, 0x23, 0x95, 0x2f, 0x91, 0x02,
    0x85, 0x05, 0x09, 0x23, 0x95, 0x28, 0xb1, 0x02, 0x85, 0x08, 0x09, 0x24, 0x95, 0x2f, 0xb1, 0x02,
    0x85, 0x09, 0x09, 0x24, 0x95, 0x13, 0xb1, 0x02, 0x85, 0x0a, 0x09, 0x25, 0x95, 0x1a, 0xb1, 0x02,
    0x85, 0x20, 0x09, 0x26, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x21, 0x09, 0x27, 0x95, 0x04, 0xb1, 0x02,
    0x85, 0x22, 0x09, 0x40, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x80, 0x09, 0x28, 0x95, 0x3f, 0xb1, 0x02,
    0x85, 0x81, 0x09, 0x29, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x82, 0x09, 0x2a, 0x95, 0x09, 0xb1, 0x02,
    0x85, 0x83, 0x09, 0x2b, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x84, 0x09, 0x2c, 0x95, 0x3f, 0xb1, 0x02,
    0x85, 0x85, 0x09, 0x2d, 0x95, 0x02, 0xb1, 0x02, 0x85, 0xa0, 0x09, 0x2e, 0x95, 0x01, 0xb1, 0x02,
    0x85, 0xe0, 0x09, 0x2f, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xf0, 0x09, 0x30, 0x95, 0x3f, 0xb1, 0x02,
    0x85, 0xf1, 0x09, 0x31, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xf2, 0x09, 0x32, 0x95, 0x0f, 0xb1, 0x02,
    0xc0,
};

/* The DualShock 4's (CUH-ZCT2) USB report descriptor: report 1 (input), report 5 (output, 31 bytes
 * after the id: the 32-byte report hid-sony sends), its feature reports (0x02 calibration, 0x81
 * MAC, 0xa3 firmware, ...). */
static const uint8_t dualshock4_descriptor[] = {
    0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x85, 0x01, 0x09, 0x30, 0x09, 0x31, 0x09, 0x32, 0x09, 0x35,
    0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x04, 0x81, 0x02, 0x09, 0x39, 0x15, 0x00, 0x25,
    0x07, 0x35, 0x00, 0x46, 0x3b, 0x01, 0x65, 0x14, 0x75, 0x04, 0x95, 0x01, 0x81, 0x42, 0x65, 0x00,
    0x05, 0x09, 0x19, 0x01, 0x29, 0x0e, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x0e, 0x81, 0x02,
    0x06, 0x00, 0xff, 0x09, 0x20, 0x75, 0x06, 0x95, 0x01, 0x15, 0x00, 0x25, 0x7f, 0x81, 0x02, 0x05,
    0x01, 0x09, 0x33, 0x09, 0x34, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x02, 0x81, 0x02,
    0x06, 0x00, 0xff, 0x09, 0x21, 0x95, 0x36, 0x81, 0x02, 0x85, 0x05, 0x09, 0x22, 0x95, 0x1f, 0x91,
    0x02, 0x85, 0x04, 0x09, 0x23, 0x95, 0x24, 0xb1, 0x02, 0x85, 0x02, 0x09, 0x24, 0x95, 0x24, 0xb1,
    0x02, 0x85, 0x08, 0x09, 0x25, 0x95, 0x03, 0xb1, 0x02, 0x85, 0x10, 0x09, 0x26, 0x95, 0x04, 0xb1,
    0x02, 0x85, 0x11, 0x09, 0x27, 0x95, 0x02, 0xb1, 0x02, 0x85, 0x12, 0x06, 0x02, 0xff, 0x09, 0x21,
    0x95, 0x0f, 0xb1, 0x02, 0x85, 0x13, 0x09, 0x22, 0x95, 0x16, 0xb1, 0x02, 0x85, 0x14, 0x06, 0x05,
    0xff, 0x09, 0x20, 0x95, 0x10, 0xb1, 0x02, 0x85, 0x15, 0x09, 0x21, 0x95, 0x2c, 0xb1, 0x02, 0x06,
    0x80, 0xff, 0x85, 0x80, 0x09, 0x20, 0x95, 0x06, 0xb1, 0x02, 0x85, 0x81, 0x09, 0x21, 0x95, 0x06,
    0xb1, 0x02, 0x85, 0x82, 0x09, 0x22, 0x95, 0x05, 0xb1, 0x02, 0x85, 0x83, 0x09, 0x23, 0x95, 0x01,
    0xb1, 0x02, 0x85, 0x84, 0x09, 0x24, 0x95, 0x04, 0xb1, 0x02, 0x85, 0x85, 0x09, 0x25, 0x95, 0x06,
    0xb1, 0x02, 0x85, 0x86, 0x09, 0x26, 0x95, 0x06, 0xb1, 0x02, 0x85, 0x87, 0x09, 0x27, 0x95, 0x23,
    0xb1, 0x02, 0x85, 0x88, 0x09, 0x28, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x89, 0x09, 0x29, 0x95, 0x02,
    0xb1, 0x02, 0x85, 0x90, 0x09, 0x30, 0x95, 0x05, 0xb1, 0x02, 0x85, 0x91, 0x09, 0x31, 0x95, 0x03,
    0xb1, 0x02, 0x85, 0x92, 0x09, 0x32, 0x95, 0x03, 0xb1, 0x02, 0x85, 0x93, 0x09, 0x33, 0x95, 0x0c,
    0xb1, 0x02, 0x85, 0x94, 0x09, 0x34, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xa0, 0x09, 0x40, 0x95, 0x06,
    0xb1, 0x02, 0x85, 0xa1, 0x09, 0x41, 0x95, 0x01, 0xb1, 0x02, 0x85, 0xa2, 0x09, 0x42, 0x95, 0x01,
    0xb1, 0x02, 0x85, 0xa3, 0x09, 0x43, 0x95, 0x30, 0xb1, 0x02, 0x85, 0xa4, 0x09, 0x44, 0x95, 0x0d,
    0xb1, 0x02, 0x85, 0xf0, 0x09, 0x47, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xf1, 0x09, 0x48, 0x95, 0x3f,
    0xb1, 0x02, 0x85, 0xf2, 0x09, 0x49, 0x95, 0x0f, 0xb1, 0x02, 0x85, 0xa7, 0x09, 0x4a, 0x95, 0x01,
    0xb1, 0x02, 0x85, 0xa8, 0x09, 0x4b, 0x95, 0x01, 0xb1, 0x02, 0x85, 0xa9, 0x09, 0x4c, 0x95, 0x08,
    0xb1, 0x02, 0x85, 0xaa, 0x09, 0x4e, 0x95, 0x01, 0xb1, 0x02, 0x85, 0xab, 0x09, 0x4f, 0x95, 0x39,
    0xb1, 0x02, 0x85, 0xac, 0x09, 0x50, 0x95, 0x39, 0xb1, 0x02, 0x85, 0xad, 0x09, 0x51, 0x95, 0x0b,
    0xb1, 0x02, 0x85, 0xae, 0x09, 0x52, 0x95, 0x01, 0xb1, 0x02, 0x85, 0xaf, 0x09, 0x53, 0x95, 0x02,
    0xb1, 0x02, 0x85, 0xb0, 0x09, 0x54, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xe0, 0x09, 0x57, 0x95, 0x02,
    0xb1, 0x02, 0x85, 0xb3, 0x09, 0x55, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xb4, 0x09, 0x55, 0x95, 0x3f,
    0xb1, 0x02, 0x85, 0xb5, 0x09, 0x56, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xd0, 0x09, 0x58, 0x95, 0x3f,
    0xb1, 0x02, 0x85, 0xd4, 0x09, 0x59, 0x95, 0x3f, 0xb1, 0x02, 0xc0,
};

static size_t dualsense_feature_report(uint8_t id, uint8_t *out);
static size_t dualshock4_feature_report(uint8_t id, uint8_t *out);

/* What differs between the pads this program can be. */
struct model {
    const char *name, *product_name;
    uint16_t vendor, product;
    const uint8_t *descriptor;
    size_t descriptor_size;
    uint8_t output_id;       /* the output report that carries the motors */
    int weak_at, strong_at;  /* their bytes in it */
    /* Writes feature report `id` into `out` (its first byte already the id, the rest zero) and
     * returns its size, 0 for a report the pad does not have. */
    size_t (*feature_report)(uint8_t id, uint8_t *out);
};

static const struct model models[] = {
    {"dualsense", "Sony Interactive Entertainment DualSense Wireless Controller", 0x054c, 0x0ce6,
     dualsense_descriptor, sizeof dualsense_descriptor, 0x02, 3, 4, dualsense_feature_report},
    {"dualshock4", "Sony Interactive Entertainment Wireless Controller", 0x054c, 0x09cc,
     dualshock4_descriptor, sizeof dualshock4_descriptor, 0x05, 4, 5, dualshock4_feature_report},
};
static const struct model *pad;

static FILE *logfile;
static volatile sig_atomic_t stop_asked, unplug_asked, mark_asked;
static _Atomic uint64_t mark_ns; /* lock-free on x86_64: safe to store from a handler */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig) {
    if (sig == SIGUSR1) unplug_asked = 1;
    else if (sig == SIGUSR2) {
        mark_ns = now_ns(); /* clock_gettime is async-signal-safe */
        mark_asked = 1;
    } else stop_asked = 1;
}

/* Writes one uhid event; exits on failure (the test reads the log and sees it end early). */
static void send_event(int fd, const struct uhid_event *ev) {
    ssize_t n = write(fd, ev, sizeof *ev);
    if (n != (ssize_t)sizeof *ev) {
        fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"error\",\"what\":\"write /dev/uhid: %s\"}\n",
                (unsigned long long)now_ns(), n < 0 ? strerror(errno) : "short write");
        fflush(logfile);
        exit(1);
    }
}

/* Logs the mark SIGUSR2 asked for, if one is pending, with the time it came. */
static void log_mark(void) {
    if (!mark_asked) return;
    mark_asked = 0;
    fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"mark\"}\n", (unsigned long long)mark_ns);
    fflush(logfile);
}

static void put_le16(uint8_t *p, int v) { p[0] = (uint8_t)(v & 0xff); p[1] = (uint8_t)((v >> 8) & 0xff); }

/* Motion-sensor calibration as both pads lay it out after the report id: gyro biases, gyro +/-
 * per axis, gyro speed +/-, accelerometer +/- per axis, 17 little-endian 16-bit values. */
static void put_calibration(uint8_t *out) {
    static const int v[17] = {0, 0, 0, 8192, -8192, 8192, -8192, 8192, -8192, 540, 540, 8192, -8192, 8192, -8192, 8192, -8192};
    for (int i = 0; i < 17; i++) put_le16(out + 1 + 2 * i, v[i]);
}

/* A DualShock 4 feature report hid-sony asks for at probe, at the size the real pad answers with. */
static size_t dualshock4_feature_report(uint8_t id, uint8_t *out) {
    switch (id) {
    case 0x02:
        put_calibration(out);
        return 37;
    case 0x81: /* the MAC, least significant byte first, at 1-6 */
        for (int i = 0; i < 6; i++) out[1 + i] = (uint8_t)(0x20 + i);
        return 7;
    case 0xa3: /* hardware and firmware version */
        memcpy(out + 1, "Sep 21 2018", 11);
        memcpy(out + 17, "04:50:51", 8);
        put_le16(out + 35, 0x0100); put_le16(out + 41, 0x0001);
        return 49;
    default:
        return 0;
    }
}

/* A DualSense feature report hid-playstation asks for at probe, at the size the real pad answers with. */
static size_t dualsense_feature_report(uint8_t id, uint8_t *out) {
    switch (id) {
    case 0x09: /* pairing info: the pad's MAC, least significant byte first, at 1-6 */
        for (int i = 0; i < 6; i++) out[1 + i] = (uint8_t)(0x10 + i);
        return 20;
    case 0x20: /* firmware info: hardware version at 24, firmware at 28, feature version at 44 */
        memcpy(out + 1, "Jun 18 2021", 11);
        memcpy(out + 12, "10:20:30", 8);
        put_le16(out + 24, 0x0413); put_le16(out + 26, 0x0000);
        put_le16(out + 28, 0x0240); put_le16(out + 30, 0x0100);
        put_le16(out + 44, 0x0204); /* below 0x0215: the driver's first vibration flags */
        return 64;
    case 0x05:
        put_calibration(out);
        return 41;
    default:
        return 0;
    }
}

/* A feature report the driver asks for at probe, at the size the real pad answers with. */
static size_t feature_report(uint8_t id, uint8_t *out) {
    memset(out, 0, 64);
    out[0] = id;
    return pad->feature_report(id, out);
}

int main(int argc, char **argv) {
    for (size_t i = 0; argc == 3 && i < sizeof models / sizeof models[0]; i++)
        if (strcmp(argv[1], models[i].name) == 0) pad = &models[i];
    if (!pad) {
        fprintf(stderr, "usage: fake-hid-pad dualsense|dualshock4 LOG.jsonl\n");
        return 64;
    }
    logfile = fopen(argv[2], "w");
    if (!logfile) {
        fprintf(stderr, "fake-hid-pad: cannot open %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    int fd = open("/dev/uhid", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"error\",\"what\":\"open /dev/uhid: %s\"}\n",
                (unsigned long long)now_ns(), strerror(errno));
        fclose(logfile);
        return 1;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);

    struct uhid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_CREATE2;
    snprintf((char *)ev.u.create2.name, sizeof ev.u.create2.name, "%s", pad->product_name);
    snprintf((char *)ev.u.create2.phys, sizeof ev.u.create2.phys, "usb-hapsync-fake/input0");
    snprintf((char *)ev.u.create2.uniq, sizeof ev.u.create2.uniq, "15:14:13:12:11:10");
    memcpy(ev.u.create2.rd_data, pad->descriptor, pad->descriptor_size);
    ev.u.create2.rd_size = (uint16_t)pad->descriptor_size;
    ev.u.create2.bus = 0x03; /* BUS_USB */
    ev.u.create2.vendor = pad->vendor;
    ev.u.create2.product = pad->product;
    ev.u.create2.version = 0x0100;
    send_event(fd, &ev);
    fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"created\"}\n", (unsigned long long)now_ns());
    fflush(logfile);

    while (!stop_asked && !unplug_asked) {
        log_mark();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 100);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        memset(&ev, 0, sizeof ev);
        ssize_t n = read(fd, &ev, sizeof ev);
        if (n <= 0) continue;
        uint64_t t = now_ns();
        switch (ev.type) {
        case UHID_START:
            fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"start\"}\n", (unsigned long long)t);
            break;
        case UHID_OPEN:
            fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"open\"}\n", (unsigned long long)t);
            break;
        case UHID_CLOSE:
            fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"close\"}\n", (unsigned long long)t);
            break;
        case UHID_GET_REPORT: {
            struct uhid_event reply;
            memset(&reply, 0, sizeof reply);
            reply.type = UHID_GET_REPORT_REPLY;
            reply.u.get_report_reply.id = ev.u.get_report.id;
            /* Only feature reports are asked for at probe; anything else is refused and logged as size 0. */
            size_t size = ev.u.get_report.rtype == UHID_FEATURE_REPORT
                ? feature_report(ev.u.get_report.rnum, reply.u.get_report_reply.data) : 0;
            reply.u.get_report_reply.err = size ? 0 : EIO;
            reply.u.get_report_reply.size = (uint16_t)size;
            send_event(fd, &reply);
            fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"get-report\",\"report\":%u,\"size\":%zu}\n",
                    (unsigned long long)t, ev.u.get_report.rnum, size);
            break;
        }
        case UHID_SET_REPORT: {
            struct uhid_event reply;
            memset(&reply, 0, sizeof reply);
            reply.type = UHID_SET_REPORT_REPLY;
            reply.u.set_report_reply.id = ev.u.set_report.id;
            send_event(fd, &reply);
            fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"set-report\",\"report\":%u}\n", (unsigned long long)t,
                    ev.u.set_report.rnum);
            break;
        }
        case UHID_OUTPUT: {
            const uint8_t *d = ev.u.output.data;
            if (ev.u.output.size > (unsigned)pad->strong_at && d[0] == pad->output_id) {
                fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"output\",\"size\":%u,\"flags0\":%u,\"flags1\":%u,\"weak\":%u,\"strong\":%u}\n",
                        (unsigned long long)t, ev.u.output.size, d[1], d[2], d[pad->weak_at], d[pad->strong_at]);
            } else {
                fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"output\",\"size\":%u,\"report\":%u}\n", (unsigned long long)t,
                        ev.u.output.size, ev.u.output.size ? d[0] : 0);
            }
            break;
        }
        default:
            break;
        }
        fflush(logfile);
    }
    log_mark(); /* a mark that came just before the stop */
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_DESTROY;
    send_event(fd, &ev);
    fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"destroyed\",\"why\":\"%s\"}\n", (unsigned long long)now_ns(),
            unplug_asked ? "unplugged" : "stopped");
    int failed = ferror(logfile);
    if (fclose(logfile) != 0 || failed) {
        fprintf(stderr, "fake-hid-pad: the log could not be written whole\n");
        return 1;
    }
    close(fd);
    return 0;
}
