/*
 * hapsync.h: HapSync's C API (libhapsync). Core Haptics' AHAP patterns on Linux: haptics to a
 * rumble pad (evdev) or a trace, audio through PulseAudio or PipeWire, on one clock.
 *
 * Build:  cc game.c $(pkg-config --cflags --libs hapsync)      (after `hapsync install --prefix DIR`
 *         and PKG_CONFIG_PATH=DIR/lib/pkgconfig; the program then runs with no LD_LIBRARY_PATH)
 *
 * CONVENTIONS
 * - Every call that can fail returns an hs_status; HS_OK is 0. On failure,
 *   hs_last_error_message() gives a sentence naming what was wrong (the argument, the value,
 *   the file and JSON path of an AHAP error). The message is per thread and stays valid until
 *   the next failing call on that thread.
 * - Handles (hs_engine, hs_pattern, hs_player, hs_pattern_builder) are opaque. A handle that was
 *   destroyed, or never made by this library, is refused with HS_ERROR_BAD_HANDLE, never
 *   dereferenced; NULL where a handle or pointer is required is HS_ERROR_NULL_ARGUMENT.
 * - Times are seconds on the engine's clock (CLOCK_MONOTONIC; hs_engine_current_time).
 *   HS_TIME_IMMEDIATE (0), or any time already past, means now.
 *
 * MEMORY
 * - Whoever creates a handle destroys it, once: hs_*_destroy. Destroying NULL does nothing;
 *   destroying a handle twice is refused (ignored), not a crash.
 * - A pattern may be destroyed while players made from it play (they keep what they need).
 *   A player stops when destroyed. Destroy players before their engine; an engine destroyed
 *   first stops them, and their handles then only refuse calls (HS_ERROR_NOT_RUNNING).
 * - Strings returned (hs_last_error_message, hs_pattern_diagnostics, hs_version_string) belong
 *   to the library; copy them to keep them. Strings passed in are copied when needed.
 *
 * THREADS
 * - Every call may be made from any thread; calls on one handle are serialized inside.
 * - No call waits on the engine's real-time threads: starts, stops, parameters are messages to
 *   them. hs_engine_start and hs_engine_stop block the caller (opening and closing the outputs;
 *   stop returns once everything has stopped and a trace is written).
 * - Callbacks (stopped, reset, player finished) are called on the engine's notifier thread,
 *   never on a real-time thread; they may call back into the library (except destroying the
 *   engine they belong to).
 *
 * ABI
 * - Within a major version (HAPSYNC_VERSION_MAJOR) existing functions, their arguments, the
 *   values of hs_status and the layout of the structs below do not change; a minor version may
 *   add functions and hs_status values (treat unknown ones as errors). A struct that must grow
 *   gets a new name and a new function taking it; the old ones stay. Compare hs_version() with
 *   HAPSYNC_VERSION at run time to catch a library older than the header.
 */
#ifndef HAPSYNC_H
#define HAPSYNC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HAPSYNC_VERSION_MAJOR 0
#define HAPSYNC_VERSION_MINOR 1
#define HAPSYNC_VERSION_PATCH 0
/** The header's version: major << 16 | minor << 8 | patch. */
#define HAPSYNC_VERSION ((HAPSYNC_VERSION_MAJOR << 16) | (HAPSYNC_VERSION_MINOR << 8) | HAPSYNC_VERSION_PATCH)

/** Start or act now. */
#define HS_TIME_IMMEDIATE 0.0

typedef struct hs_engine hs_engine;
typedef struct hs_pattern hs_pattern;
typedef struct hs_player hs_player;
typedef struct hs_pattern_builder hs_pattern_builder;

/** What a call did. */
typedef enum {
    HS_OK = 0,
    HS_ERROR_NULL_ARGUMENT = 1,    /* a required pointer was NULL */
    HS_ERROR_BAD_HANDLE = 2,       /* not a live handle of this library, or of the wrong kind */
    HS_ERROR_INVALID_ARGUMENT = 3, /* a value out of range, an unknown name or output */
    HS_ERROR_FILE = 4,             /* a file could not be read, or would be overwritten */
    HS_ERROR_INVALID_PATTERN = 5,  /* the AHAP has errors (the message lists the first) */
    HS_ERROR_ENGINE = 6,           /* an output could not be opened, or failed */
    HS_ERROR_NOT_RUNNING = 7,      /* the engine is stopped (or gone) */
    HS_ERROR_LIMIT = 8             /* a limit reached: no player slot left, a parameter's 256 breakpoints, a builder's 100,000 entries */
} hs_status;

/** Where an engine plays. */
typedef struct {
    /** As the CLI spells them: "trace:/tmp/t.jsonl", "evdev:auto", "evdev:/dev/input/event5",
        "waveform:SINK[:rear|mono|left|right|all]" (voice-coil actuators fed as audio, mixed into
        the audio's stream when it plays to the same sink), "none". NULL: HAPSYNC_HAPTICS from the
        environment, else the first rumble pad, else none. HAPSYNC_TRACE=PATH writes a trace
        beside it; HAPSYNC_SINK, PULSE_SERVER and PIPEWIRE_REMOTE choose the audio's sink and server. A trace
        never replaces an existing file: hs_engine_create is HS_ERROR_FILE naming it (remove
        it first, or name a new file). */
    const char *haptics;
    /** "auto" (PipeWire natively when a PipeWire server answers, else PulseAudio's protocol),
        "pipewire", "pulse" or "none". NULL: HAPSYNC_AUDIO from the environment, else "auto". */
    const char *audio;
} hs_engine_config;

/** Why an engine stopped on its own (Core Haptics' reasons and raw values). */
typedef enum {
    HS_STOPPED_AUDIO_SERVER_LOST = 1,
    HS_STOPPED_IDLE_TIMEOUT = 3,
    HS_STOPPED_FINISHED = 4,
    HS_STOPPED_ENGINE_DESTROYED = 5,
    HS_STOPPED_DEVICE_DISCONNECTED = 6,
    HS_STOPPED_SYSTEM_ERROR = -1
} hs_stopped_reason;

/** Called on the notifier thread when the engine stopped on its own. */
typedef void (*hs_stopped_callback)(hs_stopped_reason reason, void *user);
/** Called on the notifier thread after the engine reset (its audio server came back). */
typedef void (*hs_reset_callback)(void *user);
/** Called on the notifier thread when a player's run ends: stopped is 0 at its end, 1 if stopped. */
typedef void (*hs_player_finished_callback)(hs_player *player, int stopped, void *user);

/** Counts and timing of what was applied, from hs_engine_get_statistics. */
typedef struct {
    uint64_t applied;            /* commands handed to the haptic output */
    uint64_t output_overflows;   /* commands the output ring had no room for */
    double dispatch_p50_us;      /* released − scheduled, median, microseconds */
    double dispatch_p99_us;
    double dispatch_max_us;
} hs_statistics;

/* ---- Version ---- */

/** The library's version, as HAPSYNC_VERSION. */
uint32_t hs_version(void);
/** The library's version as text ("0.1.0"). */
const char *hs_version_string(void);
/** Why the last failing call on this thread failed ("" if none has). */
const char *hs_last_error_message(void);

/* ---- Engine ---- */

hs_status hs_engine_create(const hs_engine_config *config, hs_engine **out);
hs_status hs_engine_start(hs_engine *engine);
/** Returns once stopped and traces are written; a trace that could not be written is HS_ERROR_ENGINE.
    Called from one of the engine's own callbacks it cannot wait for itself: it returns HS_OK at
    once and the stop finishes on a helper thread. */
hs_status hs_engine_stop(hs_engine *engine);
void      hs_engine_destroy(hs_engine *engine);
/** Seconds on the engine clock; 0 for a bad handle. */
double    hs_engine_current_time(const hs_engine *engine);
hs_status hs_engine_set_stopped_callback(hs_engine *engine, hs_stopped_callback callback, void *user);
hs_status hs_engine_set_reset_callback(hs_engine *engine, hs_reset_callback callback, void *user);
/** Mutes (1) or unmutes (0) everything the engine plays on one side. */
hs_status hs_engine_set_haptics_muted(hs_engine *engine, int muted);
hs_status hs_engine_set_audio_muted(hs_engine *engine, int muted);
/** The accessibility policy: haptics on (1) or off (0), intensity scale 0...1, starts from one
    source closer than rate_limit_ms merged (0: none). */
hs_status hs_engine_set_policy(hs_engine *engine, int haptics_enabled, double intensity_scale, double rate_limit_ms);
/** Plays a built-in feedback style now ("success", "warning", "error", "selection",
    "impact-heavy", ...), intensity 0...1. */
hs_status hs_engine_play_feedback(hs_engine *engine, const char *style, float intensity);
hs_status hs_engine_get_statistics(const hs_engine *engine, hs_statistics *out);

/* ---- Patterns ---- */

/** Reads an AHAP file; its audio files are looked up beside it. */
hs_status hs_pattern_load_file(const char *path, hs_pattern **out);
/** Reads AHAP JSON from memory (length bytes; no NUL needed). Audio events are not played. */
hs_status hs_pattern_load_memory(const char *ahap_json, size_t length, hs_pattern **out);
void      hs_pattern_destroy(hs_pattern *pattern);
/** The pattern's length in seconds. */
hs_status hs_pattern_duration(const hs_pattern *pattern, double *out);
/** The reader's warnings, one per line ("" if none); owned by the pattern. */
const char *hs_pattern_diagnostics(const hs_pattern *pattern);

/** A pattern built in code; checked by the reader's rules when built. Each add costs the same
    however many came before; past the 100,000 entries a pattern may hold an add is HS_ERROR_LIMIT. */
hs_status hs_pattern_builder_create(hs_pattern_builder **out);
hs_status hs_pattern_builder_add_transient(hs_pattern_builder *builder, double time, float intensity, float sharpness);
hs_status hs_pattern_builder_add_continuous(hs_pattern_builder *builder, double time, double duration, float intensity, float sharpness);
/** A dynamic parameter ("HapticIntensityControl", ...) taking VALUE at TIME. */
hs_status hs_pattern_builder_add_parameter(hs_pattern_builder *builder, const char *parameter_id, float value, double time);
/** A parameter curve of COUNT points (times relative to TIME). */
hs_status hs_pattern_builder_add_curve(hs_pattern_builder *builder, const char *parameter_id, double time,
                                       const double *point_times, const float *point_values, size_t count);
hs_status hs_pattern_builder_build(const hs_pattern_builder *builder, hs_pattern **out);
void      hs_pattern_builder_destroy(hs_pattern_builder *builder);

/* ---- Players ---- */

hs_status hs_player_create(hs_engine *engine, const hs_pattern *pattern, hs_player **out);
hs_status hs_player_start(hs_player *player, double time);
hs_status hs_player_stop(hs_player *player, double time);
hs_status hs_player_pause(hs_player *player, double time);
hs_status hs_player_resume(hs_player *player, double time);
/** Moves to OFFSET seconds of the pattern: at once if playing, else where resume begins. */
hs_status hs_player_seek(hs_player *player, double offset);
/** Loops (1) or not (0), wrapping at END seconds (0: the pattern's end; at most 86400, one
    day). HS_ERROR_INVALID_ARGUMENT, changing nothing, for an END outside 0...86400 or a loop
    whose pass at the player's rate lasts under 10 ms (END / rate < 0.01 s). */
hs_status hs_player_set_loop(hs_player *player, int enabled, double end);
/** Pattern seconds per second, 0.01...100. HS_ERROR_INVALID_ARGUMENT, changing nothing, for a
    rate outside that range or one at which the loop set would pass in under 10 ms. */
hs_status hs_player_set_rate(hs_player *player, double rate);
/** Sends a dynamic parameter ("HapticIntensityControl", "HapticSharpnessControl",
    "AudioVolumeControl", "AudioPanControl", "AudioPitchControl", "AudioBrightnessControl")
    taking effect at TIME. Every send is kept until it has applied: up to 256 breakpoints per
    parameter of a player, those to come and the one in force; a send beyond them is
    HS_ERROR_LIMIT naming the bound, with nothing changed (send again once some have passed). */
hs_status hs_player_send_parameter(hs_player *player, const char *parameter_id, float value, double time);
/** A parameter curve of COUNT (1 to 16) points, times relative to TIME (each 0...86400 s); its
    points count against the 256 breakpoints of hs_player_send_parameter. */
hs_status hs_player_schedule_curve(hs_player *player, const char *parameter_id, double time,
                                   const double *point_times, const float *point_values, size_t count);
hs_status hs_player_set_finished_callback(hs_player *player, hs_player_finished_callback callback, void *user);
void      hs_player_destroy(hs_player *player);

#ifdef __cplusplus
}
#endif

#endif /* HAPSYNC_H */
