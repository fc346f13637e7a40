// SPDX-License-Identifier: GPL-2.0
/*
 * touchrace: a touch stored while the expiry work is looking must count
 * as the time it was stored, never earlier.
 *
 * The expiry work reads its clock once, then processes what is due; on a
 * busy tick the look at a bound id's slot comes well after that clock
 * read. A stamp stored in between is later than the work's clock but is
 * no stamp from the future: the id must be re-armed to stamp + timeout,
 * exactly as a REFRESH at that time would have done (uapi, "Touch
 * table"), and since a stamp counts once, nothing later repairs a
 * deadline set from the work's stale clock: the id would expire before
 * its last touch + timeout.
 *
 * Each round makes the window wide: one id bound to a slot, added first
 * (a slot's entries are processed last-in first-out), then FILL ids, all
 * due at one absolute deadline; a thread stores the present into the
 * slot once, at a random moment in the few milliseconds after the
 * deadline, logging the stamp and when the store was visible. If the
 * store was visible before the id's expiry was processed and the id was
 * re-armed, its event's deadline must be at or after stamp + timeout.
 *
 *   touchrace [SECONDS]	(SECONDS: $TWHEEL_STRESS_SECS, else 20)
 *
 * Prints TAP and "touchrace: rounds=N rearmed=N early=N"; exits 1 if any
 * re-armed id expired early.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "twheel_test.h"
#include "kselftest.h"

#define TICK_NS		NSEC_PER_MSEC
#define TIMEOUT_NS	(20 * NSEC_PER_MSEC)	/* the wheel's default: what a touch re-arms with */
#define FILL		3000			/* ids due with the bound one, processed before it */
#define TOUCH_SPREAD_NS	(4 * NSEC_PER_MSEC)	/* the touch comes this long after the deadline at most */
#define BOUND_ID	1

static struct twheel_touch table;
/* The toucher's orders (when to store; ~0 to end) and what it did. */
static atomic_ullong touch_at, stamp, visible;

static void *toucher(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t when = atomic_load(&touch_at), s;

		if (when == ~0ULL)
			return NULL;
		if (!when) {
			sleep_ns(100000);
			continue;
		}
		/* Spin, not sleep: the moment matters, and it is a few ms a round. */
		if (mono_ns() < when)
			continue;
		s = mono_ns();
		twheel_touch_at(&table, 0, s);
		atomic_thread_fence(memory_order_seq_cst);
		atomic_store(&visible, mono_ns());
		atomic_store(&stamp, s);
		atomic_store(&touch_at, 0);
	}
}

/* Read events until the bound id's has come and FILL + 1 in all; its deadline and expiry. */
static int drain_round(int fd, uint64_t *dl, uint64_t *expired)
{
	static struct twheel_event ev[FILL + 1];
	int got = 0, n, i;

	while (got < FILL + 1) {
		n = drain_until(fd, ev, FILL + 1 - got, mono_ns() + 10 * NSEC_PER_SEC);
		if (n <= 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (ev[i].id != BOUND_ID)
				continue;
			*dl = ev[i].deadline_ns;
			*expired = ev[i].expired_ns;
		}
		got += n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct twheel_setup_args sa = {
		.tick_ns = TICK_NS,
		.default_timeout_ns = TIMEOUT_NS,
		.clockid = CLOCK_MONOTONIC,
		.flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = 1,
	};
	static struct twheel_op ops[FILL + 1];
	uint64_t secs = arg_or_env(argc, argv, "TWHEEL_STRESS_SECS", 20), end, rs = 0x70c4;
	unsigned int rounds = 0, rearmed = 0, early = 0, i;
	pthread_t th;
	int fd, ret;

	ksft_print_header();
	ksft_set_plan(1);
	fd = twheel_open(0);
	ret = fd < 0 ? fd : twheel_setup_params(fd, &sa);
	if (!ret)
		ret = twheel_touch_map(fd, 1, CLOCK_MONOTONIC, &table);
	if (ret)
		ksft_exit_fail_msg("a wheel with a touch table: %s\n", strerror(-ret));
	if (pthread_create(&th, NULL, toucher, NULL))
		ksft_exit_fail_msg("toucher thread\n");
	ksft_print_msg("%d ids due at once, one bound and processed last, one touch 0-%llu ms after the deadline, for %llu s\n",
		       FILL + 1, (unsigned long long)(TOUCH_SPREAD_NS / NSEC_PER_MSEC),
		       (unsigned long long)secs);
	end = mono_ns() + secs * NSEC_PER_SEC;
	while (mono_ns() < end) {
		uint64_t due = mono_ns() + 30 * NSEC_PER_MSEC, dl = 0, expired = 0, s, c;

		/* The bound id first: slots are processed last-in first-out. */
		twheel_prep_add_at(&ops[0], BOUND_ID, due);
		twheel_prep_bind(&ops[0], 0);
		for (i = 1; i <= FILL; i++)
			twheel_prep_add_at(&ops[i], 1000 + i, due);
		if (twheel_batch(fd, ops, FILL + 1) != FILL + 1 || ops[0].result)
			ksft_exit_fail_msg("adding round %u: %s\n", rounds, strerror(-ops[0].result));
		due = ops[0].deadline_ns;
		atomic_store(&touch_at, due + rnd_below(&rs, TOUCH_SPREAD_NS));
		if (drain_round(fd, &dl, &expired))
			ksft_exit_fail_msg("round %u: events did not come\n", rounds);
		while (atomic_load(&touch_at))
			;
		s = atomic_load(&stamp);
		c = atomic_load(&visible);
		rounds++;
		/* Visible before the id's expiry was processed, and it counted. */
		if (c >= expired || dl == due)
			continue;
		rearmed++;
		if (dl < s + TIMEOUT_NS) {
			early++;
			ksft_print_msg("round %u: touched at %llu (visible by %llu), re-armed to %llu, expired at %llu: %llu ns before touch + timeout\n",
				       rounds, (unsigned long long)s, (unsigned long long)c,
				       (unsigned long long)dl, (unsigned long long)expired,
				       (unsigned long long)(s + TIMEOUT_NS - dl));
		}
	}
	atomic_store(&touch_at, ~0ULL);
	pthread_join(th, NULL);
	ksft_test_result(!early && rearmed,
			 "a touch racing the expiry work counts as its own time (%u of %u rounds re-armed by it)\n",
			 rearmed, rounds);
	printf("touchrace: rounds=%u rearmed=%u early=%u\n", rounds, rearmed, early);
	twheel_touch_unmap(&table);
	close(fd);
	ksft_finished();
}
