// SPDX-License-Identifier: GPL-2.0
/*
 * readd: after a mass expiry, the same ids can be added again (issue 16).
 *
 * N ids go into one wheel with one absolute deadline and expire unread;
 * then they are read (the first read(2) asks for the index shrink that
 * its emptiness calls for) and the same N ids are added again, in
 * batches. The index once shrank from 2^21 buckets to 64 in one step and
 * let no growth start until the old table was moved, 64 buckets an
 * operation: 4M ids re-added met 31,744 ENOMEM in a row, with memory to
 * spare. Every re-add must now succeed: ENOMEM and ENOSPC are counted,
 * and must be 0 (the caps are raised for the run, and N is kept within
 * what the guest's memory holds).
 *
 *   readd [N]			(default 512k, 64k on a debug kernel: their
 *				 index of 2^18 buckets took the old shrink
 *				 thousands of operations to move; or
 *				 TWHEEL_READD_IDS: 4M and 16M by hand, 16M in
 *				 a 4 GiB guest)
 *
 * Run as root (it raises max_user_entries and max_entries_total for the
 * run and restores them). Prints TAP and "readd: ids=N enomem=A enospc=B
 * other=C add_s=X readd_s=Y".
 */
#include <signal.h>

#include "kselftest.h"
#include "twheel_test.h"

#define BATCH		65536
#define HOUR_NS		(3600 * NSEC_PER_SEC)

static void on_signal(int sig)
{
	entry_limits_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}


/* Ids spread over the whole u64 range, all distinct. */
static uint64_t id_of(uint64_t i)
{
	return i * 0x9e3779b97f4a7c15ULL;
}

/* What the re-adds answered. */
struct tally {
	uint64_t enomem, enospc, other;
};

/*
 * Op @code on ids [@from, @to) in batches, with @flags and @t; the
 * results into @tally if given, else each must succeed. 0, or -1 if a
 * batch did not go through.
 */
static int apply(int fd, struct twheel_op *ops, uint64_t from, uint64_t to, uint32_t code,
		 uint32_t flags, uint64_t t, struct tally *tally)
{
	uint64_t i;

	for (; from < to; from += BATCH) {
		uint32_t k = to - from < BATCH ? to - from : BATCH;
		int r;

		for (i = 0; i < k; i++)
			op_init(&ops[i], code, id_of(from + i), flags, t);
		r = twheel_batch(fd, ops, k);
		if (r != (int)k) {
			ksft_print_msg("batch of %u ops %u at %llu: %d\n", k, code,
				       (unsigned long long)from, r);
			return -1;
		}
		for (i = 0; i < k; i++) {
			int res = ops[i].result;

			if (!res)
				continue;
			if (!tally) {
				ksft_print_msg("op %u on id %llu: %s\n", code,
					       (unsigned long long)(from + i), strerror(-res));
				return -1;
			}
			if (res == -ENOMEM)
				tally->enomem++;
			else if (res == -ENOSPC)
				tally->enospc++;
			else
				tally->other++;
			if (tally->enomem + tally->enospc + tally->other <= 3)
				ksft_print_msg("re-add of id %llu: %s\n",
					       (unsigned long long)(from + i), strerror(-res));
		}
	}
	return 0;
}

/* Read every waiting event, @n in all; the number read. */
static uint64_t read_all(int fd, struct twheel_event *ev, uint64_t n)
{
	uint64_t got = 0;

	while (got < n) {
		int r = twheel_read_events(fd, ev, BATCH);

		if (r <= 0) {
			ksft_print_msg("read after %llu events: %s\n", (unsigned long long)got,
				       r ? strerror(-r) : "none");
			break;
		}
		got += r;
	}
	return got;
}

static long long meminfo(const char *key)
{
	char buf[4096], *s;

	if (read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	s = strstr(buf, key);
	return s ? strtoll(s + strlen(key) + 1, NULL, 10) * 1024 : -1;
}

int main(int argc, char **argv)
{
	uint64_t n = arg_or_env(argc, argv, "TWHEEL_READD_IDS",
				debug_kernel() ? 1 << 16 : 1 << 19);
	struct twheel_op *ops = calloc(BATCH, sizeof(*ops));
	struct twheel_event *ev = calloc(BATCH, sizeof(*ev));
	uint64_t t0, add_ns, readd_ns, deadline, got;
	struct tally tally = { 0 };
	long long avail = meminfo("MemAvailable:");
	int fd;

	ksft_print_header();
	if (!ops || !ev)
		ksft_exit_skip("no memory for the batches\n");
	/* About 50 bytes of kernel memory an id: use at most half of what is free. */
	if (avail > 0 && n * 50 > (uint64_t)avail / 2)
		ksft_exit_skip("%llu ids need about %llu MiB; %lld MiB available\n",
			       (unsigned long long)n, (unsigned long long)(n * 50 >> 20),
			       avail >> 20);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	atexit(entry_limits_restore);
	if (entry_limits_raise(n + BATCH))
		ksft_exit_skip("cannot raise the module's entry limits\n");
	ksft_set_plan(2);

	fd = wheel_new(O_CLOEXEC | O_NONBLOCK, 10 * NSEC_PER_MSEC, HOUR_NS, 0);
	if (fd < 0)
		ksft_exit_fail_msg("open: %s\n", strerror(-fd));
	/*
	 * All live at once, then due together: the adds with an hour to go,
	 * then refreshes to one deadline, half the adds' time away and 1 s
	 * more (a refresh costs less than an add). Ids refreshed after it
	 * still expire at the next tick, which is as much a mass expiry.
	 */
	t0 = mono_ns();
	if (apply(fd, ops, 0, n, TWHEEL_OP_ADD, TWHEEL_OPF_TIMEOUT, HOUR_NS, NULL))
		ksft_exit_fail_msg("the adds failed\n");
	deadline = mono_ns() + (mono_ns() - t0) / 2 + NSEC_PER_SEC;
	if (apply(fd, ops, 0, n, TWHEEL_OP_REFRESH, TWHEEL_OPF_ABSTIME, deadline, NULL))
		ksft_exit_fail_msg("the refreshes failed\n");
	add_ns = mono_ns() - t0;
	ksft_print_msg("%llu ids added and refreshed in %.1f s, all due %.1f s after the start\n",
		       (unsigned long long)n, add_ns / 1e9, (deadline - t0) / 1e9);
	/* Expired by whoever looks at the wheel: a poll that does not wait. */
	for (;;) {
		dev_look(fd);
		if (fdinfo_get(fd, "events_waiting") >= (long long)n ||
		    mono_ns() >= deadline + 600 * NSEC_PER_SEC)
			break;
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	got = read_all(fd, ev, n);
	ksft_test_result(got == n, "%llu ids expired unread, then read (%llu)\n",
			 (unsigned long long)n, (unsigned long long)got);

	t0 = mono_ns();
	if (apply(fd, ops, 0, n, TWHEEL_OP_ADD, 0, 0, &tally))
		ksft_exit_fail_msg("a batch of re-adds did not go through\n");
	readd_ns = mono_ns() - t0;
	ksft_print_msg("live after the re-add: %lld\n", fdinfo_get(fd, "live"));
	printf("readd: ids=%llu enomem=%llu enospc=%llu other=%llu add_s=%.1f readd_s=%.1f\n",
	       (unsigned long long)n, (unsigned long long)tally.enomem,
	       (unsigned long long)tally.enospc, (unsigned long long)tally.other, add_ns / 1e9,
	       readd_ns / 1e9);
	ksft_test_result(!tally.enomem && !tally.enospc && !tally.other &&
			 fdinfo_get(fd, "live") == (long long)n,
			 "the same %llu ids added again after the mass expiry: none refused\n",
			 (unsigned long long)n);
	close(fd);
	entry_limits_restore();
	ksft_finished();
}
