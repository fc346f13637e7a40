/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The twheel core: a hierarchical timing wheel keyed by 64-bit ids.
 *
 * Plain C over a handful of kernel helpers (lists, hsiphash, bit ops,
 * kvcalloc), with no user-memory access and no device code, so that the
 * same source builds into the module and into host programs, where the
 * headers of tests/core/include/linux stand in for the kernel's (through
 * tests/core/host.h). The design and its costs are explained at the top
 * of wheel.c.
 *
 * Locking: none inside. Every function that takes a struct tw_wheel must
 * be called with the caller's lock for that wheel held. None of them
 * sleeps or allocates: memory for entries and for the id index's tables
 * belongs to the caller, who allocates it in its own context (charged to
 * whoever it should be charged to) and hands it over; the core links and
 * unlinks entries and frees index tables it no longer needs.
 */
#ifndef TWHEEL_WHEEL_H
#define TWHEEL_WHEEL_H

#include <linux/list.h>
#include <linux/siphash.h>
#include <linux/types.h>

#define TW_LVL_BITS	6			/* slots per level: 64, one u64 bitmap */
#define TW_LVL_SIZE	(1U << TW_LVL_BITS)
#define TW_LVL_MASK	((u64)TW_LVL_SIZE - 1)
#define TW_LEVELS	6			/* 6 * 6 = 36 bits of ticks */
/*
 * Farthest from the wheel's clock an entry is placed, in ticks. The top
 * level is used as a ring, so anything below 2^36 - 2^30 is unambiguous.
 * A deadline further ahead is never clamped: the entry waits (hops) at
 * the top level this far ahead and is placed again when that slot comes
 * (see "Hops" in wheel.c). Callers place deadlines from their present,
 * which may lie any distance past a clock that has not run for long (the
 * device's longest timeout is 2^32 ticks from the present, its clock may
 * lag by a suspend); only deadlines 2^63 ticks or more ahead, which
 * wrapping order cannot tell from past ones, are beyond the wheel.
 */
#define TW_MAX_DELTA	(1ULL << 35)

/**
 * struct tw_entry - one id and its deadline
 * @slot:	link in a wheel slot, while live.
 * @node:	link in tw_wheel.expired, once expired.
 * @id:		the caller's key.
 * @expires:	deadline, in ticks of the wheel's clock.
 * @hnext:	next entry in the same id-index bucket, while live.
 * @stamp:	once expired: the value passed to tw_advance(); the
 *		device keeps the time the tick was processed there.
 *
 * 40 bytes on 64-bit: the id index adds one pointer per 1 to 2 entries.
 */
struct tw_entry {
	union {
		struct hlist_node slot;
		struct list_head node;
	};
	u64 id;
	u64 expires;
	union {
		struct tw_entry *hnext;
		u64 stamp;
	};
};

/* No chain of the id index ever holds more entries than this. */
#define TW_INDEX_CHAIN_MAX	16

/*
 * Id index: chained hash tables of 2^bits buckets keyed with a secret
 * @key, resized and rekeyed incrementally. While a resize is under way,
 * buckets of @old below @move are already moved to @cur, and every
 * operation moves a few more, so no single call rehashes the whole table.
 * @cur is NULL until the caller hands over the first table (see
 * tw_index_wanted()). See the design comment in wheel.c.
 */
struct tw_index {
	struct tw_entry **cur;
	struct tw_entry **old;
	unsigned int cur_bits;
	unsigned int old_bits;
	unsigned long move;		/* next bucket of @old to move */
	bool old_rekeyed;		/* @old is under @old_key, not @key */
	bool rekey;			/* a chain grew long: the next table gets a new key */
	bool grow;			/* ...or, loaded as it is, twice the buckets */
	unsigned int gen;		/* new keys taken so far */
	u64 steps;			/* work done on chains: see tw_advance() */
	hsiphash_key_t key;
	hsiphash_key_t old_key;
};

/**
 * struct tw_wheel - a timing wheel
 * @clk:	last tick processed: every entry with expires <= @clk (in
 *		wrapping order) is on @expired or gone.
 * @nr_live:	entries in the slots (and the index).
 * @nr_expired:	entries on @expired, not yet taken by the caller.
 * @pend_level:	a level whose current slot is being cascaded and was
 *		left unfinished when the budget ran out, or -1.
 * @bitmap:	bit s of bitmap[l] set iff slots[l][s] is not empty.
 * @slots:	the wheel; see the design comment in wheel.c.
 * @expired:	expired entries, in deadline order.
 * @index:	id -> entry.
 * @lazy:	if set, asked about each entry whose deadline has come,
 *		before it expires, and about each entry a cascade moves
 *		whose deadline is still ahead (e->expires after @clk) by at
 *		most @lazy_ahead ticks:
 *		returning true with *@expires set re-arms the entry there
 *		instead (as by tw_rearm(): at the earliest the next tick,
 *		and never earlier than asked, however far ahead of the
 *		clock). On a cascade it must answer a tick after
 *		e->expires or false, so that no entry is due sooner than
 *		its deadline. @stamp is tw_advance()'s. Called with the
 *		caller's lock held; must not touch the wheel.
 * @lazy_ahead:	see @lazy: 0 (tw_init()'s) asks only at deadlines. The
 *		caller's, kept by tw_destroy(); may change between calls.
 */
struct tw_wheel {
	u64 clk;
	u64 nr_live;
	u64 nr_expired;
	int pend_level;
	u64 bitmap[TW_LEVELS];
	struct hlist_head slots[TW_LEVELS][TW_LVL_SIZE];
	struct list_head expired;
	struct tw_index index;
	bool (*lazy)(struct tw_wheel *w, struct tw_entry *e, u64 stamp, u64 *expires);
	u64 lazy_ahead;
};

/* Tick @a comes after tick @b, in wrapping order. */
static inline bool tw_after(u64 a, u64 b)
{
	return (s64)(a - b) > 0;
}

/*
 * Prepare an empty wheel whose clock reads @clk (any value: it wraps).
 * @key keys the id index: ids that collide under one key are no more
 * likely to collide under another, so a caller that keeps its keys secret
 * gets chains of random length whatever ids it is given; and since the
 * index moves to a new key when a chain grows long, no chain exceeds
 * TW_INDEX_CHAIN_MAX even for ids chosen from what leaks of a key.
 */
void tw_init(struct tw_wheel *w, u64 clk, const hsiphash_key_t *key);

/*
 * Unlink every entry, live and expired, passing each to @release (which
 * may free it, and may sleep: the core holds nothing meanwhile), and free
 * the index. The wheel is empty and reusable, with the same key.
 */
void tw_destroy(struct tw_wheel *w, void (*release)(struct tw_entry *e, void *arg),
		void *arg);

/*
 * Index tables. The index asks for a table of 2^bits buckets when it has
 * none yet, when it is loaded above 2 entries a bucket (to grow), below
 * one entry in 8 buckets (to shrink, by at most 8 times at once), and when
 * a chain grew long (to move everything under a new key):
 * tw_index_wanted() returns that bits, or 0. The caller allocates the
 * table with tw_index_alloc() in its own context, without the wheel's lock
 * if it likes, and offers it with tw_index_offer() under the lock, with a
 * fresh secret @key that the index takes if it wants a new one; the offer
 * is taken if the index still wants exactly that size, else the caller
 * frees the table with tw_index_free(). An index that is not offered a
 * table when it asks keeps working at a higher load; tw_add() fails with
 * -ENOMEM only when the chain the id belongs in is full. Taken tables are
 * freed by the core.
 */
unsigned int tw_index_wanted(const struct tw_wheel *w);
struct tw_entry **tw_index_alloc(unsigned int bits);
void tw_index_free(struct tw_entry **table);
bool tw_index_offer(struct tw_wheel *w, struct tw_entry **table, unsigned int bits,
		    const hsiphash_key_t *key);

/* The live entry for @id, or NULL. O(1). */
struct tw_entry *tw_lookup(struct tw_wheel *w, u64 id);

/*
 * Link @e (with @e->id set, not live, not in the index) as live with
 * deadline @expires. The caller has checked tw_lookup(w, e->id) == NULL.
 * A deadline at or before the current tick is moved to the next one;
 * any other, however far ahead (below 2^63 ticks), is kept exactly.
 * Returns -ENOMEM only if the index has no table or the id's chain is
 * full (TW_INDEX_CHAIN_MAX, counting what a resize under way will move
 * into it; the index has then asked for a table); then nothing is linked.
 */
int tw_add(struct tw_wheel *w, struct tw_entry *e, u64 expires);

/* Move live entry @e to deadline @expires (as tw_add() places it). O(1). */
void tw_rearm(struct tw_wheel *w, struct tw_entry *e, u64 expires);

/* Unlink live entry @e from the wheel and the index. O(1). */
void tw_remove(struct tw_wheel *w, struct tw_entry *e);

/*
 * Move the clock to @now if nothing is due up to then, in O(TW_LEVELS);
 * returns false, leaving the clock alone, if something is (then only
 * tw_advance() may move it). The clock of an idle wheel lags the present,
 * since nothing advances it; callers that place deadlines relative to the
 * present call this first, so that what they place lands on its level
 * rather than hopping or cascading down from the top.
 */
bool tw_idle_to(struct tw_wheel *w, u64 now);

/*
 * The tick of the next thing to do, a cascade or an expiry, in *@tick.
 * Returns false when the wheel has no live entry (nothing to do ever).
 * If work is pending at or before the current tick (a cascade cut short
 * by its budget), *@tick is @w->clk. O(TW_LEVELS).
 */
bool tw_next_event(const struct tw_wheel *w, u64 *tick);

/* Index steps (see tw_advance()) that cost as much as moving one entry. */
#define TW_STEPS_PER_UNIT	4

/*
 * Process ticks up to and including @now: expire entries whose deadline
 * is <= @now onto @w->expired (in deadline order, stamped with @stamp)
 * and cascade the others down. Stops after about @budget units of work:
 * an entry moved is one, and so are TW_STEPS_PER_UNIT steps of the id
 * index (a chain link passed, an entry rehashed, 8 buckets looked at)
 * that expiries took, so the time of a call is bounded whatever the
 * chains. Returns true when done up to @now, false when the budget ran
 * out and the caller should call again (after dropping its lock for a
 * moment). Cost: proportional to entries moved, not to ticks passed.
 */
bool tw_advance(struct tw_wheel *w, u64 now, unsigned int budget, u64 stamp);

/* Take the oldest expired entry off @w->expired, or NULL. */
struct tw_entry *tw_pop_expired(struct tw_wheel *w);

/*
 * Give back @e, taken by tw_pop_expired() and not delivered: it is taken
 * first again. Entries given back in the reverse of the order they were
 * taken keep that order.
 */
void tw_unpop_expired(struct tw_wheel *w, struct tw_entry *e);

/* The oldest expired entry without taking it, or NULL. */
struct tw_entry *tw_peek_expired(struct tw_wheel *w);

/* The expired entry after @e, in the order tw_pop_expired() takes them, or NULL. */
struct tw_entry *tw_next_expired(struct tw_wheel *w, struct tw_entry *e);

/* The newest expired entry, the one tw_pop_expired() takes last, or NULL. */
struct tw_entry *tw_last_expired(struct tw_wheel *w);

/* The dump of a wheel whose every entry has been listed (see tw_dump()). */
#define TW_DUMP_END	(~0ULL)
/* Dump cursors: a position in the key order, below the key's generation. */
#define TW_DUMP_POS_BITS	56
#define TW_DUMP_GEN_MASK	0x7fULL

/*
 * List live entries in the order of their dump key under the index's
 * current hash key (56 bits of keyed hash of the id, the bucket hash on
 * top: fixed whatever the index's size, until the index takes a new
 * key), from *@cursor on: fills @out with up to @max entries, in key
 * order, never splitting a group of entries with equal keys, and moves
 * *@cursor past them (to TW_DUMP_END once every key has been looked at).
 * A cursor is the key position with, in bits 56 to 62, the number of new
 * keys the index took (modulo 128); 0 begins a dump. Looks at about
 * @budget index buckets at most, so it may fill fewer than @max, or none,
 * before the end; while the index moves to a new key it fills none and
 * moves up to @budget buckets to the new key instead. Returns the number
 * filled; -EOVERFLOW if @max is too small for the first group; -EINVAL
 * for a cursor with bit 63 set, but TW_DUMP_END; -ESTALE for one of
 * another key than the index's; -EAGAIN, the cursor left alone, if a move
 * to a new key waits for room (a chain it must go into is full). An
 * entry live throughout a series of calls that pass *@cursor on is listed
 * exactly once, unless one fails with -ESTALE.
 */
int tw_dump(struct tw_wheel *w, u64 *cursor, struct tw_entry **out, unsigned int max,
	    unsigned int budget);

/*
 * The dump cursor just past live entry @e: where a dump that has listed
 * @e and every entry before it goes on (TW_DUMP_END past the last key).
 */
u64 tw_dump_after(const struct tw_wheel *w, const struct tw_entry *e);

#endif /* TWHEEL_WHEEL_H */
