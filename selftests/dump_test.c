// SPDX-License-Identifier: GPL-2.0
/*
 * TWHEEL_IOC_DUMP through dev_dump(): an empty wheel ends in one call;
 * a million live ids (an eighth on a debug kernel) come out exactly once
 * each, with their deadlines and slots, in calls of at most count ids,
 * whatever the count; expired ids waiting to be read are not listed; the
 * order is fixed for the wheel's life; under concurrent adds, cancels,
 * refreshes, expiries and index resizes every id live throughout is
 * listed exactly once and nothing else appears; a signal ends a huge call
 * early without losing the place; a dump begun before the index took a
 * new key (ids chosen from the dump's order made a chain of it long)
 * fails with ESTALE and one begun again lists every id once. Errors: bad
 * cursor, count 0 or above INT_MAX, flags (EINVAL), a cursor of another
 * count of new keys (ESTALE), bad pointers (EFAULT), a buffer cut by an
 * unmapped page (the whole entries before the fault counted, the cursor
 * past them only, so a retry loses and repeats nothing), EBADFD before
 * setup.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/time.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(10 * NSEC_PER_MSEC)
#define HOUR_NS		(3600 * NSEC_PER_SEC)
#define NR_MILLION	(1U << 20)
/* A debug kernel under emulation gets a 32nd, to end in time (scale_test). */
#define NR_BIG		(debug_kernel() ? NR_MILLION / 32 : NR_MILLION)
#define CHUNK		(1U << 15)
#define ENT		sizeof(struct twheel_dump_entry)
/* The page size: 4 KiB, or 16 or 64 KiB on some arm64 kernels. */
#define PAGE		((size_t)sysconf(_SC_PAGESIZE))

/* Ids scattered over the u64 space; the index is in the top 20 bits. */
static uint64_t id_of(unsigned int i)
{
	return (uint64_t)i << 44 | (i * 2654435761U & 0xfffffU);
}

static unsigned int index_of(uint64_t id)
{
	return id >> 44;
}

FIXTURE(wheel) {
	int fd;
	unsigned long long user_max;
	unsigned int nr;		/* ids added by add_ids() */
	uint64_t *deadline;		/* by index */
	unsigned char *seen;		/* by index */
	struct twheel_dump_entry *buf;	/* room for NR_MILLION */
};

FIXTURE_SETUP(wheel)
{
	self->deadline = calloc(NR_MILLION, sizeof(*self->deadline));
	self->seen = calloc(NR_MILLION, 1);
	self->buf = calloc(NR_MILLION, ENT);
	ASSERT_TRUE(self->deadline && self->seen && self->buf);
	/* The default per-user limit of a small VM is below a million. */
	self->user_max = module_param("max_user_entries", 0);
	ASSERT_EQ(0, module_param_set("max_user_entries", 4ULL * NR_MILLION));
	self->fd = wheel_new(O_CLOEXEC | O_NONBLOCK, TICK_NS, HOUR_NS, 0);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(wheel)
{
	close(self->fd);
	if (self->user_max)
		module_param_set("max_user_entries", self->user_max);
	free(self->deadline);
	free(self->seen);
	free(self->buf);
}

/* Add ids 0..@n-1 (by index) with spread deadlines; remember them. */
static void add_ids(struct __test_metadata *_metadata, FIXTURE_DATA(wheel) *self,
		    unsigned int n)
{
	struct twheel_op *ops = calloc(CHUNK, sizeof(*ops));
	unsigned int i, j, k;

	ASSERT_NE(NULL, ops);
	for (i = 0; i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		for (j = 0; j < k; j++)
			dev_prep_add(&ops[j], id_of(i + j),
				     HOUR_NS + (uint64_t)((i + j) % 1000) * TICK_NS);
		ASSERT_EQ(k, dev_batch(self->fd, ops, k));
		for (j = 0; j < k; j++) {
			ASSERT_EQ(0, ops[j].result);
			self->deadline[i + j] = ops[j].deadline_ns;
		}
	}
	self->nr = n;
	free(ops);
}

/*
 * Dump the whole wheel @count ids at a time and check each entry against
 * what add_ids() put there: every id once, its deadline, no slot, pad 0,
 * at most @count per call. Returns the number of calls.
 */
static unsigned long dump_check(struct __test_metadata *_metadata,
				FIXTURE_DATA(wheel) *self, unsigned int count)
{
	unsigned long calls = 0, listed = 0, limit = 4UL * self->nr / count + 1000;
	uint64_t cursor = 0;
	unsigned int i;

	memset(self->seen, 0, NR_MILLION);
	while (cursor != TWHEEL_DUMP_END) {
		int n;

		memset(self->buf, JUNK, (size_t)count * ENT);
		n = dev_dump(self->fd, self->buf, count, &cursor);
		ASSERT_LE(0, n) TH_LOG("call %lu: %s", calls, strerror(-n));
		ASSERT_GE(count, n);
		ASSERT_GT(limit, ++calls) TH_LOG("the dump makes no progress");
		for (i = 0; i < (unsigned int)n; i++) {
			const struct twheel_dump_entry *e = &self->buf[i];
			unsigned int x = index_of(e->id);

			ASSERT_GT(self->nr, x) TH_LOG("unknown id %#llx", (unsigned long long)e->id);
			ASSERT_EQ(id_of(x), e->id);
			ASSERT_EQ(0, self->seen[x]) TH_LOG("id %#llx listed twice",
							   (unsigned long long)e->id);
			self->seen[x] = 1;
			EXPECT_EQ(self->deadline[x], e->deadline_ns);
			EXPECT_EQ(TWHEEL_SLOT_NONE, e->slot);
			EXPECT_EQ(0, e->pad);
		}
		listed += n;
	}
	EXPECT_EQ(self->nr, listed);
	return calls;
}

static int dump_raw(int fd, void *entries, uint64_t *cursor, uint32_t count,
		    uint32_t flags, int *err)
{
	struct twheel_dump_args args = {
		.entries = (uintptr_t)entries,
		.cursor = *cursor,
		.count = count,
		.flags = flags,
	};
	int ret;

	errno = 0;
	ret = ioctl(fd, TWHEEL_IOC_DUMP, &args);
	*err = ret < 0 ? errno : 0;
	*cursor = args.cursor;
	return ret;
}

TEST_F(wheel, empty_wheel_ends_in_one_call)
{
	uint64_t cursor = 0;

	memset(self->buf, JUNK, 4 * ENT);
	EXPECT_EQ(0, dev_dump(self->fd, self->buf, 4, &cursor));
	EXPECT_EQ(TWHEEL_DUMP_END, cursor);
	EXPECT_EQ(JUNK64, self->buf[0].id);
}

/* A wheel whose ids were all cancelled still has an index to walk. */
TEST_F(wheel, emptied_wheel_ends_in_one_call)
{
	uint64_t cursor = 0;
	unsigned int i;

	add_ids(_metadata, self, 5000);
	for (i = 0; i < 5000; i++)
		ASSERT_EQ(0, dev_cancel(self->fd, id_of(i)));
	memset(self->buf, JUNK, 4 * ENT);
	EXPECT_EQ(0, dev_dump(self->fd, self->buf, 4, &cursor));
	EXPECT_EQ(TWHEEL_DUMP_END, cursor);
	EXPECT_EQ(JUNK64, self->buf[0].id);
}

TEST_F(wheel, cursor_at_end_returns_nothing)
{
	uint64_t cursor = TWHEEL_DUMP_END;

	add_ids(_metadata, self, 10);
	memset(self->buf, JUNK, 4 * ENT);
	EXPECT_EQ(0, dev_dump(self->fd, self->buf, 4, &cursor));
	EXPECT_EQ(TWHEEL_DUMP_END, cursor);
	EXPECT_EQ(JUNK64, self->buf[0].id);
}

TEST_F(wheel, one_id_at_a_time_lists_each_once)
{
	add_ids(_metadata, self, 3000);
	EXPECT_LE(3000, dump_check(_metadata, self, 1));
}

TEST_F(wheel, odd_counts_list_each_once)
{
	static const unsigned int counts[] = { 2, 7, 15, 16, 17, 63, 64, 65, 999 };
	unsigned int i;

	add_ids(_metadata, self, 5000);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		EXPECT_LE((5000 + counts[i] - 1) / counts[i],
			  dump_check(_metadata, self, counts[i])) TH_LOG("count %u", counts[i]);
}

TEST_F_TIMEOUT(wheel, million_ids_listed_once_in_bounded_calls, 240)
{
	static const unsigned int counts[] = { 64, 4096, NR_MILLION };
	unsigned int i;
	uint64_t t0;

	add_ids(_metadata, self, NR_BIG);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		unsigned long calls;

		t0 = mono_ns();
		calls = dump_check(_metadata, self, counts[i]);
		TH_LOG("%u ids, count %u: %lu calls, %llu ms", NR_BIG, counts[i], calls,
		       (unsigned long long)((mono_ns() - t0) / NSEC_PER_MSEC));
		EXPECT_LE((NR_BIG + counts[i] - 1) / counts[i], calls);
	}
	/* The dump changed nothing. */
	EXPECT_EQ(NR_BIG, fdinfo_get(self->fd, "live"));
}

TEST_F(wheel, dump_shows_deadline_after_refresh)
{
	struct twheel_op op;
	uint64_t cursor = 0;
	int n;

	add_ids(_metadata, self, 3);
	dev_prep_refresh(&op, id_of(1), 2 * HOUR_NS, 0);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	self->deadline[1] = op.deadline_ns;
	n = dev_dump(self->fd, self->buf, 10, &cursor);
	ASSERT_EQ(3, n);
	EXPECT_EQ(TWHEEL_DUMP_END, cursor);
	for (n = 0; n < 3; n++)
		EXPECT_EQ(self->deadline[index_of(self->buf[n].id)], self->buf[n].deadline_ns);
}

TEST_F(wheel, expired_ids_waiting_to_be_read_are_not_listed)
{
	uint64_t cursor = 0;
	unsigned int i, listed = 0;
	int n;

	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, dev_add(self->fd, 100 + i, 0));
		ASSERT_EQ(0, dev_add(self->fd, 200 + i, HOUR_NS));
	}
	ASSERT_EQ(10, wait_waiting(self->fd, 10));
	while (cursor != TWHEEL_DUMP_END) {
		n = dev_dump(self->fd, self->buf + listed, 3, &cursor);
		ASSERT_LE(0, n);
		listed += n;
		ASSERT_GE(10, listed);
	}
	EXPECT_EQ(10, listed);
	for (i = 0; i < listed; i++) {
		EXPECT_LE(200, self->buf[i].id);
		EXPECT_GT(210, self->buf[i].id);
	}
	EXPECT_EQ(10, fdinfo_get(self->fd, "events_waiting"));
}

/* Ids keep their place in the order while others come and go. */
TEST_F_TIMEOUT(wheel, order_is_fixed_for_the_wheels_life, 120)
{
	enum { N = 200, OTHERS = 50000 };
	uint64_t first[N], cursor = 0;
	struct twheel_op *ops = calloc(OTHERS, sizeof(*ops));
	int n, i, k = 0;

	ASSERT_NE(NULL, ops);
	add_ids(_metadata, self, N);
	n = dev_dump(self->fd, self->buf, NR_MILLION, &cursor);
	ASSERT_EQ(N, n);
	ASSERT_EQ(TWHEEL_DUMP_END, cursor);
	for (i = 0; i < N; i++)
		first[i] = self->buf[i].id;

	/* Grow the index a few times over, then shrink it back. */
	for (i = 0; i < OTHERS; i++)
		dev_prep_add(&ops[i], (1ULL << 40) + i, HOUR_NS);
	ASSERT_EQ(OTHERS, dev_batch(self->fd, ops, OTHERS));
	for (i = 0; i < OTHERS; i++)
		dev_prep_cancel(&ops[i], (1ULL << 40) + i);
	ASSERT_EQ(OTHERS, dev_batch(self->fd, ops, OTHERS));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, dev_refresh(self->fd, first[i], 2 * HOUR_NS, 0));

	cursor = 0;
	while (cursor != TWHEEL_DUMP_END) {
		n = dev_dump(self->fd, self->buf, 7, &cursor);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++, k++) {
			ASSERT_GT(N, k);
			EXPECT_EQ(first[k], self->buf[i].id) TH_LOG("position %d", k);
		}
	}
	EXPECT_EQ(N, k);
	free(ops);
}

/* ---- concurrent operations ---- */

#define STABLE_ID(i)	(0x5000000000000000ULL + (i))
#define CHURN_ID(i)	(0x7000000000000000ULL + (i))

struct churn {
	int fd;
	unsigned int nr_stable, nr_churn;
	uint64_t d1, d2;		/* the two deadlines stable ids take */
	atomic_int stop;
	atomic_int errors;
	atomic_int rounds;
};

/*
 * Add a block of churn ids, a third of them due within 50 ms, enough to
 * grow the index twice over; cancel them all so that it shrinks again;
 * read whatever expired.
 */
static void *churner(void *arg)
{
	struct churn *c = arg;
	struct twheel_op *ops = calloc(c->nr_churn, sizeof(*ops));
	struct twheel_event ev[256];
	unsigned int i;

	if (!ops) {
		c->errors++;
		return NULL;
	}
	while (!c->stop) {
		for (i = 0; i < c->nr_churn; i++)
			dev_prep_add(&ops[i], CHURN_ID(i),
				     i % 3 ? HOUR_NS : (i % 50) * NSEC_PER_MSEC);
		if (dev_batch(c->fd, ops, c->nr_churn) != (int)c->nr_churn)
			c->errors++;
		for (i = 0; i < c->nr_churn; i++)
			dev_prep_cancel(&ops[i], CHURN_ID(i));
		if (dev_batch(c->fd, ops, c->nr_churn) != (int)c->nr_churn)
			c->errors++;
		while (dev_read_events(c->fd, ev, 256) > 0)
			;
		c->rounds++;
	}
	free(ops);
	return NULL;
}

/* Move stable ids between two deadlines: they stay live throughout. */
static void *refresher(void *arg)
{
	struct churn *c = arg;
	struct twheel_op ops[64];
	unsigned int i = 0, j, flip = 0;

	while (!c->stop) {
		for (j = 0; j < 64; j++)
			dev_prep_refresh_at(&ops[j], STABLE_ID((i + j) % c->nr_stable),
					    flip ? c->d2 : c->d1, 0);
		if (dev_batch(c->fd, ops, 64) != 64)
			c->errors++;
		for (j = 0; j < 64; j++)
			if (ops[j].result)
				c->errors++;
		i += 64;
		if (i >= c->nr_stable) {
			i = 0;
			flip = !flip;
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(wheel, concurrent_ops_never_hide_or_repeat_live_ids, 240)
{
	unsigned int nr_stable = debug_kernel() ? 5000 : 20000;
	unsigned char *seen_churn;
	struct churn c = {
		.fd = self->fd,
		.nr_stable = nr_stable,
		.nr_churn = 3 * nr_stable,
	};
	struct twheel_op op;
	pthread_t th[2];
	unsigned int i, dumps;

	seen_churn = calloc(c.nr_churn, 1);
	ASSERT_NE(NULL, seen_churn);
	/* Two deadlines on the grid, an hour and two ahead. */
	dev_prep_add(&op, 1, HOUR_NS);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	c.d1 = op.deadline_ns;
	c.d2 = op.deadline_ns + HOUR_NS;
	ASSERT_EQ(0, dev_cancel(self->fd, 1));
	for (i = 0; i < nr_stable; i++) {
		dev_prep_add_at(&op, STABLE_ID(i), c.d1);
		ASSERT_EQ(0, dev_submit_op(self->fd, &op));
		ASSERT_EQ(c.d1, op.deadline_ns);
	}

	ASSERT_EQ(0, pthread_create(&th[0], NULL, churner, &c));
	ASSERT_EQ(0, pthread_create(&th[1], NULL, refresher, &c));
	for (dumps = 0; dumps < 3 || c.rounds < 3; dumps++) {
		uint64_t cursor = 0;
		unsigned long calls = 0;

		memset(self->seen, 0, nr_stable);
		memset(seen_churn, 0, c.nr_churn);
		while (cursor != TWHEEL_DUMP_END) {
			int n = dev_dump(self->fd, self->buf, 50, &cursor);

			ASSERT_LE(0, n) TH_LOG("%s", strerror(-n));
			ASSERT_GT(1000000UL, ++calls);
			for (i = 0; i < (unsigned int)n; i++) {
				uint64_t id = self->buf[i].id;

				if (id - STABLE_ID(0) < nr_stable) {
					ASSERT_EQ(0, self->seen[id - STABLE_ID(0)])
						TH_LOG("stable id %u listed twice", (unsigned int)(id - STABLE_ID(0)));
					self->seen[id - STABLE_ID(0)] = 1;
					EXPECT_TRUE(self->buf[i].deadline_ns == c.d1 ||
						    self->buf[i].deadline_ns == c.d2)
						TH_LOG("deadline %llu", (unsigned long long)self->buf[i].deadline_ns);
				} else if (id - CHURN_ID(0) < c.nr_churn) {
					ASSERT_EQ(0, seen_churn[id - CHURN_ID(0)])
						TH_LOG("churn id listed twice");
					seen_churn[id - CHURN_ID(0)] = 1;
				} else {
					ASSERT_TRUE(0) TH_LOG("id %#llx was never added",
							      (unsigned long long)id);
				}
			}
		}
		for (i = 0; i < nr_stable; i++)
			ASSERT_EQ(1, self->seen[i]) TH_LOG("dump %u missed stable id %u", dumps, i);
		ASSERT_GT(1000U, dumps) TH_LOG("the churner made no progress");
	}
	c.stop = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	TH_LOG("%u dumps over %d churn rounds", dumps, c.rounds);
	EXPECT_EQ(0, c.errors);
	free(seen_churn);
}

/* ---- signals ---- */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	alarms++;
}

TEST_F_TIMEOUT(wheel, signal_ends_huge_call_early_and_keeps_the_place, 240)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { 0 };
	unsigned long calls = 0, cut = 0, listed = 0;
	uint64_t cursor = 0;
	unsigned int i;

	add_ids(_metadata, self, NR_BIG);
	memset(self->seen, 0, NR_MILLION);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	while (cursor != TWHEEL_DUMP_END) {
		unsigned int want = self->nr - listed;
		int n;

		if (!want)
			want = 1;
		n = dev_dump(self->fd, self->buf, want, &cursor);
		ASSERT_LE(0, n) TH_LOG("call %lu: %s", calls, strerror(-n));
		calls++;
		if ((unsigned int)n < want && cursor != TWHEEL_DUMP_END)
			cut++;
		for (i = 0; i < (unsigned int)n; i++) {
			unsigned int x = index_of(self->buf[i].id);

			ASSERT_GT(self->nr, x);
			ASSERT_EQ(0, self->seen[x]);
			self->seen[x] = 1;
		}
		listed += n;
		ASSERT_GE(self->nr, listed);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	TH_LOG("%lu calls, %lu cut short, %d signals", calls, cut, (int)alarms);
	EXPECT_EQ(self->nr, listed);
	EXPECT_LE(1, cut);
}

/* ---- errors ---- */

TEST(dump_before_setup_is_ebadfd)
{
	struct twheel_dump_entry e[2];
	uint64_t cursor = 0;
	int fd = dev_open(O_CLOEXEC), err;

	ASSERT_LE(0, fd);
	memset(e, JUNK, sizeof(e));
	EXPECT_EQ(-1, dump_raw(fd, e, &cursor, 2, 0, &err));
	EXPECT_EQ(EBADFD, err);
	EXPECT_EQ(0, cursor);
	EXPECT_EQ(JUNK64, e[0].id);
	close(fd);
}

/* Bits 56-62 of a cursor: the new keys the wheel's id index took. */
#define CURSOR_KEYS(c)	(((c) >> 56) & 0x7f)

/* A cursor of another count of new keys than the wheel's: ESTALE, nothing listed. */
TEST_F(wheel, cursor_of_another_key_is_estale)
{
	uint64_t cursor = 1ULL << 56;
	int err;

	add_ids(_metadata, self, 100);
	memset(self->buf, JUNK, 4 * ENT);
	EXPECT_EQ(-1, dump_raw(self->fd, self->buf, &cursor, 4, 0, &err));
	EXPECT_EQ(ESTALE, err);
	EXPECT_EQ(1ULL << 56, cursor);
	EXPECT_EQ(JUNK64, self->buf[0].id);
	dump_check(_metadata, self, 64);
}

/*
 * Ids chosen from the dump's order (add random ones, keep the first the
 * dump lists, cancel the rest) make a chain of the index long: it takes a
 * new key, a dump begun before fails with ESTALE, and one begun again
 * lists every live id once.
 */
TEST_F_TIMEOUT(wheel, dump_from_before_a_new_key_is_estale, 240)
{
	enum { KEEP = 512, CAND = 8192, ROUNDS = 64 };
	struct twheel_op *ops = calloc(KEEP + CAND, sizeof(*ops));
	uint64_t *live = calloc(KEEP + CAND, sizeof(*live)), old = 0, cursor, seed = 0x5eed;
	unsigned int nlive = 0, i, r, listed;
	int n;

	ASSERT_TRUE(ops && live);
	add_ids(_metadata, self, 10);
	ASSERT_EQ(1, dev_dump(self->fd, self->buf, 1, &old));
	ASSERT_EQ(0, CURSOR_KEYS(old));
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < CAND; i++) {
			live[nlive + i] = rnd_next(&seed) | 1ULL << 63;
			dev_prep_add(&ops[i], live[nlive + i], HOUR_NS);
		}
		ASSERT_EQ(CAND, dev_batch(self->fd, ops, CAND));
		nlive += CAND;
		/* The first KEEP the dump lists stay; of the ten ids, all. */
		cursor = 0;
		listed = 0;
		while (listed < KEEP && cursor != TWHEEL_DUMP_END) {
			n = dev_dump(self->fd, self->buf + listed, KEEP - listed, &cursor);
			if (n == -ESTALE) {
				listed = 0;
				cursor = 0;
				continue;
			}
			ASSERT_LE(0, n);
			listed += n;
		}
		if (cursor != TWHEEL_DUMP_END && CURSOR_KEYS(cursor))
			break;
		for (i = 0; i < nlive; i++) {
			unsigned int j;

			for (j = 0; j < listed && self->buf[j].id != live[i]; j++)
				;
			dev_prep_cancel(&ops[i], live[i]);
			if (j < listed)
				ops[i].op = TWHEEL_OP_QUERY;
		}
		ASSERT_EQ(nlive, dev_batch(self->fd, ops, nlive));
		for (i = nlive = 0; i < listed; i++)
			if (self->buf[i].id >> 63)
				live[nlive++] = self->buf[i].id;
	}
	TH_LOG("a new key after %u rounds", r + 1);
	ASSERT_GT(ROUNDS, r) TH_LOG("no new key in %u rounds", ROUNDS);
	n = dev_dump(self->fd, self->buf, 4, &old);
	EXPECT_EQ(-ESTALE, n);
	/* Again from 0: the ten ids once each (the attacker's are not ours). */
	memset(self->seen, 0, NR_MILLION);
	cursor = 0;
	listed = 0;
	while (cursor != TWHEEL_DUMP_END) {
		n = dev_dump(self->fd, self->buf, 64, &cursor);
		ASSERT_LE(0, n);
		for (i = 0; i < (unsigned int)n; i++) {
			if (self->buf[i].id >> 63)
				continue;
			ASSERT_EQ(0, self->seen[index_of(self->buf[i].id)]++);
			listed++;
		}
	}
	EXPECT_EQ(10, listed);
	free(ops);
	free(live);
}

TEST_F(wheel, cursor_beyond_keys_is_einval)
{
	static const uint64_t bad[] = {
		1ULL << 63, (1ULL << 63) + 1, 0xdeadbeefdeadbeefULL, UINT64_MAX - 1,
	};
	unsigned int i, pass;
	int err;

	/* On an empty wheel, and on one with ids. */
	for (pass = 0; pass < 2; pass++) {
		if (pass)
			add_ids(_metadata, self, 100);
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			uint64_t cursor = bad[i];

			memset(self->buf, JUNK, 4 * ENT);
			EXPECT_EQ(-1, dump_raw(self->fd, self->buf, &cursor, 4, 0, &err));
			EXPECT_EQ(EINVAL, err) TH_LOG("cursor %#llx", (unsigned long long)bad[i]);
			EXPECT_EQ(bad[i], cursor);
			EXPECT_EQ(JUNK64, self->buf[0].id);
		}
	}
}

TEST_F(wheel, count_zero_or_above_int_max_is_einval)
{
	static const uint32_t bad[] = { 0, (uint32_t)INT_MAX + 1, UINT32_MAX };
	unsigned int i;
	int err;

	add_ids(_metadata, self, 10);
	for (i = 0; i < 3; i++) {
		uint64_t cursor = 0;

		memset(self->buf, JUNK, 4 * ENT);
		EXPECT_EQ(-1, dump_raw(self->fd, self->buf, &cursor, bad[i], 0, &err));
		EXPECT_EQ(EINVAL, err) TH_LOG("count %u", bad[i]);
		EXPECT_EQ(0, cursor);
		EXPECT_EQ(JUNK64, self->buf[0].id);
	}
}

TEST_F(wheel, flags_are_einval)
{
	static const uint32_t bad[] = { 1, 2, 1U << 31, UINT32_MAX };
	unsigned int i;
	int err;

	add_ids(_metadata, self, 10);
	for (i = 0; i < 4; i++) {
		uint64_t cursor = 0;

		memset(self->buf, JUNK, 4 * ENT);
		EXPECT_EQ(-1, dump_raw(self->fd, self->buf, &cursor, 4, bad[i], &err));
		EXPECT_EQ(EINVAL, err) TH_LOG("flags %#x", bad[i]);
		EXPECT_EQ(0, cursor);
		EXPECT_EQ(JUNK64, self->buf[0].id);
	}
}

TEST_F(wheel, bad_args_pointer_is_efault)
{
	void *none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, none);
	add_ids(_metadata, self, 10);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_DUMP, NULL));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_DUMP, none));
	EXPECT_EQ(EFAULT, errno);
	munmap(none, PAGE);
	dump_check(_metadata, self, 64);
}

/* Args that can be read but not written: the cursor cannot be returned. */
TEST_F(wheel, read_only_args_is_efault)
{
	struct twheel_dump_args *args = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, args);
	add_ids(_metadata, self, 10);
	args->entries = (uintptr_t)self->buf;
	args->count = 4;
	ASSERT_EQ(0, mprotect(args, PAGE, PROT_READ));
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_DUMP, args));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, args->cursor);
	munmap(args, PAGE);
	dump_check(_metadata, self, 64);
}

TEST_F(wheel, bad_entries_pointer_is_efault)
{
	void *none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *bad[] = { NULL, none, ro, (void *)-4096L };
	unsigned int i;
	int err;

	ASSERT_NE(MAP_FAILED, none);
	ASSERT_NE(MAP_FAILED, ro);
	add_ids(_metadata, self, 10);
	for (i = 0; i < 4; i++) {
		uint64_t cursor = 0;

		EXPECT_EQ(-1, dump_raw(self->fd, bad[i], &cursor, 4, 0, &err));
		EXPECT_EQ(EFAULT, err) TH_LOG("buffer %u", i);
		EXPECT_EQ(0, cursor);
	}
	munmap(none, PAGE);
	munmap(ro, PAGE);
	dump_check(_metadata, self, 64);
}

/*
 * A buffer with room for @whole entries and a few bytes before an
 * unmapped page, and the unmapped page itself.
 */
static struct twheel_dump_entry *cut_buffer(struct __test_metadata *_metadata,
					    void **map, unsigned int whole)
{
	uint8_t *m = mmap(NULL, 2 * PAGE + whole * ENT, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t hole;

	ASSERT_NE(MAP_FAILED, m);
	hole = (whole * ENT + 10 + PAGE - 1) / PAGE * PAGE;
	ASSERT_EQ(0, mprotect(m + hole, PAGE, PROT_NONE));
	*map = m;
	return (struct twheel_dump_entry *)(m + hole - whole * ENT - 10);
}

/* Nothing fits whole before the fault: EFAULT, the cursor stays. */
TEST_F(wheel, buffer_faulting_at_once_is_efault)
{
	struct twheel_dump_entry *e;
	uint64_t cursor = 0;
	void *map;
	int err;

	add_ids(_metadata, self, 100);
	e = cut_buffer(_metadata, &map, 0);
	EXPECT_EQ(-1, dump_raw(self->fd, e, &cursor, 100, 0, &err));
	EXPECT_EQ(EFAULT, err);
	EXPECT_EQ(0, cursor);
	munmap(map, 2 * PAGE);
}

/*
 * The uapi: "If @entries faults part-way, the ids copied before the
 * fault are counted and the cursor moved past them only", as read(2)
 * counts the records copied whole. Counted entries are then those the
 * rest of the dump does not list again.
 */
static void check_cut_dump(struct __test_metadata *_metadata, FIXTURE_DATA(wheel) *self,
			   unsigned int whole, bool strict)
{
	struct twheel_dump_entry *e;
	uint64_t cursor = 0;
	unsigned int i, listed = 0;
	void *map;
	int n, err;

	e = cut_buffer(_metadata, &map, whole);
	memset(self->seen, 0, NR_MILLION);
	n = dump_raw(self->fd, e, &cursor, self->nr, 0, &err);
	if (strict)
		EXPECT_EQ((int)whole, n) TH_LOG("%u entries fit before the fault; %d counted (%s)",
						 whole, n, n < 0 ? strerror(err) : "ok");
	if (n < 0)
		EXPECT_EQ(EFAULT, err);
	EXPECT_GE((int)whole, n);
	for (i = 0; n > 0 && i < (unsigned int)n; i++) {
		unsigned int x = index_of(e[i].id);

		ASSERT_GT(self->nr, x);
		ASSERT_EQ(0, self->seen[x]);
		self->seen[x] = 1;
		EXPECT_EQ(self->deadline[x], e[i].deadline_ns);
	}
	listed = n > 0 ? n : 0;
	if (n < 0)
		EXPECT_EQ(0, cursor);
	/* The rest, with a good buffer, from where the cut call left off. */
	while (cursor != TWHEEL_DUMP_END) {
		n = dev_dump(self->fd, self->buf, 64, &cursor);
		ASSERT_LE(0, n);
		for (i = 0; i < (unsigned int)n; i++) {
			unsigned int x = index_of(self->buf[i].id);

			ASSERT_GT(self->nr, x);
			ASSERT_EQ(0, self->seen[x]) TH_LOG("id %#llx listed again after the fault",
							   (unsigned long long)self->buf[i].id);
			self->seen[x] = 1;
		}
		listed += n;
	}
	EXPECT_EQ(self->nr, listed);
	munmap(map, 2 * PAGE + whole * ENT);
}

/* However many entries the call counts, a retry from its cursor completes the dump. */
TEST_F(wheel, retry_after_fault_loses_and_repeats_nothing)
{
	static const unsigned int whole[] = { 1, 5, 16, 40, 170 };
	unsigned int i;

	add_ids(_metadata, self, 1000);
	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		check_cut_dump(_metadata, self, whole[i], false);
}

TEST_F(wheel, buffer_cut_by_fault_counts_every_entry_copied_whole)
{
	static const unsigned int whole[] = { 1, 5, 40, 170 };
	unsigned int i;

	add_ids(_metadata, self, 1000);
	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		check_cut_dump(_metadata, self, whole[i], true);
}

TEST_HARNESS_MAIN
