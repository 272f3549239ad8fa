/* pad-nintendo.c: a Nintendo Switch Pro Controller on USB for fake-hid-pad (fake-hid-pad.h),
 * 057e:2009, driven by the kernel's hid-nintendo (Debian's 6.1: the v6.1 driver with stable's
 * fixes; its 25 ms subcommand rate limit and its rumble queue read out of the module).
 *
 *   switchpro  "Nintendo Co., Ltd. Pro Controller", bus USB, 057e:2009. hid-nintendo asks for no
 *              feature report; it talks to the pad in output reports and waits for input reports:
 *              - USB commands, output 0x80 CMD, answered by input 0x81 CMD (64 bytes): 0x02
 *                handshake, 0x03 3 Mbit/s, 0x02 again; 0x04 (no USB timeout) goes unanswered, as
 *                on the real pad (the driver waits 2 x 100 ms for it and goes on).
 *              - Subcommands, output 0x01 (packet number, 8 rumble bytes, subcommand id, its data),
 *                answered by input 0x21 (64 bytes: the standard input report header, the ack byte
 *                at 13, the subcommand id echoed at 14, its data from 15): 0x10 SPI flash reads
 *                (user calibration magics at 0x8010, 0x801b, 0x8026: erased, 0xff 0xff; the
 *                factory stick calibration at 0x603d and 0x6046, 9 bytes each; the factory IMU
 *                calibration at 0x6020, 24 bytes), 0x03 report mode 0x30, 0x48 vibration on,
 *                0x40 IMU on, 0x02 device info (firmware 3.72, type 3 = Pro Controller, the MAC),
 *                0x30 player lights, 0x38 home light: every subcommand acked (0x80, 0x82 for the
 *                device info, 0x90 for an SPI read).
 *              - Once the report mode is 0x30, the full input report 0x30 (64 bytes: header,
 *                three IMU samples) every 15 ms (the model's tick), as the real pad streams it: hid-nintendo sends rumble only right after an input report (or after waiting
 *                a quarter second for one), and resends rumble from its input report handler
 *                when the header's vibrator byte (12) is not zero (this pad sends 0x80).
 *              Rumble: output 0x10 (packet number, 8 bytes of HD rumble: the left grip's 4, then
 *              the right's), and the same 8 bytes in every 0x01 (all zero while the driver has
 *              set no rumble yet: at probe). Each side decodes with hid-nintendo's own tables
 *              (joycon_rumble_frequencies, joycon_rumble_amplitudes, joycon_encode_rumble):
 *                b0 = hf.high >> 8, b1 = (hf.high & 0xff) + amp.high,
 *                b2 = lf.low + (amp.low >> 8),  b3 = amp.low & 0xff,
 *              amp.high and amp.low naming the same row of the amplitude table. Logged: `strong`
 *              the left grip's amplitude, `weak` the right's, as the table's amplitude (0-1003,
 *              the driver's value after it quantizes magnitude * 1003 / 65535 up to the table:
 *              joycon_play_effect passes weak_magnitude as amp_r, strong_magnitude as amp_l);
 *              extra: "seq" (the packet number), "lf_l"/"hf_l"/"lf_r"/"hf_r" (Hz, the low- and
 *              high-band frequencies, the driver's 160 and 320), "raw" (the 8 bytes), and
 *              "subcmd" for a 0x01. A side whose bytes are no row of the tables, or whose two
 *              amplitude codes disagree: "bad", with why.
 *
 * The report descriptor is the real pad's over USB (203 bytes): report 0x30, 0x21, 0x81 in (63
 * bytes after the id), 0x01, 0x10, 0x80, 0x82 out (63), no feature reports. As dumped from a
 * Pro Controller (ToadKing's gist b883a8ccfa26adcc6ba9905e75aeb4f2) and annotated in
 * github.com/spacemeowx2/RemoteSwitchController legacy/hid_pro.h (commit 4c493f4d); the same 203
 * bytes appear in other projects' captures of 057e:2009. The stick calibration and IMU
 * calibration in its SPI flash are plausible factory values (sticks centred at 2048, 1400 each
 * way; accelerometer 16384 and gyro 13371 counts full scale, the driver's defaults). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "fake-hid-pad.h"

static const uint8_t switch_pro_usb_descriptor[] = {
    0x05, 0x01, 0x15, 0x00, 0x09, 0x04, 0xa1, 0x01, 0x85, 0x30, 0x05, 0x01, 0x05, 0x09, 0x19, 0x01,
    0x29, 0x0a, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x0a, 0x55, 0x00, 0x65, 0x00, 0x81, 0x02,
    0x05, 0x09, 0x19, 0x0b, 0x29, 0x0e, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x04, 0x81, 0x02,
    0x75, 0x01, 0x95, 0x02, 0x81, 0x03, 0x0b, 0x01, 0x00, 0x01, 0x00, 0xa1, 0x00, 0x0b, 0x30, 0x00,
    0x01, 0x00, 0x0b, 0x31, 0x00, 0x01, 0x00, 0x0b, 0x32, 0x00, 0x01, 0x00, 0x0b, 0x35, 0x00, 0x01,
    0x00, 0x15, 0x00, 0x27, 0xff, 0xff, 0x00, 0x00, 0x75, 0x10, 0x95, 0x04, 0x81, 0x02, 0xc0, 0x0b,
    0x39, 0x00, 0x01, 0x00, 0x15, 0x00, 0x25, 0x07, 0x35, 0x00, 0x46, 0x3b, 0x01, 0x65, 0x14, 0x75,
    0x04, 0x95, 0x01, 0x81, 0x02, 0x05, 0x09, 0x19, 0x0f, 0x29, 0x12, 0x15, 0x00, 0x25, 0x01, 0x75,
    0x01, 0x95, 0x04, 0x81, 0x02, 0x75, 0x08, 0x95, 0x34, 0x81, 0x03, 0x06, 0x00, 0xff, 0x85, 0x21,
    0x09, 0x01, 0x75, 0x08, 0x95, 0x3f, 0x81, 0x03, 0x85, 0x81, 0x09, 0x02, 0x75, 0x08, 0x95, 0x3f,
    0x81, 0x03, 0x85, 0x01, 0x09, 0x03, 0x75, 0x08, 0x95, 0x3f, 0x91, 0x83, 0x85, 0x10, 0x09, 0x04,
    0x75, 0x08, 0x95, 0x3f, 0x91, 0x83, 0x85, 0x80, 0x09, 0x05, 0x75, 0x08, 0x95, 0x3f, 0x91, 0x83,
    0x85, 0x82, 0x09, 0x06, 0x75, 0x08, 0x95, 0x3f, 0x91, 0x83, 0xc0,
};
_Static_assert(sizeof switch_pro_usb_descriptor == 203, "the Pro Controller's USB report descriptor is 203 bytes");

/* hid-nintendo's rumble tables (from dekuNukem/Nintendo_Switch_Reverse_Engineering's
 * rumble_data_table.md), as the 6.1 driver has them: frequency (the high band's two bytes, the low
 * band's byte, Hz) and amplitude (the high band's byte, the low band's two bytes, the amplitude
 * the driver looks up). */
struct rumble_freq { uint16_t high; uint8_t low; uint16_t hz; };
struct rumble_amp { uint8_t high; uint16_t low; uint16_t amp; };

static const struct rumble_freq rumble_freqs[] = {
    {0x0000, 0x01, 41}, {0x0000, 0x02, 42}, {0x0000, 0x03, 43}, {0x0000, 0x04, 44}, {0x0000, 0x05, 45},
    {0x0000, 0x06, 46}, {0x0000, 0x07, 47}, {0x0000, 0x08, 48}, {0x0000, 0x09, 49}, {0x0000, 0x0a, 50},
    {0x0000, 0x0b, 51}, {0x0000, 0x0c, 52}, {0x0000, 0x0d, 53}, {0x0000, 0x0e, 54}, {0x0000, 0x0f, 55},
    {0x0000, 0x10, 57}, {0x0000, 0x11, 58}, {0x0000, 0x12, 59}, {0x0000, 0x13, 60}, {0x0000, 0x14, 62},
    {0x0000, 0x15, 63}, {0x0000, 0x16, 64}, {0x0000, 0x17, 66}, {0x0000, 0x18, 67}, {0x0000, 0x19, 69},
    {0x0000, 0x1a, 70}, {0x0000, 0x1b, 72}, {0x0000, 0x1c, 73}, {0x0000, 0x1d, 75}, {0x0000, 0x1e, 77},
    {0x0000, 0x1f, 78}, {0x0000, 0x20, 80}, {0x0400, 0x21, 82}, {0x0800, 0x22, 84}, {0x0c00, 0x23, 85},
    {0x1000, 0x24, 87}, {0x1400, 0x25, 89}, {0x1800, 0x26, 91}, {0x1c00, 0x27, 93}, {0x2000, 0x28, 95},
    {0x2400, 0x29, 97}, {0x2800, 0x2a, 99}, {0x2c00, 0x2b, 102}, {0x3000, 0x2c, 104}, {0x3400, 0x2d, 106},
    {0x3800, 0x2e, 108}, {0x3c00, 0x2f, 111}, {0x4000, 0x30, 113}, {0x4400, 0x31, 116}, {0x4800, 0x32, 118},
    {0x4c00, 0x33, 121}, {0x5000, 0x34, 123}, {0x5400, 0x35, 126}, {0x5800, 0x36, 129}, {0x5c00, 0x37, 132},
    {0x6000, 0x38, 135}, {0x6400, 0x39, 137}, {0x6800, 0x3a, 141}, {0x6c00, 0x3b, 144}, {0x7000, 0x3c, 147},
    {0x7400, 0x3d, 150}, {0x7800, 0x3e, 153}, {0x7c00, 0x3f, 157}, {0x8000, 0x40, 160}, {0x8400, 0x41, 164},
    {0x8800, 0x42, 167}, {0x8c00, 0x43, 171}, {0x9000, 0x44, 174}, {0x9400, 0x45, 178}, {0x9800, 0x46, 182},
    {0x9c00, 0x47, 186}, {0xa000, 0x48, 190}, {0xa400, 0x49, 194}, {0xa800, 0x4a, 199}, {0xac00, 0x4b, 203},
    {0xb000, 0x4c, 207}, {0xb400, 0x4d, 212}, {0xb800, 0x4e, 217}, {0xbc00, 0x4f, 221}, {0xc000, 0x50, 226},
    {0xc400, 0x51, 231}, {0xc800, 0x52, 236}, {0xcc00, 0x53, 241}, {0xd000, 0x54, 247}, {0xd400, 0x55, 252},
    {0xd800, 0x56, 258}, {0xdc00, 0x57, 263}, {0xe000, 0x58, 269}, {0xe400, 0x59, 275}, {0xe800, 0x5a, 281},
    {0xec00, 0x5b, 287}, {0xf000, 0x5c, 293}, {0xf400, 0x5d, 300}, {0xf800, 0x5e, 306}, {0xfc00, 0x5f, 313},
    {0x0001, 0x60, 320}, {0x0401, 0x61, 327}, {0x0801, 0x62, 334}, {0x0c01, 0x63, 341}, {0x1001, 0x64, 349},
    {0x1401, 0x65, 357}, {0x1801, 0x66, 364}, {0x1c01, 0x67, 372}, {0x2001, 0x68, 381}, {0x2401, 0x69, 389},
    {0x2801, 0x6a, 397}, {0x2c01, 0x6b, 406}, {0x3001, 0x6c, 415}, {0x3401, 0x6d, 424}, {0x3801, 0x6e, 433},
    {0x3c01, 0x6f, 443}, {0x4001, 0x70, 453}, {0x4401, 0x71, 462}, {0x4801, 0x72, 473}, {0x4c01, 0x73, 483},
    {0x5001, 0x74, 494}, {0x5401, 0x75, 504}, {0x5801, 0x76, 515}, {0x5c01, 0x77, 527}, {0x6001, 0x78, 538},
    {0x6401, 0x79, 550}, {0x6801, 0x7a, 562}, {0x6c01, 0x7b, 574}, {0x7001, 0x7c, 587}, {0x7401, 0x7d, 600},
    {0x7801, 0x7e, 613}, {0x7c01, 0x7f, 626}, {0x8001, 0x00, 640}, {0x8401, 0x00, 654}, {0x8801, 0x00, 668},
    {0x8c01, 0x00, 683}, {0x9001, 0x00, 698}, {0x9401, 0x00, 713}, {0x9801, 0x00, 729}, {0x9c01, 0x00, 745},
    {0xa001, 0x00, 761}, {0xa401, 0x00, 778}, {0xa801, 0x00, 795}, {0xac01, 0x00, 812}, {0xb001, 0x00, 830},
    {0xb401, 0x00, 848}, {0xb801, 0x00, 867}, {0xbc01, 0x00, 886}, {0xc001, 0x00, 905}, {0xc401, 0x00, 925},
    {0xc801, 0x00, 945}, {0xcc01, 0x00, 966}, {0xd001, 0x00, 987}, {0xd401, 0x00, 1009}, {0xd801, 0x00, 1031},
    {0xdc01, 0x00, 1053}, {0xe001, 0x00, 1076}, {0xe401, 0x00, 1100}, {0xe801, 0x00, 1124}, {0xec01, 0x00, 1149},
    {0xf001, 0x00, 1174}, {0xf401, 0x00, 1199}, {0xf801, 0x00, 1226}, {0xfc01, 0x00, 1253},
};

static const struct rumble_amp rumble_amps[] = {
    {0x00, 0x0040, 0},
    {0x02, 0x8040, 10}, {0x04, 0x0041, 12}, {0x06, 0x8041, 14}, {0x08, 0x0042, 17}, {0x0a, 0x8042, 20},
    {0x0c, 0x0043, 24}, {0x0e, 0x8043, 28}, {0x10, 0x0044, 33}, {0x12, 0x8044, 40}, {0x14, 0x0045, 47},
    {0x16, 0x8045, 56}, {0x18, 0x0046, 67}, {0x1a, 0x8046, 80}, {0x1c, 0x0047, 95}, {0x1e, 0x8047, 112},
    {0x20, 0x0048, 117}, {0x22, 0x8048, 123}, {0x24, 0x0049, 128}, {0x26, 0x8049, 134}, {0x28, 0x004a, 140},
    {0x2a, 0x804a, 146}, {0x2c, 0x004b, 152}, {0x2e, 0x804b, 159}, {0x30, 0x004c, 166}, {0x32, 0x804c, 173},
    {0x34, 0x004d, 181}, {0x36, 0x804d, 189}, {0x38, 0x004e, 198}, {0x3a, 0x804e, 206}, {0x3c, 0x004f, 215},
    {0x3e, 0x804f, 225}, {0x40, 0x0050, 230}, {0x42, 0x8050, 235}, {0x44, 0x0051, 240}, {0x46, 0x8051, 245},
    {0x48, 0x0052, 251}, {0x4a, 0x8052, 256}, {0x4c, 0x0053, 262}, {0x4e, 0x8053, 268}, {0x50, 0x0054, 273},
    {0x52, 0x8054, 279}, {0x54, 0x0055, 286}, {0x56, 0x8055, 292}, {0x58, 0x0056, 298}, {0x5a, 0x8056, 305},
    {0x5c, 0x0057, 311}, {0x5e, 0x8057, 318}, {0x60, 0x0058, 325}, {0x62, 0x8058, 332}, {0x64, 0x0059, 340},
    {0x66, 0x8059, 347}, {0x68, 0x005a, 355}, {0x6a, 0x805a, 362}, {0x6c, 0x005b, 370}, {0x6e, 0x805b, 378},
    {0x70, 0x005c, 387}, {0x72, 0x805c, 395}, {0x74, 0x005d, 404}, {0x76, 0x805d, 413}, {0x78, 0x005e, 422},
    {0x7a, 0x805e, 431}, {0x7c, 0x005f, 440}, {0x7e, 0x805f, 450}, {0x80, 0x0060, 460}, {0x82, 0x8060, 470},
    {0x84, 0x0061, 480}, {0x86, 0x8061, 491}, {0x88, 0x0062, 501}, {0x8a, 0x8062, 512}, {0x8c, 0x0063, 524},
    {0x8e, 0x8063, 535}, {0x90, 0x0064, 547}, {0x92, 0x8064, 559}, {0x94, 0x0065, 571}, {0x96, 0x8065, 584},
    {0x98, 0x0066, 596}, {0x9a, 0x8066, 609}, {0x9c, 0x0067, 623}, {0x9e, 0x8067, 636}, {0xa0, 0x0068, 650},
    {0xa2, 0x8068, 665}, {0xa4, 0x0069, 679}, {0xa6, 0x8069, 694}, {0xa8, 0x006a, 709}, {0xaa, 0x806a, 725},
    {0xac, 0x006b, 741}, {0xae, 0x806b, 757}, {0xb0, 0x006c, 773}, {0xb2, 0x806c, 790}, {0xb4, 0x006d, 808},
    {0xb6, 0x806d, 825}, {0xb8, 0x006e, 843}, {0xba, 0x806e, 862}, {0xbc, 0x006f, 881}, {0xbe, 0x806f, 900},
    {0xc0, 0x0070, 920}, {0xc2, 0x8070, 940}, {0xc4, 0x0071, 960}, {0xc6, 0x8071, 981}, {0xc8, 0x0072, 1003},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define REPORT_SIZE 64 /* every input report the pad sends over USB, the id included */

/* The pad's Bluetooth address, most significant byte first (device info sends it so). */
static const uint8_t pad_mac[6] = {0x98, 0xb6, 0xe9, 0x12, 0x34, 0x56};

/* Its SPI flash, where the driver reads: the factory calibration; everything else erased (0xff),
 * the user calibration magics among it. */
static const uint8_t spi_imu_factory[24] = {
    /* accelerometer offsets x, y, z; sensitivities; gyro offsets; sensitivities: le16 each */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x40, 0x00, 0x40,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3b, 0x34, 0x3b, 0x34, 0x3b, 0x34,
};
/* Two 12-bit values packed as the driver unpacks them (hid_field_extract, little-endian bits). */
#define PACK12(a, b) (uint8_t)((a) & 0xff), (uint8_t)((((a) >> 8) & 0x0f) | (((b) & 0x0f) << 4)), (uint8_t)(((b) >> 4) & 0xff)
/* Left stick: x, y above the centre; the centre; below it. Right: centre; below; above. */
static const uint8_t spi_left_stick[9] = {PACK12(1400, 1400), PACK12(2048, 2048), PACK12(1400, 1400)};
static const uint8_t spi_right_stick[9] = {PACK12(2048, 2048), PACK12(1400, 1400), PACK12(1400, 1400)};
/* Body, buttons, left grip, right grip colours (the black Pro Controller's). */
static const uint8_t spi_colours[12] = {0x32, 0x32, 0x32, 0xff, 0xff, 0xff, 0x32, 0x32, 0x32, 0x32, 0x32, 0x32};

static const struct { uint32_t addr; const uint8_t *data; size_t size; } spi_regions[] = {
    {0x6020, spi_imu_factory, sizeof spi_imu_factory},
    {0x603d, spi_left_stick, sizeof spi_left_stick},
    {0x6046, spi_right_stick, sizeof spi_right_stick},
    {0x6050, spi_colours, sizeof spi_colours},
};

static uint8_t spi_byte(uint32_t addr) {
    for (size_t i = 0; i < NELEM(spi_regions); i++)
        if (addr >= spi_regions[i].addr && addr - spi_regions[i].addr < spi_regions[i].size)
            return spi_regions[i].data[addr - spi_regions[i].addr];
    return 0xff;
}

/* What the input reports carry, and whether report 0x30 streams. */
static unsigned timer_count; /* the header's timer byte, counted up every report */
static int streaming;         /* report mode 0x30 set: report 0x30 every 15 ms */

/* The standard input report header: id, timer, battery (full, charging, powered over USB),
 * buttons (none), both sticks centred, the vibrator byte (non-zero: ready for rumble). */
static void put_header(uint8_t *r, uint8_t id) {
    r[0] = id;
    r[1] = (uint8_t)timer_count++;
    r[2] = 0x91;
    const uint8_t centre[3] = {PACK12(2048, 2048)};
    memcpy(r + 6, centre, 3);
    memcpy(r + 9, centre, 3);
    r[12] = 0x80;
}

/* Report 0x30: the header, then three IMU samples (accelerometer x, y, z, gyro x, y, z, le16):
 * lying still, 1 g (4096) on +z. */
static void put_full_report(uint8_t *r) {
    memset(r, 0, REPORT_SIZE);
    put_header(r, 0x30);
    for (int i = 0; i < 3; i++) pad_put_le16(r + 13 + 12 * i + 4, 4096);
}

/* Every 15 ms (the Pro Controller's USB rate in the driver's notes), while the report mode is
 * 0x30: report 0x30. */
static void switch_pro_tick(void) {
    if (!streaming) return;
    uint8_t r[REPORT_SIZE];
    put_full_report(r);
    pad_send_input(r, sizeof r);
}

/* One side's 4 bytes of HD rumble, read back through the driver's tables. 0, or -1 with why. */
static int decode_side(const uint8_t *b, unsigned *amp, unsigned *lf, unsigned *hf, const char **why) {
    uint16_t hf_code = (uint16_t)(b[0] << 8 | (b[1] & 0x01));
    uint8_t amp_high = b[1] & 0xfe;
    uint8_t lf_code = b[2] & 0x7f;
    uint16_t amp_low = (uint16_t)((b[2] & 0x80) << 8 | b[3]);
    int row_high = -1, row_low = -1;
    for (size_t i = 0; i < NELEM(rumble_amps); i++) {
        if (rumble_amps[i].high == amp_high && row_high < 0) row_high = (int)i;
        if (rumble_amps[i].low == amp_low && row_low < 0) row_low = (int)i;
    }
    if (row_high < 0 || row_low < 0) {
        *why = "an amplitude code not in hid-nintendo's table";
        return -1;
    }
    if (row_high != row_low) {
        *why = "the high and low band amplitudes differ";
        return -1;
    }
    *amp = rumble_amps[row_high].amp;
    /* The driver clamps the high band to 82-1253 Hz and the low band to 41-626 Hz, where each
     * code is one frequency. */
    *hf = *lf = 0;
    for (size_t i = 0; i < NELEM(rumble_freqs); i++) {
        if (!*hf && rumble_freqs[i].hz >= 82 && rumble_freqs[i].high == hf_code) *hf = rumble_freqs[i].hz;
        if (!*lf && rumble_freqs[i].hz <= 626 && rumble_freqs[i].low == lf_code) *lf = rumble_freqs[i].hz;
    }
    if (!*hf || !*lf) {
        *why = "a frequency code not in hid-nintendo's table";
        return -1;
    }
    return 0;
}

/* Reads the 8 rumble bytes at d[2] (left grip, then right) into m. */
static enum output_kind decode_rumble(const uint8_t *d, struct motors *m, const char *more) {
    const uint8_t *r = d + 2;
    char raw[17];
    for (int i = 0; i < 8; i++) snprintf(raw + 2 * i, 3, "%02x", r[i]);
    unsigned amp_l, lf_l, hf_l, amp_r, lf_r, hf_r;
    const char *why = "";
    if (decode_side(r, &amp_l, &lf_l, &hf_l, &why) < 0 || decode_side(r + 4, &amp_r, &lf_r, &hf_r, &why) < 0) {
        snprintf(m->extra, sizeof m->extra, ",\"why\":\"%s\",\"raw\":\"%s\"%s", why, raw, more);
        return OUTPUT_BAD;
    }
    m->strong = amp_l;
    m->weak = amp_r;
    snprintf(m->extra, sizeof m->extra, ",\"seq\":%u,\"lf_l\":%u,\"hf_l\":%u,\"lf_r\":%u,\"hf_r\":%u,\"raw\":\"%s\"%s",
             d[1] & 0x0f, lf_l, hf_l, lf_r, hf_r, raw, more);
    return OUTPUT_MOTORS;
}

/* Output 0x80: a USB command, answered with 0x81 and the command as the real pad answers it. */
static void answer_usb_command(uint8_t cmd) {
    uint8_t r[REPORT_SIZE] = {0x81, cmd};
    char note[96];
    switch (cmd) {
    case 0x01: /* connection status: the controller type and the MAC, least significant byte first */
        r[3] = 0x03;
        for (int i = 0; i < 6; i++) r[4 + i] = pad_mac[5 - i];
        break;
    case 0x02: /* handshake */
    case 0x03: /* 3 Mbit/s to the pad's own UART */
        break;
    default: /* 0x04 no USB timeout, 0x05 USB timeout, 0x06 reset, ...: the pad sends nothing */
        snprintf(note, sizeof note, "switchpro: usb command 0x%02x, not answered (as the pad)", cmd);
        pad_note(note);
        return;
    }
    pad_send_input(r, sizeof r);
    snprintf(note, sizeof note, "switchpro: usb command 0x%02x answered with 0x81 0x%02x", cmd, cmd);
    pad_note(note);
}

/* Output 0x01: the subcommand at d[10], its data after it, answered with 0x21. */
static void answer_subcommand(const uint8_t *d, size_t size) {
    uint8_t id = d[10];
    const uint8_t *arg = d + 11;
    size_t n = size - 11;
    uint8_t r[REPORT_SIZE];
    memset(r, 0, sizeof r);
    put_header(r, 0x21);
    r[13] = 0x80;
    r[14] = id;
    char note[128];
    int start_streaming = 0;
    switch (id) {
    case 0x02: { /* device info: firmware 3.72, Pro Controller, 0x02, the MAC, 0x01, colours in SPI */
        static const uint8_t head[4] = {0x03, 0x48, 0x03, 0x02};
        r[13] = 0x82;
        memcpy(r + 15, head, 4);
        memcpy(r + 19, pad_mac, 6);
        r[25] = 0x01;
        r[26] = 0x01;
        snprintf(note, sizeof note, "switchpro: subcommand 0x02 (device info) answered");
        break;
    }
    case 0x03: /* report mode */
        start_streaming = n >= 1 && arg[0] == 0x30;
        snprintf(note, sizeof note, "switchpro: subcommand 0x03 (report mode 0x%02x) acked%s", n ? arg[0] : 0,
                 start_streaming ? ", report 0x30 every 15 ms from now" : "");
        if (n >= 1 && arg[0] != 0x30) streaming = 0;
        break;
    case 0x10: { /* SPI flash read: the address and size echoed, then the bytes */
        if (n < 5) {
            r[13] = 0x00; /* a NACK: no address */
            snprintf(note, sizeof note, "switchpro: subcommand 0x10 (SPI read) without its address, nacked");
            break;
        }
        uint32_t addr = (uint32_t)arg[0] | (uint32_t)arg[1] << 8 | (uint32_t)arg[2] << 16 | (uint32_t)arg[3] << 24;
        unsigned len = arg[4] > 0x1d ? 0x1d : arg[4];
        r[13] = 0x90;
        memcpy(r + 15, arg, 4);
        r[19] = (uint8_t)len;
        for (unsigned i = 0; i < len; i++) r[20 + i] = spi_byte(addr + i);
        snprintf(note, sizeof note, "switchpro: subcommand 0x10 (SPI read of %u bytes at 0x%04x) answered", len, addr);
        break;
    }
    case 0x30: /* player lights */
        snprintf(note, sizeof note, "switchpro: subcommand 0x30 (player lights 0x%02x) acked", n ? arg[0] : 0);
        break;
    case 0x38: /* home light */
        snprintf(note, sizeof note, "switchpro: subcommand 0x38 (home light) acked");
        break;
    case 0x40: /* IMU on or off */
        snprintf(note, sizeof note, "switchpro: subcommand 0x40 (IMU %s) acked", n && arg[0] ? "on" : "off");
        break;
    case 0x48: /* vibration on or off */
        snprintf(note, sizeof note, "switchpro: subcommand 0x48 (vibration %s) acked", n && arg[0] ? "on" : "off");
        break;
    default:
        snprintf(note, sizeof note, "switchpro: subcommand 0x%02x, one this model does not know, acked", id);
        break;
    }
    pad_send_input(r, sizeof r);
    pad_note(note);
    if (start_streaming) streaming = 1;
}

static enum output_kind switch_pro_output(const uint8_t *d, size_t size, struct motors *m) {
    if (size == 0) return OUTPUT_OTHER;
    switch (d[0]) {
    case 0x80:
        if (size < 2) {
            snprintf(m->extra, sizeof m->extra, ",\"why\":\"a USB command without its byte\"");
            return OUTPUT_OTHER;
        }
        snprintf(m->extra, sizeof m->extra, ",\"usb\":%u", d[1]);
        answer_usb_command(d[1]);
        return OUTPUT_OTHER;
    case 0x10:
        if (size < 10) {
            snprintf(m->extra, sizeof m->extra, ",\"why\":\"rumble report of %zu bytes, not 10\"", size);
            return OUTPUT_BAD;
        }
        return decode_rumble(d, m, "");
    case 0x01: {
        if (size < 11) {
            snprintf(m->extra, sizeof m->extra, ",\"why\":\"subcommand report of %zu bytes, no subcommand\"", size);
            return OUTPUT_BAD;
        }
        char more[24];
        snprintf(more, sizeof more, ",\"subcmd\":%u", d[10]);
        static const uint8_t none[8];
        enum output_kind kind;
        if (memcmp(d + 2, none, 8) == 0) { /* the driver's rumble slot before it set any: at probe */
            snprintf(m->extra, sizeof m->extra, "%s", more);
            kind = OUTPUT_OTHER;
        } else {
            kind = decode_rumble(d, m, more);
        }
        answer_subcommand(d, size);
        return kind;
    }
    default:
        return OUTPUT_OTHER;
    }
}

const struct model switch_pro_usb = {
    .name = "switchpro",
    .product_name = "Nintendo Co., Ltd. Pro Controller",
    .bus = PAD_BUS_USB,
    .vendor = 0x057e,
    .product = 0x2009,
    .descriptor = switch_pro_usb_descriptor,
    .descriptor_size = sizeof switch_pro_usb_descriptor,
    .output = switch_pro_output,
    .tick = switch_pro_tick,
    .tick_ms = 15,
};
