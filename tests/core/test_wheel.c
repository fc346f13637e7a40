// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the wheel core (kmod/wheel.c) built as a host program.
 *
 * One behaviour per test, each named for it, TAP output through
 * kselftest.h (extracted at build time, tests/common/test.mk). The
 * tests use only the API of kmod/wheel.h plus the public fields of
 * struct tw_wheel (clk, nr_live, nr_expired, index) and count work
 * without timing anything: by the number of tw_advance() calls a budget
 * of one needs, or by how far tw_next_event() jumps. Run under ASan and
 * UBSan by the Makefile, so a leak or an overflow fails the run too.
 */
#include <limits.h>
#include <string.h>

#include "core_util.h"
#include "twheel_test.h"
#include "kselftest.h"

unsigned long tw_host_fail_alloc;

/* Fail the current test with the condition and where it was checked. */
#define CHECK(c) do {							\
	if (!(c)) {							\
		printf("# %s:%d: CHECK(%s) failed\n", __FILE__,		\
		       __LINE__, #c);					\
		return 1;						\
	}								\
} while (0)

/* Wrapping order of ticks, as the wheel compares them. */
static bool tick_le(u64 a, u64 b)
{
	return (s64)(a - b) <= 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* Test data from the one generator, one stream for the whole run. */
static u64 rnd(void)
{
	return rnd_next(&rng_state);
}

/* Uniform in 1 .. max. */
static u64 rnd_range(u64 max)
{
	return 1 + rnd() % max;
}

static struct tw_entry *ent_new(u64 id)
{
	struct tw_entry *e = calloc(1, sizeof(*e));

	if (!e)
		abort();
	e->id = id;
	return e;
}

static void release_free(struct tw_entry *e, void *arg)
{
	(void)arg;
	free(e);
}

/* Array entries are released by freeing the array afterwards. */
static void release_none(struct tw_entry *e, void *arg)
{
	(void)e;
	(void)arg;
}

static void wheel_free(struct tw_wheel *w)
{
	tw_destroy(w, release_free, NULL);
}

/* Look up @id; add it with deadline @expires if absent. */
static struct tw_entry *add_id(struct tw_wheel *w, u64 id, u64 expires)
{
	struct tw_entry *e;

	if (tw_lookup(w, id))
		return NULL;
	e = ent_new(id);
	if (tw_test_add(w, e, expires)) {
		free(e);
		return NULL;
	}
	return e;
}

/* Advance to @now with an unlimited budget; true if that took one call. */
static bool advance_all(struct tw_wheel *w, u64 now)
{
	return tw_advance(w, now, UINT_MAX, now);
}

/* Count what is on the expired list, taking it off; entries not freed. */
static u64 drain_free_none(struct tw_wheel *w)
{
	u64 n = 0;

	while (tw_pop_expired(w))
		n++;
	return n;
}

/* Count (and free) what is on the expired list. */
static u64 drain_free(struct tw_wheel *w)
{
	struct tw_entry *e;
	u64 n = 0;

	while ((e = tw_pop_expired(w))) {
		free(e);
		n++;
	}
	return n;
}

static int test_add_lookup_rearm_remove(void)
{
	struct tw_wheel w;
	struct tw_entry *a, *b;

	tw_init(&w, 1000, &tw_test_key);
	CHECK(w.clk == 1000);
	CHECK(tw_lookup(&w, 7) == NULL);
	a = add_id(&w, 7, 1010);
	b = add_id(&w, 8, 1020);
	CHECK(a && b);
	CHECK(w.nr_live == 2 && w.nr_expired == 0);
	CHECK(tw_lookup(&w, 7) == a && tw_lookup(&w, 8) == b);
	CHECK(a->id == 7 && a->expires == 1010);
	tw_rearm(&w, a, 1500);
	CHECK(a->expires == 1500 && tw_lookup(&w, 7) == a);
	tw_remove(&w, b);
	CHECK(tw_lookup(&w, 8) == NULL && w.nr_live == 1);
	free(b);
	CHECK(advance_all(&w, 1499));
	CHECK(w.nr_expired == 0 && tw_lookup(&w, 7) == a);
	CHECK(advance_all(&w, 1500));
	CHECK(w.nr_live == 0 && w.nr_expired == 1);
	CHECK(tw_pop_expired(&w) == a && a->stamp == 1500);
	CHECK(tw_pop_expired(&w) == NULL && w.nr_expired == 0);
	free(a);
	wheel_free(&w);
	return 0;
}

static int test_add_existing_id_is_callers_check(void)
{
	struct tw_wheel w;
	struct tw_entry *a, *b;

	tw_init(&w, 0, &tw_test_key);
	a = add_id(&w, 42, 10);
	CHECK(a);
	/* The caller's check: lookup finds the live entry, so no add. */
	CHECK(tw_lookup(&w, 42) == a);
	CHECK(add_id(&w, 42, 20) == NULL);
	CHECK(w.nr_live == 1 && a->expires == 10);
	/* Once expired, the id is free and a new entry starts afresh. */
	CHECK(advance_all(&w, 10));
	CHECK(tw_lookup(&w, 42) == NULL);
	b = add_id(&w, 42, 30);
	CHECK(b && b != a && tw_lookup(&w, 42) == b);
	CHECK(w.nr_live == 1 && w.nr_expired == 1);
	CHECK(tw_peek_expired(&w) == a);
	wheel_free(&w);
	return 0;
}

static int test_refresh_in_expiry_tick_before_advance_moves_it(void)
{
	struct tw_wheel w;
	struct tw_entry *a;

	tw_init(&w, 99, &tw_test_key);
	a = add_id(&w, 1, 100);
	CHECK(a);
	/* Tick 100 has come but not been processed: the refresh wins. */
	tw_rearm(&w, a, 130);
	CHECK(advance_all(&w, 100));
	CHECK(w.nr_expired == 0 && tw_lookup(&w, 1) == a);
	CHECK(advance_all(&w, 129));
	CHECK(w.nr_expired == 0);
	CHECK(advance_all(&w, 130));
	CHECK(tw_pop_expired(&w) == a && a->expires == 130);
	free(a);
	wheel_free(&w);
	return 0;
}

static int test_refresh_in_expiry_tick_after_advance_finds_nothing(void)
{
	struct tw_wheel w;
	struct tw_entry *a;

	tw_init(&w, 99, &tw_test_key);
	a = add_id(&w, 1, 100);
	CHECK(a);
	CHECK(advance_all(&w, 100));
	/* Processed: a refresh finds nothing, the event is waiting. */
	CHECK(tw_lookup(&w, 1) == NULL);
	CHECK(w.nr_live == 0 && w.nr_expired == 1);
	CHECK(tw_peek_expired(&w) == a && a->stamp == 100);
	wheel_free(&w);
	return 0;
}

static int test_cancel_of_expired_id_finds_nothing(void)
{
	struct tw_wheel w;
	struct tw_entry *a, *b;

	tw_init(&w, 0, &tw_test_key);
	a = add_id(&w, 5, 3);
	b = add_id(&w, 6, 50);
	CHECK(a && b);
	CHECK(advance_all(&w, 10));
	CHECK(tw_lookup(&w, 5) == NULL);
	/* The cancel that found nothing leaves the event and the rest. */
	CHECK(w.nr_expired == 1 && tw_peek_expired(&w) == a);
	CHECK(w.nr_live == 1 && tw_lookup(&w, 6) == b);
	tw_remove(&w, b);
	free(b);
	CHECK(w.nr_live == 0);
	CHECK(advance_all(&w, 100));
	CHECK(w.nr_expired == 1 && tw_pop_expired(&w) == a);
	free(a);
	wheel_free(&w);
	return 0;
}

static int test_never_early_at_most_one_tick_late(void)
{
	enum { N = 20000, SPAN = 300000 };	/* levels 0 to 3 */
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	u64 start = 123456789, now, seen = 0;
	struct tw_wheel w;
	struct tw_entry *e;
	unsigned int i;

	CHECK(ents);
	tw_init(&w, start, &tw_test_key);
	for (i = 0; i < N; i++) {
		ents[i].id = i;
		CHECK(tw_test_add(&w, &ents[i], start + rnd_range(SPAN)) == 0);
	}
	/* One tick at a time: each entry comes out on its own tick. */
	for (now = start + 1; now <= start + SPAN; now++) {
		CHECK(advance_all(&w, now));
		while ((e = tw_pop_expired(&w))) {
			CHECK(e->expires == now && e->stamp == now);
			seen++;
		}
	}
	CHECK(seen == N && w.nr_live == 0);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

static int test_deadline_order_across_levels_and_cascades(void)
{
	enum { N = 50000 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	u64 start = 1ull << 40, prev = start, n = 0;
	struct tw_wheel w;
	struct tw_entry *e;
	unsigned int i;

	CHECK(ents);
	tw_init(&w, start, &tw_test_key);
	for (i = 0; i < N; i++) {
		/* Spread over every level: 1 .. 2^(6 * level + 6). */
		u64 span = 1ull << (6 * (i % TW_LEVELS) + 6);

		ents[i].id = i;
		if (span > TW_MAX_DELTA)
			span = TW_MAX_DELTA;
		CHECK(tw_test_add(&w, &ents[i], start + rnd_range(span)) == 0);
	}
	/* A few big steps, each with all the cascades it implies. */
	for (i = 1; i <= 16; i++) {
		u64 now = start + (TW_MAX_DELTA / 16) * i;

		CHECK(advance_all(&w, now));
		while ((e = tw_pop_expired(&w))) {
			CHECK(tick_le(prev, e->expires));
			CHECK(tick_le(e->expires, now) && e->stamp == now);
			prev = e->expires;
			n++;
		}
	}
	CHECK(n == N && w.nr_live == 0);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

/*
 * Events taken and given back in the reverse order are taken again
 * first, in deadline order, and counted again; what expires meanwhile
 * comes after them.
 */
static int test_events_given_back_are_taken_first_in_order(void)
{
	struct tw_entry *a, *b, *c, *d, *x, *y;
	struct tw_wheel w;

	tw_init(&w, 0, &tw_test_key);
	a = add_id(&w, 1, 10);
	b = add_id(&w, 2, 11);
	c = add_id(&w, 3, 12);
	d = add_id(&w, 4, 20);
	CHECK(a && b && c && d);
	CHECK(advance_all(&w, 12) && w.nr_expired == 3);
	x = tw_pop_expired(&w);
	y = tw_pop_expired(&w);
	CHECK(x == a && y == b && w.nr_expired == 1);
	CHECK(advance_all(&w, 20) && w.nr_expired == 2);
	tw_unpop_expired(&w, y);
	tw_unpop_expired(&w, x);
	CHECK(w.nr_expired == 4);
	CHECK(tw_pop_expired(&w) == a && tw_pop_expired(&w) == b);
	CHECK(tw_pop_expired(&w) == c && tw_pop_expired(&w) == d);
	CHECK(tw_pop_expired(&w) == NULL && w.nr_expired == 0);
	free(a);
	free(b);
	free(c);
	free(d);
	wheel_free(&w);
	return 0;
}

static int test_empty_ticks_cost_nothing(void)
{
	struct tw_wheel w;
	struct tw_entry *a;
	u64 start = 5000, t;
	int calls;

	tw_init(&w, start, &tw_test_key);
	/* An empty wheel jumps 10^6 ticks in one call with budget 1. */
	CHECK(tw_advance(&w, start + 1000000, 1, 0));
	CHECK(w.clk == start + 1000000);
	start = w.clk;

	/* One entry 10^6 ticks away: a few cascades, not 10^6 ticks. */
	a = add_id(&w, 1, start + 1000000);
	CHECK(a);
	for (calls = 0; calls < 3 * TW_LEVELS; calls++)
		if (tw_advance(&w, start + 1000000, 1, 0))
			break;
	CHECK(calls < 3 * TW_LEVELS);
	CHECK(tw_pop_expired(&w) == a);
	free(a);

	/* Same by next-event jumps, as an event loop would do. */
	start = w.clk;
	a = add_id(&w, 2, start + 1000000);
	CHECK(a);
	for (calls = 0; calls < 3 * TW_LEVELS && w.nr_live; calls++) {
		CHECK(tw_next_event(&w, &t));
		CHECK(tick_le(w.clk, t) && tick_le(t, start + 1000000));
		CHECK(advance_all(&w, t));
	}
	CHECK(w.nr_live == 0 && calls < 3 * TW_LEVELS);
	CHECK(w.clk == start + 1000000);
	CHECK(tw_pop_expired(&w) == a);
	free(a);
	wheel_free(&w);
	return 0;
}

/* How far a budget may be overshot: a call may finish what it started. */
#define BUDGET_SLACK	1u

static int test_chunked_expiry_of_1e6_same_deadline(void)
{
	enum { N = 1000000, BUDGET = 1000 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	unsigned char *seen = calloc(N, 1);
	u64 start = 77, got = 0;
	struct tw_wheel w;
	struct tw_entry *e;
	unsigned int i, calls = 0;
	bool done = false;

	CHECK(ents && seen);
	tw_init(&w, start, &tw_test_key);
	for (i = 0; i < N; i++) {
		ents[i].id = rnd();
		if (tw_lookup(&w, ents[i].id))
			ents[i].id = i;		/* a 64-bit collision; rare */
		CHECK(tw_test_add(&w, &ents[i], start + 100000) == 0);
	}
	CHECK(w.nr_live == N);
	while (!done) {
		u64 before = w.nr_expired, moved;

		done = tw_advance(&w, start + 100000, BUDGET, ++calls);
		moved = w.nr_expired - before;
		CHECK(moved <= BUDGET + BUDGET_SLACK);
		CHECK(calls < 10 * (N / BUDGET) + 100);
		while ((e = tw_pop_expired(&w))) {
			size_t k = e - ents;

			CHECK(k < N && !seen[k]);
			CHECK(e->expires == start + 100000 && e->stamp == calls);
			seen[k] = 1;
			got++;
		}
	}
	CHECK(got == N && w.nr_live == 0 && w.nr_expired == 0);
	/* A million entries need about a thousand calls, not one. */
	CHECK(calls >= N / (BUDGET + BUDGET_SLACK));
	tw_destroy(&w, release_none, NULL);
	free(seen);
	free(ents);
	return 0;
}

static int test_cascade_cut_by_budget_then_continued_with_changes(void)
{
	enum { N = 5000, NEW = 2000 };
	struct tw_entry *ents[N + NEW];
	unsigned char state[N + NEW];	/* 0 live, 1 removed, 2 expired */
	u64 start = 1000, target = start + 300000, prev = 0;
	struct tw_wheel w;
	struct tw_entry *e;
	unsigned int i, calls = 0, live = N, added = N, cut_cascades = 0;
	bool done = false;

	tw_init(&w, start, &tw_test_key);
	/* Far (level 2 and 3) entries, so getting there means cascading. */
	for (i = 0; i < N; i++) {
		ents[i] = add_id(&w, i, start + 5000 + rnd_range(295000));
		CHECK(ents[i]);
		state[i] = 0;
	}
	while (!done) {
		done = tw_advance(&w, target, 7, target);
		CHECK(++calls < 100000);
		while ((e = tw_pop_expired(&w))) {
			CHECK(e->id < added && e == ents[e->id]);
			CHECK(state[e->id] == 0);
			CHECK(tick_le(prev, e->expires) && tick_le(e->expires, target));
			prev = e->expires;
			state[e->id] = 2;
			live--;
		}
		if (done)
			break;
		cut_cascades += w.pend_level > 0;
		/* Change the wheel in the middle of the cut cascade. */
		i = rnd() % added;
		switch (rnd() % 3) {
		case 0:
			if (state[i] != 0)
				break;
			tw_remove(&w, ents[i]);
			state[i] = 1;
			live--;
			break;
		case 1:
			if (state[i] != 0)
				break;
			tw_rearm(&w, ents[i], w.clk + rnd_range(300000));
			CHECK(tick_le(w.clk + 1, ents[i]->expires));
			break;
		default:
			if (added == N + NEW)
				break;
			ents[added] = add_id(&w, added, w.clk + rnd_range(300000));
			CHECK(ents[added]);
			state[added++] = 0;
			live++;
			break;
		}
		CHECK(w.nr_live == live);
	}
	/* Whatever is left must have a deadline after the target. */
	for (i = 0; i < added; i++) {
		if (state[i] == 0) {
			CHECK(tw_lookup(&w, i) == ents[i]);
			CHECK(!tick_le(ents[i]->expires, target));
		} else {
			CHECK(tw_lookup(&w, i) == NULL);
		}
		if (state[i] != 0)
			free(ents[i]);
	}
	CHECK(cut_cascades > 0 && added > N);
	CHECK(w.nr_live == live);
	/* release_free frees those still live. */
	wheel_free(&w);
	return 0;
}

static int test_tick_counter_wraps(void)
{
	struct tw_wheel w;
	struct tw_entry *e;
	u64 start = UINT64_MAX - 1000, prev = start, now;
	unsigned int i, n = 0;

	tw_init(&w, start, &tw_test_key);
	for (i = 0; i < 3000; i++)
		CHECK(add_id(&w, i, start + rnd_range(i < 2000 ? 5000 : 1u << 20)));
	/* Deadlines on both sides of 2^64; order is the wrapping one. */
	for (now = start + 97; tick_le(now, start + (1u << 20)); now += 97) {
		CHECK(advance_all(&w, now));
		while ((e = tw_pop_expired(&w))) {
			CHECK(tick_le(prev, e->expires) && tick_le(e->expires, now));
			CHECK(!tick_le(e->expires, now - 97));
			prev = e->expires;
			free(e);
			n++;
		}
	}
	CHECK(advance_all(&w, start + (1u << 20)));
	n += drain_free(&w);
	CHECK(n == 3000 && w.nr_live == 0);
	CHECK(w.clk == start + (1u << 20) && w.clk < start);
	wheel_free(&w);
	return 0;
}

static int test_ids_0_and_u64_max(void)
{
	struct tw_wheel w;
	struct tw_entry *a, *b;

	tw_init(&w, 0, &tw_test_key);
	a = add_id(&w, 0, 5);
	b = add_id(&w, UINT64_MAX, 6);
	CHECK(a && b);
	CHECK(tw_lookup(&w, 0) == a && tw_lookup(&w, UINT64_MAX) == b);
	CHECK(tw_lookup(&w, 1) == NULL && tw_lookup(&w, UINT64_MAX - 1) == NULL);
	tw_remove(&w, a);
	free(a);
	CHECK(tw_lookup(&w, 0) == NULL && tw_lookup(&w, UINT64_MAX) == b);
	CHECK(advance_all(&w, 6));
	CHECK(tw_lookup(&w, UINT64_MAX) == NULL && tw_pop_expired(&w) == b);
	free(b);
	wheel_free(&w);
	return 0;
}

/* Advance by next-event jumps until @e expires; the tick it came out. */
static u64 run_until_expired(struct tw_wheel *w, struct tw_entry *e, int max_jumps)
{
	u64 t;

	while (max_jumps-- > 0 && tw_next_event(w, &t)) {
		advance_all(w, t);
		if (tw_peek_expired(w) == e)
			return t;
	}
	return 0;
}

/*
 * Timeout 0 fires at the next tick; a deadline beyond the wheel's reach
 * (TW_MAX_DELTA) keeps its exact tick and fires there, neither early nor
 * late, however far beyond: it waits at the top level and is placed
 * again as the clock comes nearer, a bounded number of times.
 */
static int test_timeout_0_and_beyond_max_delta(void)
{
	struct tw_wheel w;
	struct tw_entry *a, *b, *c, *d;
	u64 start = 1ull << 33, t;
	int jumps = 0;

	tw_init(&w, start, &tw_test_key);
	a = add_id(&w, 1, start);			/* timeout 0 */
	b = add_id(&w, 2, start + TW_MAX_DELTA);
	c = add_id(&w, 3, start + TW_MAX_DELTA + 12345);
	d = add_id(&w, 4, start + 9 * TW_MAX_DELTA + 7);
	CHECK(a && b && c && d);
	CHECK(a->expires == start + 1);
	CHECK(b->expires == start + TW_MAX_DELTA);
	CHECK(c->expires == start + TW_MAX_DELTA + 12345);
	CHECK(d->expires == start + 9 * TW_MAX_DELTA + 7);
	CHECK(run_until_expired(&w, a, 4) == start + 1);
	CHECK(tw_pop_expired(&w) == a);
	CHECK(advance_all(&w, start + TW_MAX_DELTA - 1));
	CHECK(w.nr_expired == 0 && w.nr_live == 3);
	CHECK(advance_all(&w, start + TW_MAX_DELTA));
	CHECK(tw_pop_expired(&w) == b && w.nr_expired == 0);
	CHECK(advance_all(&w, start + TW_MAX_DELTA + 12344) && w.nr_expired == 0);
	CHECK(advance_all(&w, start + TW_MAX_DELTA + 12345));
	CHECK(tw_pop_expired(&w) == c && w.nr_expired == 0 && w.nr_live == 1);
	/* d: each hop a wake-up at most 2^35 - 2^30 ticks on, then its cascades. */
	while (tw_next_event(&w, &t) && !w.nr_expired) {
		CHECK(tick_le(t, d->expires));
		CHECK(advance_all(&w, t));
		jumps++;
	}
	CHECK(tw_pop_expired(&w) == d && d->expires == start + 9 * TW_MAX_DELTA + 7);
	CHECK(w.clk == d->expires && jumps <= 10 + TW_LEVELS);
	free(a);
	free(b);
	free(c);
	free(d);
	wheel_free(&w);
	return 0;
}

/* The lazy hook of the next test: one re-arm, to lazy_far_target. */
static u64 lazy_far_target;

static bool lazy_rearm_far(struct tw_wheel *w, struct tw_entry *e, u64 stamp, u64 *expires)
{
	(void)w;
	(void)e;
	(void)stamp;
	if (!lazy_far_target)
		return false;
	*expires = lazy_far_target;
	lazy_far_target = 0;
	return true;
}

/*
 * The expiry work catching up after a long suspend (CLOCK_BOOTTIME) asks
 * the hook about an entry at its old deadline D, with the wheel's clock
 * at D, while the touch it finds is from the present, 7 * 2^32 + 12345
 * ticks later: the re-arm to the present + the longest timeout (2^32
 * ticks) is TW_MAX_DELTA + 12345 past the clock. It must fire there,
 * not 12345 ticks early at the edge of the wheel's reach.
 */
static int test_lazy_rearm_far_past_a_lagging_clock_is_not_early(void)
{
	const u64 lag = 7 * (1ull << 32) + 12345, timeout = 1ull << 32;
	struct tw_wheel w;
	struct tw_entry *e, *x;
	u64 start = 1ull << 20, dl = start + 100, target = dl + lag + timeout;

	tw_init(&w, start, &tw_test_key);
	w.lazy = lazy_rearm_far;
	e = add_id(&w, 1, dl);
	CHECK(e);
	lazy_far_target = target;
	CHECK(advance_all(&w, dl + lag));
	CHECK(!lazy_far_target && w.nr_live == 1 && w.nr_expired == 0);
	CHECK(advance_all(&w, target - 1));
	x = tw_pop_expired(&w);
	if (x)
		printf("# re-armed to %llu, expired at %llu: %llu ticks early\n",
		       (unsigned long long)target, (unsigned long long)x->expires,
		       (unsigned long long)(target - x->expires));
	CHECK(!x);
	CHECK(advance_all(&w, target));
	CHECK(tw_pop_expired(&w) == e && e->expires == target);
	free(e);
	wheel_free(&w);
	return 0;
}

static int test_expires_in_the_past_is_clamped_to_next_tick(void)
{
	struct tw_wheel w;
	struct tw_entry *a, *b, *c;
	u64 start = 1ull << 50;

	tw_init(&w, start, &tw_test_key);
	a = add_id(&w, 1, start - 1000);
	b = add_id(&w, 2, start - (1ull << 40));
	c = add_id(&w, 3, start + 500);
	CHECK(a && b && c);
	CHECK(a->expires == start + 1 && b->expires == start + 1);
	tw_rearm(&w, c, 0);				/* far in the past */
	CHECK(c->expires == start + 1);
	CHECK(advance_all(&w, start + 1));
	CHECK(w.nr_expired == 3 && w.nr_live == 0);
	wheel_free(&w);
	return 0;
}

static int test_index_grows_to_1e6_and_shrinks_back(void)
{
	enum { N = 1000000, KEEP = 100 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	struct tw_wheel w;
	unsigned int i, grown_bits;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < N; i++) {
		ents[i].id = (u64)i * 0x9e3779b97f4a7c15ull;
		CHECK(tw_test_add(&w, &ents[i], 1 + i % 100000) == 0);
	}
	for (i = 0; i < N; i += 997)
		CHECK(tw_lookup(&w, ents[i].id) == &ents[i]);
	/* One pointer per one to two entries. */
	grown_bits = w.index.cur_bits;
	CHECK((1ul << grown_bits) >= N / 2 && (1ul << grown_bits) <= 2ul * N);
	for (i = KEEP; i < N; i++)
		tw_remove(&w, &ents[i]);
	CHECK(w.nr_live == KEEP);
	/* Shrinking is incremental: a few more operations finish it. */
	for (i = 0; i < 100000; i++)
		CHECK(tw_lookup(&w, ents[i % KEEP].id) == &ents[i % KEEP]);
	for (i = 0; i < 100000; i++) {
		tw_remove(&w, &ents[i % KEEP]);
		CHECK(tw_test_add(&w, &ents[i % KEEP], 1 + i % 1000) == 0);
	}
	CHECK(w.index.old == NULL);
	/* Shrunk to at most 8 buckets an entry (then it stops shrinking). */
	CHECK((1ul << w.index.cur_bits) <= 8 * KEEP);
	CHECK(w.index.cur_bits < grown_bits - 8);
	for (i = 0; i < N; i++)
		CHECK(tw_lookup(&w, ents[i].id) == (i < KEEP ? &ents[i] : NULL));
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

/*
 * Ids a user picks to collide under the public hash_64() (multiples of
 * the inverse of its golden-ratio constant all land in bucket 0 at every
 * table size) spread over the keyed index like random ones.
 */
static int test_chosen_ids_spread_over_the_keyed_index(void)
{
	enum { N = 100000 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	struct tw_wheel w;
	unsigned long b, longest = 0;
	unsigned int i;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < N; i++) {
		ents[i].id = (u64)i * 0x0e217c1e66c88cc3ull;
		CHECK(tw_test_add(&w, &ents[i], 1 + i % 1000) == 0);
	}
	/* Finish any resize so every entry is in the current table. */
	for (i = 0; w.index.old && i < N; i++)
		CHECK(tw_lookup(&w, ents[i].id) == &ents[i]);
	CHECK(!w.index.old);
	for (b = 0; b < (1ul << w.index.cur_bits); b++) {
		unsigned long len = 0;
		struct tw_entry *e;

		for (e = w.index.cur[b]; e; e = e->hnext)
			len++;
		if (len > longest)
			longest = len;
	}
	/* Load about 1.5: random chains of 65536 buckets stay below 16. */
	CHECK(longest < 16);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

/*
 * The core never allocates: with every allocation failing and no table
 * offered, adds go on until their chain is full, removes and expiry
 * never fail.
 */
static int test_core_never_allocates(void)
{
	enum { N = 2000 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	struct tw_wheel w;
	unsigned int i, added = 0, removed = 0;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	CHECK(tw_index_wanted(&w) == 6);
	/* A table of another size than the one asked for is refused. */
	{
		struct tw_entry **t = tw_index_alloc(7);
		hsiphash_key_t key = tw_test_next_key();

		CHECK(t && !tw_index_offer(&w, t, 7, &key));
		tw_index_free(t);
	}
	CHECK(tw_test_prepare(&w) == 0 && tw_index_wanted(&w) == 0);
	tw_host_fail_alloc = ULONG_MAX;
	for (i = 0; i < N; i++) {
		ents[i].id = i;
		if (tw_add(&w, &ents[i], 1 + i % 50) == 0) {
			added++;
			continue;
		}
		/* Refused only into a full chain: 64 buckets of at most 16. */
		CHECK(tw_lookup(&w, i) == NULL);
		CHECK(tw_test_longest_chain(&w) == TW_INDEX_CHAIN_MAX);
	}
	CHECK(added > 512 && added <= 64 * TW_INDEX_CHAIN_MAX && tw_index_wanted(&w) == 7);
	CHECK(tw_test_longest_chain(&w) == TW_INDEX_CHAIN_MAX);
	for (i = 0; i < N; i++) {
		if (tw_lookup(&w, i) != &ents[i])
			continue;
		if (removed * 2 < added)
			tw_remove(&w, &ents[i]);
		removed++;
	}
	CHECK(removed == added);
	removed = (added + 1) / 2;
	CHECK(advance_all(&w, 50) && w.nr_expired == added - removed && w.nr_live == 0);
	tw_host_fail_alloc = 0;
	CHECK(drain_free_none(&w) == added - removed);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

static int test_dump_of_empty_wheel_ends_at_once(void)
{
	struct tw_entry *out[4], *e;
	struct tw_wheel w;
	u64 pos = 0;

	tw_init(&w, 0, &tw_test_key);
	CHECK(tw_dump(&w, &pos, out, 4, 100) == 0 && pos == TW_DUMP_END);
	CHECK(tw_dump(&w, &pos, out, 4, 100) == 0 && pos == TW_DUMP_END);
	e = add_id(&w, 1, 10);
	CHECK(e);
	tw_remove(&w, e);
	free(e);
	pos = 0;
	while (pos != TW_DUMP_END)
		CHECK(tw_dump(&w, &pos, out, 4, 1) == 0);
	/* A cursor that is no key: keys are 63 bits. */
	pos = 1ULL << 63;
	CHECK(tw_dump(&w, &pos, out, 4, 100) == -EINVAL);
	pos = TW_DUMP_END - 1;
	CHECK(tw_dump(&w, &pos, out, 4, 100) == -EINVAL);
	wheel_free(&w);
	return 0;
}

/*
 * A dump in small steps, while other ids come and go and the index grows
 * and shrinks between steps: every id live throughout is listed exactly
 * once, and nothing that was never live is.
 */
static int test_dump_lists_each_steady_id_once_across_resizes(void)
{
	enum { STEADY = 3000, CHURN = 20000, MAXOUT = 7 };
	struct tw_entry *steady = calloc(STEADY, sizeof(*steady));
	struct tw_entry *churn = calloc(CHURN, sizeof(*churn));
	unsigned char *seen = calloc(STEADY, 1);
	struct tw_entry *out[MAXOUT];
	unsigned int i, calls = 0, c = 0, listed = 0;
	struct tw_wheel w;
	u64 pos = 0;

	CHECK(steady && churn && seen);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < STEADY; i++) {
		steady[i].id = i * 0x0e217c1e66c88cc3ull;
		CHECK(tw_test_add(&w, &steady[i], 1 + i % 5000) == 0);
	}
	for (i = 0; i < CHURN; i++)
		churn[i].id = (1ull << 63) | i;
	while (pos != TW_DUMP_END) {
		int n = tw_dump(&w, &pos, out, 1 + calls % MAXOUT, 1 + calls % 5);
		int j;

		CHECK(n >= 0 && calls++ < 1000000);
		for (j = 0; j < n; j++) {
			CHECK(tw_lookup(&w, out[j]->id) == out[j]);
			if (out[j] >= steady && out[j] < steady + STEADY) {
				seen[out[j] - steady]++;
				listed++;
			} else {
				CHECK(out[j] >= churn && out[j] < churn + CHURN);
			}
		}
		/* Grow to 23,000 ids, then shrink back to 3,000, twice over. */
		if (c < CHURN) {
			CHECK(tw_test_add(&w, &churn[c], 1 + c % 7000) == 0);
		} else {
			tw_remove(&w, &churn[c - CHURN]);
			CHECK(tw_test_prepare(&w) == 0);
		}
		if (++c == 2 * CHURN)
			c = 0;
	}
	for (i = 0; i < STEADY; i++)
		CHECK(seen[i] == 1);
	CHECK(listed == STEADY);
	tw_destroy(&w, release_none, NULL);
	free(steady);
	free(churn);
	free(seen);
	return 0;
}

/* What the lazy hooks of the next tests were asked, and decided, per id. */
static u64 lazy_calls, lazy_cascade_calls, lazy_rearms;
static unsigned char lazy_done[1000];

static bool lazy_even_ids_once(struct tw_wheel *w, struct tw_entry *e, u64 stamp,
			       u64 *expires)
{
	(void)stamp;
	/* A cascade asks too; this hook re-arms only at a deadline. */
	if (e->expires != w->clk) {
		lazy_cascade_calls++;
		return false;
	}
	lazy_calls++;
	/* Even ids live one more period of 100 ticks, once. */
	if (e->id % 2 || lazy_done[e->id])
		return false;
	lazy_done[e->id] = 1;
	*expires = w->clk + 100;
	lazy_rearms++;
	return true;
}

/*
 * The lazy hook is asked once per entry whose deadline comes, before it
 * expires; a re-armed entry stays live and is asked again at its new
 * deadline, and on the cascade that brings it there.
 */
static int test_lazy_hook_rearms_instead_of_expiring(void)
{
	enum { N = 1000 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	struct tw_wheel w;
	struct tw_entry *e;
	unsigned int i, odd = 0, even = 0;

	CHECK(ents);
	lazy_calls = lazy_cascade_calls = lazy_rearms = 0;
	memset(lazy_done, 0, sizeof(lazy_done));
	tw_init(&w, 0, &tw_test_key);
	w.lazy = lazy_even_ids_once;
	w.lazy_ahead = ~0ULL;
	for (i = 0; i < N; i++) {
		ents[i].id = i;
		CHECK(tw_test_add(&w, &ents[i], 1 + i % 50) == 0);
	}
	CHECK(advance_all(&w, 50));
	CHECK(lazy_calls == N && lazy_rearms == N / 2 && lazy_cascade_calls == 0);
	CHECK(w.nr_expired == N / 2 && w.nr_live == N / 2);
	while ((e = tw_pop_expired(&w)))
		odd += e->id % 2;
	CHECK(odd == N / 2);
	/* The re-armed ones come at their new deadline, asked once more. */
	CHECK(advance_all(&w, 120) && w.nr_expired > 0 && w.nr_expired < N / 2);
	CHECK(advance_all(&w, 150) && w.nr_expired == N / 2 && w.nr_live == 0);
	CHECK(lazy_calls == N + N / 2 && lazy_rearms == N / 2);
	/* Each went from level 1 (101 to 150 ticks past clocks of 1 to 50) to 0 once. */
	CHECK(lazy_cascade_calls == N / 2);
	while ((e = tw_pop_expired(&w)))
		even += e->id % 2 == 0 && e->expires <= 150 && e->expires > 100;
	CHECK(even == N / 2);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

static bool lazy_cascade_once(struct tw_wheel *w, struct tw_entry *e, u64 stamp,
			      u64 *expires)
{
	(void)stamp;
	if (e->expires == w->clk) {
		lazy_calls++;
		return false;
	}
	lazy_cascade_calls++;
	if (lazy_done[e->id])
		return false;
	lazy_done[e->id] = 1;
	*expires = e->expires + 1000;
	lazy_rearms++;
	return true;
}

/*
 * lazy_cascade_begin() - the counters reset, and @w a new wheel with
 * lazy_cascade_once() as its hook and @ahead as its reach, holding @n
 * entries 0..@n-1 due at 193 + their id: slot 3 of level 1, 1 to 63
 * ticks past its cascade at 192.
 */
static int lazy_cascade_begin(struct tw_wheel *w, struct tw_entry *ents, unsigned int n,
			      u64 ahead)
{
	unsigned int i;

	lazy_calls = lazy_cascade_calls = lazy_rearms = 0;
	memset(lazy_done, 0, sizeof(lazy_done));
	tw_init(w, 0, &tw_test_key);
	CHECK(w->lazy_ahead == 0);
	w->lazy = lazy_cascade_once;
	w->lazy_ahead = ahead;
	for (i = 0; i < n; i++) {
		ents[i].id = i;
		CHECK(tw_test_add(w, &ents[i], 193 + i) == 0);
	}
	return 0;
}

/*
 * A later deadline the hook gives on a cascade places the entry there at
 * once: it is not moved down a level first, nor due at its old deadline.
 */
static int test_lazy_hook_rearms_on_a_cascade(void)
{
	enum { N = 63 };
	struct tw_entry ents[N] = { 0 };
	struct tw_wheel w;
	struct tw_entry *e;
	unsigned int i, right = 0;

	/* Every entry within reach. */
	CHECK(lazy_cascade_begin(&w, ents, N, ~0ULL) == 0);
	CHECK(advance_all(&w, 191) && lazy_cascade_calls == 0);
	/* The cascade at 192 re-arms them all, 1000 ticks on. */
	CHECK(advance_all(&w, 255));
	CHECK(lazy_cascade_calls == N && lazy_rearms == N && lazy_calls == 0);
	CHECK(w.nr_expired == 0 && w.nr_live == N && w.bitmap[0] == 0);
	for (i = 0; i < N; i++)
		CHECK(ents[i].expires == 1193 + i);
	/* Asked again on the next cascade, then at the deadline: they expire. */
	CHECK(advance_all(&w, 1191) && w.nr_expired == 0);
	CHECK(advance_all(&w, 1255) && w.nr_expired == N && w.nr_live == 0);
	/*
	 * Every one was asked on that cascade but the one due at 1216, the
	 * first tick of its slot of level 1: it comes due from there.
	 */
	CHECK(lazy_rearms == N && lazy_calls == N && lazy_cascade_calls == 2 * N - 1);
	while ((e = tw_pop_expired(&w)))
		right += e->expires == 1193 + e->id;
	CHECK(right == N);
	tw_destroy(&w, release_none, NULL);
	return 0;
}

/*
 * On a cascade the hook is asked only about entries due within
 * lazy_ahead ticks of the clock; the rest move down unasked and are
 * asked at their deadline. A reach of 0 asks only at deadlines.
 */
static int test_lazy_hook_asked_on_a_cascade_only_within_its_reach(void)
{
	enum { N = 63, AHEAD = 10 };
	struct tw_entry ents[N] = { 0 };
	struct tw_wheel w;
	struct tw_entry *e;
	unsigned int i, right = 0;

	CHECK(lazy_cascade_begin(&w, ents, N, AHEAD) == 0);
	CHECK(advance_all(&w, 255));
	/* Those due by 202 were asked and re-armed; the rest expired. */
	CHECK(lazy_cascade_calls == AHEAD && lazy_rearms == AHEAD);
	CHECK(lazy_calls == N - AHEAD && w.nr_expired == N - AHEAD && w.nr_live == AHEAD);
	for (i = 0; i < N; i++)
		CHECK(ents[i].expires == (i < AHEAD ? 1193 + i : 193 + i));
	while ((e = tw_pop_expired(&w)))
		right += e->id >= AHEAD && e->expires == 193 + e->id;
	CHECK(right == N - AHEAD);
	/* With no reach, the re-armed ones are asked only when due. */
	w.lazy_ahead = 0;
	CHECK(advance_all(&w, 1300) && w.nr_expired == AHEAD && w.nr_live == 0);
	CHECK(lazy_cascade_calls == AHEAD && lazy_calls == N);
	/* tw_destroy() keeps the caller's reach, as it keeps the hook. */
	w.lazy_ahead = AHEAD;
	tw_destroy(&w, release_none, NULL);
	CHECK(w.lazy == lazy_cascade_once && w.lazy_ahead == AHEAD);
	tw_destroy(&w, release_none, NULL);
	return 0;
}

static int test_index_shrinks_then_grows_back(void)
{
	enum { N = 100000 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	struct tw_wheel w;
	unsigned int i, steps = 0;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < N; i++) {
		ents[i].id = i;
		CHECK(tw_test_add(&w, &ents[i], 1 + i % 3000) == 0);
	}
	/* Remove until a shrink starts, then add everything back at once. */
	for (i = N; i-- > 0 && !w.index.old; steps++) {
		tw_remove(&w, &ents[i]);
		CHECK(tw_test_prepare(&w) == 0);
	}
	CHECK(w.index.old != NULL);
	for (; i < N; i++)
		if (!tw_lookup(&w, ents[i].id))
			CHECK(tw_test_add(&w, &ents[i], 1 + i % 3000) == 0);
	CHECK(w.nr_live == N);
	for (i = 0; i < N; i++)
		CHECK(tw_lookup(&w, ents[i].id) == &ents[i]);
	/* Once the moves are done, the table has grown back to the load. */
	CHECK(w.index.old == NULL);
	CHECK((1ul << w.index.cur_bits) >= N / 2);
	CHECK(advance_all(&w, 3000) && w.nr_expired == N && steps > 0);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

static void release_count(struct tw_entry *e, void *arg)
{
	unsigned char *count = arg;

	count[e->id]++;
	free(e);
}

static int test_destroy_releases_every_entry_once(void)
{
	enum { N = 3000 };
	unsigned char count[N] = { 0 };
	struct tw_wheel w;
	unsigned int i;

	tw_init(&w, 10, &tw_test_key);
	for (i = 0; i < N; i++)
		CHECK(add_id(&w, i, 10 + rnd_range(100000)));
	CHECK(advance_all(&w, 10 + 50000));
	CHECK(w.nr_expired > 0 && w.nr_live > 0);
	tw_destroy(&w, release_count, count);
	for (i = 0; i < N; i++)
		CHECK(count[i] == 1);
	CHECK(w.nr_live == 0 && w.nr_expired == 0);
	/* The same key: what a dump's cursor was made under still holds. */
	CHECK(!memcmp(&w.index.key, &tw_test_key, sizeof(tw_test_key)));
	CHECK(tw_pop_expired(&w) == NULL && tw_lookup(&w, 5) == NULL);
	/* Reusable after destroy. */
	CHECK(add_id(&w, 5, w.clk + 3));
	CHECK(advance_all(&w, w.clk + 3) && w.nr_expired == 1);
	wheel_free(&w);
	return 0;
}

static int test_alloc_failure_leaves_wheel_consistent(void)
{
	enum { N = 100000, FIRST = 1000 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	struct tw_wheel w;
	unsigned int i, n = 0, failures = 0, bits;
	u64 t;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	/* No memory for the first table: the first add fails cleanly. */
	tw_host_fail_alloc = 1;
	ents[0].id = 0;
	CHECK(tw_test_add(&w, &ents[0], 1) == -ENOMEM);
	CHECK(w.nr_live == 0 && tw_lookup(&w, 0) == NULL && !tw_next_event(&w, &t));
	tw_host_fail_alloc = 0;
	for (i = 0; i < FIRST; i++, n++) {
		ents[i].id = i;
		CHECK(tw_test_add(&w, &ents[i], 1 + i % 5000) == 0);
	}
	/* From now on every allocation fails: the index cannot grow. */
	tw_host_fail_alloc = ULONG_MAX;
	bits = w.index.cur_bits;
	for (i = FIRST; i < N; i++) {
		int ret;

		ents[i].id = i;
		ret = tw_test_add(&w, &ents[i], 1 + i % 5000);
		if (ret) {
			CHECK(ret == -ENOMEM);
			CHECK(tw_lookup(&w, i) == NULL);
			CHECK(w.nr_live == n);
			failures++;
			continue;
		}
		n++;
	}
	tw_host_fail_alloc = 0;
	/* Adds went on past the load that asks to grow, then stopped. */
	CHECK(failures > 0 && w.index.cur_bits == bits);
	CHECK(n > (2u << bits) && n < N);
	for (i = 0; i < N; i++) {
		struct tw_entry *e = tw_lookup(&w, i);

		CHECK(e == NULL || e == &ents[i]);
		/* Memory is back: what failed goes in now. */
		if (!e)
			CHECK(tw_test_add(&w, &ents[i], 1 + i % 5000) == 0);
	}
	CHECK(w.nr_live == N);
	CHECK(tw_next_event(&w, &t) && tick_le(t, 1));
	CHECK(advance_all(&w, 5000));
	CHECK(w.nr_expired == N && w.nr_live == 0);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

static int test_idle_to_moves_the_clock_only_when_nothing_is_due(void)
{
	struct tw_wheel w;
	struct tw_entry *a;
	u64 t;

	tw_init(&w, 100, &tw_test_key);
	/* An empty wheel follows the present. */
	CHECK(tw_idle_to(&w, 5000) && w.clk == 5000);
	/* An entry due at 5010 (level 0 from 5000): fine up to 5009. */
	a = add_id(&w, 1, 5010);
	CHECK(a && tw_idle_to(&w, 5009) && w.clk == 5009);
	CHECK(!tw_idle_to(&w, 5010) && w.clk == 5009);
	/* A far entry: refused from its first cascade on, not its deadline. */
	tw_rearm(&w, a, 5009 + 100000);
	CHECK(tw_next_event(&w, &t) && t < a->expires);
	CHECK(!tw_idle_to(&w, t) && w.clk == 5009);
	CHECK(tw_idle_to(&w, t - 1) && w.clk == t - 1);
	/* Deadlines placed after the move count from the new clock. */
	CHECK(advance_all(&w, a->expires) && tw_pop_expired(&w) == a);
	free(a);
	/* A cut advance whose entries were all removed leaves nothing due. */
	CHECK(add_id(&w, 2, w.clk + 1) && add_id(&w, 3, w.clk + 1));
	CHECK(!tw_advance(&w, w.clk + 1, 1, 0));
	free(tw_pop_expired(&w));
	a = tw_lookup(&w, 2) ? tw_lookup(&w, 2) : tw_lookup(&w, 3);
	tw_remove(&w, a);
	free(a);
	CHECK(tw_idle_to(&w, w.clk + 1000) && !tw_next_event(&w, &t));
	CHECK(w.pend_level < 0);
	wheel_free(&w);
	return 0;
}

static int test_next_event_none_when_empty(void)
{
	struct tw_wheel w;
	struct tw_entry *a;
	u64 t = 12345;

	tw_init(&w, 0, &tw_test_key);
	CHECK(!tw_next_event(&w, &t));
	a = add_id(&w, 1, 10);
	CHECK(a && tw_next_event(&w, &t));
	tw_remove(&w, a);
	free(a);
	CHECK(!tw_next_event(&w, &t));
	/* Expired but undelivered entries are no work for the wheel. */
	CHECK(add_id(&w, 2, 10));
	CHECK(advance_all(&w, 10));
	CHECK(w.nr_expired == 1 && !tw_next_event(&w, &t));
	wheel_free(&w);
	return 0;
}

static int test_next_event_none_after_cut_advance_emptied(void)
{
	struct tw_wheel w;
	struct tw_entry *a, *b;
	u64 t;

	tw_init(&w, 0, &tw_test_key);
	a = add_id(&w, 1, 10);
	b = add_id(&w, 2, 10);
	CHECK(a && b);
	/* Budget 1: one of the two expires, the slot is left half done. */
	CHECK(!tw_advance(&w, 10, 1, 10));
	CHECK(w.nr_expired == 1 && w.nr_live == 1);
	CHECK(tw_next_event(&w, &t) && t == w.clk);
	tw_remove(&w, tw_lookup(&w, tw_peek_expired(&w) == a ? 2 : 1));
	/* No live entry: nothing to do, whatever the cut left behind. */
	CHECK(w.nr_live == 0 && !tw_next_event(&w, &t));
	CHECK(advance_all(&w, 20) && w.nr_expired == 1);
	CHECK(!tw_next_event(&w, &t));
	free(tw_peek_expired(&w) == a ? b : a);
	wheel_free(&w);
	return 0;
}

static int test_next_event_exact_for_level0_entry(void)
{
	struct tw_wheel w;
	u64 t = 0;

	/* 1000 is 15 * 64 + 40: ticks 1001 .. 1023 are on level 0. */
	tw_init(&w, 1000, &tw_test_key);
	CHECK(add_id(&w, 1, 1023));
	CHECK(tw_next_event(&w, &t) && t == 1023);
	CHECK(add_id(&w, 2, 1005));
	CHECK(tw_next_event(&w, &t) && t == 1005);
	/* Past the run of 64, the next event is the cascade at 1024. */
	wheel_free(&w);
	tw_init(&w, 1023, &tw_test_key);
	CHECK(add_id(&w, 3, 1030));
	CHECK(tw_next_event(&w, &t) && t == 1024);
	CHECK(advance_all(&w, 1024) && w.nr_expired == 0);
	CHECK(tw_next_event(&w, &t) && t == 1030);
	wheel_free(&w);
	return 0;
}

static int test_next_event_far_entry_cascades_before_deadline(void)
{
	struct tw_wheel w;
	u64 t = 0, dl = 7 + (1ull << 30) + 12345;

	tw_init(&w, 7, &tw_test_key);
	CHECK(add_id(&w, 1, dl));
	CHECK(tw_next_event(&w, &t));
	CHECK(!tick_le(t, w.clk) && tick_le(t, dl));
	/* Following the events reaches the deadline exactly. */
	while (w.nr_live) {
		CHECK(tw_next_event(&w, &t) && tick_le(t, dl));
		CHECK(advance_all(&w, t));
	}
	CHECK(t == dl && w.nr_expired == 1);
	wheel_free(&w);
	return 0;
}

static int test_next_event_never_after_earliest_deadline(void)
{
	struct tw_wheel w;
	u64 start = UINT64_MAX - 100000, t, min;
	unsigned int round, i;

	tw_init(&w, start, &tw_test_key);
	for (round = 0; round < 300; round++) {
		for (i = 0; i < 20; i++) {
			unsigned int level = rnd() % TW_LEVELS;
			u64 span = 1ull << (6 * level + 6);

			if (span > TW_MAX_DELTA)
				span = TW_MAX_DELTA;
			/* An id already live is simply not added again. */
			add_id(&w, rnd() % 5000, w.clk + rnd_range(span));
		}
		/* The earliest deadline, by brute force over the ids. */
		min = 0;
		for (i = 0; i < 5000; i++) {
			struct tw_entry *e = tw_lookup(&w, i);

			if (e && (!min || tick_le(e->expires, min)))
				min = e->expires;
		}
		CHECK(min && tw_next_event(&w, &t));
		CHECK(tick_le(w.clk, t) && tick_le(t, min));
		CHECK(advance_all(&w, t));
		drain_free(&w);
	}
	wheel_free(&w);
	return 0;
}

/*
 * Mass expiry, then the same ids again (issue 16): 4M ids expire unread,
 * the reader takes them (and offers the shrink it asks for), and the
 * 4M adds that follow, each after the table the index asks for, as the
 * device does, all succeed. The shrink came in steps of at most 8 times.
 */
static int test_mass_expiry_then_readd_of_4m_fails_none(void)
{
	enum { N = 4 << 20 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	unsigned int i, failed = 0, big, first, smallest = 64;
	struct tw_wheel w;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < N; i++) {
		ents[i].id = (u64)i * 0x9e3779b97f4a7c15ull;
		CHECK(tw_test_add(&w, &ents[i], 10) == 0);
	}
	big = w.index.cur_bits;
	CHECK(advance_all(&w, 10) && w.nr_expired == N && w.nr_live == 0);
	CHECK(drain_free_none(&w) == N);
	CHECK(tw_test_prepare(&w) == 0);
	first = w.index.cur_bits;
	for (i = 0; i < N; i++) {
		if (w.index.cur_bits < smallest)
			smallest = w.index.cur_bits;
		CHECK(tw_lookup(&w, ents[i].id) == NULL);
		if (tw_test_add(&w, &ents[i], 20))
			failed++;
	}
	printf("# re-add of %u ids: %u failed; index 2^%u, shrunk to 2^%u first, 2^%u at least, now 2^%u\n",
	       N, failed, big, first, smallest, w.index.cur_bits);
	CHECK(failed == 0 && w.nr_live == N);
	CHECK(first + 3 == big && w.index.cur_bits >= big - 1);
	for (i = 0; i < N; i += 1009)
		CHECK(tw_lookup(&w, ents[i].id) == &ents[i]);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

/*
 * Memory follows what is live: with every id gone, operations that go on
 * shrink the index step by step, each at most 8 times, down to the
 * smallest table.
 */
static int test_index_shrinks_in_steps_to_the_smallest(void)
{
	enum { N = 1 << 20 };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	unsigned int i, bits, steps = 0;
	struct tw_wheel w;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < N; i++) {
		ents[i].id = i;
		CHECK(tw_test_add(&w, &ents[i], 1 + i % 1000) == 0);
	}
	for (i = 0; i < N; i++)
		tw_remove(&w, &ents[i]);
	bits = w.index.cur_bits;
	for (i = 0; i < 100000 && (w.index.old || w.index.cur_bits > 6); i++) {
		unsigned int was = w.index.cur_bits;

		CHECK(tw_test_prepare(&w) == 0);
		if (w.index.cur_bits != was) {
			CHECK(w.index.cur_bits < was && w.index.cur_bits + 3 >= was);
			steps++;
		}
		CHECK(tw_lookup(&w, i) == NULL);
	}
	CHECK(!w.index.old && w.index.cur_bits == 6 && steps >= (bits - 6) / 3);
	wheel_free(&w);
	free(ents);
	return 0;
}

/*
 * The strongest attacker knows the key: ids that all share one bucket.
 * First with the key the wheel started with (what a dump of it leaks):
 * the chain that grows asks for a new key, the ids spread over it, and
 * every add succeeds. Then with each key the index takes, known at once:
 * adds may fail, chains never grow past TW_INDEX_CHAIN_MAX, through the
 * rehashes, and every id added is found.
 */
static int test_chain_bound_holds_for_ids_in_one_bucket(void)
{
	enum { N = 2000, ROUNDS = 12, PER = 300, ALL = N + ROUNDS * PER };
	struct tw_entry *ents = calloc(ALL, sizeof(*ents));
	unsigned int i, r, n = 0, failed = 0, longest = 0, gen0;
	uint64_t seed = 7;
	struct tw_wheel w;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < N; i++, n++) {
		ents[n].id = tw_test_id_in_bucket(&tw_test_key, 12, 0, &seed);
		CHECK(tw_test_add(&w, &ents[n], 1 + i % 3000) == 0);
		if (tw_test_longest_chain(&w) > longest)
			longest = tw_test_longest_chain(&w);
		CHECK(longest <= TW_INDEX_CHAIN_MAX);
	}
	CHECK(w.index.gen >= 1);
	gen0 = w.index.gen;
	for (r = 0; r < ROUNDS; r++) {
		hsiphash_key_t key = w.index.key;
		unsigned int bits = w.index.cur_bits;

		for (i = 0; i < PER; i++) {
			ents[n].id = tw_test_id_in_bucket(&key, bits, r, &seed);
			if (tw_test_add(&w, &ents[n], 1 + i % 3000)) {
				CHECK(tw_lookup(&w, ents[n].id) == NULL);
				failed++;
			} else {
				n++;
			}
			CHECK(tw_test_longest_chain(&w) <= TW_INDEX_CHAIN_MAX);
		}
	}
	printf("# %u ids in one bucket, then %u rounds of %u under each new key: %u new keys, %u adds failed, longest chain %u\n",
	       N, ROUNDS, PER, w.index.gen, failed, longest);
	CHECK(w.index.gen > gen0 && w.nr_live == n);
	for (i = 0; i < n; i++)
		CHECK(tw_lookup(&w, ents[i].id) == &ents[i]);
	CHECK(advance_all(&w, 3000) && w.nr_expired == n && w.nr_live == 0);
	CHECK(drain_free_none(&w) == n);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

/*
 * Ids that share a bucket under the index's key, added while a resize is
 * under way: what a user meets who adds again, after they expired, the
 * ids a dump listed first (its order leaks the key). Their chain grows
 * long and asks for a new key, which the resize holds back; the resize
 * must hurry so that the key comes before the chain fills. Added as the
 * device adds, each after the table the index asks for (and once more
 * after one that an add failing with ENOMEM asked for): none fails.
 */
static int test_chain_grown_long_during_a_resize_hurries_it(void)
{
	enum { FILL = 3000, CHOSEN = 600 };
	struct tw_entry *ents = calloc(FILL + CHOSEN, sizeof(*ents));
	unsigned int i, gen, failed = 0, longest = 0;
	uint64_t seed = 13;
	struct tw_wheel w;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < FILL; i++) {
		ents[i].id = (u64)i * 0x9e3779b97f4a7c15ull;
		CHECK(tw_test_add(&w, &ents[i], 5000) == 0);
	}
	while (w.index.old)
		tw_lookup(&w, 0);
	CHECK(w.index.cur_bits == 11);
	for (i = 0; i < FILL; i++)
		tw_remove(&w, &ents[i]);
	CHECK(tw_test_prepare(&w) == 0);
	CHECK(w.index.old && w.index.old_bits == 11 && w.index.cur_bits == 8);
	gen = w.index.gen;
	for (i = 0; i < CHOSEN; i++)
		ents[FILL + i].id = tw_test_id_in_bucket(&w.index.key, 8, 0, &seed);
	for (i = 0; i < CHOSEN; i++) {
		struct tw_entry *e = &ents[FILL + i];
		int r;

		r = tw_test_add(&w, e, 5000);
		if (r == -ENOMEM)
			r = tw_test_add(&w, e, 5000);
		failed += r != 0;
		if (tw_test_longest_chain(&w) > longest)
			longest = tw_test_longest_chain(&w);
	}
	printf("# %u ids of one bucket added during a shrink of 2^11: %u new keys, %u adds failed, longest chain %u\n",
	       CHOSEN, w.index.gen - gen, failed, longest);
	CHECK(failed == 0 && w.index.gen > gen && longest <= TW_INDEX_CHAIN_MAX);
	for (i = 0; i < CHOSEN; i++)
		CHECK(tw_lookup(&w, ents[FILL + i].id) == &ents[FILL + i]);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

/*
 * Ids chosen so that the 8 buckets one shrink would merge hold 48 of
 * them: the shrink turns back when it meets them, and the index moves to
 * a new key and shrinks then. No chain ever exceeds the bound.
 */
static int test_shrink_turns_back_from_chosen_groups(void)
{
	enum { FILL = 8000, CHOSEN = 48 };
	struct tw_entry *ents = calloc(FILL + CHOSEN, sizeof(*ents));
	unsigned int i, bits, gen, longest = 0;
	uint64_t seed = 11;
	struct tw_wheel w;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < FILL; i++) {
		ents[i].id = (u64)i * 0x9e3779b97f4a7c15ull;
		CHECK(tw_test_add(&w, &ents[i], 5000) == 0);
	}
	while (w.index.old)
		tw_lookup(&w, 0);
	bits = w.index.cur_bits;
	gen = w.index.gen;
	CHECK(bits == 12);
	/* 6 a bucket in buckets 0..7: one bucket once 8 times fewer. */
	for (i = 0; i < CHOSEN; i++) {
		ents[FILL + i].id = tw_test_id_in_bucket(&w.index.key, bits, i % 8, &seed);
		CHECK(tw_test_add(&w, &ents[FILL + i], 5000) == 0);
	}
	CHECK(w.index.gen == gen && tw_test_longest_chain(&w) < 14);
	for (i = 0; i < FILL; i++) {
		tw_remove(&w, &ents[i]);
		CHECK(tw_test_prepare(&w) == 0);
		if (tw_test_longest_chain(&w) > longest)
			longest = tw_test_longest_chain(&w);
	}
	for (i = 0; i < 100000 && (w.index.old || w.index.cur_bits >= bits); i++) {
		CHECK(tw_lookup(&w, ents[FILL + i % CHOSEN].id) == &ents[FILL + i % CHOSEN]);
		CHECK(tw_test_prepare(&w) == 0);
		if (tw_test_longest_chain(&w) > longest)
			longest = tw_test_longest_chain(&w);
	}
	printf("# shrink of 2^%u with %u chosen ids in one group: now 2^%u, %u new keys, longest chain %u\n",
	       bits, CHOSEN, w.index.cur_bits, w.index.gen - gen, longest);
	CHECK(longest <= TW_INDEX_CHAIN_MAX && w.index.gen > gen);
	CHECK(!w.index.old && w.index.cur_bits < bits);
	for (i = 0; i < CHOSEN; i++)
		CHECK(tw_lookup(&w, ents[FILL + i].id) == &ents[FILL + i]);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

/*
 * Dumps in small steps while the strongest attacker makes the index take
 * new keys and other ids come and go: a cursor from before a new key is
 * refused (-ESTALE) and the dump starts over; a dump that reaches the end
 * lists every id live throughout it exactly once, and no dump lists an id
 * twice. The attacker also fills chains that a move to a new key must go
 * into, which makes the move wait (-EAGAIN) until it removes its ids.
 */
static int test_dump_lists_each_steady_id_once_across_rehashes(void)
{
	enum { STEADY = 3000, CHURN = 4000, ATTACK = 2000, MAXOUT = 5 };
	struct tw_entry *ents = calloc(STEADY + CHURN + ATTACK, sizeof(*ents));
	unsigned char *seen = calloc(STEADY + CHURN + ATTACK, 1), in[CHURN + ATTACK];
	unsigned int i, c = 0, a = 0, calls = 0, restarts = 0, done = 0, waits = 0;
	struct tw_entry *out[MAXOUT];
	uint64_t seed = 13;
	struct tw_wheel w;
	u64 cursor = 0;

	CHECK(ents && seen);
	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < STEADY; i++) {
		ents[i].id = (u64)i * 0x0e217c1e66c88cc3ull;
		CHECK(tw_test_add(&w, &ents[i], 1 + i % 5000) == 0);
	}
	while (done < 3) {
		int n = tw_dump(&w, &cursor, out, 1 + calls % MAXOUT, 1 + calls % 7), j;

		CHECK(calls++ < 1000000);
		if (n == -ESTALE) {
			restarts++;
			memset(seen, 0, STEADY + CHURN + ATTACK);
			cursor = 0;
		} else if (n == -EAGAIN) {
			waits++;
		} else {
			CHECK(n >= 0);
		}
		for (j = 0; j < n; j++) {
			unsigned int k = out[j] - ents;

			CHECK(k < STEADY + CHURN + ATTACK && tw_lookup(&w, out[j]->id) == out[j]);
			CHECK(++seen[k] == 1);
		}
		if (cursor == TW_DUMP_END) {
			for (i = 0; i < STEADY; i++)
				CHECK(seen[i] == 1);
			done++;
			memset(seen, 0, STEADY + CHURN + ATTACK);
			cursor = 0;
		}
		/* Churn: an add may find its chain filled by the attacker. */
		if (c < CHURN) {
			ents[STEADY + c].id = (1ull << 63) | c;
			in[c] = !tw_test_add(&w, &ents[STEADY + c], 1 + c % 7000);
		} else if (in[c - CHURN]) {
			tw_remove(&w, &ents[STEADY + c - CHURN]);
			CHECK(tw_test_prepare(&w) == 0);
		}
		c = (c + 1) % (2 * CHURN);
		/* Ids of one bucket of the key of the moment; then none. */
		if (a < ATTACK && calls % 3 == 0) {
			struct tw_entry *e = &ents[STEADY + CHURN + a];

			e->id = tw_test_id_in_bucket(&w.index.key, w.index.cur_bits, 1, &seed);
			in[CHURN + a] = !tw_test_add(&w, e, 1 + a % 9000);
			if (++a == ATTACK)
				for (i = 0; i < ATTACK; i++)
					if (in[CHURN + i])
						tw_remove(&w, &ents[STEADY + CHURN + i]);
		}
	}
	printf("# %u dump calls, %u restarts after new keys (%u in all), %u waits, 3 dumps done\n",
	       calls, restarts, w.index.gen, waits);
	CHECK(restarts > 0 && w.index.gen > 0);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	free(seen);
	return 0;
}

/*
 * A dump cursor names the key it was made under: one of another key is
 * refused with -ESTALE before anything is listed, 0 always begins.
 */
static int test_cursor_of_another_key_is_estale(void)
{
	enum { N = 100 };
	struct tw_entry ents[N], *out[4];
	struct tw_wheel w;
	uint64_t seed = 17;
	unsigned int i;
	u64 cursor = 0, stale;

	tw_init(&w, 0, &tw_test_key);
	for (i = 0; i < N; i++) {
		ents[i].id = i;
		CHECK(tw_test_add(&w, &ents[i], 10) == 0);
	}
	CHECK(tw_dump(&w, &cursor, out, 4, 1000) == 4 && cursor >> TW_DUMP_POS_BITS == 0);
	stale = cursor;
	cursor = 1ULL << TW_DUMP_POS_BITS;
	CHECK(tw_dump(&w, &cursor, out, 4, 1000) == -ESTALE && cursor == 1ULL << TW_DUMP_POS_BITS);
	/* The attacker with the key makes the index take a new one. */
	for (i = 0; w.index.gen == 0 && i < 64; i++) {
		struct tw_entry *e = ent_new(tw_test_id_in_bucket(&w.index.key, w.index.cur_bits,
								   0, &seed));

		if (tw_test_add(&w, e, 10))
			free(e);
		tw_test_prepare(&w);
	}
	CHECK(w.index.gen == 1);
	cursor = stale;
	CHECK(tw_dump(&w, &cursor, out, 4, 1000) == -ESTALE && cursor == stale);
	cursor = 0;
	do {
		int n = tw_dump(&w, &cursor, out, 4, 1000);

		CHECK(n >= 0 || n == -EAGAIN);
	} while (cursor != TW_DUMP_END && (cursor >> TW_DUMP_POS_BITS) == 1);
	CHECK(cursor == TW_DUMP_END);
	for (i = 0; i < N; i++)
		tw_remove(&w, &ents[i]);
	wheel_free(&w);
	return 0;
}

/*
 * The advance budget counts chain steps, not only entries: with every
 * chain at the bound and each id expiring from the end of its chain, a
 * call spends its budget on fewer entries, and the steps of one call stay
 * within what the budget allows.
 */
static int test_advance_budget_counts_chain_steps(void)
{
	enum { B = 64, PER = TW_INDEX_CHAIN_MAX, N = 64 * PER };
	struct tw_entry *ents = calloc(N, sizeof(*ents));
	unsigned int i, calls = 0, most = 0;
	uint64_t seed = 19;
	struct tw_wheel w;

	CHECK(ents);
	tw_init(&w, 0, &tw_test_key);
	CHECK(tw_test_prepare(&w) == 0 && w.index.cur_bits == 6);
	tw_host_fail_alloc = ULONG_MAX;
	/* Oldest first in time, last in its chain: each expiry walks it. */
	for (i = 0; i < N; i++) {
		ents[i].id = tw_test_id_in_bucket(&w.index.key, 6, i % 64, &seed);
		CHECK(tw_add(&w, &ents[i], 1 + i / 64) == 0);
	}
	CHECK(tw_test_longest_chain(&w) == TW_INDEX_CHAIN_MAX);
	while (w.nr_live) {
		u64 before = w.nr_expired, steps = w.index.steps;
		bool done = tw_advance(&w, PER, B, PER);
		u64 got = w.nr_expired - before;

		calls++;
		CHECK(got >= 1 && got <= B);
		/* One entry's steps may overshoot: at most a chain's worth. */
		CHECK(w.index.steps - steps <= (u64)TW_STEPS_PER_UNIT * B + TW_INDEX_CHAIN_MAX);
		if (got > most)
			most = got;
		CHECK(done || w.nr_live);
	}
	tw_host_fail_alloc = 0;
	printf("# %u ids in chains of %u: %u calls of budget %u, at most %u entries a call\n",
	       N, PER, calls, B, most);
	CHECK(most < B && calls > N / B);
	CHECK(drain_free_none(&w) == N);
	tw_destroy(&w, release_none, NULL);
	free(ents);
	return 0;
}

static const struct {
	int (*fn)(void);
	const char *name;
} tests[] = {
#define T(x) { test_##x, #x }
	T(add_lookup_rearm_remove),
	T(add_existing_id_is_callers_check),
	T(refresh_in_expiry_tick_before_advance_moves_it),
	T(refresh_in_expiry_tick_after_advance_finds_nothing),
	T(cancel_of_expired_id_finds_nothing),
	T(never_early_at_most_one_tick_late),
	T(deadline_order_across_levels_and_cascades),
	T(events_given_back_are_taken_first_in_order),
	T(empty_ticks_cost_nothing),
	T(chunked_expiry_of_1e6_same_deadline),
	T(cascade_cut_by_budget_then_continued_with_changes),
	T(tick_counter_wraps),
	T(ids_0_and_u64_max),
	T(timeout_0_and_beyond_max_delta),
	T(lazy_rearm_far_past_a_lagging_clock_is_not_early),
	T(expires_in_the_past_is_clamped_to_next_tick),
	T(index_grows_to_1e6_and_shrinks_back),
	T(index_shrinks_then_grows_back),
	T(chosen_ids_spread_over_the_keyed_index),
	T(mass_expiry_then_readd_of_4m_fails_none),
	T(index_shrinks_in_steps_to_the_smallest),
	T(chain_bound_holds_for_ids_in_one_bucket),
	T(shrink_turns_back_from_chosen_groups),
	T(chain_grown_long_during_a_resize_hurries_it),
	T(dump_lists_each_steady_id_once_across_rehashes),
	T(cursor_of_another_key_is_estale),
	T(advance_budget_counts_chain_steps),
	T(core_never_allocates),
	T(dump_of_empty_wheel_ends_at_once),
	T(dump_lists_each_steady_id_once_across_resizes),
	T(lazy_hook_rearms_instead_of_expiring),
	T(lazy_hook_rearms_on_a_cascade),
	T(lazy_hook_asked_on_a_cascade_only_within_its_reach),
	T(destroy_releases_every_entry_once),
	T(alloc_failure_leaves_wheel_consistent),
	T(idle_to_moves_the_clock_only_when_nothing_is_due),
	T(next_event_none_when_empty),
	T(next_event_none_after_cut_advance_emptied),
	T(next_event_exact_for_level0_entry),
	T(next_event_far_entry_cascades_before_deadline),
	T(next_event_never_after_earliest_deadline),
#undef T
};

int main(void)
{
	unsigned int i, n = sizeof(tests) / sizeof(tests[0]);

	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	ksft_set_plan(n);
	for (i = 0; i < n; i++) {
		int fail = tests[i].fn();

		tw_host_fail_alloc = 0;
		ksft_test_result(!fail, "%s\n", tests[i].name);
	}
	ksft_finished();
}
