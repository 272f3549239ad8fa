#define _GNU_SOURCE
#include "CHapSyncSystem.h"
#include <alloca.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int hapsync_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

int hapsync_sem_wait_until(sem_t *sem, long long deadline_ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_ns / 1000000000LL);
    ts.tv_nsec = (long)(deadline_ns % 1000000000LL);
    return sem_clockwait(sem, CLOCK_MONOTONIC, &ts);
}

int hapsync_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}

unsigned long hapsync_sem_size(void) { return sizeof(sem_t); }

int hapsync_gettid(void) { return (int)gettid(); }

int hapsync_pin_to_cpu(int tid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity((pid_t)tid, sizeof set, &set);
}

void hapsync_prefault_stack(unsigned long bytes) {
    volatile unsigned char *buffer = alloca(bytes);
    // One write a page is enough to fault it in; volatile keeps the writes.
    for (unsigned long i = 0; i < bytes; i += 4096) buffer[i] = 0;
}
