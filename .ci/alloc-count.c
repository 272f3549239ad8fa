// LD_PRELOAD shim for .ci/rt-alloc-check: counts malloc/calloc/realloc calls made on the thread
// whose name is $COUNT_THREAD (default hapsync-sched) and prints the counts at exit.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
static __thread int in_hook;
static unsigned long sched_mallocs, sched_callocs, sched_reallocs;
static int is_sched(void) {
    const char *want = getenv("COUNT_THREAD"); if (!want) want = "hapsync-sched";
    char name[16] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    return strcmp(name, want) == 0;
}
extern void *__libc_malloc(size_t); extern void *__libc_calloc(size_t, size_t); extern void *__libc_realloc(void *, size_t);
void *malloc(size_t n) { if (!in_hook) { in_hook = 1; if (is_sched()) __atomic_add_fetch(&sched_mallocs, 1, __ATOMIC_RELAXED); in_hook = 0; } return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { if (!in_hook) { in_hook = 1; if (is_sched()) __atomic_add_fetch(&sched_callocs, 1, __ATOMIC_RELAXED); in_hook = 0; } return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (!in_hook) { in_hook = 1; if (is_sched()) __atomic_add_fetch(&sched_reallocs, 1, __ATOMIC_RELAXED); in_hook = 0; } return __libc_realloc(p, n); }
__attribute__((destructor)) static void report(void) { fprintf(stderr, "allocations on the watched thread: malloc %lu, calloc %lu, realloc %lu\n", sched_mallocs, sched_callocs, sched_reallocs); }
