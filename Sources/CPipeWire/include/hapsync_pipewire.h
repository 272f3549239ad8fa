// HapSync's small C interface to libpipewire-0.3: one playback stream on a thread loop of its own,
// its process callback in PipeWire's real-time data thread, and the stream's timing
// (pw_stream_get_time_n) handed to that callback. Written in C because PipeWire's SPA format
// builders are inline functions and macros; the engine's side (mixing, the clock) is Swift.
#ifndef HAPSYNC_PIPEWIRE_H
#define HAPSYNC_PIPEWIRE_H

#include <stddef.h>
#include <stdint.h>

/// One playback stream and the connection it lives on.
typedef struct hs_pw_stream hs_pw_stream;

/// The stream's timing for the cycle being filled, as `pw_stream_get_time_n` gives it.
typedef struct {
    /// CLOCK_MONOTONIC ns when the graph's cycle started (pw_time.now).
    int64_t now;
    /// The graph's clock: ticks and delay are in units of rate_num / rate_denom seconds.
    uint32_t rate_num, rate_denom;
    /// The graph clock's position at `now` (pw_time.ticks).
    uint64_t ticks;
    /// Graph ticks from the stream's next sample to the device (pw_time.delay).
    int64_t delay;
    /// Frames queued in the stream and not yet taken by the graph (pw_time.queued: the buffers'
    /// sizes, which this interface sets in frames).
    uint64_t queued;
    /// Frames held in the stream's resampler (pw_time.buffered).
    uint64_t buffered;
    /// Frames the graph asked for this cycle (pw_buffer.requested; 0 when it did not say).
    uint64_t requested;
    /// A monitor capture (`hs_pw_config.capture_sink`): the monitored sink's latency, graph
    /// ticks, as it reports it (its SPA_PARAM_Latency for its input, the quantum part at this
    /// cycle's quantum): what a playback stream into that sink is told as `delay`, so this
    /// cycle's frames are heard that much after `now`. 0 until the sink has said (and for a
    /// sink that plays at once: a null or pipe sink).
    int64_t sink_latency;
    /// A monitor capture whose sink drives the graph: the graph ticks of the cycle before, when
    /// the sink took these frames (a driver runs last in its cycle, after the nodes it drives:
    /// what they read of its monitor is what it took the cycle before); 0 when another node
    /// drives it (the sink ran earlier in this very cycle).
    int64_t sink_took_before;
    /// The graph's quantum this cycle, graph ticks (its driver's clock.duration; 0 when the
    /// stream has no position yet).
    uint64_t duration;
    /// Non-zero when the graph's driver keeps time by the system's clock, not a device's (its
    /// clock is named "clock.system.monotonic": a null sink, the Dummy-Driver), so it takes
    /// each cycle's frames at the cycle's start.
    int32_t timer_driver;
} hs_pw_time;

/// A playback stream: fills `frames` interleaved float frames at `data` (of `channels` each) for
/// the cycle `time` describes; returns the frames written (at most `frames`). A sink node
/// (`hs_pw_config.sink_name`): `data` holds the `frames` frames applications played into it this
/// cycle; a monitor capture (`hs_pw_config.capture_sink`): the frames its sink took this cycle
/// (read only; the return value is not used). Called on PipeWire's data thread.
typedef uint32_t (*hs_pw_process_fn)(void *user, float *data, uint32_t frames, const hs_pw_time *time);

/// Something happened on the connection: `kind` 1 the stream failed (message says why), 3 the
/// server went away (the connection broke), 2 the stream started streaming. Called on the
/// stream's thread loop.
typedef void (*hs_pw_event_fn)(void *user, int kind, const char *message);

/// Channel positions a stream may have (mapped to SPA's in the C side).
typedef enum {
    HS_PW_CHANNEL_MONO = 0,
    HS_PW_CHANNEL_FL,
    HS_PW_CHANNEL_FR,
    HS_PW_CHANNEL_RL,
    HS_PW_CHANNEL_RR,
} hs_pw_channel;

/// What to open.
typedef struct {
    /// The server (PIPEWIRE_REMOTE's form, "pipewire-0" or a path); NULL: the default.
    const char *remote;
    /// The sink to play to (or, `capture_sink`, to record), by node.name, or by its node id (or,
    /// when no sink has that id, its object.serial) as a number; NULL: the default sink. Not
    /// used for a sink node.
    const char *target;
    /// The stream's node.description ("HapSync playback").
    const char *description;
    /// Frames per second; 0: the server's default clock rate.
    uint32_t rate;
    /// Channels (1 to 8) and their positions (`hs_pw_channel`; NULL: FL, FR for 2, else MONO).
    uint32_t channels;
    const uint32_t *positions;
    /// node.latency to ask for, µs (0: the server's default); a sink node's and a grouped
    /// stream's is rounded up to a power of two frames (the graph's cycles are; it would round
    /// down).
    uint32_t latency_us;
    /// The data thread's name and the SCHED_FIFO priority it takes on its first cycle (NULL, 0:
    /// as PipeWire made it); `hs_pw_realtime_result` says what it got.
    const char *thread_name;
    int realtime_priority;
    /// Called once connected, before the stream starts, with the stream's rate (the calling
    /// thread, PipeWire's loop locked): the caller sets itself up for that rate.
    void (*prepare)(void *user, uint32_t rate);
    /// Called every 100 ms on the loop thread while the stream runs (NULL: not), where the caller
    /// may look at what its process callback counted and call `hs_pw_set_latency`.
    void (*tick)(void *user);
    /// Called for each buffer to fill (data thread) and for events (loop thread).
    hs_pw_process_fn process;
    hs_pw_event_fn event;
    void *user;
    /// Non-NULL: instead of playing, the stream is a sink applications play into (media.class
    /// Audio/Sink, node.name `sink_name`, node.description `description`), linked by the session
    /// manager as any sink is, whose process callback reads what they played. Opening fails when
    /// a node of that name is already there.
    const char *sink_name;
    /// node.group (NULL: none): streams of one group run in one driver's cycles, e.g. a sink node
    /// in the cycles of the sink its sound is played on to. A grouped stream's latency is rounded
    /// up to a power of two frames, as a sink node's.
    const char *group;
    /// More properties for the node: key, value, key, value, ..., NULL (NULL: none).
    const char *const *properties;
    /// Non-zero, with `target`: instead of playing, the stream records the monitor of the sink
    /// `target` (stream.capture.sink): each cycle, what that sink took (in that cycle, or the
    /// cycle before when the sink drives the graph: `hs_pw_time.sink_took_before`). `channels`
    /// 0 takes the sink's own channels and positions (`hs_pw_channels` says how many; 2 when it
    /// does not say). It does not follow another sink: the sink going away, while it opens or
    /// runs, fails it (event 1).
    int capture_sink;
} hs_pw_config;

/// The cycle a sink node or a grouped stream asking for `frames` runs: the least power of two at
/// or above it (at least 1, at most 2^20 frames).
uint32_t hs_pw_cycle_frames(uint32_t frames);

/// Connects, checks the target sink exists, and starts the stream; returns NULL with a sentence
/// in `error` when the server does not answer, the sink does not exist, or the stream does not
/// start within `timeout_ms`.
hs_pw_stream *hs_pw_open(const hs_pw_config *config, int timeout_ms, char *error, size_t error_size);

/// The stream's rate (frames per second).
uint32_t hs_pw_rate(const hs_pw_stream *stream);

/// The stream's channels (those of the monitored sink for a capture opened with 0 channels).
uint32_t hs_pw_channels(const hs_pw_stream *stream);

/// What a monitor capture of the sink named (or numbered) `target` on `remote` (NULL: the default
/// server) opened with 0 channels and rate would get: the sink's channels, as its node's
/// audio.channels (else audio.position) says (2 when neither does), and the server's
/// default.clock.rate (48000 when it does not say); and the sink's node.name into `name` (the
/// name to follow it by: a number may be another sink's after a restart). 0, or a negative
/// errno: -EHOSTDOWN no server, -ENOENT no such sink (a sentence saying so in `error`),
/// -ETIMEDOUT no answer within `timeout_ms`.
int hs_pw_sink_info(const char *remote, const char *target, uint32_t *channels, uint32_t *rate, char *name, size_t name_size,
                    char *error, size_t error_size, int timeout_ms);

/// The server's version string ("0.3.65").
const char *hs_pw_server_version(const hs_pw_stream *stream);

/// After the first cycle: 0 when the data thread got SCHED_FIFO at the priority asked for, an
/// errno when it was refused, -1 before the first cycle (or when none was asked for).
int hs_pw_realtime_result(const hs_pw_stream *stream);

/// After the first cycle: the data thread's id (gettid), for asking RealtimeKit on its behalf
/// when SCHED_FIFO was refused; 0 before.
int hs_pw_data_thread(const hs_pw_stream *stream);

/// Asks for a new node.latency (frames at the stream's rate; a sink node's or a grouped stream's
/// rounded up to a power of two); returns 0 or a negative errno. Any thread but the data thread (the loop's lock is
/// recursive: `tick` may call it).
int hs_pw_set_latency(hs_pw_stream *stream, uint32_t frames);

/// Starts (1) or pauses (0) the stream's cycles; returns 0 or a negative errno. Paused, its process
/// callback is not called and the graph does not wait for it (a driver no other node keeps busy
/// stops). Any thread but the data thread (`tick` may call it).
int hs_pw_set_active(hs_pw_stream *stream, int active);

/// The name of the server's default sink (the session manager's "default" metadata,
/// default.audio.sink) on `remote` (NULL: the default server), into `name`; 0, or a negative
/// errno: -EHOSTDOWN no server, -ENOTSUP no session manager's metadata, -ENOENT no default sink,
/// -ETIMEDOUT no answer within `timeout_ms`.
int hs_pw_default_sink(const char *remote, char *name, size_t size, int timeout_ms);

/// A sink node's streams, before it goes: each stream linked into it is asked to play to the sink
/// named `target` instead (the session manager's "default" metadata, target.node and
/// target.object, as `pactl move-sink-input` does through pipewire-pulse; NULL: none asked, the
/// session manager moves them to the default sink when the node goes). Returns the streams
/// linked (their application names in `names`, comma-separated), or a negative errno: -ENOENT no
/// sink named (or numbered) `target`, -ENOTSUP no session manager's metadata, -ETIMEDOUT the
/// server did not answer within 2 s, -EPIPE the server went away. Not from the stream's own
/// callbacks.
int hs_pw_hand_over(hs_pw_stream *stream, const char *target, char *names, size_t names_size);

/// A playback stream held to the sink named (or numbered) `target` through the session manager's
/// "default" metadata (target.node and target.object, as `pactl move-sink-input` does), so that
/// it no longer follows the default sink; NULL: the hold cleared, the stream follows the default
/// sink again. 0, or a negative errno: -EINVAL not a playback stream, -ENOENT no sink `target`,
/// -ENOTSUP no session manager's metadata, -ETIMEDOUT no answer within 2 s, -EPIPE the server
/// went away. Not from the stream's own callbacks.
int hs_pw_hold_to(hs_pw_stream *stream, const char *target);

/// Stops the stream, disconnects and frees it (not from its own callbacks).
void hs_pw_close(hs_pw_stream *stream);

/// Whether a PipeWire server answers on `remote` (NULL: the default) within `timeout_ms`; with
/// `need_sink`, also whether it has the sink named `target` (NULL: any audio sink) to play to.
/// 1: it does; 0: no server there (or no such sink); -1: a server took the connection and did not
/// answer in time (stopped).
int hs_pw_answers(const char *remote, int need_sink, const char *target, int timeout_ms);

#endif
