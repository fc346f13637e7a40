// SPDX-License-Identifier: GPL-2.0
/*
 * The twheel core: a cascading hierarchical timing wheel with an id index.
 *
 * Time is counted in ticks of the wheel (u64, wrapping). The wheel has
 * TW_LEVELS levels of TW_LVL_SIZE slots. Level l covers the tick digit
 * l, that is bits [6l, 6l + 6) of a tick, so one slot of level l spans
 * 64^l ticks:
 *
 *	level	slot spans	level covers	at 1 ms tick
 *	0	1 tick		64 ticks	64 ms
 *	1	64		4096		4 s
 *	2	4096		262144		4.4 min
 *	3	262144		16.8M		4.7 h
 *	4	16.8M		1.07G		12.4 days
 *	5	1.07G		68.7G		2.2 years (a ring)
 *
 * Placement. An entry expiring at tick e, with the wheel's clock at c
 * (the last tick processed, e > c), lives at the level of the highest
 * digit in which e and c differ, in the slot named by e's digit there:
 * level 0 holds entries due within the current run of 64 ticks, each
 * slot exactly one tick; level l > 0 holds entries that agree with c on
 * every digit above l and have a larger digit l. The top level is used
 * as a ring: it also takes entries whose higher bits differ from c's
 * (the clock is about to carry into bit 36, or to wrap), which is
 * unambiguous because no entry is placed more than TW_MAX_DELTA ahead.
 *
 * Hops. A deadline further ahead than that (the caller's present can be
 * any distance past a wheel's clock that has not run for long, after a
 * suspend on CLOCK_BOOTTIME, say) keeps its exact tick in @expires but is
 * placed as if due at c + TW_MAX_DELTA, on the top level; when that slot
 * is cascaded the entry is placed again relative to the new clock, as
 * any cascaded entry, and hops on until its deadline is within reach. So
 * no deadline is ever clamped to an earlier one, and a hop costs one
 * cascade per 2^35 - 2^30 ticks beyond reach.
 *
 * Invariant: every slot of level l at or "behind" c's digit l is empty
 * (but for one slot while a cascade is cut short, @pend_level). Hence
 * the lowest non-empty level holds the next thing to do, and within it
 * the first set bit of the level's 64-bit bitmap after c's digit:
 *  - on level 0 that slot's tick is the expiry of all its entries;
 *  - on level l > 0 it is the tick at which that slot's run of ticks
 *    begins; then its entries are re-placed relative to the new clock,
 *    which puts them on a lower level (or expires those due exactly
 *    then). This is the cascade; an entry cascades at most
 *    TW_LEVELS - 1 times in its life, whatever the clock does, plus
 *    its hops.
 *
 * Lazy re-arms. A caller's hook (tw_wheel.lazy) may re-arm an entry
 * instead of expiring it; it is asked when the entry's deadline comes,
 * and also when a cascade moves the entry, whose deadline is then still
 * ahead, if by no more than the caller's tw_wheel.lazy_ahead ticks: a
 * later one found then places the entry at once where it goes.
 * So an id whose deadline keeps moving on (touch.c: a touch-bound id
 * touched at least once a timeout) is re-armed before it reaches level
 * 0, without the last moves down and the look when its old deadline
 * comes.
 *
 * Unlike the kernel's own timer wheel (kernel/time/timer.c), which never
 * cascades and so lets an entry's granularity grow with its distance,
 * this wheel cascades: every deadline is exact to the tick, as our users
 * are promised "at most one tick late" for timeouts of days. The price,
 * bounded cascade work, is paid in process context and in chunks.
 *
 * Advancing to tick T jumps straight from one non-empty slot to the next
 * with the bitmaps: ticks in which nothing happens cost nothing, an idle
 * wheel costs nothing, and catching up after a long sleep costs only the
 * entries that expire or cascade. tw_next_event() tells in O(levels)
 * when the next non-empty slot is due, so the device arms one timer for
 * exactly then and none while nothing is due.
 *
 * Expired entries leave the index and go, in deadline order, onto the
 * wheel's expired list, where the entry's own memory waits for the
 * reader: nothing is allocated at expiry and nothing can be lost.
 *
 * The id index is a chained hash table, grown at a load of 2 and shrunk
 * below 1/8, incrementally: while a resize is under way each index
 * operation moves a few buckets from the old table, so no single call
 * rehashes millions of entries. A shrink goes at most 8 times smaller at
 * once: the move of a table of B buckets takes at most B/64 + n/8
 * operations, and the adds among them cannot fill a table of B/8, so the
 * same ids added again after a mass expiry never find it full, and the
 * growth they need starts when the move ends. An add first moves the old
 * buckets whose entries will share its chain (one when growing, up to 8
 * when shrinking), so that the chain it checks is all it will hold.
 *
 * Ids are chosen by users, so the bucket is a keyed hash (hsiphash, the
 * kernel's hash for tables fed untrusted keys: SipHash-1-3 on 64-bit,
 * under the wheel's secret key) rather than a public one: with hash_64(),
 * a multiplication that can be inverted, a user could put every id in one
 * bucket and make each operation, and each expiry under the wheel's lock,
 * walk a chain of all of them. A secret key is not enough on its own:
 * the dump lists ids in bucket order, so a user who adds random ids and
 * keeps those listed together collects ids of one bucket. So, as
 * lib/rhashtable.c does, no chain ever holds more than TW_INDEX_CHAIN_MAX
 * entries, whatever leaked: an add into a full chain fails, and a chain
 * that reaches TW_INDEX_CHAIN_LONG makes the index ask for a table under
 * a new key, to which every entry moves, incrementally, as in a resize.
 * Random ids make a chain that long only in a table loaded above one
 * entry a bucket (in about every other fill of 2^23 buckets, near its
 * growth); there the index grows early instead, which splits a random chain, and ids
 * chosen to share more bits than the table uses ask for the key next. A
 * shrink that meets 8 buckets holding more than one chain may (chosen
 * ids) turns back, and moves everything to a new key; a move to a new
 * key into a full chain (only ids chosen with the new key known fill
 * one) waits until it has room. The core allocates nothing: it asks its
 * caller for tables and new keys and the caller hands them over
 * (tw_index_wanted()), so tables are charged to whoever makes the call
 * and never allocated from the expiry work.
 *
 * A dump lists ids in the order of their keyed hash, a bucket of any
 * table being one range of it, so that a cursor stays valid across
 * resizes; a new key changes the order, so a cursor carries the key's
 * generation, and one from an older key is refused.
 *
 * Costs, n live entries:
 *
 *	add, rearm, remove, lookup	O(1): a chain of at most
 *					TW_INDEX_CHAIN_MAX links (two chains
 *					while the key changes), ~1 for ids that
 *					do not collide on purpose; list ops,
 *					one bit
 *	resize, new key			O(n), spread: an index operation
 *					moves up to 64 buckets or 8 entries,
 *					an add the up to 8 buckets of its chain,
 *					an add to a long chain 4096 or 512
 *	next event			O(TW_LEVELS)
 *	advance to T			O(entries expired + entries cascaded),
 *					chain links counted in its budget
 *	dump, one call			O(budget) buckets, chains bounded
 *	memory				40 bytes an entry + 4 to 8 bytes of
 *					index (up to 16 after a new key)
 */
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "wheel.h"

#define TW_TOP			(TW_LEVELS - 1)
#define TW_SHIFT(l)		((l) * TW_LVL_BITS)

#define TW_INDEX_MIN_BITS	6	/* smallest table: 64 buckets */
#define TW_INDEX_MAX_BITS	32	/* a bucket is the top bits of a u32 hash */
#define TW_INDEX_GROW_LOAD	2	/* grow above 2 entries a bucket */
#define TW_INDEX_SHRINK_DIV	8	/* shrink below 1 entry in 8 buckets... */
#define TW_INDEX_SHRINK_STEP	3	/* ...8 times smaller at most, at once */
#define TW_INDEX_CHAIN_LONG	14	/* a chain this long asks for a new key */
#define TW_INDEX_MOVE_ENTRIES	8	/* per operation while resizing... */
#define TW_INDEX_MOVE_BUCKETS	64	/* ...or this many buckets looked at */
#define TW_INDEX_HURRY_ENTRIES	512	/* the same, for an add to a long chain */
#define TW_INDEX_HURRY_BUCKETS	4096

static inline unsigned int tw_digit(u64 tick, unsigned int lvl)
{
	return (tick >> TW_SHIFT(lvl)) & TW_LVL_MASK;
}

/* Level an entry due at @expires belongs on, the clock being at @clk. */
static inline unsigned int tw_level(u64 clk, u64 expires)
{
	u64 diff = clk ^ expires;
	unsigned int lvl;

	if (!(diff >> TW_LVL_BITS))
		return 0;
	lvl = (fls64(diff) - 1) / TW_LVL_BITS;
	return min_t(unsigned int, lvl, TW_TOP);
}

/* Tick at which slot @slot of level @lvl is due, the clock being at @clk. */
static inline u64 tw_slot_tick(u64 clk, unsigned int lvl, unsigned int slot)
{
	u64 ahead = (slot - tw_digit(clk, lvl)) & TW_LVL_MASK;

	return (clk & ~((1ULL << TW_SHIFT(lvl)) - 1)) + (ahead << TW_SHIFT(lvl));
}

/* ---- id index ---------------------------------------------------------- */

/* The keyed hash of @id; a table of 2^bits buckets files it by its top bits. */
static __always_inline u32 tw_hash(const hsiphash_key_t *key, u64 id)
{
	return hsiphash_2u32((u32)id, id >> 32, key);
}

static __always_inline unsigned long tw_hash_bucket(u32 h, unsigned int bits)
{
	return h >> (32 - bits);
}

/* The bucket of the current table that @id belongs in. */
static inline unsigned long tw_cur_bucket(const struct tw_index *ix, u64 id)
{
	return tw_hash_bucket(tw_hash(&ix->key, id), ix->cur_bits);
}

struct tw_entry **tw_index_alloc(unsigned int bits)
{
	return kvcalloc(1UL << bits, sizeof(struct tw_entry *),
			GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
}

void tw_index_free(struct tw_entry **table)
{
	kvfree(table);
}

/* Entries of the chain from @e on; counting them is index work too. */
static unsigned int tw_chain_len(struct tw_index *ix, const struct tw_entry *e)
{
	unsigned int n = 0;

	for (; e; e = e->hnext)
		n++;
	ix->steps += n;
	return n;
}

unsigned int tw_index_wanted(const struct tw_wheel *w)
{
	const struct tw_index *ix = &w->index;
	unsigned int bits = ix->cur_bits, need;
	u64 n = w->nr_live;

	if (!ix->cur)
		return TW_INDEX_MIN_BITS;
	if (ix->old)
		return 0;	/* one resize at a time; this one ends soon */
	/* Early, for a long chain, while the table is still loaded so. */
	if (bits < TW_INDEX_MAX_BITS && ((ix->grow && n >= (1ULL << bits)) ||
					 n >= ((u64)TW_INDEX_GROW_LOAD << bits)))
		return bits + 1;
	/*
	 * Shrink in steps: adds that come during the move of a table 8
	 * times larger cannot fill the smaller one, so a mass expiry
	 * followed by the same adds never fails for want of buckets.
	 */
	if (bits > TW_INDEX_MIN_BITS && n < (1ULL << bits) / TW_INDEX_SHRINK_DIV) {
		need = max_t(unsigned int, fls64(n) + 1, TW_INDEX_MIN_BITS);
		return max_t(unsigned int, need, bits - TW_INDEX_SHRINK_STEP);
	}
	/* A new key, with at least one bucket an entry: chains of about one. */
	if (ix->rekey) {
		need = n > 1 ? fls64(n - 1) : 0;
		return need > bits && bits < TW_INDEX_MAX_BITS ? bits + 1 : bits;
	}
	return 0;
}

bool tw_index_offer(struct tw_wheel *w, struct tw_entry **table, unsigned int bits,
		    const hsiphash_key_t *key)
{
	struct tw_index *ix = &w->index;

	if (!table || !bits || tw_index_wanted(w) != bits)
		return false;
	if (ix->cur) {
		ix->old = ix->cur;
		ix->old_bits = ix->cur_bits;
		ix->move = 0;
		ix->old_rekeyed = ix->rekey;
		if (ix->rekey) {
			ix->old_key = ix->key;
			ix->key = *key;
			ix->gen++;
		}
	}
	ix->cur = table;
	ix->cur_bits = bits;
	ix->rekey = false;
	ix->grow = false;
	return true;
}

/*
 * A shrink met a group of old buckets holding more entries than one chain
 * may (ids chosen from what leaked of the key to share hash bits). Turn
 * back: the old table becomes the current one again and the small one is
 * moved back into it, a grow under the same key; then everything moves
 * under a new key. Safe, because a bucket of the small table holds entries
 * only once its group was merged into it (an add first merges its group:
 * tw_index_insert()), and then the group's old buckets are empty and take
 * back at most what one chain held.
 */
static void tw_index_turn_back(struct tw_index *ix)
{
	struct tw_entry **small = ix->cur;
	unsigned int small_bits = ix->cur_bits;

	ix->cur = ix->old;
	ix->cur_bits = ix->old_bits;
	ix->old = small;
	ix->old_bits = small_bits;
	ix->move = 0;
	ix->rekey = true;
}

/* Entries moved so far, and looked-at buckets, are steps of index work. */
static void tw_index_moved(struct tw_index *ix, unsigned long moved, unsigned long looked)
{
	ix->steps += moved + looked / 8;
}

/*
 * Move bucket @o of the old table, under the same key: its entries go to
 * the buckets its hash bits name, which a grow leaves at most as long as
 * it was (they take nothing else until it moved). Returns the entries moved.
 */
static unsigned long tw_index_move_bucket(struct tw_index *ix, unsigned long o)
{
	unsigned long moved = 0;
	struct tw_entry *e;

	while ((e = ix->old[o])) {
		struct tw_entry **b = &ix->cur[tw_cur_bucket(ix, e->id)];

		ix->old[o] = e->hnext;
		e->hnext = *b;
		*b = e;
		moved++;
	}
	return moved;
}

/*
 * Merge the group of old buckets from @first that a shrink under the same
 * key puts into one bucket of the current table, if that chain would hold
 * no more than TW_INDEX_CHAIN_MAX; else turn back. Returns the entries
 * moved, or -1 after turning back.
 */
static long tw_index_merge(struct tw_index *ix, unsigned long first)
{
	unsigned int shift = ix->old_bits - ix->cur_bits, n;
	unsigned long o, end = first + (1UL << shift), moved = 0;

	n = tw_chain_len(ix, ix->cur[first >> shift]);
	for (o = first; o < end; o++)
		n += tw_chain_len(ix, ix->old[o]);
	if (n > TW_INDEX_CHAIN_MAX) {
		tw_index_turn_back(ix);
		return -1;
	}
	for (o = first; o < end; o++)
		moved += tw_index_move_bucket(ix, o);
	return moved;
}

/*
 * Move buckets of a resize under way from the old table, until about
 * @max_buckets were looked at or @max_entries moved; free the old table
 * once empty. Under the same key a shrink moves whole groups. Under a new
 * key a target chain that is full makes the move wait there (possible
 * only for ids chosen with the new key known) until a later operation
 * finds room. Returns whether anything was done.
 */
static bool tw_index_move(struct tw_index *ix, unsigned long max_buckets,
			  unsigned long max_entries)
{
	unsigned long nbuckets = 1UL << ix->old_bits, looked = 0, moved = 0;
	unsigned long step = 1;

	if (!ix->old_rekeyed && ix->old_bits > ix->cur_bits)
		step = 1UL << (ix->old_bits - ix->cur_bits);
	while (ix->move < nbuckets && looked < max_buckets && moved < max_entries) {
		struct tw_entry *e;

		if (!ix->old_rekeyed) {
			long m = step > 1 ? tw_index_merge(ix, ix->move)
					  : (long)tw_index_move_bucket(ix, ix->move);

			if (m < 0) {
				tw_index_moved(ix, moved, looked);
				return true;
			}
			moved += m;
			ix->move += step;
			looked += step;
			continue;
		}
		while ((e = ix->old[ix->move])) {
			struct tw_entry **b = &ix->cur[tw_cur_bucket(ix, e->id)];

			if (tw_chain_len(ix, *b) >= TW_INDEX_CHAIN_MAX)
				goto out;
			ix->old[ix->move] = e->hnext;
			e->hnext = *b;
			*b = e;
			moved++;
		}
		ix->move++;
		looked++;
	}
out:
	tw_index_moved(ix, moved, looked);
	if (ix->move == nbuckets) {
		kvfree(ix->old);
		ix->old = NULL;
		ix->old_bits = 0;
		ix->move = 0;
		ix->old_rekeyed = false;
	}
	return moved || looked;
}

/* Every index operation helps a resize under way along; most find none. */
static __always_inline void tw_index_step(struct tw_index *ix)
{
	if (unlikely(ix->old))
		tw_index_move(ix, TW_INDEX_MOVE_BUCKETS, TW_INDEX_MOVE_ENTRIES);
}

/* Where the pointer to @id's entry is, or NULL if absent. */
static __always_inline struct tw_entry **tw_index_find(struct tw_index *ix, u64 id)
{
	u32 h = tw_hash(&ix->key, id);
	unsigned int passed = 0;
	struct tw_entry **p;

	if (unlikely(ix->old)) {
		/* Under one key a bucket is its hash's top bits in either table. */
		u32 ho = ix->old_rekeyed ? tw_hash(&ix->old_key, id) : h;
		unsigned long b = tw_hash_bucket(ho, ix->old_bits);

		if (b >= ix->move) {
			for (p = &ix->old[b]; *p; p = &(*p)->hnext, passed++)
				if ((*p)->id == id)
					goto out;
		}
	}
	if (!ix->cur)
		return NULL;
	for (p = &ix->cur[tw_hash_bucket(h, ix->cur_bits)]; *p; p = &(*p)->hnext, passed++)
		if ((*p)->id == id)
			goto out;
	p = NULL;
out:
	ix->steps += passed;
	return p;
}

/*
 * A chain grew to TW_INDEX_CHAIN_LONG. Random ids make one that long only
 * in a table loaded near its growth; then grow early, which splits it. In
 * a table loaded below one entry a bucket, or one that changes already,
 * the ids were chosen from what leaked of the key: ask for a new one. A
 * resize under way holds the new key back until it ends, while adds of
 * such ids fill the chain: hurry it, 64 times the usual step for each add
 * to a long chain, so that a table of 2^12 buckets or fewer is done at
 * once and the next add can take the new key.
 */
static void tw_index_long_chain(struct tw_wheel *w)
{
	struct tw_index *ix = &w->index;

	if (!ix->old && ix->cur_bits < TW_INDEX_MAX_BITS && w->nr_live >= (1ULL << ix->cur_bits)) {
		ix->grow = true;
		return;
	}
	ix->rekey = true;
	if (ix->old)
		tw_index_move(ix, TW_INDEX_HURRY_BUCKETS, TW_INDEX_HURRY_ENTRIES);
}

/*
 * During a resize under the same key, the old buckets whose entries will
 * join the chain of the id hashed @h: move them now, so that the chain an
 * add checks is the whole of what it will be. A bucket moved out of turn
 * is left empty, which lookups and the move in turn take in their stride.
 */
static void tw_index_gather(struct tw_index *ix, u32 h)
{
	unsigned long o;
	long moved;

	for (;;) {
		if (!ix->old || ix->old_rekeyed)
			return;
		o = tw_hash_bucket(h, ix->old_bits);
		if (ix->old_bits < ix->cur_bits) {
			if (o >= ix->move)
				tw_index_moved(ix, tw_index_move_bucket(ix, o), 1);
			return;
		}
		o &= ~((1UL << (ix->old_bits - ix->cur_bits)) - 1);
		if (o < ix->move)
			return;
		moved = tw_index_merge(ix, o);
		if (moved >= 0) {
			tw_index_moved(ix, moved, 0);
			return;
		}
		/* A group too full turned the shrink back: gather again, as a grow. */
	}
}

static int tw_index_insert(struct tw_wheel *w, struct tw_entry *e)
{
	struct tw_index *ix = &w->index;
	struct tw_entry **b;
	unsigned int len;
	u32 h;

	if (!ix->cur)
		return -ENOMEM;
	tw_index_step(ix);
	h = tw_hash(&ix->key, e->id);
	tw_index_gather(ix, h);
	b = &ix->cur[tw_hash_bucket(h, ix->cur_bits)];
	len = tw_chain_len(ix, *b);
	if (len >= TW_INDEX_CHAIN_MAX) {
		tw_index_long_chain(w);
		return -ENOMEM;
	}
	e->hnext = *b;
	*b = e;
	if (len + 1 >= TW_INDEX_CHAIN_LONG)
		tw_index_long_chain(w);
	return 0;
}

static void tw_index_delete(struct tw_wheel *w, struct tw_entry *e)
{
	struct tw_index *ix = &w->index;
	struct tw_entry **p = tw_index_find(ix, e->id);

	if (WARN_ON_ONCE(!p || *p != e))
		return;
	*p = e->hnext;
	tw_index_step(ix);
}

/* ---- dump, in key order ----------------------------------------------- */

/*
 * Dump keys are 56 bits: the bucket hash on top, so that the keys of a
 * bucket of any table form one range, and below it 24 bits of a second
 * keyed hash of the id, so that two ids share a key about as rarely as
 * with a 56-bit hash. Only the dump pays for the second hash. A cursor
 * holds a key position and, above it, the generation of the hash key the
 * position was computed under, so that one from before a new key is told
 * apart from a position under it.
 */
#define TW_POS_LIMIT		(1ULL << TW_DUMP_POS_BITS)

static inline u64 tw_pos(const struct tw_index *ix, u64 id)
{
	u32 low = hsiphash_3u32((u32)id, id >> 32, 1, &ix->key);

	return (u64)tw_hash(&ix->key, id) << (TW_DUMP_POS_BITS - 32) |
	       low >> (64 - TW_DUMP_POS_BITS);
}

/* The cursor at position @pos (TW_POS_LIMIT: past the last) of @ix's key. */
static inline u64 tw_cursor(const struct tw_index *ix, u64 pos)
{
	if (pos == TW_POS_LIMIT)
		return TW_DUMP_END;
	return (ix->gen & TW_DUMP_GEN_MASK) << TW_DUMP_POS_BITS | pos;
}

/*
 * The smallest key in [@lo, @hi) of the entries that may hold keys there:
 * the bucket of @lo in the current table, and in the old one if it has
 * not been moved yet (both under the same key). Sets *@found; returns the
 * key.
 */
static u64 tw_dump_min(const struct tw_index *ix, u64 lo, u64 hi, bool *found)
{
	struct tw_entry *chains[2] = { NULL, NULL };
	u64 min = hi;
	unsigned int c;

	chains[0] = ix->cur[lo >> (TW_DUMP_POS_BITS - ix->cur_bits)];
	if (ix->old) {
		unsigned long b = lo >> (TW_DUMP_POS_BITS - ix->old_bits);

		if (b >= ix->move)
			chains[1] = ix->old[b];
	}
	*found = false;
	for (c = 0; c < 2; c++) {
		struct tw_entry *e;

		for (e = chains[c]; e; e = e->hnext) {
			u64 k = tw_pos(ix, e->id);

			if (k >= lo && k < min) {
				min = k;
				*found = true;
			}
		}
	}
	return min;
}

/* Append the entries with key @k to @out, from the same chains. */
static unsigned int tw_dump_group(const struct tw_index *ix, u64 k,
				  struct tw_entry **out, unsigned int room)
{
	struct tw_entry *chains[2] = { NULL, NULL };
	unsigned int c, n = 0;

	chains[0] = ix->cur[k >> (TW_DUMP_POS_BITS - ix->cur_bits)];
	if (ix->old) {
		unsigned long b = k >> (TW_DUMP_POS_BITS - ix->old_bits);

		if (b >= ix->move)
			chains[1] = ix->old[b];
	}
	for (c = 0; c < 2; c++) {
		struct tw_entry *e;

		for (e = chains[c]; e; e = e->hnext) {
			if (tw_pos(ix, e->id) != k)
				continue;
			if (n < room)
				out[n] = e;
			n++;
		}
	}
	return n;
}

int tw_dump(struct tw_wheel *w, u64 *cursor, struct tw_entry **out, unsigned int max,
	    unsigned int budget)
{
	struct tw_index *ix = &w->index;
	unsigned int n = 0;
	u64 p;

	if (*cursor == TW_DUMP_END)
		return 0;
	if (*cursor >> 63)
		return -EINVAL;
	if (*cursor && (*cursor >> TW_DUMP_POS_BITS) != (ix->gen & TW_DUMP_GEN_MASK))
		return -ESTALE;
	p = *cursor & (TW_POS_LIMIT - 1);
	if (!ix->cur) {
		*cursor = TW_DUMP_END;
		return 0;
	}
	/*
	 * Keys are those of the new key; entries still under the old one
	 * cannot be found by them in bounded work. Move them over first.
	 */
	if (ix->old && ix->old_rekeyed) {
		if (!tw_index_move(ix, budget ?: 1, ULONG_MAX))
			return -EAGAIN;
		*cursor = tw_cursor(ix, p);
		return 0;
	}
	while (budget--) {
		/* The key range of the bucket of @p in the finer table. */
		unsigned int bits = max_t(unsigned int, ix->cur_bits,
					  ix->old ? ix->old_bits : 0);
		u64 width = 1ULL << (TW_DUMP_POS_BITS - bits);
		u64 hi = (p & ~(width - 1)) + width;

		while (p < hi) {
			bool found;
			u64 k = tw_dump_min(ix, p, hi, &found);
			unsigned int g;

			if (!found) {
				p = hi;
				break;
			}
			g = tw_dump_group(ix, k, out + n, max - n);
			if (g > max - n) {
				*cursor = tw_cursor(ix, p);
				return n ? (int)n : -EOVERFLOW;
			}
			n += g;
			p = k + 1;
			if (n == max) {
				*cursor = tw_cursor(ix, p);
				return n;
			}
		}
		if (p == TW_POS_LIMIT)
			break;
	}
	*cursor = tw_cursor(ix, p);
	return n;
}

u64 tw_dump_after(const struct tw_wheel *w, const struct tw_entry *e)
{
	return tw_cursor(&w->index, tw_pos(&w->index, e->id) + 1);
}

/* ---- wheel ------------------------------------------------------------- */

/*
 * A slot is an hlist, as in kernel/time/timer.c: one pointer a slot, O(1)
 * unlink, and no order within a slot (its entries are due together, or
 * cascade together). These are the operations of every refresh, so they
 * stay clear of the list debugging checks some kernels build in.
 */
/* Where an entry due at @expires is placed: there, or as far as the wheel reaches. */
static inline u64 tw_reach(const struct tw_wheel *w, u64 expires)
{
	return expires - w->clk > TW_MAX_DELTA ? w->clk + TW_MAX_DELTA : expires;
}

static void tw_link(struct tw_wheel *w, struct tw_entry *e)
{
	u64 at = tw_reach(w, e->expires);
	unsigned int lvl = tw_level(w->clk, at);
	unsigned int slot = tw_digit(at, lvl);

	hlist_add_head(&e->slot, &w->slots[lvl][slot]);
	w->bitmap[lvl] |= 1ULL << slot;
}

static void tw_unlink(struct tw_wheel *w, struct tw_entry *e)
{
	/* Alone in its slot: it hangs off the slot's head; clear its bit. */
	if (!e->slot.next) {
		unsigned long off = (unsigned long)e->slot.pprev - (unsigned long)w->slots;

		if (off < sizeof(w->slots)) {
			unsigned long i = off / sizeof(w->slots[0][0]);

			w->bitmap[i / TW_LVL_SIZE] &= ~(1ULL << (i % TW_LVL_SIZE));
		}
	}
	hlist_del(&e->slot);
}

/* Deadline @expires, or the next tick if it is not after the clock. */
static u64 tw_clamp(const struct tw_wheel *w, u64 expires)
{
	if (!tw_after(expires, w->clk))
		return w->clk + 1;
	return expires;
}

void tw_init(struct tw_wheel *w, u64 clk, const hsiphash_key_t *key)
{
	hsiphash_key_t k;
	unsigned int l, s;

	BUILD_BUG_ON(TW_LVL_SIZE != 64);	/* one u64 bitmap a level */
	BUILD_BUG_ON(TW_MAX_DELTA >= (1ULL << TW_SHIFT(TW_LEVELS)) -
				     (1ULL << TW_SHIFT(TW_TOP)));

	w->clk = clk;
	w->nr_live = 0;
	w->nr_expired = 0;
	w->pend_level = -1;
	for (l = 0; l < TW_LEVELS; l++) {
		w->bitmap[l] = 0;
		for (s = 0; s < TW_LVL_SIZE; s++)
			INIT_HLIST_HEAD(&w->slots[l][s]);
	}
	INIT_LIST_HEAD(&w->expired);
	k = *key;	/* @key may be the index's own (tw_destroy()) */
	memset(&w->index, 0, sizeof(w->index));
	w->index.key = k;
	w->lazy = NULL;
	w->lazy_ahead = 0;
}

void tw_destroy(struct tw_wheel *w, void (*release)(struct tw_entry *e, void *arg),
		void *arg)
{
	bool (*lazy)(struct tw_wheel *w, struct tw_entry *e, u64 stamp, u64 *expires);
	u64 lazy_ahead = w->lazy_ahead;
	struct tw_entry *e, *tmp;
	struct hlist_node *next;
	unsigned int l, s, gen;

	for (l = 0; l < TW_LEVELS; l++)
		for (s = 0; s < TW_LVL_SIZE; s++)
			hlist_for_each_entry_safe(e, next, &w->slots[l][s], slot)
				release(e, arg);
	list_for_each_entry_safe(e, tmp, &w->expired, node) {
		list_del(&e->node);
		release(e, arg);
	}
	kvfree(w->index.old);
	kvfree(w->index.cur);
	lazy = w->lazy;
	gen = w->index.gen;
	tw_init(w, w->clk, &w->index.key);
	w->index.gen = gen;
	w->lazy = lazy;
	w->lazy_ahead = lazy_ahead;
}

struct tw_entry *tw_lookup(struct tw_wheel *w, u64 id)
{
	struct tw_entry **p;

	tw_index_step(&w->index);
	p = tw_index_find(&w->index, id);
	return p ? *p : NULL;
}

int tw_add(struct tw_wheel *w, struct tw_entry *e, u64 expires)
{
	int ret = tw_index_insert(w, e);

	if (ret)
		return ret;
	e->expires = tw_clamp(w, expires);
	tw_link(w, e);
	w->nr_live++;
	return 0;
}

void tw_rearm(struct tw_wheel *w, struct tw_entry *e, u64 expires)
{
	tw_unlink(w, e);
	e->expires = tw_clamp(w, expires);
	tw_link(w, e);
}

void tw_remove(struct tw_wheel *w, struct tw_entry *e)
{
	tw_unlink(w, e);
	tw_index_delete(w, e);
	w->nr_live--;
}

/* Lowest non-empty level, or -1; the pending cascade is not looked at. */
static int tw_first_level(const struct tw_wheel *w)
{
	int l;

	for (l = 0; l < TW_LEVELS; l++)
		if (w->bitmap[l])
			return l;
	return -1;
}

/* Tick of the first non-empty slot of level @lvl after the clock's digit. */
static u64 tw_level_next(const struct tw_wheel *w, unsigned int lvl)
{
	unsigned int d = tw_digit(w->clk, lvl);
	/* Bit i of the rotated map is slot d + i; bit 0 (slot d) is clear. */
	unsigned int ahead = __ffs64(ror64(w->bitmap[lvl], d));

	return tw_slot_tick(w->clk, lvl, (d + ahead) & TW_LVL_MASK);
}

bool tw_next_event(const struct tw_wheel *w, u64 *tick)
{
	int lvl;

	/* A cut cascade whose entries were all removed is no work. */
	if (!w->nr_live)
		return false;
	if (w->pend_level >= 0) {
		*tick = w->clk;
		return true;
	}
	lvl = tw_first_level(w);
	if (lvl < 0)
		return false;
	*tick = tw_level_next(w, lvl);
	return true;
}

bool tw_idle_to(struct tw_wheel *w, u64 now)
{
	u64 tick;

	/* The common case of a busy wheel: nothing is due at the clock. */
	if (now == w->clk && w->pend_level < 0)
		return true;
	if (tw_next_event(w, &tick) && !tw_after(tick, now))
		return false;
	/* A cut cascade whose entries were all removed: nothing left of it. */
	w->pend_level = -1;
	/* No non-empty slot is passed: the invariant holds, as in tw_advance(). */
	if (tw_after(now, w->clk))
		w->clk = now;
	return true;
}

/* What a tw_advance() call may spend, and has: entries, and index steps. */
struct tw_budget {
	unsigned int left;
	u64 steps0;
};

/* Take one unit for the next entry, if the entries and steps so far leave one. */
static bool tw_budget_take(struct tw_wheel *w, struct tw_budget *b)
{
	u64 steps = (w->index.steps - b->steps0) / TW_STEPS_PER_UNIT;

	if (b->left <= steps)
		return false;
	b->left--;
	return true;
}

/*
 * Empty the current slot of level @lvl (the clock is at its tick):
 * expire what is due now, place the rest on lower levels.
 */
static bool tw_run_slot(struct tw_wheel *w, unsigned int lvl,
			struct tw_budget *budget, u64 stamp)
{
	struct hlist_head *head = &w->slots[lvl][tw_digit(w->clk, lvl)];

	while (head->first) {
		struct tw_entry *e;
		u64 expires;

		if (!tw_budget_take(w, budget)) {
			w->pend_level = lvl;
			return false;
		}
		e = hlist_entry(head->first, struct tw_entry, slot);
		/*
		 * The hook is asked on a cascade too, within its reach: a
		 * later deadline found then places the entry once, where it
		 * goes, instead of one level down now and again when the old
		 * deadline comes. Further ahead it is not called at all.
		 */
		if (w->lazy && e->expires - w->clk <= w->lazy_ahead &&
		    w->lazy(w, e, stamp, &expires)) {
			tw_unlink(w, e);
			e->expires = tw_clamp(w, expires);
			tw_link(w, e);
		} else if (e->expires == w->clk) {
			tw_unlink(w, e);
			tw_index_delete(w, e);
			w->nr_live--;
			e->stamp = stamp;
			list_add_tail(&e->node, &w->expired);
			w->nr_expired++;
		} else {
			tw_unlink(w, e);
			tw_link(w, e);
		}
	}
	w->bitmap[lvl] &= ~(1ULL << tw_digit(w->clk, lvl));
	w->pend_level = -1;
	return true;
}

bool tw_advance(struct tw_wheel *w, u64 now, unsigned int budget, u64 stamp)
{
	struct tw_budget b = { .left = budget ?: 1, .steps0 = w->index.steps };

	for (;;) {
		int lvl = w->pend_level;

		if (lvl < 0) {
			u64 tick = now;

			lvl = tw_first_level(w);
			if (lvl >= 0)
				tick = tw_level_next(w, lvl);
			if (lvl < 0 || tw_after(tick, now)) {
				/*
				 * Nothing due up to @now: jump there. No
				 * non-empty slot is passed, so every entry
				 * stays where the invariant wants it.
				 */
				if (tw_after(now, w->clk))
					w->clk = now;
				return true;
			}
			w->clk = tick;
		}
		if (!tw_run_slot(w, lvl, &b, stamp))
			return false;
	}
}

struct tw_entry *tw_peek_expired(struct tw_wheel *w)
{
	return list_first_entry_or_null(&w->expired, struct tw_entry, node);
}

struct tw_entry *tw_next_expired(struct tw_wheel *w, struct tw_entry *e)
{
	return list_is_last(&e->node, &w->expired) ? NULL : list_next_entry(e, node);
}

struct tw_entry *tw_last_expired(struct tw_wheel *w)
{
	return list_empty(&w->expired) ? NULL : list_last_entry(&w->expired, struct tw_entry, node);
}

struct tw_entry *tw_pop_expired(struct tw_wheel *w)
{
	struct tw_entry *e = tw_peek_expired(w);

	if (e) {
		list_del(&e->node);
		w->nr_expired--;
	}
	return e;
}

void tw_unpop_expired(struct tw_wheel *w, struct tw_entry *e)
{
	list_add(&e->node, &w->expired);
	w->nr_expired++;
}
