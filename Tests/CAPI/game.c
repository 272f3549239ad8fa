/* A C program on libhapsync, built with pkg-config from an installed prefix (.ci/c-api-check):
 * plays a pattern from memory and one from builder calls with a time-scheduled start, a live
 * parameter and a curve, into a trace; then checks that bad handles, NULLs, bad files and
 * out-of-range values come back as error codes with messages.
 * Usage: game TRACE.jsonl   (prints "start=SECONDS" for the checker, then "ok") */
#define _DEFAULT_SOURCE
#include <hapsync.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

#define EXPECT(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)
#define OK(call) do { hs_status s_ = (call); EXPECT(s_ == HS_OK, "%s -> %d: %s", #call, (int)s_, hs_last_error_message()); } while (0)
#define FAILS(call, status, text) do { hs_status s_ = (call); EXPECT(s_ == (status) && strstr(hs_last_error_message(), (text)), \
    "%s -> %d (want %d): \"%s\" (want \"%s\")", #call, (int)s_, (int)(status), hs_last_error_message(), (text)); } while (0)

static atomic_int finished = 0;

static void on_finished(hs_player *player, int stopped, void *user) {
    (void)player;
    *(int *)user = stopped;
    atomic_fetch_add(&finished, 1);
}

/* Threads: each sees its own last error; many threads drive one player at once. */
struct worker { hs_player *player; int index; int failures; };

static void *work(void *arg) {
    struct worker *w = arg;
    for (int i = 0; i < 200; i++) {
        /* An error of this thread's own, then its message, while the others make theirs. */
        char id[32];
        snprintf(id, sizeof id, "Bogus%d", w->index);
        if (hs_player_send_parameter(w->player, id, 1, 0) != HS_ERROR_INVALID_ARGUMENT || !strstr(hs_last_error_message(), id))
            w->failures++;
        if (hs_player_send_parameter(w->player, "HapticIntensityControl", (float)(i % 10) / 10, 0) != HS_OK) w->failures++;
    }
    return NULL;
}

static const char ahap[] =
    "{\"Version\":1,\"Pattern\":["
    "{\"Event\":{\"Time\":0,\"EventType\":\"HapticTransient\",\"EventParameters\":[{\"ParameterID\":\"HapticIntensity\",\"ParameterValue\":1}]}},"
    "{\"Event\":{\"Time\":0.05,\"EventType\":\"HapticContinuous\",\"EventDuration\":0.3,\"EventParameters\":["
    "{\"ParameterID\":\"HapticIntensity\",\"ParameterValue\":0.8},{\"ParameterID\":\"HapticSharpness\",\"ParameterValue\":0.4}]}}]}";

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: game TRACE.jsonl\n"); return 64; }
    EXPECT(hs_version() == HAPSYNC_VERSION, "library %u, header %u", hs_version(), (unsigned)HAPSYNC_VERSION);

    char haptics[4096];
    snprintf(haptics, sizeof haptics, "trace:%s", argv[1]);
    hs_engine_config config = { haptics, "none" };
    hs_engine *engine = NULL;
    OK(hs_engine_create(&config, &engine));
    OK(hs_engine_start(engine));

    hs_pattern *pattern = NULL;
    OK(hs_pattern_load_memory(ahap, strlen(ahap), &pattern));
    double duration = 0;
    OK(hs_pattern_duration(pattern, &duration));
    EXPECT(duration > 0.34 && duration < 0.4, "duration %f", duration);

    hs_player *player = NULL;
    OK(hs_player_create(engine, pattern, &player));
    hs_pattern_destroy(pattern);   /* players keep what they need */
    int stopped = -1;
    OK(hs_player_set_finished_callback(player, on_finished, &stopped));
    double start = hs_engine_current_time(engine) + 0.2;   /* a time-scheduled start */
    OK(hs_player_start(player, start));
    OK(hs_player_send_parameter(player, "HapticIntensityControl", 0.5f, start + 0.1));
    double times[] = { 0.0, 0.1 };
    float values[] = { 0.0f, 0.3f };
    OK(hs_player_schedule_curve(player, "HapticSharpnessControl", start + 0.2, times, values, 2));
    printf("start=%.9f\n", start);

    /* A pattern from builder calls, played right after. */
    hs_pattern_builder *builder = NULL;
    OK(hs_pattern_builder_create(&builder));
    OK(hs_pattern_builder_add_transient(builder, 0, 0.7f, 0.9f));
    OK(hs_pattern_builder_add_continuous(builder, 0.05, 0.1, 0.6f, 0.5f));
    hs_pattern *built = NULL;
    OK(hs_pattern_builder_build(builder, &built));
    hs_pattern_builder_destroy(builder);
    hs_player *second = NULL;
    OK(hs_player_create(engine, built, &second));
    OK(hs_player_start(second, start + 0.5));
    printf("second=%.9f\n", start + 0.5);

    for (int i = 0; i < 500 && atomic_load(&finished) < 1; i++) usleep(10000);
    EXPECT(atomic_load(&finished) == 1 && stopped == 0, "the finished callback: %d calls, stopped %d", atomic_load(&finished), stopped);
    usleep(300000);

    pthread_t threads[4];
    struct worker workers[4];
    for (int i = 0; i < 4; i++) {
        workers[i] = (struct worker){ player, i, 0 };
        pthread_create(&threads[i], NULL, work, &workers[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        EXPECT(workers[i].failures == 0, "thread %d: %d calls did not give their own result", i, workers[i].failures);
    }

    /* Bad input: codes and messages, never a crash. */
    FAILS(hs_engine_create(&config, NULL), HS_ERROR_NULL_ARGUMENT, "out is NULL");
    hs_engine_config bad = { "rumble:pad", "none" };
    hs_engine *unused = NULL;
    FAILS(hs_engine_create(&bad, &unused), HS_ERROR_INVALID_ARGUMENT, "haptics: 'rumble:pad'");
    hs_pattern *nope = NULL;
    FAILS(hs_pattern_load_file("/nonexistent/x.ahap", &nope), HS_ERROR_FILE, "/nonexistent/x.ahap");
    FAILS(hs_pattern_load_memory("{\"Version\":1,\"Pattern\":[{\"Event\":{\"Time\":-1}}]}", 44, &nope), HS_ERROR_INVALID_PATTERN, "Pattern[0]");
    FAILS(hs_pattern_load_memory(NULL, 3, &nope), HS_ERROR_NULL_ARGUMENT, "ahap_json is NULL");
    FAILS(hs_engine_create(&config, &unused), HS_ERROR_FILE, "already exists");   /* the trace of this run: never replaced */
    FAILS(hs_player_set_rate(player, 1000), HS_ERROR_INVALID_ARGUMENT, "rate 1000");
    FAILS(hs_player_set_loop(player, 1, 2e10), HS_ERROR_INVALID_ARGUMENT, "outside 0");
    FAILS(hs_player_set_loop(player, 1, 0.001), HS_ERROR_INVALID_ARGUMENT, "at least 10 ms");
    OK(hs_player_set_loop(player, 1, 0.5));
    FAILS(hs_player_set_rate(player, 80), HS_ERROR_INVALID_ARGUMENT, "at least 10 ms");   /* 0.5 s at 80: 6 ms a pass */
    OK(hs_player_set_loop(player, 0, 0));
    /* Every scheduled parameter is kept, up to 256 a control; the next is refused, naming the bound. */
    double later = hs_engine_current_time(engine) + 3600;
    for (int i = 0; i < 256; i++) OK(hs_player_send_parameter(player, "AudioVolumeControl", 0.5f, later + i * 0.05));
    FAILS(hs_player_send_parameter(player, "AudioVolumeControl", 0.5f, later + 256 * 0.05), HS_ERROR_LIMIT, "256");
    FAILS(hs_player_send_parameter(player, "Loudness", 1, 0), HS_ERROR_INVALID_ARGUMENT, "\"Loudness\"");
    FAILS(hs_player_send_parameter(player, "HapticIntensityControl", 7, 0), HS_ERROR_INVALID_ARGUMENT, "outside");
    FAILS(hs_player_schedule_curve(player, "HapticIntensityControl", 0, times, values, 0), HS_ERROR_INVALID_ARGUMENT, "count 0");
    FAILS(hs_player_start(player, -3), HS_ERROR_INVALID_ARGUMENT, "time -3");
    FAILS(hs_engine_play_feedback(engine, "applause", 1), HS_ERROR_INVALID_ARGUMENT, "\"applause\"");
    FAILS(hs_player_start((hs_player *)engine, 0), HS_ERROR_BAD_HANDLE, "not a live player");
    hs_player_destroy(second);
    FAILS(hs_player_start(second, 0), HS_ERROR_BAD_HANDLE, "not a live player");
    /* A builder takes the 100,000 entries a pattern may hold, each add as cheap as the first
       (they copied every entry before: about three minutes for these), and refuses the next. */
    hs_pattern_builder *many = NULL;
    OK(hs_pattern_builder_create(&many));
    hs_status added = HS_OK;
    for (int i = 0; i < 100000 && added == HS_OK; i++) added = hs_pattern_builder_add_transient(many, i * 0.001, 0.5f, 0.5f);
    EXPECT(added == HS_OK, "100000 adds: %d (%s)", (int)added, hs_last_error_message());
    FAILS(hs_pattern_builder_add_transient(many, 100.0, 0.5f, 0.5f), HS_ERROR_LIMIT, "100000 entries");
    hs_pattern *huge = NULL;
    OK(hs_pattern_builder_build(many, &huge));
    hs_pattern_destroy(huge);
    hs_pattern_builder_destroy(many);
    /* A destroyed handle stays dead when a new object takes its memory. */
    hs_pattern_builder *b1 = NULL, *b2 = NULL;
    OK(hs_pattern_builder_create(&b1));
    hs_pattern_builder_destroy(b1);
    OK(hs_pattern_builder_create(&b2));
    EXPECT(b1 != b2, "a handle was given out twice");
    FAILS(hs_pattern_builder_add_transient(b1, 0, 1, 1), HS_ERROR_BAD_HANDLE, "not a live builder");
    hs_pattern_builder_destroy(b1);   /* destroys nothing */
    OK(hs_pattern_builder_add_transient(b2, 0, 1, 1));
    hs_pattern_builder_destroy(b2);
    hs_player_destroy(second);   /* twice: ignored */
    hs_player_destroy(NULL);

    hs_statistics stats;
    OK(hs_engine_get_statistics(engine, &stats));
    EXPECT(stats.applied > 10, "applied %llu", (unsigned long long)stats.applied);
    OK(hs_engine_stop(engine));
    FAILS(hs_player_start(player, 0), HS_ERROR_NOT_RUNNING, "not running");
    hs_player_destroy(player);
    hs_pattern_destroy(built);
    hs_engine_destroy(engine);
    FAILS(hs_engine_start(engine), HS_ERROR_BAD_HANDLE, "not a live engine");
    if (failures) { fprintf(stderr, "%d failures\n", failures); return 1; }
    printf("ok\n");
    return 0;
}
