/* fake-hid-pad.h: what fake-hid-pad's uhid loop (fake-hid-pad.c) and each pad model (pad-*.c)
 * share. A model is a real pad's ids, bus, report descriptor, the feature reports its kernel
 * driver asks for at probe, and how to read the output reports the driver sends it. */
#ifndef FAKE_HID_PAD_H
#define FAKE_HID_PAD_H

#include <stddef.h>
#include <stdint.h>

/* Bus ids, as <linux/input.h> spells them. */
#define PAD_BUS_USB 0x03
#define PAD_BUS_BLUETOOTH 0x05

/* The room a feature report's answer has (uhid's UHID_DATA_MAX). */
#define PAD_REPORT_MAX 4096

/* What one output report said of the motors, for the log: each motor's level in the units the
 * report carries it (a byte for Sony's pads, 0-100 for Xbox's, the decoded HD-rumble amplitude
 * for Nintendo's). */
struct motors {
    unsigned weak, strong;   /* the right, light motor and the left, heavy one */
    unsigned flags0, flags1; /* the report's valid flags, 0 when it has none */
    char extra[192];         /* more JSON members for the log, each starting with a comma, or "" */
};

/* How an output report was read. */
enum output_kind {
    OUTPUT_OTHER = 0,  /* not a motor report (lights, a subcommand that is not rumble, ...) */
    OUTPUT_MOTORS = 1, /* carries the motors: `motors` filled in */
    OUTPUT_BAD = -1,   /* meant to carry the motors and malformed (size, checksum): `motors.extra` says why */
};

/* One pad this program can be. */
struct model {
    const char *name;         /* as the command line names it: "dualsense-bt" */
    const char *product_name; /* the HID name the real pad gives */
    uint16_t bus, vendor, product;
    const uint8_t *descriptor;
    size_t descriptor_size;
    /* Writes feature report `id` into `out` (PAD_REPORT_MAX bytes, zeroed, the id already in
     * out[0]) and returns its size; 0 for a report the pad does not have (answered EIO).
     * NULL: the pad has no feature reports. */
    size_t (*feature_report)(uint8_t id, uint8_t *out);
    /* Reads an output report the driver sent. May answer it with input reports
     * (pad_send_input), as a pad answers a subcommand. NULL: every output report is OTHER. */
    enum output_kind (*output)(const uint8_t *data, size_t size, struct motors *m);
    /* Called once the device is created, before any event is read; may send input reports.
     * NULL for none. */
    void (*created)(void);
    /* As `feature_report`, for an input report the kernel asks for (GET_REPORT of an input
     * report: a battery level at connect, say). NULL: the pad answers none. */
    size_t (*input_report)(uint8_t id, uint8_t *out);
    /* Called every `tick_ms` from the loop (between events, never during one), for a pad that
     * streams input reports on its own; may send them. NULL for none. */
    void (*tick)(void);
    unsigned tick_ms;
};

/* The models, each defined in its pad-*.c. */
extern const struct model dualsense_usb, dualsense_bt, dualshock4_usb;
extern const struct model switch_pro_usb;
extern const struct model xbox_one_s_bt;

/* CLOCK_MONOTONIC, ns. */
uint64_t pad_now_ns(void);
/* Sends an input report (UHID_INPUT2) to the driver; the program exits, logging why, if the
 * write fails. */
void pad_send_input(const uint8_t *data, size_t size);
/* Logs one JSON line {"t_ns":NOW,"event":"note","what":TEXT}: for a model to say what it did
 * (a handshake step answered, a subcommand it does not know). TEXT must need no JSON escaping. */
void pad_note(const char *text);
/* Little-endian 16-bit store and the motion-sensor calibration Sony's pads share. */
void pad_put_le16(uint8_t *p, int v);
/* CRC-32 (zlib's) of `size` bytes, continuing from `crc` (start with 0). */
uint32_t pad_crc32(uint32_t crc, const uint8_t *data, size_t size);

#endif
