// C shims for the few system calls Swift cannot reach directly. Each says why it exists.
#ifndef CHAPSYNC_SYSTEM_H
#define CHAPSYNC_SYSTEM_H

#include <semaphore.h>
#include <time.h>

/// prctl(PR_SET_TIMERSLACK, ns) for the calling thread. prctl is variadic, which Swift cannot
/// call. Returns 0 or -1 with errno set.
int hapsync_set_timer_slack(unsigned long nanoseconds);

/// sem_clockwait(sem, CLOCK_MONOTONIC, deadline): wait on a semaphore until an absolute
/// CLOCK_MONOTONIC time. glibc declares it only under _GNU_SOURCE, which Swift's Glibc module
/// does not define. Returns 0, or -1 with errno (ETIMEDOUT, EINTR).
int hapsync_sem_wait_until(sem_t *sem, long long deadline_ns);

/// prctl(PR_SET_NAME, name): names the calling thread (15 bytes at most). Variadic prctl again;
/// pthread_setname_np needs _GNU_SOURCE. Returns 0 or -1 with errno set.
int hapsync_set_thread_name(const char *name);

/// gettid(): the calling thread's id (what RealtimeKit and sched_setaffinity take). glibc's
/// declaration needs _GNU_SOURCE.
int hapsync_gettid(void);

/// sched_setaffinity(tid, {cpu}): runs thread `tid` (0: the calling thread) on one CPU only. The
/// cpu_set_t macros need _GNU_SOURCE. Used by benchmarks that must put two threads on one core.
/// Returns 0 or -1 with errno set.
int hapsync_pin_to_cpu(int tid, int cpu);

/// Writes `bytes` of the calling thread's stack below the current frame (an alloca'd buffer), so
/// that with mlockall(MCL_ONFAULT) those pages are faulted in and locked now, at thread start,
/// not later on a real-time path. Swift has no way to place a buffer on the stack for sure.
void hapsync_prefault_stack(unsigned long bytes);

/// Size of sem_t, so Swift can allocate one (it is an opaque union there).
unsigned long hapsync_sem_size(void);

#endif
