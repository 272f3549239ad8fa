/* fake-hid-pad: a real gamepad made through /dev/uhid, for the real-kernel test: its ids, bus,
 * report descriptor, and what its kernel driver asks for at probe, answered as the pad answers
 * (fake-hid-pad.h; the pads in pad-*.c). The driver then exposes the gamepad's evdev node with
 * FF_RUMBLE (through ff-memless) and sends an output report whenever the motors change; every
 * output report is logged as a JSON line with CLOCK_MONOTONIC ns, and one that carries the motors
 * with them decoded as the pad reads them ("motors":1, "weak" the right, light motor, "strong"
 * the left, heavy one, in the report's own units), so a check on the host can compare what
 * reached the "pad" with HapSync's trace.
 *
 *   fake-hid-pad MODEL LOG.jsonl runs until SIGTERM (destroys the device, exits 0); SIGUSR1
 *                                destroys it at once, as an unplugged pad, and exits 0; SIGUSR2
 *                                logs a mark with the time it came (the test's "killed now").
 *   MODEL: dualsense, dualsense-bt, dualshock4, switchpro, xboxbt.
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

#include "fake-hid-pad.h"

static const struct model *const models[] = {&dualsense_usb, &dualsense_bt, &dualshock4_usb, &switch_pro_usb, &xbox_one_s_bt};
static const struct model *pad;

static int uhid = -1;
static FILE *logfile;
static volatile sig_atomic_t stop_asked, unplug_asked, mark_asked;
static _Atomic uint64_t mark_ns; /* lock-free on x86_64: safe to store from a handler */

uint64_t pad_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig) {
    if (sig == SIGUSR1) unplug_asked = 1;
    else if (sig == SIGUSR2) {
        mark_ns = pad_now_ns(); /* clock_gettime is async-signal-safe */
        mark_asked = 1;
    } else stop_asked = 1;
}

/* Writes one uhid event; exits on failure (the test reads the log and sees it end early). */
static void send_event(const struct uhid_event *ev) {
    ssize_t n = write(uhid, ev, sizeof *ev);
    if (n != (ssize_t)sizeof *ev) {
        fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"error\",\"what\":\"write /dev/uhid: %s\"}\n",
                (unsigned long long)pad_now_ns(), n < 0 ? strerror(errno) : "short write");
        fflush(logfile);
        exit(1);
    }
}

void pad_send_input(const uint8_t *data, size_t size) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_INPUT2;
    if (size > sizeof ev.u.input2.data) size = sizeof ev.u.input2.data;
    memcpy(ev.u.input2.data, data, size);
    ev.u.input2.size = (uint16_t)size;
    send_event(&ev);
}

void pad_note(const char *text) {
    fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"note\",\"what\":\"%s\"}\n", (unsigned long long)pad_now_ns(), text);
}

void pad_put_le16(uint8_t *p, int v) {
    p[0] = (uint8_t)(v & 0xff);
    p[1] = (uint8_t)((v >> 8) & 0xff);
}

uint32_t pad_crc32(uint32_t crc, const uint8_t *data, size_t size) {
    crc = ~crc;
    for (size_t i = 0; i < size; i++) {
        crc ^= data[i];
        for (int b = 0; b < 8; b++) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

/* Logs the mark SIGUSR2 asked for, if one is pending, with the time it came. */
static void log_mark(void) {
    if (!mark_asked) return;
    mark_asked = 0;
    fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"mark\"}\n", (unsigned long long)mark_ns);
    fflush(logfile);
}

/* Logs an output report the driver sent, read by the model: its motors when it carries them. */
static void log_output(uint64_t t, const uint8_t *d, size_t size) {
    struct motors m;
    memset(&m, 0, sizeof m);
    enum output_kind kind = pad->output ? pad->output(d, size, &m) : OUTPUT_OTHER;
    unsigned id = size ? d[0] : 0;
    switch (kind) {
    case OUTPUT_MOTORS:
        fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"output\",\"size\":%zu,\"report\":%u,\"motors\":1,\"flags0\":%u,\"flags1\":%u,\"weak\":%u,\"strong\":%u%s}\n",
                (unsigned long long)t, size, id, m.flags0, m.flags1, m.weak, m.strong, m.extra);
        break;
    case OUTPUT_BAD:
        fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"output\",\"size\":%zu,\"report\":%u,\"bad\":1%s}\n",
                (unsigned long long)t, size, id, m.extra);
        break;
    default:
        fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"output\",\"size\":%zu,\"report\":%u%s}\n", (unsigned long long)t, size, id, m.extra);
        break;
    }
}

static int usage(void) {
    fprintf(stderr, "usage: fake-hid-pad MODEL LOG.jsonl\nMODEL:");
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) fprintf(stderr, " %s", models[i]->name);
    fprintf(stderr, "\n");
    return 64;
}

int main(int argc, char **argv) {
    for (size_t i = 0; argc == 3 && i < sizeof models / sizeof models[0]; i++)
        if (strcmp(argv[1], models[i]->name) == 0) pad = models[i];
    if (!pad) return usage();
    logfile = fopen(argv[2], "w");
    if (!logfile) {
        fprintf(stderr, "fake-hid-pad: cannot open %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    uhid = open("/dev/uhid", O_RDWR | O_CLOEXEC);
    if (uhid < 0) {
        fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"error\",\"what\":\"open /dev/uhid: %s\"}\n",
                (unsigned long long)pad_now_ns(), strerror(errno));
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
    snprintf((char *)ev.u.create2.phys, sizeof ev.u.create2.phys, "%s-hapsync-fake/input0", pad->bus == PAD_BUS_USB ? "usb" : "bt");
    snprintf((char *)ev.u.create2.uniq, sizeof ev.u.create2.uniq, "15:14:13:12:11:10");
    memcpy(ev.u.create2.rd_data, pad->descriptor, pad->descriptor_size);
    ev.u.create2.rd_size = (uint16_t)pad->descriptor_size;
    ev.u.create2.bus = pad->bus;
    ev.u.create2.vendor = pad->vendor;
    ev.u.create2.product = pad->product;
    ev.u.create2.version = 0x0100;
    send_event(&ev);
    fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"created\",\"model\":\"%s\"}\n", (unsigned long long)pad_now_ns(), pad->name);
    if (pad->created) pad->created();
    fflush(logfile);

    const uint64_t tick_ns = pad->tick ? (uint64_t)pad->tick_ms * 1000000u : 0;
    uint64_t next_tick = pad_now_ns() + tick_ns;
    while (!stop_asked && !unplug_asked) {
        log_mark();
        int timeout = 100;
        if (tick_ns) {
            uint64_t now = pad_now_ns();
            if (now >= next_tick) {
                pad->tick();
                next_tick += tick_ns;
                if (next_tick <= now) next_tick = now + tick_ns; /* fell behind: no burst to catch up */
            }
            timeout = (int)((next_tick - now + 999999) / 1000000);
            if (timeout > 100) timeout = 100;
        }
        struct pollfd p = {.fd = uhid, .events = POLLIN};
        int r = poll(&p, 1, timeout);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        memset(&ev, 0, sizeof ev);
        ssize_t n = read(uhid, &ev, sizeof ev);
        if (n <= 0) continue;
        uint64_t t = pad_now_ns();
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
            static struct uhid_event reply; /* large: kept off the stack */
            memset(&reply, 0, sizeof reply);
            reply.type = UHID_GET_REPORT_REPLY;
            reply.u.get_report_reply.id = ev.u.get_report.id;
            /* A feature or input report the pad has; anything else is refused (EIO) and logged as size 0. */
            size_t size = 0;
            uint8_t type = ev.u.get_report.rtype;
            reply.u.get_report_reply.data[0] = ev.u.get_report.rnum;
            if (type == UHID_FEATURE_REPORT && pad->feature_report)
                size = pad->feature_report(ev.u.get_report.rnum, reply.u.get_report_reply.data);
            else if (type == UHID_INPUT_REPORT && pad->input_report)
                size = pad->input_report(ev.u.get_report.rnum, reply.u.get_report_reply.data);
            reply.u.get_report_reply.err = size ? 0 : EIO;
            reply.u.get_report_reply.size = (uint16_t)size;
            send_event(&reply);
            fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"get-report\",\"type\":\"%s\",\"report\":%u,\"size\":%zu}\n",
                    (unsigned long long)t, type == UHID_FEATURE_REPORT ? "feature" : type == UHID_INPUT_REPORT ? "input" : "output",
                    ev.u.get_report.rnum, size);
            break;
        }
        case UHID_SET_REPORT: {
            struct uhid_event reply;
            memset(&reply, 0, sizeof reply);
            reply.type = UHID_SET_REPORT_REPLY;
            reply.u.set_report_reply.id = ev.u.set_report.id;
            send_event(&reply);
            fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"set-report\",\"report\":%u}\n", (unsigned long long)t,
                    ev.u.set_report.rnum);
            break;
        }
        case UHID_OUTPUT:
            log_output(t, ev.u.output.data, ev.u.output.size);
            break;
        default:
            break;
        }
        fflush(logfile);
    }
    log_mark(); /* a mark that came just before the stop */
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_DESTROY;
    send_event(&ev);
    fprintf(logfile, "{\"t_ns\":%llu,\"event\":\"destroyed\",\"why\":\"%s\"}\n", (unsigned long long)pad_now_ns(),
            unplug_asked ? "unplugged" : "stopped");
    int failed = ferror(logfile);
    if (fclose(logfile) != 0 || failed) {
        fprintf(stderr, "fake-hid-pad: the log could not be written whole\n");
        return 1;
    }
    close(uhid);
    return 0;
}
