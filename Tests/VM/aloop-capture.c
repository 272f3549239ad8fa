/* Records the other side of an ALSA loopback cable (snd-aloop's hw:Loopback,1,N: what a sound
 * server played into hw:Loopback,0,N) with the time of every pointer reading, for .ci/vm-audio-test.
 *
 *   aloop-capture DEVICE CHANNELS RATE SECONDS OUT
 *
 * Writes OUT.raw (the interleaved frames as the card gave them), OUT.ts (one line per poll:
 * "before_ns htstamp_ns after_ns frames", CLOCK_MONOTONIC: before and after bracket the status
 * call, htstamp is the kernel's time of the pointer update it made, frames is the capture's
 * hardware position then: every frame below it had arrived) and OUT.json (format, channels, rate,
 * buffer, polls, xruns, scheduling). Runs SECONDS at most, or until SIGTERM/SIGINT; exits 1 with
 * "aloop-capture: error: ..." when the device cannot be opened as asked or overruns (a lost
 * frame would shift every time after it).
 *
 * The position is polled every 500 us on SCHED_FIFO 90 (the kernel's own timestamp of each
 * pointer update is what the checker uses; the poll only decides how closely the moments the
 * pointer moved are bracketed). snd-aloop moves its pointers on the jiffies clock, so the
 * position read between two ticks stands still; see .ci/vm-audio-test for the model.
 *
 * The format is whatever the cable allows among float32, s32 and s16 (a cable whose playback side
 * is already prepared accepts only that side's format), channels and rate exactly as asked. */
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void fail(const char *what, int err) {
    fprintf(stderr, "aloop-capture: error: %s%s%s\n", what, err ? ": " : "", err ? snd_strerror(err) : "");
    exit(1);
}

struct poll_record { int64_t before, htstamp, after, frames; };

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: aloop-capture DEVICE CHANNELS RATE SECONDS OUT\n");
        return 64;
    }
    const char *device = argv[1], *out = argv[5];
    unsigned channels = (unsigned)atoi(argv[2]), rate = (unsigned)atoi(argv[3]);
    double seconds = atof(argv[4]);
    if (channels < 1 || rate < 8000 || seconds <= 0) {
        fprintf(stderr, "aloop-capture: error: bad CHANNELS, RATE or SECONDS\n");
        return 64;
    }

    snd_pcm_t *pcm;
    int err = snd_pcm_open(&pcm, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK);
    if (err < 0) {
        char what[256];
        snprintf(what, sizeof what, "cannot open %s for capture (is snd-aloop loaded?)", device);
        fail(what, err);
    }
    snd_pcm_hw_params_t *hw;
    snd_pcm_hw_params_alloca(&hw);
    if ((err = snd_pcm_hw_params_any(pcm, hw)) < 0) fail("no hardware configuration", err);
    if ((err = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0) fail("interleaved access", err);
    const snd_pcm_format_t formats[] = {SND_PCM_FORMAT_FLOAT_LE, SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_S16_LE};
    const char *format_names[] = {"float32le", "s32le", "s16le"};
    int chosen = -1;
    for (int i = 0; i < 3 && chosen < 0; i++)
        if (snd_pcm_hw_params_test_format(pcm, hw, formats[i]) == 0) chosen = i;
    if (chosen < 0) fail("the cable's playback side plays none of float32le, s32le, s16le", 0);
    if ((err = snd_pcm_hw_params_set_format(pcm, hw, formats[chosen])) < 0) fail("format", err);
    if ((err = snd_pcm_hw_params_set_channels(pcm, hw, channels)) < 0) {
        unsigned lo = 0, hi = 0;
        snd_pcm_hw_params_get_channels_min(hw, &lo);
        snd_pcm_hw_params_get_channels_max(hw, &hi);
        fprintf(stderr, "aloop-capture: error: %u channels asked, the cable allows %u-%u\n", channels, lo, hi);
        return 1;
    }
    if ((err = snd_pcm_hw_params_set_rate(pcm, hw, rate, 0)) < 0) fail("the cable does not run at the rate asked", err);
    snd_pcm_uframes_t period = rate / 200, buffer = rate; /* 5 ms periods, a 1 s buffer */
    if ((err = snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, NULL)) < 0) fail("period size", err);
    if ((err = snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer)) < 0) fail("buffer size", err);
    if ((err = snd_pcm_hw_params(pcm, hw)) < 0) fail("hardware parameters", err);

    snd_pcm_sw_params_t *sw;
    snd_pcm_sw_params_alloca(&sw);
    snd_pcm_sw_params_current(pcm, sw);
    if ((err = snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE)) < 0) fail("timestamps", err);
    if ((err = snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC)) < 0) fail("monotonic timestamps", err);
    if ((err = snd_pcm_sw_params_set_start_threshold(pcm, sw, buffer * 2)) < 0) fail("start threshold", err);
    if ((err = snd_pcm_sw_params_set_avail_min(pcm, sw, 1)) < 0) fail("avail min", err);
    if ((err = snd_pcm_sw_params(pcm, sw)) < 0) fail("software parameters", err);

    size_t frame_bytes = (size_t)snd_pcm_format_physical_width(formats[chosen]) / 8 * channels;
    size_t max_frames = (size_t)((seconds + 1) * rate);
    size_t max_polls = (size_t)((seconds + 1) * 2000);
    unsigned char *audio = malloc(max_frames * frame_bytes);
    struct poll_record *polls = malloc(max_polls * sizeof *polls);
    if (!audio || !polls) fail("out of memory", 0);
    memset(audio, 0, max_frames * frame_bytes);
    memset(polls, 0, max_polls * sizeof *polls);

    const char *sched = "SCHED_FIFO 90";
    struct sched_param sp = {.sched_priority = 90};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) sched = "SCHED_OTHER (SCHED_FIFO refused)";
    mlockall(MCL_CURRENT | MCL_FUTURE);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    if ((err = snd_pcm_prepare(pcm)) < 0) fail("prepare", err);
    if ((err = snd_pcm_start(pcm)) < 0) fail("start", err);
    snd_pcm_status_t *status;
    snd_pcm_status_alloca(&status);
    size_t total = 0, npolls = 0;
    int64_t start = now_ns(), deadline = start + (int64_t)(seconds * 1e9);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    const char *failure = NULL;
    while (!stop_requested && npolls < max_polls) {
        int64_t before = now_ns();
        if (before >= deadline) break;
        if ((err = snd_pcm_status(pcm, status)) < 0) fail("status", err);
        int64_t after = now_ns();
        snd_pcm_state_t state = snd_pcm_status_get_state(status);
        if (state != SND_PCM_STATE_RUNNING) {
            failure = state == SND_PCM_STATE_XRUN ? "the capture overran (frames lost)" : "the capture stopped (the cable's format changed?)";
            break;
        }
        snd_pcm_uframes_t avail = snd_pcm_status_get_avail(status);
        snd_htimestamp_t ts;
        snd_pcm_status_get_htstamp(status, &ts);
        polls[npolls++] = (struct poll_record){before, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, after, (int64_t)(total + avail)};
        if (total + avail > max_frames) { failure = "more frames than SECONDS allows"; break; }
        while (avail > 0) {
            snd_pcm_sframes_t n = snd_pcm_readi(pcm, audio + total * frame_bytes, avail);
            if (n < 0) fail("read", (int)n);
            total += (size_t)n;
            avail -= (snd_pcm_uframes_t)n;
        }
        /* The next poll 500 us after this one was due, or after now when it came late: a stall
         * is not made up for by a burst of polls. */
        int64_t due = (int64_t)next.tv_sec * 1000000000 + next.tv_nsec + 500000, t = now_ns();
        if (due < t) due = t + 500000;
        next.tv_sec = due / 1000000000;
        next.tv_nsec = due % 1000000000;
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR && !stop_requested) {}
    }
    snd_pcm_close(pcm);

    char path[4096];
    snprintf(path, sizeof path, "%s.raw", out);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(audio, frame_bytes, total, f) != total || fclose(f) != 0) fail("cannot write OUT.raw", 0);
    snprintf(path, sizeof path, "%s.ts", out);
    f = fopen(path, "w");
    if (!f) fail("cannot write OUT.ts", 0);
    for (size_t i = 0; i < npolls; i++)
        fprintf(f, "%lld %lld %lld %lld\n", (long long)polls[i].before, (long long)polls[i].htstamp,
                (long long)polls[i].after, (long long)polls[i].frames);
    if (fclose(f) != 0) fail("cannot write OUT.ts", 0);
    snprintf(path, sizeof path, "%s.json", out);
    f = fopen(path, "w");
    if (!f) fail("cannot write OUT.json", 0);
    fprintf(f, "{\"device\": \"%s\", \"format\": \"%s\", \"channels\": %u, \"rate\": %u, \"period\": %lu, "
               "\"buffer\": %lu, \"frames\": %zu, \"polls\": %zu, \"sched\": \"%s\", \"failure\": %s%s%s}\n",
            device, format_names[chosen], channels, rate, (unsigned long)period, (unsigned long)buffer, total, npolls,
            sched, failure ? "\"" : "", failure ? failure : "null", failure ? "\"" : "");
    if (fclose(f) != 0) fail("cannot write OUT.json", 0);
    if (failure) {
        fprintf(stderr, "aloop-capture: error: %s after %zu frames\n", failure, total);
        return 1;
    }
    printf("aloop-capture: %zu frames of %s x%u at %u Hz from %s, %zu polls, %s\n", total, format_names[chosen],
           channels, rate, device, npolls, sched);
    return 0;
}
