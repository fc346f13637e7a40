// SPDX-License-Identifier: GPL-2.0
/*
 * Differential fuzzer of the wheel core against a reference model.
 *
 * The input bytes decode into a start clock (near 0, near 2^36, near
 * UINT64_MAX, or anywhere) and a sequence of operations: add, rearm,
 * remove and lookup of ids from a small space (so ids collide), bulk adds
 * and removes (so the id index grows, shrinks and resizes under way),
 * advances by steps from one tick to 2^36 with budgets from one entry to
 * unlimited, left cut short or carried on, advances to tw_next_event(),
 * tw_idle_to() (which must refuse while anything is due up to its tick),
 * pops of expired entries, allocation failures, re-arms by the lazy hook
 * (the device's touch table) decided per id by the input, from the clock
 * or from the advance's target (a touch from the present found by work
 * catching up on a lagging clock), and dumps in small steps between the
 * other operations. Deadlines reach past the wheel's TW_MAX_DELTA by up
 * to 2^40 ticks: they must fire at their exact tick, never clamped. The model is a plain
 * array scan: for every id, whether it is live and its deadline, and the
 * queue of expired entries. After every operation the wheel must agree
 * with it: what is live and when it is due, what expired (exactly once,
 * never early, in nondecreasing deadline order, stamped by the call that
 * expired it), the counters, and tw_next_event() (false iff nothing is
 * live, never before the clock nor after the earliest deadline), the
 * lazy hook (asked at an entry's deadline, and on a cascade before it
 * within the wheel's lazy_ahead, at most once a tick),
 * and dumps (every id live from a dump's first step to its last listed
 * exactly once, no id twice, nothing that is not live). Any difference
 * abort()s.
 *
 * Built with libFuzzer (clang -fsanitize=fuzzer), or with -DFUZZ_REPLAY
 * as a plain program that replays input files or directories, for gdb.
 */
#include <limits.h>
#include <string.h>

#include "core_util.h"

unsigned long tw_host_fail_alloc;

#define NK		1024	/* id space */
#define NK_SMALL	24	/* ids single operations use: they collide */
#define NA		256	/* ids of the attacker, chosen with the key */
#define NK_ALL		(NK + NA)

/* An entry as the fuzzer allocates it: the wheel's part and our key. */
struct fent {
	struct tw_entry e;
	unsigned int k;
};

static struct {
	const uint8_t *p;
	size_t n;
} in;

static struct {
	u64 start;			/* clock at tw_init: origin of rel() */
	u64 now;			/* the last target given to tw_advance */
	u64 target;			/* the target of the tw_advance under way */
	u64 stamp;			/* stamp of the last tw_advance call */
	u64 last_dl;			/* deadline of the last entry expired */
	bool cut;			/* the last advance ran out of budget */
	struct fent *live[NK_ALL];	/* NULL if not live */
	u64 dl[NK_ALL];			/* deadline of live[k] */
	unsigned int list[NK_ALL];	/* the live keys, in no order */
	unsigned int pos[NK_ALL];	/* where k is in @list */
	unsigned int nr_live;
	struct fent **q;		/* expired, oldest at q[qh] */
	size_t qh, qt, qcap;
	unsigned int lazy[NK_ALL];	/* re-arms the lazy hook still grants k */
	u64 lazy_delta[NK_ALL];		/* ... each this far past the deadline */
	bool lazy_from_target[NK_ALL];	/* ... or past the advance's target */
	u64 lazy_at[NK_ALL];		/* tick of the hook's last call for k... */
	bool lazy_asked[NK_ALL];	/* ...if there was one */
	bool dumping;			/* a dump is under way from dump_pos */
	u64 dump_pos;
	unsigned int dump_gen;		/* the index's key at its last step */
	bool dump_steady[NK_ALL];	/* live at the dump's start, and since */
	unsigned char dump_seen[NK_ALL];
	u64 attack_id[NA];		/* id of key NK + i, chosen when added */
	uint64_t attack_seed;
	bool starve;			/* every allocation fails meanwhile */
} m;

static struct tw_wheel w;
/* What the inputs reached, for the replay's summary. */
static unsigned long n_stale, n_keys, n_full, n_lazy_cascade;

#define FAIL(...) do {							\
	fprintf(stderr, "fuzz_wheel: line %d: ", __LINE__);		\
	fprintf(stderr, __VA_ARGS__);					\
	fputc('\n', stderr);						\
	abort();							\
} while (0)
#define REQUIRE(c) do {							\
	if (!(c))							\
		FAIL("%s", #c);						\
} while (0)

static u64 get(unsigned int bytes)
{
	u64 v = 0;

	while (bytes-- && in.n) {
		v = v << 8 | *in.p++;
		in.n--;
	}
	return v;
}

/* Position of a tick on the fuzz run's time line; runs span < 2^63. */
static u64 rel(u64 tick)
{
	return tick - m.start;
}

static u64 id_of(unsigned int k)
{
	static const u64 special[] = { 0, UINT64_MAX, 1ull << 63, 1 };

	if (k < 4)
		return special[k];
	if (k >= NK)
		return m.attack_id[k - NK];
	return (u64)k * 0x9e3779b97f4a7c15ull;
}

/* A deadline relative to the clock, over every level and past both ends. */
static u64 gen_delta(void)
{
	switch (get(1) % 12) {
	case 0:
		return 0;
	case 1:
		return TW_MAX_DELTA;
	case 2:
		/* Beyond reach: kept, and placed again as the clock nears. */
		return TW_MAX_DELTA + 1 + (get(1) & 1 ? get(2) : get(5));
	case 3:
		return -(u64)get(5);			/* past: clamped */
	case 4:
		return 1 + get(1) % 64;			/* level 0 */
	case 5:
		return 1 + get(2) % 4096;			/* level 1 */
	case 6:
		return 1 + get(3) % 262144;		/* level 2 */
	case 7:
		return 1 + get(4) % (1u << 24);		/* level 3 */
	case 8:
		return 1 + get(4) % (1u << 30);		/* level 4 */
	case 9:
		return 1 + get(5) % TW_MAX_DELTA;		/* level 5 */
	case 10:
		/* Right on a run boundary of some level. */
		return (64 - (w.clk & 63)) << (6 * (get(1) % 5));
	default:
		return TW_MAX_DELTA - get(2);
	}
}

static u64 model_clamp(u64 expires)
{
	if ((s64)(expires - w.clk) <= 0)
		return w.clk + 1;
	return expires;
}

static void model_link(unsigned int k, struct fent *f, u64 dl)
{
	m.live[k] = f;
	m.dl[k] = dl;
	m.pos[k] = m.nr_live;
	m.list[m.nr_live++] = k;
}

static void model_unlink(unsigned int k)
{
	unsigned int last = m.list[--m.nr_live];

	m.list[m.pos[k]] = last;
	m.pos[last] = m.pos[k];
	m.live[k] = NULL;
	m.dump_steady[k] = false;
}

/*
 * The lazy hook: re-arm while the input granted re-arms to this id. The
 * wheel must ask at the entry's deadline, and may ask before it when a
 * cascade moves the entry, at most once a tick either way; there the
 * hook grants a re-arm only to a later deadline (its contract).
 */
static bool fuzz_lazy(struct tw_wheel *wh, struct tw_entry *e, u64 stamp, u64 *expires)
{
	struct fent *f = container_of(e, struct fent, e);
	unsigned int k = f->k;
	u64 want;

	REQUIRE(wh == &w && k < NK_ALL && m.live[k] == f);
	REQUIRE(e->expires == m.dl[k] && !tw_after(w.clk, e->expires));
	REQUIRE(e->expires - w.clk <= w.lazy_ahead);
	REQUIRE(stamp == m.stamp);
	REQUIRE(!m.lazy_asked[k] || m.lazy_at[k] != w.clk);
	m.lazy_at[k] = w.clk;
	m.lazy_asked[k] = true;
	if (!m.lazy[k])
		return false;
	want = (m.lazy_from_target[k] ? m.target : w.clk) + m.lazy_delta[k];
	if (e->expires != w.clk && !tw_after(want, e->expires))
		return false;
	m.lazy[k]--;
	*expires = want;
	m.dl[k] = model_clamp(*expires);
	if (e->expires != w.clk)
		n_lazy_cascade++;
	return true;
}

/* Begin a dump: what is live now is what it must list. */
static void dump_begin(void)
{
	unsigned int k;

	for (k = 0; k < NK_ALL; k++) {
		m.dump_steady[k] = m.live[k] != NULL;
		m.dump_seen[k] = 0;
	}
	m.dump_pos = 0;
	m.dump_gen = w.index.gen;
	m.dumping = true;
}

/*
 * One step of a dump: start one if none is under way, finish it at the
 * end, start over if the index took a new key since it began.
 */
static void op_dump(void)
{
	struct tw_entry *out[8];
	unsigned int max = 1 + get(1) % 8, budget = get(1) % 5, k;
	u64 before;
	int n, i;

	if (!m.dumping)
		dump_begin();
	before = m.dump_pos;
	n = tw_dump(&w, &m.dump_pos, out, max, budget);
	if (n == -ESTALE) {
		REQUIRE(w.index.gen != m.dump_gen && m.dump_pos == before);
		n_stale++;
		dump_begin();
		return;
	}
	if (n == -EAGAIN) {
		/* A move to a new key waits for room in a full chain. */
		REQUIRE(w.index.old && w.index.old_rekeyed && m.dump_pos == before);
		return;
	}
	REQUIRE(n >= 0 && n <= (int)max);
	m.dump_gen = w.index.gen;
	REQUIRE(m.dump_pos == TW_DUMP_END ||
		m.dump_pos >> TW_DUMP_POS_BITS == (w.index.gen & TW_DUMP_GEN_MASK));
	for (i = 0; i < n; i++) {
		struct fent *f = container_of(out[i], struct fent, e);

		REQUIRE(f->k < NK_ALL && m.live[f->k] == f);
		REQUIRE(++m.dump_seen[f->k] == 1);
	}
	if (m.dump_pos != TW_DUMP_END)
		return;
	for (k = 0; k < NK_ALL; k++)
		if (m.dump_steady[k])
			REQUIRE(m.dump_seen[k] == 1);
	m.dumping = false;
}

static void q_push(struct fent *f)
{
	if (m.qt == m.qcap) {
		m.qcap = m.qcap ? 2 * m.qcap : 256;
		m.q = realloc(m.q, m.qcap * sizeof(*m.q));
		REQUIRE(m.q);
	}
	m.q[m.qt++] = f;
}

static unsigned int chain_len(const struct tw_entry *e)
{
	unsigned int n = 0;

	for (; e; e = e->hnext)
		n++;
	return n;
}

/* The bucket of the current table that @id belongs in. */
static unsigned long bucket_of(u64 id)
{
	return hsiphash_2u32((u32)id, id >> 32, &w.index.key) >> (32 - w.index.cur_bits);
}

static void op_add(unsigned int k, bool fault)
{
	u64 want = w.clk + gen_delta();
	struct fent *f;
	int ret;

	if (m.live[k]) {
		/* The caller's check that the wheel relies on. */
		REQUIRE(tw_lookup(&w, id_of(k)) == &m.live[k]->e);
		return;
	}
	f = malloc(sizeof(*f));
	REQUIRE(f);
	memset(f, 0xa5, sizeof(*f));	/* the wheel must set what it uses */
	f->e.id = id_of(k);
	f->k = k;
	if (m.starve)
		tw_host_fail_alloc = ULONG_MAX;
	else if (fault)
		tw_host_fail_alloc = 1 + get(1) % 3;
	ret = tw_test_add(&w, &f->e, want);
	tw_host_fail_alloc = 0;
	if (ret) {
		/* With no table yet, or into a full chain, and only then. */
		REQUIRE(ret == -ENOMEM);
		REQUIRE(!w.index.cur || chain_len(w.index.cur[bucket_of(f->e.id)]) ==
					TW_INDEX_CHAIN_MAX);
		n_full += w.index.cur != NULL;
		REQUIRE(tw_lookup(&w, f->e.id) == NULL);
		free(f);
		return;
	}
	model_link(k, f, model_clamp(want));
	REQUIRE(f->e.expires == m.dl[k]);
}

static void op_rearm(unsigned int k)
{
	u64 want = w.clk + gen_delta();
	struct fent *f = m.live[k];

	if (!f) {
		REQUIRE(tw_lookup(&w, id_of(k)) == NULL);
		return;
	}
	REQUIRE(tw_lookup(&w, id_of(k)) == &f->e);
	tw_rearm(&w, &f->e, want);
	m.dl[k] = model_clamp(want);
	REQUIRE(f->e.expires == m.dl[k]);
}

static void op_remove(unsigned int k, bool fault)
{
	struct fent *f = m.live[k];

	if (!f) {
		REQUIRE(tw_lookup(&w, id_of(k)) == NULL);
		return;
	}
	REQUIRE(tw_lookup(&w, id_of(k)) == &f->e);
	tw_remove(&w, &f->e);
	/* The device offers a table after each call; it may fail: harmless. */
	if (fault)
		tw_host_fail_alloc = 1;
	tw_test_prepare(&w);
	tw_host_fail_alloc = 0;
	model_unlink(k);
	free(f);
}

/*
 * The attacker who knows the current key: up to 20 ids that share one
 * bucket of the current table, or of one 8 or 64 times smaller (a shrink
 * would merge them), so that chains fill, a new key is asked for, and
 * shrinks meet groups too full to merge; with @starve, while no table can
 * be allocated, so that chains fill up. About 2^bits tries an id.
 */
static void op_attack(bool starve)
{
	unsigned int n = 1 + get(1) % 20, bits, b, i, k = 0;

	if (!w.index.cur)
		return;
	bits = w.index.cur_bits - (get(1) % 3) * 3;
	if (bits < 4 || bits > w.index.cur_bits)
		bits = 4;
	b = get(1) % (1u << bits);
	m.attack_seed += get(2);
	for (i = 0; i < n; i++) {
		while (k < NA && m.live[NK + k])
			k++;
		if (k == NA)
			return;
		/* Another id in this slot: one the dump under way has not seen. */
		m.attack_id[k] = tw_test_id_in_bucket(&w.index.key, bits, b, &m.attack_seed);
		m.dump_seen[NK + k] = 0;
		m.starve = starve;
		if (!tw_lookup(&w, m.attack_id[k]))
			op_add(NK + k, false);
		m.starve = false;
		k++;
	}
}

/* One tw_advance() call to @target; check what it expired. */
static bool advance_once(u64 target, unsigned int budget)
{
	u64 before = w.nr_expired, old_clk = w.clk, moved, i;
	struct list_head *pos;
	bool done;

	m.stamp++;
	m.target = target;
	done = tw_advance(&w, target, budget, m.stamp);
	m.now = target;
	m.cut = !done;
	REQUIRE(w.nr_expired >= before);
	moved = w.nr_expired - before;
	REQUIRE(moved <= (budget ? budget : 1));
	REQUIRE(rel(old_clk) <= rel(w.clk) && rel(w.clk) <= rel(target));
	if (done)
		REQUIRE(w.clk == target);

	/* The new entries are the last @moved of the expired list. */
	pos = &w.expired;
	for (i = 0; i < moved; i++) {
		pos = pos->prev;
		REQUIRE(pos != &w.expired);
	}
	for (i = 0; i < moved; i++, pos = pos->next) {
		struct tw_entry *e = list_entry(pos, struct tw_entry, node);
		struct fent *f = container_of(e, struct fent, e);
		unsigned int k = f->k;

		REQUIRE(k < NK_ALL && m.live[k] == f);
		REQUIRE(e->id == id_of(k) && e->expires == m.dl[k]);
		REQUIRE(e->stamp == m.stamp);
		/* Never early; in order, across calls too. */
		REQUIRE(rel(m.dl[k]) <= rel(target));
		REQUIRE(rel(m.dl[k]) <= rel(w.clk));
		REQUIRE(rel(m.last_dl) <= rel(m.dl[k]));
		m.last_dl = m.dl[k];
		model_unlink(k);
		q_push(f);
	}
	REQUIRE(pos == &w.expired);
	return done;
}

static void op_advance(void)
{
	u64 step = 0, target, t;
	unsigned int budget, calls = 0;
	uint8_t how = get(1);
	bool loop = how & 0x80;

	switch (how % 10) {
	case 0:
		step = 0;			/* carry on a cut advance */
		break;
	case 1:
		step = 1;
		break;
	case 2:
		step = get(1) % 64;
		break;
	case 3:
		step = get(2) % 4096;
		break;
	case 4:
		step = get(3) % (1u << 24);
		break;
	case 5:
		step = TW_MAX_DELTA - 128 + get(1);	/* around TW_MAX_DELTA */
		break;
	case 6:
		step = get(5) % (1ull << 36);
		break;
	case 7:
	case 8:
		/* Up to the earliest deadline, or just before it. */
		if (m.nr_live) {
			u64 min = m.dl[m.list[0]];
			unsigned int i;

			for (i = 1; i < m.nr_live; i++)
				if (rel(m.dl[m.list[i]]) < rel(min))
					min = m.dl[m.list[i]];
			if (how % 10 == 8)
				min--;
			if (rel(min) > rel(m.now))
				step = min - m.now;
		}
		break;
	default:
		/* Where an event loop would wake up. */
		if (tw_next_event(&w, &t) && rel(t) > rel(m.now))
			step = t - m.now;
		break;
	}
	target = m.now + step;
	budget = get(1);
	budget = budget >= 200 ? UINT_MAX : budget % 17;	/* 0 means 1 */

	if (!advance_once(target, budget) && budget == UINT_MAX)
		FAIL("an unlimited budget ran out");
	while (loop && m.cut) {
		/* Each call moves at least one entry or makes it to @target. */
		REQUIRE(++calls < 100000);
		advance_once(target, budget);
	}
}

/* Move an idle clock forward: only if nothing is due up to there. */
static void op_idle_to(void)
{
	u64 now = m.now + (get(1) & 1 ? get(1) : get(4)), old_clk = w.clk;
	unsigned int i;
	bool due = false, moved;

	for (i = 0; i < m.nr_live; i++)
		due |= rel(m.dl[m.list[i]]) <= rel(now);
	moved = tw_idle_to(&w, now);
	if (due)
		REQUIRE(!moved);
	if (!moved) {
		REQUIRE(w.clk == old_clk);
		return;
	}
	REQUIRE(w.clk == now || (rel(now) <= rel(old_clk) && w.clk == old_clk));
	m.now = w.clk;
	m.cut = false;
}

static void op_pop(unsigned int n)
{
	while (n--) {
		struct tw_entry *e = tw_pop_expired(&w);

		if (m.qh == m.qt) {
			REQUIRE(e == NULL);
			return;
		}
		REQUIRE(e == &m.q[m.qh]->e);
		REQUIRE(tw_peek_expired(&w) ==
			(m.qh + 1 < m.qt ? &m.q[m.qh + 1]->e : NULL));
		m.qh++;
		free(container_of(e, struct fent, e));
	}
}

/* The whole model against the wheel; @full also looks up absent ids. */
static void check(bool full)
{
	u64 t, min = 0;
	unsigned int i, k;
	bool any;

	REQUIRE(w.nr_live == m.nr_live);
	REQUIRE(w.nr_expired == m.qt - m.qh);
	REQUIRE(tw_peek_expired(&w) == (m.qh < m.qt ? &m.q[m.qh]->e : NULL));
	for (i = 0; i < m.nr_live; i++) {
		k = m.list[i];
		REQUIRE(tw_lookup(&w, id_of(k)) == &m.live[k]->e);
		REQUIRE(m.live[k]->e.expires == m.dl[k]);
		/* Due after the clock; at it only inside a cut advance. */
		if (m.cut)
			REQUIRE(rel(m.dl[k]) >= rel(w.clk));
		else
			REQUIRE(rel(m.dl[k]) > rel(w.clk));
		if (i == 0 || rel(m.dl[k]) < rel(min))
			min = m.dl[k];
	}
	for (k = 0; full && k < NK_ALL; k++)
		if (!m.live[k] && (k < NK || m.attack_id[k - NK]))
			REQUIRE(tw_lookup(&w, id_of(k)) == NULL);
	if (full)
		REQUIRE(tw_test_longest_chain(&w) <= TW_INDEX_CHAIN_MAX);

	any = tw_next_event(&w, &t);
	REQUIRE(any == (m.nr_live > 0));
	if (any) {
		REQUIRE(rel(w.clk) <= rel(t));
		REQUIRE(rel(t) <= rel(min));
	}
}

static void reset(void)
{
	tw_init(&w, 0, &tw_test_key);
	m.nr_live = 0;
	memset(m.live, 0, sizeof(m.live));
	m.qh = m.qt = 0;
	m.cut = false;
	m.stamp = 0;
	memset(m.lazy, 0, sizeof(m.lazy));
	memset(m.lazy_asked, 0, sizeof(m.lazy_asked));
	memset(m.attack_id, 0, sizeof(m.attack_id));
	m.attack_seed = 1;
	m.starve = false;
	tw_test_keys_given = 0;
	m.dumping = false;
}

static void release(struct tw_entry *e, void *arg)
{
	unsigned int *count = arg;

	(*count)++;
	free(container_of(e, struct fent, e));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int nops = 0, released = 0, expected;
	u64 start;

	in.p = data;
	in.n = size;
	reset();
	switch (get(1) % 5) {
	case 0:
		start = get(2);
		break;
	case 1:
		start = UINT64_MAX - get(2);
		break;
	case 2:
		start = (1ull << 36) - get(3);
		break;
	case 3:
		start = (u64)(1ull << 32) * get(4) - get(2);
		break;
	default:
		start = get(8);
		break;
	}
	tw_init(&w, start, &tw_test_key);
	w.lazy = fuzz_lazy;
	m.start = m.now = m.last_dl = start;

	while (in.n && nops++ < 2000) {
		unsigned int op = get(1), k = get(1) % NK_SMALL, i, n;

		switch (op % 19) {
		case 0: case 1: case 2:
			op_add(k, false);
			break;
		case 3: case 4:
			op_rearm(k);
			break;
		case 5:
			op_remove(k, false);
			break;
		case 6:
			/* Refresh-or-add, as the device does it. */
			if (m.live[k])
				op_rearm(k);
			else
				op_add(k, false);
			break;
		case 7: case 8: case 9:
			op_advance();
			break;
		case 10:
			op_pop(get(1) % 8);
			break;
		case 11:
			/* Many adds: the index grows and resizes under way. */
			n = get(1) + 1;
			k = get(2) % NK;
			for (i = 0; i < n; i++)
				op_add((k + i * 7) % NK, op & 0x80);
			break;
		case 12:
			/* Many removes: the index shrinks. */
			n = get(1) % (m.nr_live + 1);
			while (n--)
				op_remove(m.list[get(2) % m.nr_live], op & 0x80);
			break;
		case 13:
			op_add(k, true);
			break;
		case 14:
			/* Rearm many: cascades of moved entries. */
			n = get(1) % (m.nr_live + 1);
			while (n--)
				op_rearm(m.list[get(2) % m.nr_live]);
			break;
		case 16:
			/* Grant k re-arms by the lazy hook, each delta ahead. */
			m.lazy[k] = get(1) % 4;
			m.lazy_from_target[k] = m.lazy[k] && get(1) & 1;
			m.lazy_delta[k] = gen_delta();
			/* And the hook's reach on a cascade: none, some, all. */
			w.lazy_ahead = m.lazy_delta[k] % 3 ? m.lazy_delta[k] / 4 : ~0ull;
			break;
		case 17:
			op_dump();
			break;
		case 18:
			op_attack(op & 0x80);
			break;
		default:
			REQUIRE(tw_lookup(&w, id_of(k)) ==
				(m.live[k] ? &m.live[k]->e : NULL));
			op_idle_to();
			break;
		}
		check(m.nr_live < 64 || nops % 64 == 0);
	}
	check(true);
	n_keys += w.index.gen;
	expected = m.nr_live + (m.qt - m.qh);
	tw_destroy(&w, release, &released);
	REQUIRE(released == expected);
	REQUIRE(w.nr_live == 0 && w.nr_expired == 0 && !tw_peek_expired(&w));
	REQUIRE(w.index.cur == NULL && w.index.old == NULL);
	return 0;
}

#ifdef FUZZ_REPLAY
#include <dirent.h>

static unsigned long replayed;

static void replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f) {
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len ? len : 1);
	if (!buf || fread(buf, 1, len, f) != (size_t)len) {
		perror(path);
		exit(2);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	replayed++;
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		char path[4096];

		if (!d) {
			replay_file(argv[i]);
			continue;
		}
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			replay_file(path);
		}
		closedir(d);
	}
	free(m.q);
	printf("fuzz_replay: %lu inputs replayed, no difference (%lu new keys, %lu dumps restarted, %lu adds refused by full chains, %lu re-arms on a cascade)\n",
	       replayed, n_keys, n_stale, n_full, n_lazy_cascade);
	return 0;
}
#endif
