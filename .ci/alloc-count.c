// LD_PRELOAD shim for .ci/rt-alloc-check: counts heap allocations (malloc, calloc, realloc,
// posix_memalign, aligned_alloc, memalign) in three kinds of places and prints the counts at exit.
//   COUNT_THREADS=a,b,...  every allocation on a thread named a, b, ... (at most 8 names)
//   COUNT_WRITES=name      on the thread named `name`, only the allocations between a successful
//                          pa_stream_begin_write and the next pa_stream_write or
//                          pa_stream_cancel_write, or pw_stream_dequeue_buffer and
//                          pw_stream_queue_buffer: the window in which HapSync's audio output
//                          takes the scheduler's messages and mixes. libpulse's own allocations on
//                          that thread (operations, tagstructs, memblocks) fall outside it. The
//                          windows are counted too, so a run that saw none can be told apart.
//   COUNT_READS=name       on the thread named `name`, only the allocations between a
//                          pa_stream_peek that returned bytes (data, or a hole the capture hands
//                          on as silence) and the next pa_stream_drop: the window
//                          in which `hapsync live`'s capture hands a fragment to its handler (the
//                          onset detector, the pass-through); on PipeWire natively, between
//                          pw_stream_dequeue_buffer and pw_stream_queue_buffer on that thread (the
//                          live sink's data thread, named as the capture's). Its windows are
//                          counted too.
// Output on stderr, one line per place:
//   alloc-count: thread NAME: TOTAL (malloc M, calloc C, realloc R, aligned A)
//   alloc-count: writes on NAME: TOTAL (malloc M, calloc C, realloc R, aligned A) in W windows
//   alloc-count: reads on NAME: TOTAL (malloc M, calloc C, realloc R, aligned A) in W windows
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

enum { MALLOC, CALLOC, REALLOC, ALIGNED, KINDS, MAX_THREADS = 8 };
struct counts { unsigned long n[KINDS]; };

static char thread_names[MAX_THREADS][16];
static int thread_count;
static struct counts thread_counts[MAX_THREADS];
static char writes_name[16];
static struct counts window_counts;
static unsigned long windows;
static char reads_name[16];
static struct counts read_counts;
static unsigned long read_windows;
static __thread int in_hook, in_window, in_read;

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static void add(struct counts *c, int kind) { __atomic_add_fetch(&c->n[kind], 1, __ATOMIC_RELAXED); }

static void count(int kind) {
    if (in_hook) return;
    in_hook = 1;
    if (in_window) add(&window_counts, kind);
    if (in_read) add(&read_counts, kind);
    if (thread_count > 0) {
        char name[16] = {0};
        prctl(PR_GET_NAME, name, 0, 0, 0);
        for (int i = 0; i < thread_count; i++)
            if (strcmp(name, thread_names[i]) == 0) add(&thread_counts[i], kind);
    }
    in_hook = 0;
}

void *malloc(size_t n) { count(MALLOC); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { count(CALLOC); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { count(REALLOC); return __libc_realloc(p, n); }
void *memalign(size_t alignment, size_t n) { count(ALIGNED); return __libc_memalign(alignment, n); }
void *aligned_alloc(size_t alignment, size_t n) { count(ALIGNED); return __libc_memalign(alignment, n); }
int posix_memalign(void **out, size_t alignment, size_t n) {
    count(ALIGNED);
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

// libpulse's write calls, forwarded to the real ones (resolved once, outside any window).
typedef int (*begin_write_fn)(void *, void **, size_t *);
typedef int (*write_fn)(void *, const void *, size_t, void (*)(void *), int64_t, int);
typedef int (*cancel_write_fn)(void *);
static begin_write_fn real_begin_write;
static write_fn real_write;
static cancel_write_fn real_cancel_write;

static void *real(const char *symbol) {
    void *f = dlsym(RTLD_NEXT, symbol);
    if (!f) { fprintf(stderr, "alloc-count: %s not found\n", symbol); abort(); }
    return f;
}

int pa_stream_begin_write(void *s, void **data, size_t *nbytes) {
    if (!real_begin_write) real_begin_write = (begin_write_fn)real("pa_stream_begin_write");
    int result = real_begin_write(s, data, nbytes);
    if (result >= 0 && writes_name[0]) {
        char name[16] = {0};
        prctl(PR_GET_NAME, name, 0, 0, 0);
        in_window = strcmp(name, writes_name) == 0;
    }
    return result;
}

int pa_stream_write(void *s, const void *data, size_t nbytes, void (*free_cb)(void *), int64_t offset, int seek) {
    if (in_window) { in_window = 0; __atomic_add_fetch(&windows, 1, __ATOMIC_RELAXED); }
    if (!real_write) real_write = (write_fn)real("pa_stream_write");
    return real_write(s, data, nbytes, free_cb, offset, seek);
}

int pa_stream_cancel_write(void *s) {
    in_window = 0;
    if (!real_cancel_write) real_cancel_write = (cancel_write_fn)real("pa_stream_cancel_write");
    return real_cancel_write(s);
}

// libpulse's read calls: a peek that returned bytes (data or a hole) opens the capture's window,
// the drop closes it.
typedef int (*peek_fn)(void *, const void **, size_t *);
typedef int (*drop_fn)(void *);
static peek_fn real_peek;
static drop_fn real_drop;

int pa_stream_peek(void *s, const void **data, size_t *nbytes) {
    if (!real_peek) real_peek = (peek_fn)real("pa_stream_peek");
    int result = real_peek(s, data, nbytes);
    if (result >= 0 && nbytes && *nbytes > 0 && reads_name[0]) {
        char name[16] = {0};
        prctl(PR_GET_NAME, name, 0, 0, 0);
        in_read = strcmp(name, reads_name) == 0;
    }
    return result;
}

int pa_stream_drop(void *s) {
    if (in_read) { in_read = 0; __atomic_add_fetch(&read_windows, 1, __ATOMIC_RELAXED); }
    if (!real_drop) real_drop = (drop_fn)real("pa_stream_drop");
    return real_drop(s);
}

// libpipewire's buffer calls: HapSync's PipeWire process callback dequeues a buffer, renders
// into it and queues it; that is its window (the data thread runs PipeWire's own work outside it).
typedef void *(*dequeue_fn)(void *);
typedef int (*queue_fn)(void *, void *);
static dequeue_fn real_dequeue;
static queue_fn real_queue;

void *pw_stream_dequeue_buffer(void *stream) {
    if (!real_dequeue) real_dequeue = (dequeue_fn)real("pw_stream_dequeue_buffer");
    void *buffer = real_dequeue(stream);
    if (buffer && (writes_name[0] || reads_name[0])) {
        char name[16] = {0};
        prctl(PR_GET_NAME, name, 0, 0, 0);
        in_window = writes_name[0] && strcmp(name, writes_name) == 0;
        // The native live sink's data thread (named as the capture's): its buffer read.
        in_read = reads_name[0] && strcmp(name, reads_name) == 0;
    }
    return buffer;
}

int pw_stream_queue_buffer(void *stream, void *buffer) {
    if (in_window) { in_window = 0; __atomic_add_fetch(&windows, 1, __ATOMIC_RELAXED); }
    if (in_read) { in_read = 0; __atomic_add_fetch(&read_windows, 1, __ATOMIC_RELAXED); }
    if (!real_queue) real_queue = (queue_fn)real("pw_stream_queue_buffer");
    return real_queue(stream, buffer);
}

__attribute__((constructor)) static void configure(void) {
    const char *list = getenv("COUNT_THREADS");
    for (const char *p = list; p && *p && thread_count < MAX_THREADS;) {
        size_t n = strcspn(p, ",");
        snprintf(thread_names[thread_count++], sizeof thread_names[0], "%.*s", (int)n, p);
        p += n + (p[n] == ',');
    }
    const char *writes = getenv("COUNT_WRITES");
    if (writes) snprintf(writes_name, sizeof writes_name, "%s", writes);
    const char *reads = getenv("COUNT_READS");
    if (reads) snprintf(reads_name, sizeof reads_name, "%s", reads);
}

static void print(const char *what, const char *name, const struct counts *c) {
    unsigned long total = c->n[MALLOC] + c->n[CALLOC] + c->n[REALLOC] + c->n[ALIGNED];
    fprintf(stderr, "alloc-count: %s %s: %lu (malloc %lu, calloc %lu, realloc %lu, aligned %lu)", what, name, total,
            c->n[MALLOC], c->n[CALLOC], c->n[REALLOC], c->n[ALIGNED]);
}

__attribute__((destructor)) static void report(void) {
    for (int i = 0; i < thread_count; i++) {
        print("thread", thread_names[i], &thread_counts[i]);
        fputc('\n', stderr);
    }
    if (writes_name[0]) {
        print("writes on", writes_name, &window_counts);
        fprintf(stderr, " in %lu windows\n", windows);
    }
    if (reads_name[0]) {
        print("reads on", reads_name, &read_counts);
        fprintf(stderr, " in %lu windows\n", read_windows);
    }
}
