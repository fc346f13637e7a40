// SPDX-License-Identifier: GPL-2.0
/*
 * Scale: a million ids in one wheel, added, refreshed and expired in
 * batches; every one expires exactly once, in deadline order, never
 * early. Also ENOSPC at a large cap, and a million cancels.
 */
#include "twheel_util.h"
#include "kselftest_harness.h"

#define NR_MILLION	(1U << 20)
/*
 * A debug kernel under emulation gets a 32nd of it, to end in time: an
 * ADD there takes ~0.4 ms (its allocation, under KASAN and kmemleak),
 * against ~10 us for a REFRESH.
 */
#define NR_IDS		(debug_kernel() ? NR_MILLION / 32 : NR_MILLION)
#define CHUNK		(1U << 15)
#define TICK_NS		(10 * NSEC_PER_MSEC)
/*
 * A million expiries within one second is CPU-bound work: in an emulated
 * VM the last may be processed seconds after its deadline. Precise
 * lateness is read_test's business; here only an upper bound that
 * catches a stuck wheel.
 */
#define SCALE_SLACK_NS	(20 * NSEC_PER_SEC)

FIXTURE(big) {
	unsigned long long user_max;
	int fd;
	struct twheel_op *ops;
	struct twheel_event *ev;
	uint64_t *deadline;
	unsigned char *seen;
};

FIXTURE_SETUP(big)
{
	self->ops = calloc(CHUNK, sizeof(*self->ops));
	self->ev = calloc(CHUNK, sizeof(*self->ev));
	self->deadline = calloc(NR_MILLION, sizeof(*self->deadline));
	self->seen = calloc(NR_MILLION, 1);
	ASSERT_TRUE(self->ops && self->ev && self->deadline && self->seen);
	/* The default per-user limit of a small VM is below a million. */
	self->user_max = module_param("max_user_entries", 0);
	ASSERT_EQ(0, module_param_set("max_user_entries", 4ULL * NR_MILLION));
	self->fd = wheel_new(O_CLOEXEC, TICK_NS, 60 * NSEC_PER_SEC, 0);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(big)
{
	close(self->fd);
	if (self->user_max)
		module_param_set("max_user_entries", self->user_max);
}

/* Scatter the ids over the u64 space; the test maps them back by index. */
static uint64_t id_of(unsigned int i)
{
	return (uint64_t)i << 44 | (i * 2654435761U & 0xfffffU);
}

static unsigned int index_of(uint64_t id)
{
	return id >> 44;
}

/* Apply @code to every id in CHUNK-sized batches; count failures. */
static unsigned int apply_all(struct __test_metadata *_metadata,
			      FIXTURE_DATA(big) *self, uint32_t code,
			      uint64_t (*timeout)(unsigned int i, uint64_t now))
{
	unsigned int i, j, bad = 0;

	for (i = 0; i < NR_IDS; i += CHUNK) {
		uint64_t now = mono_ns();

		for (j = 0; j < CHUNK; j++) {
			uint64_t t = timeout ? timeout(i + j, now) :
					       DEV_TIMEOUT_DEFAULT;

			dev_prep_op(&self->ops[j], code, id_of(i + j),
				    code == TWHEEL_OP_CANCEL ?
				    DEV_TIMEOUT_DEFAULT : t, 0);
		}
		EXPECT_EQ(CHUNK, dev_batch(self->fd, self->ops, CHUNK));
		for (j = 0; j < CHUNK; j++) {
			bad += self->ops[j].result != 0;
			self->deadline[i + j] = self->ops[j].deadline_ns;
		}
	}
	return bad;
}

/*
 * Refresh deadlines: a hundred distinct ticks, many ids each, all after
 * refresh_base, which is set far enough out for the whole refresh pass
 * to end first (it takes as long as the add pass).
 */
static uint64_t refresh_base;

static uint64_t spread_timeout(unsigned int i, uint64_t now)
{
	uint64_t d;

	d = refresh_base + (uint64_t)(i % 100) * TICK_NS + i % 7;
	return d > now ? d - now : 0;
}

TEST_F_TIMEOUT(big, million_ids_added_refreshed_expired_once, 240)
{
	uint64_t t0, t_add, t_refresh, last = 0, max_late = 0;
	unsigned int i, got = 0, dup = 0, unknown = 0, early = 0, wrong = 0,
		     order = 0;
	int ret;

	t0 = mono_ns();
	EXPECT_EQ(0, apply_all(_metadata, self, TWHEEL_OP_ADD, NULL));
	t_add = mono_ns();
	EXPECT_EQ(NR_IDS, fdinfo_get(self->fd, "live"));
	refresh_base = t_add + (t_add - t0) * 3 / 2 + NSEC_PER_SEC / 2;
	EXPECT_EQ(0, apply_all(_metadata, self, TWHEEL_OP_REFRESH,
			       spread_timeout));
	t_refresh = mono_ns();
	EXPECT_EQ(NR_IDS, fdinfo_get(self->fd, "live") +
		  fdinfo_get(self->fd, "expired_total"));
	ksft_print_msg("add %llu ms, refresh %llu ms for %u ids\n",
		       (unsigned long long)(t_add - t0) / NSEC_PER_MSEC,
		       (unsigned long long)(t_refresh - t_add) / NSEC_PER_MSEC,
		       NR_IDS);

	while (got < NR_IDS) {
		/*
		 * Wait for the last deadline, then allow 30 s without progress:
		 * on a sanitizer kernel reading a million events takes longer
		 * than any fixed bound.
		 */
		uint64_t until = refresh_base + NSEC_PER_SEC + SCALE_SLACK_NS;

		if (until < mono_ns())
			until = mono_ns();
		ret = drain_until(self->fd, self->ev, CHUNK, until + 30 * NSEC_PER_SEC);
		ASSERT_LT(0, ret) TH_LOG("%u of %u events, then %d; fdinfo: live %lld "
					 "events_waiting %lld expired_total %lld ticks_run %lld",
					 got, NR_IDS, ret, fdinfo_get(self->fd, "live"),
					 fdinfo_get(self->fd, "events_waiting"),
					 fdinfo_get(self->fd, "expired_total"),
					 fdinfo_get(self->fd, "ticks_run"));
		for (i = 0; i < (unsigned int)ret; i++) {
			const struct twheel_event *e = &self->ev[i];
			unsigned int k = index_of(e->id);

			if (k >= NR_IDS || id_of(k) != e->id) {
				unknown++;
				continue;
			}
			dup += self->seen[k]++ != 0;
			wrong += e->deadline_ns != self->deadline[k];
			early += e->expired_ns < e->deadline_ns;
			order += e->deadline_ns < last;
			last = e->deadline_ns;
			if (e->expired_ns - e->deadline_ns > max_late)
				max_late = e->expired_ns - e->deadline_ns;
		}
		got += ret;
	}
	ksft_print_msg("all read %llu ms after the first deadline; latest %llu ms late\n",
		       (unsigned long long)(mono_ns() - refresh_base) / NSEC_PER_MSEC,
		       (unsigned long long)max_late / NSEC_PER_MSEC);
	EXPECT_EQ(NR_IDS, got);
	EXPECT_EQ(0, unknown);
	EXPECT_EQ(0, dup);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, early);
	EXPECT_EQ(0, order);
	EXPECT_GE(TICK_NS + SCALE_SLACK_NS, max_late);
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
	EXPECT_EQ(NR_IDS, fdinfo_get(self->fd, "expired_total"));
}

TEST_F_TIMEOUT(big, million_cancels_leave_nothing, 120)
{
	EXPECT_EQ(0, apply_all(_metadata, self, TWHEEL_OP_ADD, NULL));
	EXPECT_EQ(0, apply_all(_metadata, self, TWHEEL_OP_CANCEL, NULL));
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(0, drain_until(self->fd, self->ev, 1, mono_ns() +
				 100 * NSEC_PER_MSEC));
	EXPECT_EQ(0, fdinfo_get(self->fd, "expired_total"));
}

TEST(enospc_at_a_large_cap)
{
	const unsigned int cap = debug_kernel() ? 10000 : 100000;
	struct twheel_op *ops = calloc(cap + 1, sizeof(*ops));
	unsigned int i, bad = 0;
	int fd;

	ASSERT_NE(NULL, ops);
	fd = wheel_new(O_CLOEXEC, TICK_NS, 60 * NSEC_PER_SEC, cap);
	ASSERT_LE(0, fd);
	for (i = 0; i <= cap; i++)
		dev_prep_add(&ops[i], i, DEV_TIMEOUT_DEFAULT);
	ASSERT_EQ(cap + 1, dev_batch(fd, ops, cap + 1));
	for (i = 0; i < cap; i++)
		bad += ops[i].result != 0;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(-ENOSPC, ops[cap].result);
	EXPECT_EQ(cap, fdinfo_get(fd, "live"));
	close(fd);
	free(ops);
}

TEST_HARNESS_MAIN
