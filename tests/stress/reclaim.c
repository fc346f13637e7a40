// SPDX-License-Identifier: GPL-2.0
/*
 * reclaim: a sharer of a wheel whose memory cgroup is at its limit must
 * not hold up the wheel for its other users.
 *
 * The parent, in the root cgroup, keeps ids with short timeouts in a
 * wheel and measures how long its ADDs take (each takes the wheel's lock)
 * and how late each of its events is (expired_ns - deadline_ns: the
 * expiry work takes the same lock before it reads the clock), first alone
 * for a baseline, then while a child it shares the wheel with, in a group
 * with a small memory.max, hammers ADD batches at the wheel: once the
 * group is full each of the child's adds goes through memory-cgroup
 * reclaim and fails with ENOMEM. The child times its batches of 16 ADDs
 * (one chunk of the kernel's, once one lock hold); if the wheel's lock
 * were held across those allocations, the parent's ADDs and expiries
 * would wait for them, typically half a batch each. So the parent's
 * median ADD and median lateness must stay far below (a quarter of) the
 * child's median batch, and no event may be early or lost.
 *
 *   reclaim [SECONDS]	(each phase; default $TWHEEL_RECLAIM_SECS, else 3)
 *
 * Prints TAP and "reclaim: batch_p50_ms=B add_p50_ms=A late_p50_ms=L
 * late_p99_ms=M base_add_p50_ms=A0 base_late_p50_ms=L0 events=N"; SKIP
 * (exit 4) without the memory controller.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define TICK_NS		NSEC_PER_MSEC
#define HOUR_NS		(3600 * NSEC_PER_SEC)
#define TIMEOUT_NS	(10 * NSEC_PER_MSEC)
#define ADD_EVERY_NS	(5 * NSEC_PER_MSEC)
#define GROUP_MAX	(8 << 20)
#define CHUNK		16
#define FILL_BATCH	4096
#define MAX_SAMPLES	65536
#define VICTIM_BASE	(1ULL << 62)

static char group[128];

/* What the child shares with the parent: set up before the fork. */
struct shared {
	volatile int stop;
	volatile int full;		/* the group is at its limit */
	long long added, enomem, enospc, other;
	unsigned int nr_batches;
	uint64_t batch_ns[MAX_SAMPLES];
};

struct stats {
	unsigned int n_add, n_late;
	uint64_t add_ns[MAX_SAMPLES], late_ns[MAX_SAMPLES];
	unsigned int early, lost, added;
};

static struct shared *sh;
static struct stats base, load;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The @pct-th percentile of @v[0..n) (sorted in place), 0 if empty. */
static uint64_t pctl(uint64_t *v, unsigned int n, unsigned int pct)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(uint64_t)(n - 1) * pct / 100];
}

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

/*
 * For @secs: an ADD 5 ms after the last one of an id due 10 ms later,
 * timed; every event read and its lateness kept; then the stragglers
 * drained.
 */
static void victim(int fd, uint64_t secs, uint64_t first_id, struct stats *st)
{
	uint64_t now = mono_ns(), end = now + secs * NSEC_PER_SEC, next = now, id = first_id;
	struct twheel_event ev[64];
	unsigned int got = 0;
	int i, n;

	memset(st, 0, sizeof(*st));
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int wait_ms;

		now = mono_ns();
		if (now >= next && now < end) {
			uint64_t t0 = mono_ns();

			if (twheel_add(fd, id++, TIMEOUT_NS) == 0)
				st->added++;
			now = mono_ns();
			if (st->n_add < MAX_SAMPLES)
				st->add_ns[st->n_add++] = now - t0;
			/* No catching up: a burst after a wait would not wait. */
			next = now + ADD_EVERY_NS;
			continue;
		}
		/* Room for a VM stopped for seconds: every event comes, late. */
		if (now >= end && (got == st->added || now >= end + 30 * NSEC_PER_SEC))
			break;
		wait_ms = now < next ? (int)((next - now) / NSEC_PER_MSEC) + 1 : 100;
		if (poll(&pfd, 1, wait_ms) <= 0)
			continue;
		n = twheel_read_events(fd, ev, 64);
		for (i = 0; i < n; i++) {
			if (ev[i].id < first_id || ev[i].id >= id)
				continue;	/* not one of this phase's */
			got++;
			if (ev[i].expired_ns < ev[i].deadline_ns)
				st->early++;
			else if (st->n_late < MAX_SAMPLES)
				st->late_ns[st->n_late++] = ev[i].expired_ns - ev[i].deadline_ns;
		}
	}
	st->lost = st->added - got;
}

/* Fault in the stack the child will use, before it joins the group. */
static __attribute__((noinline)) void touch_stack(void)
{
	volatile char buf[64 * 1024];

	memset((char *)buf, 0, sizeof(buf));
}

/*
 * The child: join the group, fill it with entries of the shared wheel,
 * then time batches of CHUNK ADDs until told to stop. Once the group is
 * full any page it touches anew could call the group's OOM killer, so
 * everything it writes was touched before it joined.
 */
static void hammer(int fd)
{
	static struct twheel_op ops[FILL_BATCH];
	uint64_t id = 1, t0;
	char path[256], me[32];
	long n;
	int i;

	memset(ops, 0, sizeof(ops));
	touch_stack();
	twheel_batch(fd, ops, 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", group);
	snprintf(me, sizeof(me), "%d", getpid());
	if (write_file(path, me))
		_exit(10);
	while (!sh->full && !sh->stop) {
		for (i = 0; i < FILL_BATCH; i++)
			op_init(&ops[i], TWHEEL_OP_ADD, id++, TWHEEL_OPF_TIMEOUT, HOUR_NS);
		n = twheel_batch(fd, ops, FILL_BATCH);
		for (i = 0; i < n; i++) {
			if (!ops[i].result)
				sh->added++;
			else if (ops[i].result == -ENOMEM)
				sh->full = 1;
			else if (ops[i].result == -ENOSPC)
				sh->enospc++;
			else
				sh->other++;
		}
		if (n < 0 || sh->enospc || sh->other)
			_exit(11);
	}
	while (!sh->stop) {
		bool all_failed = true;

		for (i = 0; i < CHUNK; i++)
			op_init(&ops[i], TWHEEL_OP_ADD, id++, TWHEEL_OPF_TIMEOUT, HOUR_NS);
		t0 = mono_ns();
		n = twheel_batch(fd, ops, CHUNK);
		t0 = mono_ns() - t0;
		for (i = 0; i < n; i++) {
			if (!ops[i].result) {
				sh->added++;
				all_failed = false;
			} else if (ops[i].result == -ENOMEM) {
				sh->enomem++;
			} else {
				sh->other++;
				all_failed = false;
			}
		}
		if (n == CHUNK && all_failed && sh->nr_batches < MAX_SAMPLES)
			sh->batch_ns[sh->nr_batches++] = t0;
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	uint64_t secs = arg_or_env(argc, argv, "TWHEEL_RECLAIM_SECS", 3);
	uint64_t batch_p50, add_p50, late_p50, late_p99, base_add_p50, base_late_p50, until;
	char path[256], val[32];
	int fd, status, told;
	pid_t pid;

	ksft_print_header();
	if (!memcg_ready())
		ksft_exit_skip("no cgroup v2 memory controller\n");
	snprintf(group, sizeof(group), CG_ROOT "/twheel-reclaim-%d", getpid());
	if (mkdir(group, 0755))
		ksft_exit_skip("cannot create a cgroup\n");
	ksft_set_plan(4);
	snprintf(path, sizeof(path), "%s/memory.max", group);
	snprintf(val, sizeof(val), "%d", GROUP_MAX);
	write_file(path, val);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(sh, 0, sizeof(*sh));

	fd = wheel_new(O_CLOEXEC, TICK_NS, HOUR_NS, 0);
	if (fd < 0)
		ksft_exit_fail_msg("wheel: %s\n", strerror(-fd));

	victim(fd, secs, VICTIM_BASE, &base);
	base_add_p50 = pctl(base.add_ns, base.n_add, 50);
	base_late_p50 = pctl(base.late_ns, base.n_late, 50);
	ksft_print_msg("alone: %u adds, p50 %.3f ms; %u events, lateness p50 %.3f ms p99 %.3f ms\n",
		       base.added, ms(base_add_p50), base.n_late, ms(base_late_p50),
		       ms(pctl(base.late_ns, base.n_late, 99)));

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0)
		hammer(fd);
	until = mono_ns() + 120 * NSEC_PER_SEC;
	while (!sh->full && mono_ns() < until && waitpid(pid, &status, WNOHANG) == 0)
		sleep_ns(10 * NSEC_PER_MSEC);
	told = sh->full;
	ksft_print_msg("the sharer's group is %s after %lld adds\n",
		       told ? "at its limit" : "NOT at its limit", sh->added);
	if (told)
		victim(fd, secs, VICTIM_BASE + (1ULL << 40), &load);
	sh->stop = 1;
	waitpid(pid, &status, 0);

	batch_p50 = pctl(sh->batch_ns, sh->nr_batches, 50);
	add_p50 = pctl(load.add_ns, load.n_add, 50);
	late_p50 = pctl(load.late_ns, load.n_late, 50);
	late_p99 = pctl(load.late_ns, load.n_late, 99);
	ksft_print_msg("sharer: %u batches of %d failing adds (ENOMEM %lld), p50 %.3f ms, max %.3f ms; exit status %#x\n",
		       sh->nr_batches, CHUNK, sh->enomem, ms(batch_p50),
		       ms(pctl(sh->batch_ns, sh->nr_batches, 100)), status);
	ksft_print_msg("beside it: %u adds, p50 %.3f ms p99 %.3f ms; %u events, lateness p50 %.3f ms p99 %.3f ms\n",
		       load.added, ms(add_p50), ms(pctl(load.add_ns, load.n_add, 99)), load.n_late,
		       ms(late_p50), ms(late_p99));

	ksft_test_result(told && WIFEXITED(status) && !WEXITSTATUS(status) &&
			 sh->nr_batches > 0 && !sh->other,
			 "the sharer's adds fail with ENOMEM at its group's limit, no OOM kill\n");
	ksft_test_result(!base.early && !load.early && !base.lost && !load.lost &&
			 base.added && load.added,
			 "no event early or lost beside it (early %u, lost %u)\n",
			 base.early + load.early, base.lost + load.lost);
	ksft_test_result(told && add_p50 < batch_p50 / 4,
			 "the other user's adds do not wait for the sharer's reclaim (p50 %.3f ms against a batch's %.3f ms)\n",
			 ms(add_p50), ms(batch_p50));
	ksft_test_result(told && late_p50 < base_late_p50 + batch_p50 / 4 + TICK_NS,
			 "the wheel's expiries do not wait for it (lateness p50 %.3f ms, alone %.3f ms)\n",
			 ms(late_p50), ms(base_late_p50));
	close(fd);
	if (rmdir(group))
		ksft_print_msg("rmdir %s: %s\n", group, strerror(errno));
	printf("reclaim: batch_p50_ms=%.3f add_p50_ms=%.3f late_p50_ms=%.3f late_p99_ms=%.3f base_add_p50_ms=%.3f base_late_p50_ms=%.3f events=%u\n",
	       ms(batch_p50), ms(add_p50), ms(late_p50), ms(late_p99), ms(base_add_p50),
	       ms(base_late_p50), base.n_late + load.n_late);
	ksft_finished();
}
