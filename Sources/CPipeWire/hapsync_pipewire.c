// See include/hapsync_pipewire.h. The thread loop ("hapsync-pw-loop") runs the connection and
// the stream's events; the process callback runs in the context's data thread, where it only
// dequeues a buffer, reads the stream's timing, hands both to the caller and queues the buffer:
// no allocation, lock or blocking call of ours.
#define _GNU_SOURCE  // pthread_setname_np, SCHED_RESET_ON_FORK
#include "hapsync_pipewire.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/audio/raw-types.h>
#include <spa/debug/types.h>
#include <spa/param/latency-utils.h>
#include <spa/utils/result.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hs_pw_stream {
    hs_pw_config config;
    char *remote, *target, *description, *sink_name, *group;
    // A node already named `sink_name` (a sink node must not take a name in use).
    int name_taken;
    // A target given as a number: the name of the sink with that node id, else of the one with
    // that object.serial (ids and serials are counted apart and can coincide: the id wins).
    char target_name[256], serial_name[256];
    // What the target sink's node says of itself: its id, channels and positions (SPA's), the
    // one found by name or id and the one found by object.serial apart (the first wins).
    struct sink_found { uint32_t id, channels, positions[SPA_AUDIO_MAX_CHANNELS]; int found; char name[256]; } by_name, by_serial;
    // A monitor capture (config.capture_sink): the target sink's node id, for telling whether
    // it drives the graph, and the stream's position (its clock), from io_changed.
    uint32_t target_id;
    struct spa_io_position *position;
    // The monitored sink's node, bound for its SPA_PARAM_Latency (loop thread), and that
    // latency for its input as the data thread reads it: the quantum part as float bits, the
    // rate part (ticks) and the ns part, each stored atomically (a cycle may read one change
    // half made: a cycle's estimate, no more).
    struct pw_node *sink_node;
    struct spa_hook sink_node_listener;
    uint32_t latency_quantum_bits;
    int32_t latency_rate;
    int64_t latency_ns;
    char thread_name[16];
    int first_cycle_done;
    volatile int realtime_result;
    volatile int data_tid;
    uint32_t positions[SPA_AUDIO_MAX_CHANNELS];
    uint32_t rate;
    struct pw_thread_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct spa_hook core_listener;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct pw_stream *stream;
    struct spa_hook stream_listener;
    struct spa_source *timer;
    uint32_t default_rate;
    char version[64];
    int sync_seq, synced, target_found, any_sink, streaming, failed, server_gone;
    // A probe's loop (probe_open) started and locked by it.
    int locked;
    char error[256];
};

static void fail(struct hs_pw_stream *s, const char *message) {
    if (!s->failed) {
        s->failed = 1;
        snprintf(s->error, sizeof s->error, "%s", message);
    }
    pw_thread_loop_signal(s->loop, false);
    if (s->streaming && s->config.event) s->config.event(s->config.user, s->server_gone ? 3 : 1, s->error);
}

static void on_core_info(void *data, const struct pw_core_info *info) {
    struct hs_pw_stream *s = data;
    if (info->version) snprintf(s->version, sizeof s->version, "%s", info->version);
    const char *rate = info->props ? spa_dict_lookup(info->props, "default.clock.rate") : NULL;
    if (rate) s->default_rate = (uint32_t)strtoul(rate, NULL, 10);
}

static void on_core_done(void *data, uint32_t id, int seq) {
    struct hs_pw_stream *s = data;
    if (id == PW_ID_CORE && seq == s->sync_seq) {
        s->synced = 1;
        pw_thread_loop_signal(s->loop, false);
    }
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    struct hs_pw_stream *s = data;
    (void)seq;
    if (id != PW_ID_CORE) return;
    char why[200];
    if (res == -EPIPE) {
        s->server_gone = 1;
        snprintf(why, sizeof why, "the PipeWire server went away");
    }
    else snprintf(why, sizeof why, "PipeWire: %s (%s)", message ? message : "error", spa_strerror(res));
    fail(s, why);
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .info = on_core_info,
    .done = on_core_done,
    .error = on_core_error,
};

// `found` filled from a sink node's properties: its id, node.name `name`, audio.channels and
// audio.position ("FL,FR", or "[ FL FR ]" with or without quotes). Without audio.channels, as
// many channels as the positions name; neither: 0. Positions are kept only when all of them are
// named and as many as the channels.
static void note_sink(struct sink_found *found, uint32_t id, const char *name, const struct spa_dict *props) {
    if (found->found) return;
    found->found = 1;
    found->id = id;
    snprintf(found->name, sizeof found->name, "%s", name);
    const char *channels = spa_dict_lookup(props, "audio.channels");
    unsigned long n = channels ? strtoul(channels, NULL, 10) : 0;
    found->channels = n >= 1 && n <= SPA_AUDIO_MAX_CHANNELS ? (uint32_t)n : 0;
    const char *position = spa_dict_lookup(props, "audio.position");
    uint32_t count = 0;
    int named = 1;
    for (const char *p = position; p && *p && named;) {
        while (*p && strchr("[], \t\"", *p)) p++;
        size_t length = strcspn(p, "[], \t\"");
        if (length == 0) break;
        char name[16];
        if (length >= sizeof name || count >= SPA_AUDIO_MAX_CHANNELS) { named = 0; break; }
        memcpy(name, p, length);
        name[length] = 0;
        uint32_t type = spa_debug_type_find_type_short(spa_type_audio_channel, name);
        if (type == SPA_ID_INVALID || type == SPA_AUDIO_CHANNEL_UNKNOWN) named = 0;
        else found->positions[count++] = type;
        p += length;
    }
    if (named && found->channels == 0) found->channels = count;
    if (!named || count != found->channels) memset(found->positions, 0, sizeof found->positions);
}

// A monitor capture's channels: the sink's own, 2 when it does not say.
static uint32_t sink_channels(const struct sink_found *sink) { return sink && sink->channels ? sink->channels : 2; }

// The rate a stream takes when not told: the server's default.clock.rate, 48000 when it does not say.
static uint32_t graph_rate(const struct hs_pw_stream *s) { return s->default_rate ? s->default_rate : 48000; }

// The sentence for a sink `target` the server does not have.
static void no_sink_error(char *error, size_t size, const char *target) {
    snprintf(error, size, "PipeWire has no sink named or numbered '%s'; 'wpctl status' lists them (by id; 'pw-cli ls Node' by node.name)", target);
}

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    struct hs_pw_stream *s = data;
    (void)permissions; (void)version;
    if (!props || strcmp(type, PW_TYPE_INTERFACE_Node) != 0) return;
    const char *name = spa_dict_lookup(props, PW_KEY_NODE_NAME);
    if (s->sink_name && name && strcmp(name, s->sink_name) == 0) s->name_taken = 1;
    const char *class = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
    if (!class || strstr(class, "Audio/Sink") == NULL) return;
    s->any_sink = 1;
    if (!s->target || !name) return;
    if (strcmp(name, s->target) == 0) {
        s->target_found = 1;
        note_sink(&s->by_name, id, name, props);
    }
    // A number: the node's id (what `pw-cli ls Node` and `wpctl status` show) or object.serial.
    char *end;
    unsigned long number = strtoul(s->target, &end, 10);
    if (s->target[0] >= '0' && s->target[0] <= '9' && *end == 0) {
        const char *serial = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
        if (number == id) {
            snprintf(s->target_name, sizeof s->target_name, "%s", name);
            note_sink(&s->by_name, id, name, props);
        } else if (serial && strcmp(serial, s->target) == 0) {
            snprintf(s->serial_name, sizeof s->serial_name, "%s", name);
            note_sink(&s->by_serial, id, name, props);
        }
        s->target_found = s->target_found || s->target_name[0] || s->serial_name[0];
    }
}

// The target sink as found (by name or id first, else by object.serial); NULL: not found.
static const struct sink_found *found_sink(const struct hs_pw_stream *s) {
    return s->by_name.found ? &s->by_name : s->by_serial.found ? &s->by_serial : NULL;
}

// A monitored sink gone from the registry, while the capture opens or runs: it fails (opening,
// the session manager would link it to another sink instead).
static void on_global_remove(void *data, uint32_t id) {
    struct hs_pw_stream *s = data;
    if (!s->config.capture_sink || id != s->target_id) return;
    fail(s, "the sink went away (removed, or its device unplugged)");
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
    .global_remove = on_global_remove,
};

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    struct hs_pw_stream *s = data;
    (void)old;
    if (state == PW_STREAM_STATE_ERROR) {
        char why[220];
        if (error && strcmp(error, "no node available") == 0)
            snprintf(why, sizeof why, "PipeWire has no sink to play to (the stream failed: no node available)");
        else snprintf(why, sizeof why, "the PipeWire stream failed: %s", error ? error : "no reason given");
        fail(s, why);
    } else if (state == PW_STREAM_STATE_STREAMING && !s->streaming) {
        s->streaming = 1;
        pw_thread_loop_signal(s->loop, false);
        if (s->config.event) s->config.event(s->config.user, 2, "streaming");
    } else if (state == PW_STREAM_STATE_UNCONNECTED && s->streaming) {
        fail(s, "the PipeWire stream was disconnected (its sink went away?)");
    }
}

// Data thread: the stream's timing for the cycle of buffer `b`, as the caller is handed it
// (pw_stream_get_time_n, lock-free in libpipewire; no allocation).
static hs_pw_time cycle_time(struct hs_pw_stream *s, const struct pw_buffer *b) {
    struct pw_time t;
    memset(&t, 0, sizeof t);
    pw_stream_get_time_n(s->stream, &t, sizeof t);
    hs_pw_time time = {
        .now = t.now, .rate_num = t.rate.num, .rate_denom = t.rate.denom, .ticks = t.ticks, .delay = t.delay,
        .queued = t.queued, .buffered = t.buffered, .requested = b->requested,
    };
    // The graph's quantum, and whether its driver keeps time by the system's clock.
    const struct spa_io_position *position = s->position;
    if (position) {
        time.duration = position->clock.duration;
        time.timer_driver = strncmp(position->clock.name, "clock.system.monotonic", sizeof position->clock.name) == 0;
    }
    // A monitor: the sink's latency at this cycle's quantum, as pw_stream_get_time_n adds a
    // playback stream's peer latency (stream.c).
    if (s->config.capture_sink && position && t.rate.num > 0 && t.rate.denom > 0) {
        uint32_t bits = __atomic_load_n(&s->latency_quantum_bits, __ATOMIC_RELAXED);
        float quantum;
        memcpy(&quantum, &bits, sizeof quantum);
        // In doubles, each part kept sane (a sink may report anything): at most 10 s in all.
        double duration = (double)(time.duration < (1u << 20) ? time.duration : (1u << 20));
        double ticks = (isfinite(quantum) && quantum > 0 && quantum < 64 ? quantum : 0) * duration
                       + (double)__atomic_load_n(&s->latency_rate, __ATOMIC_RELAXED)
                       + (double)__atomic_load_n(&s->latency_ns, __ATOMIC_RELAXED) / 1e9 * t.rate.denom / t.rate.num;
        double most = 10.0 * t.rate.denom / t.rate.num;
        time.sink_latency = ticks > 0 ? (int64_t)(ticks < most ? ticks : most) : 0;
        if (position->clock.id == s->target_id) time.sink_took_before = (int64_t)duration;
    }
    return time;
}

// Data thread: no allocation, lock or blocking call (pw_stream_dequeue_buffer, get_time_n and
// queue_buffer are lock-free in libpipewire).
static void on_process(void *data) {
    struct hs_pw_stream *s = data;
    if (!s->first_cycle_done) {
        // Once, in the data thread itself: its name, and its priority below the engine's threads.
        s->first_cycle_done = 1;
        if (s->thread_name[0]) pthread_setname_np(pthread_self(), s->thread_name);
        __atomic_store_n(&s->data_tid, (int)gettid(), __ATOMIC_RELEASE);
        if (s->config.realtime_priority > 0) {
            struct sched_param param = { .sched_priority = s->config.realtime_priority };
            int res = pthread_setschedparam(pthread_self(), SCHED_FIFO | SCHED_RESET_ON_FORK, &param);
            __atomic_store_n(&s->realtime_result, res, __ATOMIC_RELEASE);
        }
    }
    struct pw_buffer *b = pw_stream_dequeue_buffer(s->stream);
    if (!b) return;
    struct spa_data *d = &b->buffer->datas[0];
    uint32_t stride = 4 * s->config.channels;
    if (s->sink_name || s->config.capture_sink) {
        // A sink node: what was played into it this cycle; a monitor capture: what its sink
        // took. Handed over and given back.
        if (d->data && d->chunk) {
            uint32_t offset = d->chunk->offset < d->maxsize ? d->chunk->offset : d->maxsize;
            uint32_t size = d->chunk->size < d->maxsize - offset ? d->chunk->size : d->maxsize - offset;
            hs_pw_time time = cycle_time(s, b);
            if (size >= stride) s->config.process(s->config.user, (float *)((uint8_t *)d->data + offset), size / stride, &time);
        }
        pw_stream_queue_buffer(s->stream, b);
        return;
    }
    if (!d->data || d->maxsize < stride) {
        b->size = 0;
        pw_stream_queue_buffer(s->stream, b);
        return;
    }
    uint32_t frames = d->maxsize / stride;
    if (b->requested > 0 && b->requested < frames) frames = (uint32_t)b->requested;
    hs_pw_time time = cycle_time(s, b);
    uint32_t n = s->config.process(s->config.user, (float *)d->data, frames, &time);
    if (n > frames) n = frames;
    d->chunk->offset = 0;
    d->chunk->stride = (int32_t)stride;
    d->chunk->size = n * stride;
    b->size = n;  // in frames: pw_time.queued then counts frames
    pw_stream_queue_buffer(s->stream, b);
}

// Loop thread: the caller's look at its stream, every 100 ms.
static void on_timer(void *data, uint64_t expirations) {
    struct hs_pw_stream *s = data;
    (void)expirations;
    if (s->config.tick && s->streaming && !s->failed) s->config.tick(s->config.user);
}

// Loop thread: the monitored sink's latency param; its input's is kept for the data thread.
static void on_sink_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param) {
    struct hs_pw_stream *s = data;
    (void)seq; (void)index; (void)next;
    struct spa_latency_info info;
    if (id != SPA_PARAM_Latency || !param || spa_latency_parse(param, &info) < 0 || info.direction != SPA_DIRECTION_INPUT) return;
    float quantum = (info.min_quantum + info.max_quantum) / 2;
    uint32_t bits;
    memcpy(&bits, &quantum, sizeof bits);
    __atomic_store_n(&s->latency_quantum_bits, bits, __ATOMIC_RELAXED);
    __atomic_store_n(&s->latency_rate, (int32_t)((info.min_rate + info.max_rate) / 2), __ATOMIC_RELAXED);
    __atomic_store_n(&s->latency_ns, (int64_t)((info.min_ns + info.max_ns) / 2), __ATOMIC_RELAXED);
}

static const struct pw_node_events sink_node_events = {
    PW_VERSION_NODE_EVENTS,
    .param = on_sink_param,
};

// Data thread, invoked: the new position taken, between two cycles.
static int do_set_position(struct spa_loop *loop, bool async, uint32_t seq, const void *data, size_t size, void *user) {
    struct hs_pw_stream *s = user;
    (void)loop; (void)async; (void)seq; (void)size;
    s->position = *(struct spa_io_position *const *)data;
    return 0;
}

// Loop thread: the stream's position (its driver's clock), read by the process callback. Handed
// to the data thread by a blocking invoke on its loop, as stream.c does its own: the old area is
// unmapped once this returns, and no cycle may read it after.
static void on_io_changed(void *data, uint32_t id, void *area, uint32_t size) {
    struct hs_pw_stream *s = data;
    if (id != SPA_IO_Position) return;
    struct spa_io_position *position = size >= sizeof(struct spa_io_position) ? area : NULL;
    struct pw_data_loop *data_loop = s->context ? pw_context_get_data_loop(s->context) : NULL;
    if (data_loop) pw_loop_invoke(pw_data_loop_get_loop(data_loop), do_set_position, SPA_ID_INVALID, &position, sizeof position, true, s);
    else s->position = position;
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .io_changed = on_io_changed,
    .process = on_process,
};

// Waits (loop locked) until `done` is set or the stream failed, at most until `deadline`.
static int wait_for(struct hs_pw_stream *s, int *done, struct timespec *deadline) {
    while (!*done && !s->failed) {
        if (pw_thread_loop_timed_wait_full(s->loop, deadline) == -ETIMEDOUT) return -ETIMEDOUT;
    }
    return s->failed ? -EIO : 0;
}

static char *copy(const char *text) { return text ? strdup(text) : NULL; }

// The node.latency a stream asks for, frames (at least 1). A sink node's, and a grouped stream's,
// is rounded up to a power of two: the graph runs power-of-two cycles (clock.power-of-two-quantum)
// and rounds a request down, which would give a sink node, whose cycle is the graph's, half the
// cycle it asked for, and a stream of its group a shorter one than the node's.
static uint32_t latency_frames(const struct hs_pw_stream *s, uint32_t frames) {
    if (frames < 1) frames = 1;
    return s->sink_name || s->group ? hs_pw_cycle_frames(frames) : frames;
}

uint32_t hs_pw_cycle_frames(uint32_t frames) {
    uint32_t p = 1;
    while (p < frames && p < (1u << 20)) p <<= 1;
    return p;
}

static void destroy(struct hs_pw_stream *s) {
    if (s->loop) pw_thread_loop_lock(s->loop);
    if (s->timer) pw_loop_destroy_source(pw_thread_loop_get_loop(s->loop), s->timer);
    if (s->sink_node) {
        spa_hook_remove(&s->sink_node_listener);
        pw_proxy_destroy((struct pw_proxy *)s->sink_node);
    }
    if (s->stream) {
        spa_hook_remove(&s->stream_listener);
        pw_stream_destroy(s->stream);
    }
    if (s->registry) {
        spa_hook_remove(&s->registry_listener);
        pw_proxy_destroy((struct pw_proxy *)s->registry);
    }
    if (s->core) {
        spa_hook_remove(&s->core_listener);
        pw_core_disconnect(s->core);
    }
    if (s->loop) {
        pw_thread_loop_unlock(s->loop);
        pw_thread_loop_stop(s->loop);
    }
    if (s->context) pw_context_destroy(s->context);
    if (s->loop) pw_thread_loop_destroy(s->loop);
    free(s->remote);
    free(s->target);
    free(s->description);
    free(s->sink_name);
    free(s->group);
    free(s);
}

hs_pw_stream *hs_pw_open(const hs_pw_config *config, int timeout_ms, char *error, size_t error_size) {
    if (error_size) error[0] = 0;
    int own_channels = config && config->capture_sink && config->channels == 0;
    if (!config || !config->process || (!own_channels && (config->channels < 1 || config->channels > SPA_AUDIO_MAX_CHANNELS))) {
        snprintf(error, error_size, "a PipeWire stream needs a process callback and 1 to %d channels", SPA_AUDIO_MAX_CHANNELS);
        return NULL;
    }
    if (config->capture_sink && (!config->target || config->sink_name)) {
        snprintf(error, error_size, "a monitor capture needs the sink to record (and is no sink itself)");
        return NULL;
    }
    pw_init(NULL, NULL);
    struct hs_pw_stream *s = calloc(1, sizeof *s);
    if (!s) { snprintf(error, error_size, "out of memory"); return NULL; }
    s->config = *config;
    s->remote = copy(config->remote);
    s->target = copy(config->target);
    s->description = copy(config->description ? config->description : "HapSync playback");
    s->sink_name = copy(config->sink_name);
    s->group = copy(config->group);
    s->realtime_result = -1;
    s->target_id = SPA_ID_INVALID;
    if (config->thread_name) snprintf(s->thread_name, sizeof s->thread_name, "%s", config->thread_name);
    static const uint32_t spa_positions[] = {
        [HS_PW_CHANNEL_MONO] = SPA_AUDIO_CHANNEL_MONO, [HS_PW_CHANNEL_FL] = SPA_AUDIO_CHANNEL_FL,
        [HS_PW_CHANNEL_FR] = SPA_AUDIO_CHANNEL_FR, [HS_PW_CHANNEL_RL] = SPA_AUDIO_CHANNEL_RL,
        [HS_PW_CHANNEL_RR] = SPA_AUDIO_CHANNEL_RR,
    };
    for (uint32_t c = 0; c < s->config.channels; c++) {
        uint32_t p = config->positions ? config->positions[c]
                     : config->channels == 2 ? (c == 0 ? HS_PW_CHANNEL_FL : HS_PW_CHANNEL_FR) : HS_PW_CHANNEL_MONO;
        if (p > HS_PW_CHANNEL_RR) {
            snprintf(error, error_size, "channel %u: position %u is not one HapSync knows", c, p);
            destroy(s);
            return NULL;
        }
        s->positions[c] = spa_positions[p];
    }
    s->loop = pw_thread_loop_new("hapsync-pw-loop", NULL);
    if (!s->loop || pw_thread_loop_start(s->loop) < 0) {
        snprintf(error, error_size, "could not start PipeWire's thread loop (%s)", strerror(errno));
        destroy(s);
        return NULL;
    }
    pw_thread_loop_lock(s->loop);
    struct timespec deadline;
    pw_thread_loop_get_time(s->loop, &deadline, (int64_t)timeout_ms * SPA_NSEC_PER_MSEC);
    s->context = pw_context_new(pw_thread_loop_get_loop(s->loop), NULL, 0);
    if (!s->context) {
        snprintf(error, error_size, "could not make a PipeWire context (%s)", strerror(errno));
        goto failed;
    }
    s->core = pw_context_connect(s->context, s->remote ? pw_properties_new(PW_KEY_REMOTE_NAME, s->remote, NULL) : NULL, 0);
    if (!s->core) {
        int e = errno;
        snprintf(error, error_size, "no PipeWire server answers on %s (%s)", s->remote ? s->remote : "the default socket",
                 e == EHOSTDOWN || e == ENOENT ? "no server's socket there" : strerror(e));
        goto failed;
    }
    pw_core_add_listener(s->core, &s->core_listener, &core_events, s);
    s->registry = pw_core_get_registry(s->core, PW_VERSION_REGISTRY, 0);
    pw_registry_add_listener(s->registry, &s->registry_listener, &registry_events, s);
    s->sync_seq = pw_core_sync(s->core, PW_ID_CORE, 0);
    if (wait_for(s, &s->synced, &deadline) < 0) {
        if (s->failed) snprintf(error, error_size, "%s", s->error);
        else snprintf(error, error_size, "the PipeWire server on %s accepted the connection but did not answer within %d ms (is it stopped?)",
                      s->remote ? s->remote : "the default socket", timeout_ms);
        goto failed;
    }
    if (s->sink_name && s->name_taken) {
        snprintf(error, error_size, "PipeWire already has a node named '%s' (another run's? 'pw-cli ls Node' lists them)", s->sink_name);
        goto failed;
    }
    if (!s->sink_name && s->target && !s->target_found) {
        no_sink_error(error, error_size, s->target);
        goto failed;
    }
    if (s->config.capture_sink) {
        const struct sink_found *sink = found_sink(s);
        s->target_id = sink ? sink->id : SPA_ID_INVALID;
        // Its latency, as it reports it now and whenever it changes.
        if (sink) s->sink_node = pw_registry_bind(s->registry, sink->id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
        if (s->sink_node) {
            pw_node_add_listener(s->sink_node, &s->sink_node_listener, &sink_node_events, s);
            uint32_t ids[] = { SPA_PARAM_Latency };
            pw_node_subscribe_params(s->sink_node, ids, 1);
        }
        if (own_channels) {
            // The sink's own channels and, when it names them all, its positions.
            s->config.channels = sink_channels(sink);
            for (uint32_t c = 0; c < s->config.channels; c++)
                s->positions[c] = sink && sink->positions[0] ? sink->positions[c]
                                  : s->config.channels == 2 ? (c == 0 ? SPA_AUDIO_CHANNEL_FL : SPA_AUDIO_CHANNEL_FR)
                                  : s->config.channels == 1 ? SPA_AUDIO_CHANNEL_MONO : SPA_AUDIO_CHANNEL_AUX0 + c;
        }
    }
    s->rate = config->rate ? config->rate : graph_rate(s);
    struct pw_properties *props =
        s->config.capture_sink ? pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_APP_NAME, "HapSync",
                                                   PW_KEY_NODE_NAME, "hapsync-live-monitor", PW_KEY_NODE_DESCRIPTION, s->description,
                                                   PW_KEY_STREAM_CAPTURE_SINK, "true", NULL)
        : s->sink_name ? pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CLASS, "Audio/Sink", PW_KEY_APP_NAME, "HapSync",
                                         PW_KEY_NODE_NAME, s->sink_name, PW_KEY_NODE_DESCRIPTION, s->description,
                                         PW_KEY_NODE_WANT_DRIVER, "true", PW_KEY_NODE_ALWAYS_PROCESS, "true", NULL)
                     : pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Playback",
                                         PW_KEY_MEDIA_ROLE, "Game", PW_KEY_APP_NAME, "HapSync",
                                         PW_KEY_NODE_NAME, "hapsync-playback", PW_KEY_NODE_DESCRIPTION, s->description, NULL);
    if (s->group) pw_properties_set(props, PW_KEY_NODE_GROUP, s->group);
    for (const char *const *p = config->properties; p && p[0] && p[1]; p += 2) pw_properties_set(props, p[0], p[1]);
    if (config->latency_us) {
        uint64_t frames = ((uint64_t)config->latency_us * s->rate + 500000) / 1000000;
        pw_properties_setf(props, PW_KEY_NODE_LATENCY, "%u/%u", latency_frames(s, frames > UINT32_MAX ? UINT32_MAX : (uint32_t)frames), s->rate);
    }
    if (config->prepare) config->prepare(config->user, s->rate);
    if (s->target && !s->sink_name) pw_properties_set(props, PW_KEY_TARGET_OBJECT, s->target_name[0] ? s->target_name : s->serial_name[0] ? s->serial_name : s->target);
    s->stream = pw_stream_new(s->core, s->description, props);
    if (!s->stream) {
        snprintf(error, error_size, "PipeWire would not make a stream (%s)", strerror(errno));
        goto failed;
    }
    pw_stream_add_listener(s->stream, &s->stream_listener, &stream_events, s);
    uint8_t pod[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(pod, sizeof pod);
    struct spa_audio_info_raw info;
    memset(&info, 0, sizeof info);
    info.format = SPA_AUDIO_FORMAT_F32;
    info.rate = s->rate;
    info.channels = s->config.channels;
    memcpy(info.position, s->positions, sizeof(uint32_t) * s->config.channels);
    const struct spa_pod *params[1] = { spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info) };
    // A sink node waits for applications to be linked to it; a playback stream links itself.
    int res = s->sink_name ? pw_stream_connect(s->stream, PW_DIRECTION_INPUT, PW_ID_ANY, PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS, params, 1)
              : s->config.capture_sink ? pw_stream_connect(s->stream, PW_DIRECTION_INPUT, PW_ID_ANY,
                                                           PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS
                                                               | PW_STREAM_FLAG_DONT_RECONNECT, params, 1)
                           : pw_stream_connect(s->stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
                                               PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS, params, 1);
    if (res < 0) {
        snprintf(error, error_size, "the PipeWire stream would not connect (%s)", spa_strerror(res));
        goto failed;
    }
    if (wait_for(s, &s->streaming, &deadline) < 0) {
        snprintf(error, error_size, "%s", s->failed ? s->error : "the PipeWire stream did not start within the time allowed");
        goto failed;
    }
    if (config->tick) {
        s->timer = pw_loop_add_timer(pw_thread_loop_get_loop(s->loop), on_timer, s);
        if (s->timer) {
            struct timespec every = { .tv_sec = 0, .tv_nsec = 100 * SPA_NSEC_PER_MSEC };
            pw_loop_update_timer(pw_thread_loop_get_loop(s->loop), s->timer, &every, &every, false);
        }
    }
    pw_thread_loop_unlock(s->loop);
    return s;
failed:
    pw_thread_loop_unlock(s->loop);
    destroy(s);
    return NULL;
}

int hs_pw_realtime_result(const hs_pw_stream *stream) { return __atomic_load_n(&stream->realtime_result, __ATOMIC_ACQUIRE); }

int hs_pw_data_thread(const hs_pw_stream *stream) { return __atomic_load_n(&stream->data_tid, __ATOMIC_ACQUIRE); }

uint32_t hs_pw_rate(const hs_pw_stream *stream) { return stream->rate; }

uint32_t hs_pw_channels(const hs_pw_stream *stream) { return stream->config.channels; }

const char *hs_pw_server_version(const hs_pw_stream *stream) { return stream->version; }

int hs_pw_set_latency(hs_pw_stream *s, uint32_t frames) {
    char value[32];
    snprintf(value, sizeof value, "%u/%u", latency_frames(s, frames), s->rate);
    struct spa_dict_item item = SPA_DICT_ITEM_INIT(PW_KEY_NODE_LATENCY, value);
    struct spa_dict dict = SPA_DICT_INIT(&item, 1);
    pw_thread_loop_lock(s->loop);
    int res = pw_stream_update_properties(s->stream, &dict);
    pw_thread_loop_unlock(s->loop);
    return res < 0 ? res : 0;
}

int hs_pw_set_active(hs_pw_stream *s, int active) {
    pw_thread_loop_lock(s->loop);
    int res = pw_stream_set_active(s->stream, active != 0);
    pw_thread_loop_unlock(s->loop);
    return res < 0 ? res : 0;
}

// retarget's look at the graph: the links into the sink node, the nodes (for the target's id and
// serial and the streams' names) and the session manager's "default" metadata.
#define HAND_OVER_MAX 128
struct hand_over {
    uint32_t self;
    const char *target;
    uint32_t target_id, metadata_id;
    int target_rank;
    char target_serial[32];
    uint32_t linked[HAND_OVER_MAX];
    int nlinked;
    struct { uint32_t id; char name[64]; } nodes[HAND_OVER_MAX * 4];
    int nnodes;
};

static void hand_over_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                             const struct spa_dict *props) {
    struct hand_over *h = data;
    (void)permissions; (void)version;
    if (!props) return;
    if (strcmp(type, PW_TYPE_INTERFACE_Link) == 0) {
        const char *in = spa_dict_lookup(props, PW_KEY_LINK_INPUT_NODE), *out = spa_dict_lookup(props, PW_KEY_LINK_OUTPUT_NODE);
        if (!in || !out || strtoul(in, NULL, 10) != h->self) return;
        uint32_t from = (uint32_t)strtoul(out, NULL, 10);
        for (int i = 0; i < h->nlinked; i++) if (h->linked[i] == from) return;  // one per stream (a link per channel)
        if (h->nlinked < HAND_OVER_MAX) h->linked[h->nlinked++] = from;
    } else if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
        const char *name = spa_dict_lookup(props, PW_KEY_NODE_NAME), *class = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
        const char *serial = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
        // The target as the stream that plays on takes it (hs_pw_open): a sink's node id first,
        // then its object.serial, then its node.name; the best match so far is kept.
        if (h->target && class && strstr(class, "Audio/Sink")) {
            char number[16];
            snprintf(number, sizeof number, "%u", id);
            int rank = strcmp(number, h->target) == 0 ? 3 : serial && strcmp(serial, h->target) == 0 ? 2
                       : name && strcmp(name, h->target) == 0 ? 1 : 0;
            if (rank > h->target_rank) {
                h->target_rank = rank;
                h->target_id = id;
                snprintf(h->target_serial, sizeof h->target_serial, "%s", serial ? serial : "");
            }
        }
        const char *app = spa_dict_lookup(props, PW_KEY_APP_NAME);
        if (h->nnodes < HAND_OVER_MAX * 4) {
            h->nodes[h->nnodes].id = id;
            snprintf(h->nodes[h->nnodes].name, sizeof h->nodes[0].name, "%s", app ? app : name ? name : "a stream");
            h->nnodes++;
        }
    } else if (strcmp(type, PW_TYPE_INTERFACE_Metadata) == 0) {
        const char *name = spa_dict_lookup(props, "metadata.name");
        if (name && strcmp(name, "default") == 0) h->metadata_id = id;
    }
}

static const struct pw_registry_events hand_over_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = hand_over_global,
};

// Waits (loop locked) for a round trip of the core, at most until `deadline`.
static int round_trip(struct hs_pw_stream *s, struct timespec *deadline) {
    s->synced = 0;
    s->sync_seq = pw_core_sync(s->core, PW_ID_CORE, s->sync_seq);
    return wait_for(s, &s->synced, deadline);
}

// The session manager's "default" metadata names a target for some nodes: with `own`, the
// stream's own node (`target` NULL: its target cleared), else each stream linked into the sink
// node (`target` NULL: none named), their names listed in `names`. Returns the nodes named (or
// linked), or a negative errno. Not from the stream's own callbacks.
static int retarget(hs_pw_stream *s, const char *target, int own, char *names, size_t names_size) {
    if (names_size) names[0] = 0;
    struct hand_over *h = calloc(1, sizeof *h);
    if (!h) return -ENOMEM;
    pw_thread_loop_lock(s->loop);
    struct timespec deadline;
    pw_thread_loop_get_time(s->loop, &deadline, 2000 * SPA_NSEC_PER_MSEC);
    h->self = pw_stream_get_node_id(s->stream);
    h->target = target;
    h->target_id = h->metadata_id = SPA_ID_INVALID;
    struct spa_hook listener;
    spa_zero(listener);
    struct pw_registry *registry = pw_core_get_registry(s->core, PW_VERSION_REGISTRY, 0);
    int res = -EIO;
    if (registry) {
        pw_registry_add_listener(registry, &listener, &hand_over_events, h);
        res = round_trip(s, &deadline);
    }
    int moved = 0;
    if (res == 0 && own) {
        // The stream itself, whatever it is linked to.
        h->linked[0] = h->self;
        h->nlinked = 1;
    }
    if (res == 0) {
        for (int i = 0; i < h->nlinked && !own; i++) {
            const char *name = "a stream";
            for (int k = 0; k < h->nnodes; k++) if (h->nodes[k].id == h->linked[i]) name = h->nodes[k].name;
            size_t used = names_size ? strlen(names) : 0;
            if (used + 1 < names_size) snprintf(names + used, names_size - used, "%s%s", i ? ", " : "", name);
        }
        moved = h->nlinked;
        if ((target || own) && h->nlinked > 0) {
            if ((target && h->target_id == SPA_ID_INVALID) || h->metadata_id == SPA_ID_INVALID) {
                res = target && h->target_id == SPA_ID_INVALID ? -ENOENT : -ENOTSUP;
            } else {
                // What `pactl move-sink-input` asks of pipewire-pulse: the session manager's
                // default metadata names each stream's target, by id and by serial (cleared: the
                // stream follows the default sink again).
                struct pw_metadata *metadata = pw_registry_bind(registry, h->metadata_id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
                if (!metadata) res = -errno;
                else {
                    char id[16];
                    snprintf(id, sizeof id, "%u", h->target_id);
                    for (int i = 0; i < h->nlinked; i++) {
                        pw_metadata_set_property(metadata, h->linked[i], "target.node", target ? "Spa:Id" : NULL, target ? id : NULL);
                        if (!target || h->target_serial[0]) {
                            pw_metadata_set_property(metadata, h->linked[i], "target.object", target ? "Spa:Id" : NULL, target ? h->target_serial : NULL);
                        }
                    }
                    res = round_trip(s, &deadline);
                    pw_proxy_destroy((struct pw_proxy *)metadata);
                }
            }
        }
    }
    if (registry) {
        spa_hook_remove(&listener);
        pw_proxy_destroy((struct pw_proxy *)registry);
    }
    if (res < 0 && s->server_gone) res = -EPIPE;
    pw_thread_loop_unlock(s->loop);
    free(h);
    return res < 0 ? res : moved;
}

int hs_pw_hand_over(hs_pw_stream *s, const char *target, char *names, size_t names_size) {
    if (names_size) names[0] = 0;
    if (!s || !s->sink_name || !s->stream) return -EINVAL;
    return retarget(s, target, 0, names, names_size);
}

int hs_pw_hold_to(hs_pw_stream *s, const char *target) {
    if (!s || s->sink_name || !s->stream) return -EINVAL;
    int res = retarget(s, target, 1, NULL, 0);
    return res < 0 ? res : 0;
}

// A connection for a short question (hs_pw_answers, hs_pw_default_sink): a loop of its own,
// started and locked (`locked` set), the core connected to `remote` (NULL when nothing answers)
// with the core listener on, and `deadline` `timeout_ms` from now. NULL only when out of memory.
// The caller asks, unlocks when `locked`, and destroys it.
static struct hs_pw_stream *probe_open(const char *remote, const char *target, int timeout_ms, struct timespec *deadline) {
    pw_init(NULL, NULL);
    struct hs_pw_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->target = copy(target);
    s->loop = pw_thread_loop_new("hapsync-pwprobe", NULL);
    if (!s->loop || pw_thread_loop_start(s->loop) < 0) return s;
    pw_thread_loop_lock(s->loop);
    s->locked = 1;
    pw_thread_loop_get_time(s->loop, deadline, (int64_t)timeout_ms * SPA_NSEC_PER_MSEC);
    s->context = pw_context_new(pw_thread_loop_get_loop(s->loop), NULL, 0);
    if (s->context) s->core = pw_context_connect(s->context, remote ? pw_properties_new(PW_KEY_REMOTE_NAME, remote, NULL) : NULL, 0);
    if (s->core) pw_core_add_listener(s->core, &s->core_listener, &core_events, s);
    return s;
}

// hs_pw_default_sink's listener on the "default" metadata: the value of default.audio.sink,
// {"name":"..."}, its name copied out.
struct default_sink { char *name; size_t size; int found; };

static int on_metadata_property(void *data, uint32_t subject, const char *key, const char *type, const char *value) {
    struct default_sink *d = data;
    (void)type;
    if (subject != PW_ID_CORE || !key || !value || strcmp(key, "default.audio.sink") != 0) return 0;
    const char *at = strstr(value, "\"name\"");
    if (!at || !(at = strchr(at + 6, ':')) || !(at = strchr(at, '"'))) return 0;
    const char *end = strchr(at + 1, '"');
    if (!end || (size_t)(end - at - 1) >= d->size) return 0;
    memcpy(d->name, at + 1, (size_t)(end - at - 1));
    d->name[end - at - 1] = 0;
    d->found = 1;
    return 0;
}

static const struct pw_metadata_events default_sink_events = {
    PW_VERSION_METADATA_EVENTS,
    .property = on_metadata_property,
};

struct metadata_find { uint32_t id; };

static void metadata_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version, const struct spa_dict *props) {
    struct metadata_find *m = data;
    (void)permissions; (void)version;
    const char *name = props ? spa_dict_lookup(props, "metadata.name") : NULL;
    if (strcmp(type, PW_TYPE_INTERFACE_Metadata) == 0 && name && strcmp(name, "default") == 0) m->id = id;
}

static const struct pw_registry_events metadata_find_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = metadata_global,
};

int hs_pw_default_sink(const char *remote, char *name, size_t size, int timeout_ms) {
    if (!name || size == 0) return -EINVAL;
    name[0] = 0;
    struct timespec deadline;
    struct hs_pw_stream *s = probe_open(remote, NULL, timeout_ms, &deadline);
    if (!s) return -ENOMEM;
    int res = -EHOSTDOWN;
    if (s->locked) {
        if (s->core) {
            struct metadata_find find = { .id = SPA_ID_INVALID };
            struct spa_hook registry_listener, metadata_listener;
            spa_zero(registry_listener);
            spa_zero(metadata_listener);
            struct pw_registry *registry = pw_core_get_registry(s->core, PW_VERSION_REGISTRY, 0);
            if (!registry) {
                pw_thread_loop_unlock(s->loop);
                destroy(s);
                return -ENOMEM;
            }
            pw_registry_add_listener(registry, &registry_listener, &metadata_find_events, &find);
            res = round_trip(s, &deadline);
            if (res == 0 && find.id == SPA_ID_INVALID) res = -ENOTSUP;
            if (res == 0) {
                struct default_sink d = { .name = name, .size = size };
                struct pw_metadata *metadata = pw_registry_bind(registry, find.id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
                if (!metadata) res = -errno;
                else {
                    pw_metadata_add_listener(metadata, &metadata_listener, &default_sink_events, &d);
                    // The bound metadata sends its properties; two round trips see them through.
                    res = round_trip(s, &deadline);
                    if (res == 0) res = round_trip(s, &deadline);
                    if (res == 0 && !d.found) res = -ENOENT;
                    spa_hook_remove(&metadata_listener);
                    pw_proxy_destroy((struct pw_proxy *)metadata);
                }
            }
            spa_hook_remove(&registry_listener);
            pw_proxy_destroy((struct pw_proxy *)registry);
        }
        pw_thread_loop_unlock(s->loop);
    }
    destroy(s);
    return res;
}

int hs_pw_sink_info(const char *remote, const char *target, uint32_t *channels, uint32_t *rate, char *name, size_t name_size,
                    char *error, size_t error_size, int timeout_ms) {
    if (!target || !channels || !rate || !name || name_size == 0 || !error || error_size == 0) return -EINVAL;
    name[0] = 0;
    error[0] = 0;
    struct timespec deadline;
    struct hs_pw_stream *s = probe_open(remote, target, timeout_ms, &deadline);
    if (!s) return -ENOMEM;
    int res = -EHOSTDOWN;
    if (s->locked) {
        if (s->core) {
            s->registry = pw_core_get_registry(s->core, PW_VERSION_REGISTRY, 0);
            if (s->registry) pw_registry_add_listener(s->registry, &s->registry_listener, &registry_events, s);
            s->sync_seq = pw_core_sync(s->core, PW_ID_CORE, 0);
            int waited = wait_for(s, &s->synced, &deadline);
            const struct sink_found *sink = found_sink(s);
            res = waited == -ETIMEDOUT ? -ETIMEDOUT : waited < 0 ? -EHOSTDOWN : !s->registry ? -ENOMEM : !sink ? -ENOENT : 0;
            if (res == 0) {
                *channels = sink_channels(sink);
                *rate = graph_rate(s);
                snprintf(name, name_size, "%s", sink->name);
            } else if (res == -ENOENT) {
                no_sink_error(error, error_size, target);
            }
        }
        pw_thread_loop_unlock(s->loop);
    }
    destroy(s);
    return res;
}

void hs_pw_close(hs_pw_stream *stream) {
    if (stream) destroy(stream);
}

int hs_pw_answers(const char *remote, int need_sink, const char *target, int timeout_ms) {
    struct timespec deadline;
    struct hs_pw_stream *s = probe_open(remote, target, timeout_ms, &deadline);
    if (!s) return 0;
    int answered = 0;
    if (s->locked) {
        if (s->core) {
            if (need_sink) {
                s->registry = pw_core_get_registry(s->core, PW_VERSION_REGISTRY, 0);
                pw_registry_add_listener(s->registry, &s->registry_listener, &registry_events, s);
            }
            s->sync_seq = pw_core_sync(s->core, PW_ID_CORE, 0);
            int waited = wait_for(s, &s->synced, &deadline);
            answered = waited == -ETIMEDOUT ? -1
                       : waited == 0 && (!need_sink || (target ? s->target_found : s->any_sink));
        }
        pw_thread_loop_unlock(s->loop);
    }
    destroy(s);
    return answered;
}
