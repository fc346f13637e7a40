// SPDX-License-Identifier: GPL-2.0
/*
 * lateness: how late expiry events come, with and without CPU hogs.
 *
 * A few thousand ids with timeouts spread at random over 3 s (not on
 * the tick grid) are added in one batch to a wheel with a 1 ms or a
 * 10 ms tick and read back by this thread as they expire, while 0 or 2
 * threads spin on the guest's CPUs. For each event, lateness is
 * expired_ns - deadline_ns: how long after the deadline the kernel's
 * expiry work processed it (the hrtimer wakes this thread, blocked in
 * read(2), and its read does the expiry, competing with the hogs as any
 * thread does). Reported as p50/p99/max; asserted only that
 * nothing is early (deadline >= the time of the add + timeout, expiry
 * stamp >= deadline, read(2) returning after the deadline) and nothing
 * is lost or delivered twice. The time read(2) returned after the
 * deadline, which adds this thread's own wakeup, is printed too.
 *
 * For reference, a plain user thread at the same nice level sleeps with
 * clock_nanosleep(TIMER_ABSTIME) to each of the same deadlines, at the
 * same time: the lateness a user-space timer would have under the same
 * load and the same host (a loaded host stops the whole guest now and
 * then, which makes both late alike).
 *
 *   lateness [IDS]		(default 3000)
 *
 * Prints TAP and one "lateness: tick_ms=T load=L p50_ms=X p99_ms=Y
 * max_ms=Z" line per tick and load.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>

#include "twheel_test.h"
#include "kselftest.h"

#define SPREAD_NS	(3 * NSEC_PER_SEC)
#define FIRST_NS	(200 * NSEC_PER_MSEC)
#define HOGS		2

static atomic_int hogs_run;

static void *hog(void *arg)
{
	volatile uint64_t spin = 0;

	(void)arg;
	while (atomic_load_explicit(&hogs_run, memory_order_relaxed))
		spin++;
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The reference sleeper: @n sorted deadlines in, its lateness for each out. */
struct sleeper {
	uint64_t *deadline;
	uint64_t *late;
	uint64_t n;
};

static void *sleeper(void *arg)
{
	struct sleeper *s = arg;
	uint64_t i;

	prctl(PR_SET_TIMERSLACK, 1UL);
	for (i = 0; i < s->n; i++) {
		struct timespec ts = { s->deadline[i] / 1000000000ULL, s->deadline[i] % 1000000000ULL };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		s->late[i] = mono_ns() - s->deadline[i];
	}
	return NULL;
}

static double pct_ms(const uint64_t *v, uint64_t n, unsigned int pct)
{
	uint64_t i = (n * pct + 99) / 100;

	return v[i ? i - 1 : 0] / 1e6;
}

static void run(uint64_t n, uint64_t tick, int load, uint64_t seed)
{
	struct twheel_op *ops = calloc(n, sizeof(*ops));
	struct twheel_event *ev = calloc(n, sizeof(*ev));
	uint64_t *late = calloc(n, sizeof(*late)), *user = calloc(n, sizeof(*user));
	unsigned char *seen = calloc(n, 1);
	uint64_t got = 0, dup = 0, early = 0, bad = 0, start, i, give_up;
	struct sleeper ref = { calloc(n, sizeof(uint64_t)), calloc(n, sizeof(uint64_t)), 0 };
	unsigned long long tms = tick / NSEC_PER_MSEC;
	pthread_t th[HOGS], ref_th;
	int fd, h;
	long r;

	fd = wheel_new(O_CLOEXEC, tick, 3600 * NSEC_PER_SEC, 0);
	if (!ops || !ev || !late || !user || !seen || !ref.deadline || !ref.late || fd < 0)
		ksft_exit_fail_msg("tick %llu ms load %d: set up: %s\n", tms, load,
				   fd < 0 ? strerror(-fd) : "no memory");
	atomic_store(&hogs_run, 1);
	for (h = 0; h < load; h++)
		pthread_create(&th[h], NULL, hog, NULL);
	/* Let the hogs settle on the CPUs before the first deadline is set. */
	sleep_ns(200 * NSEC_PER_MSEC);

	for (i = 0; i < n; i++)
		op_init(&ops[i], TWHEEL_OP_ADD, i, TWHEEL_OPF_TIMEOUT,
			FIRST_NS + rnd_below(&seed, SPREAD_NS));
	start = mono_ns();
	r = twheel_batch(fd, ops, n);
	for (i = 0; r == (long)n && i < n; i++) {
		if (ops[i].result)
			r = ops[i].result;
		else if (ops[i].deadline_ns < start + ops[i].timeout_ns)
			early++;
	}
	/* The reference sleeps to each distinct deadline, in order. */
	for (i = 0; r == (long)n && i < n; i++)
		ref.deadline[i] = ops[i].deadline_ns;
	qsort(ref.deadline, r == (long)n ? n : 0, sizeof(uint64_t), cmp_u64);
	for (i = 0; r == (long)n && i < n; i++)
		if (!ref.n || ref.deadline[i] != ref.deadline[ref.n - 1])
			ref.deadline[ref.n++] = ref.deadline[i];
	pthread_create(&ref_th, NULL, sleeper, &ref);

	give_up = mono_ns() + FIRST_NS + SPREAD_NS + 30 * NSEC_PER_SEC;
	while (r == (long)n && got + dup < n && mono_ns() < give_up) {
		int b = twheel_read_events(fd, ev, n);
		uint64_t t = mono_ns();

		if (b <= 0)
			break;
		for (i = 0; i < (uint64_t)b; i++) {
			struct twheel_event *e = &ev[i];

			if (e->id >= n) {
				bad++;
				continue;
			}
			if (seen[e->id]++) {
				dup++;
				continue;
			}
			if (e->expired_ns < e->deadline_ns || t < e->deadline_ns ||
			    e->deadline_ns != ops[e->id].deadline_ns)
				early++;
			late[got] = e->expired_ns - e->deadline_ns;
			user[got] = t - e->deadline_ns;
			got++;
		}
	}
	pthread_join(ref_th, NULL);
	atomic_store(&hogs_run, 0);
	for (h = 0; h < load; h++)
		pthread_join(th[h], NULL);

	ksft_test_result(r == (long)n, "tick %llu ms load %d: %llu ids added\n", tms, load,
			 (unsigned long long)n);
	ksft_test_result(!early, "tick %llu ms load %d: nothing early (%llu early)\n", tms, load,
			 (unsigned long long)early);
	ksft_test_result(got == n && !dup && !bad,
			 "tick %llu ms load %d: each event once (%llu of %llu, %llu twice, %llu unknown)\n",
			 tms, load, (unsigned long long)got, (unsigned long long)n,
			 (unsigned long long)dup, (unsigned long long)bad);
	if (got) {
		qsort(late, got, sizeof(*late), cmp_u64);
		qsort(user, got, sizeof(*user), cmp_u64);
		printf("lateness: tick_ms=%llu load=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
		       tms, load, pct_ms(late, got, 50),
		       pct_ms(late, got, 99), late[got - 1] / 1e6);
		ksft_print_msg("read(2) returned after the deadline: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
			       pct_ms(user, got, 50), pct_ms(user, got, 99), user[got - 1] / 1e6);
		if (ref.n) {
			qsort(ref.late, ref.n, sizeof(uint64_t), cmp_u64);
			ksft_print_msg("reference, clock_nanosleep to the same %llu deadlines: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
				       (unsigned long long)ref.n, pct_ms(ref.late, ref.n, 50),
				       pct_ms(ref.late, ref.n, 99), ref.late[ref.n - 1] / 1e6);
		}
		ksft_print_msg("fdinfo: ticks_run %lld, ticks_caught_up %lld, lateness_max_ns %lld\n",
			       fdinfo_get(fd, "ticks_run"), fdinfo_get(fd, "ticks_caught_up"),
			       fdinfo_get(fd, "lateness_max_ns"));
	}
	close(fd);
	free(ops);
	free(ev);
	free(late);
	free(user);
	free(seen);
	free(ref.deadline);
	free(ref.late);
}

int main(int argc, char **argv)
{
	uint64_t n = arg_or_env(argc, argv, "TWHEEL_LATENESS_IDS", 3000);
	static const uint64_t ticks[] = { 1 * NSEC_PER_MSEC, 10 * NSEC_PER_MSEC };
	int load, t;

	ksft_print_header();
	ksft_set_plan(12);
	ksft_print_msg("%llu ids over %llu s per run; %ld CPUs online\n", (unsigned long long)n,
		       (unsigned long long)(SPREAD_NS / 1000 / NSEC_PER_MSEC), sysconf(_SC_NPROCESSORS_ONLN));
	for (load = 0; load <= HOGS; load += HOGS)
		for (t = 0; t < 2; t++)
			run(n, ticks[t], load, 0x1a7e + 16 * load + t);
	ksft_finished();
}
