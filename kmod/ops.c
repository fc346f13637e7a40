// SPDX-License-Identifier: GPL-2.0
/*
 * The wheel's operations: ADD, REFRESH, CANCEL and QUERY of one id each
 * (struct twheel_op), REFRESH of many ids with one deadline, and DUMP.
 * Every way in (the ioctls of dev.c today) copies the caller's arguments
 * in, calls here, and copies the results out: the checks and their
 * errors are made here only, on kernel copies, and nothing here touches
 * user memory.
 *
 * Entries are allocated with ctx->lock dropped (struct twheel_pool), so
 * that reclaim for one sharer at its memory cgroup's limit delays nobody
 * else, and expiry allocates nothing; the id index's tables too
 * (twheel_index_prepare()). Either makes the caller's present stale: it
 * reads the clock again after. A caller that must not sleep (an io_uring
 * command issued inline) allocates a chunk's entries, and a small index
 * table, without reclaim before it takes the lock, or applies nothing
 * and answers -EAGAIN.
 */
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/string.h>

#include <linux/twheel.h>

#include "account.h"
#include "clock.h"
#include "dev.h"
#include "ops.h"
#include "touch.h"
#include "trace.h"
#include "wheel.h"

/* Most entries one chunk of a batch or of a REFRESH can add: the larger chunk. */
#define TWHEEL_POOL_MAX		TWHEEL_REFRESH_CHUNK
/* Buckets a dump looks at per lock hold (or moves to the index's new key). */
#define TWHEEL_DUMP_BUDGET	256

#define TWHEEL_OPF_TIMES	(TWHEEL_OPF_TIMEOUT | TWHEEL_OPF_ABSTIME)

/**
 * struct twheel_pool - entries allocated for a chunk of operations
 * @nr:		how many are left.
 * @e:		the entries, not yet live, not charged to the caps.
 *
 * A call's own, on its stack: filled with ctx->lock dropped when an
 * operation is about to add an entry and none is left, for the adds the
 * rest of the chunk may make; what is left over is freed after the call
 * has dropped the lock. Calls that add nothing allocate nothing.
 */
struct twheel_pool {
	unsigned int nr;
	struct tw_entry *e[TWHEEL_POOL_MAX];
};

/*
 * Allocate up to @want entries (at most TWHEEL_POOL_MAX) into an empty
 * @pool, with ctx->lock dropped: the allocation may reclaim (a memory
 * cgroup at its limit), and no one should wait for that, the expiry work
 * least of all. Under ctx->lock, which it drops and retakes; the caller's
 * present is stale after it. Fewer, or none, when memory runs out.
 */
static void twheel_pool_fill(struct twheel_ctx *ctx, struct twheel_pool *pool,
			     unsigned int want)
{
	BUILD_BUG_ON(TWHEEL_BATCH_CHUNK > TWHEEL_POOL_MAX);
	lockdep_assert_held(&ctx->lock);
	want = min_t(unsigned int, want, TWHEEL_POOL_MAX);
	mutex_unlock(&ctx->lock);
	while (pool->nr < want) {
		struct tw_entry *e = twheel_alloc_entry(ctx, false);

		if (!e)
			break;
		pool->e[pool->nr++] = e;
	}
	mutex_lock(&ctx->lock);
}

/*
 * For a caller that must not sleep: @want entries (at most
 * TWHEEL_POOL_MAX) into an empty @pool without reclaim, before the lock
 * is taken. False if not all came; those that did stay for the drain.
 */
static bool twheel_pool_fill_nowait(struct twheel_ctx *ctx, struct twheel_pool *pool,
				    unsigned int want)
{
	lockdep_assert_not_held(&ctx->lock);
	while (pool->nr < want) {
		struct tw_entry *e = twheel_alloc_entry(ctx, true);

		if (!e)
			return false;
		pool->e[pool->nr++] = e;
	}
	return true;
}

/* Free what the call did not use. Without ctx->lock. */
static void twheel_pool_drain(struct twheel_ctx *ctx, struct twheel_pool *pool)
{
	while (pool->nr)
		twheel_free_entry(ctx, pool->e[--pool->nr]);
}

/* An ADD, or a REFRESH with ADD_IF_ABSENT: may need a new entry. */
static bool twheel_op_may_add(const struct twheel_op *op)
{
	return op->op == TWHEEL_OP_ADD ||
	       (op->op == TWHEEL_OP_REFRESH && op->flags & TWHEEL_OPF_ADD_IF_ABSENT);
}

/*
 * @op on @id, applied now, would add an entry and @pool has none left:
 * the id is not live and the wheel's cap has room. Under ctx->lock.
 */
static bool twheel_pool_short(struct twheel_ctx *ctx, const struct twheel_pool *pool,
			      const struct twheel_op *op, u64 id)
{
	struct tw_wheel *w = &ctx->wheel;

	lockdep_assert_held(&ctx->lock);
	return !pool->nr && twheel_op_may_add(op) &&
	       twheel_entries_held(ctx) < ctx->max_entries && !tw_lookup(w, id);
}

void twheel_index_prepare(struct twheel_ctx *ctx)
{
	unsigned int bits = tw_index_wanted(&ctx->wheel);
	struct tw_entry **table;
	hsiphash_key_t key;

	lockdep_assert_held(&ctx->lock);
	if (!bits)
		return;
	mutex_unlock(&ctx->lock);
	table = tw_index_alloc(bits);
	get_random_bytes(&key, sizeof(key));
	mutex_lock(&ctx->lock);
	/* Refused if another caller resized meanwhile; failure is harmless. */
	if (table && !tw_index_offer(&ctx->wheel, table, bits, &key))
		tw_index_free(table);
	memzero_explicit(&key, sizeof(key));
}

/*
 * Largest index table a caller that must not sleep allocates itself
 * (GFP_NOWAIT, from the slab): a first table and the early doublings.
 */
#define TWHEEL_INDEX_NOWAIT_BYTES	(8 * PAGE_SIZE)

/*
 * twheel_index_prepare() for a caller that must not sleep: the table
 * only if it is small and comes without reclaim; false if the index
 * still asks for one. Under ctx->lock, which it keeps.
 */
static bool twheel_index_prepare_nowait(struct twheel_ctx *ctx)
{
	unsigned int bits = tw_index_wanted(&ctx->wheel);
	struct tw_entry **table;
	hsiphash_key_t key;

	lockdep_assert_held(&ctx->lock);
	if (!bits)
		return true;
	if (sizeof(*table) << bits > TWHEEL_INDEX_NOWAIT_BYTES)
		return false;
	table = kcalloc(1UL << bits, sizeof(*table), GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN);
	if (!table)
		return false;
	get_random_bytes(&key, sizeof(key));
	/* Freed by the core with kvfree(), which takes the slab's memory too. */
	if (!tw_index_offer(&ctx->wheel, table, bits, &key))
		tw_index_free(table);
	memzero_explicit(&key, sizeof(key));
	return !tw_index_wanted(&ctx->wheel);
}

/*
 * Before an op that may add an id: if the index asks for a table that
 * this call has not tried to give it yet, give it one now (the lock is
 * dropped). A chain that reached TW_INDEX_CHAIN_LONG earlier in the call
 * so moves to a new key before the adds that follow can fill it, as the
 * core expects of its caller (tw_add() fails only when an id's chain is
 * full); waiting for the end of a batch of chosen ids would fail its
 * last adds. @tried holds the size whose allocation failed, so that
 * memory pressure costs one more attempt after each op that failed with
 * ENOMEM (the caller clears it then), not one before every op.
 * Returns true if the lock was dropped, so the caller's present is stale.
 */
static bool twheel_index_keep_up(struct twheel_ctx *ctx, unsigned int *tried)
{
	unsigned int bits = tw_index_wanted(&ctx->wheel);

	lockdep_assert_held(&ctx->lock);
	if (!bits || bits == *tried)
		return false;
	twheel_index_prepare(ctx);
	*tried = tw_index_wanted(&ctx->wheel) == bits ? bits : 0;
	return true;
}

/* Checks that need no lock: the op's code, flags, slot and timeout. */
static int twheel_op_check(const struct twheel_ctx *ctx, const struct twheel_op *op)
{
	u32 allowed;

	switch (op->op) {
	case TWHEEL_OP_ADD:
		allowed = TWHEEL_OPF_TIMES | TWHEEL_OPF_TOUCH;
		break;
	case TWHEEL_OP_REFRESH:
		allowed = TWHEEL_OPF_TIMES | TWHEEL_OPF_TOUCH | TWHEEL_OPF_ADD_IF_ABSENT;
		break;
	case TWHEEL_OP_CANCEL:
	case TWHEEL_OP_QUERY:
		allowed = 0;
		break;
	default:
		return -EINVAL;
	}
	if (op->flags & ~allowed)
		return -EINVAL;
	if (op->flags & TWHEEL_OPF_TOUCH) {
		if (!ctx->touch.slots)
			return -EINVAL;
		/* A registered table's slots exist once it is registered. */
		if (op->slot != TWHEEL_SLOT_NONE &&
		    (op->slot >= ctx->touch.slots || !twheel_touch_registered(&ctx->touch)))
			return -EINVAL;
	} else if (op->slot) {
		return -EINVAL;
	}
	/* An absolute deadline is checked against the present, under the lock. */
	if (op->flags & TWHEEL_OPF_TIMES) {
		if (!(op->flags & TWHEEL_OPF_ABSTIME) && op->timeout_ns > ctx->max_timeout_ns)
			return -EINVAL;
	} else if (op->timeout_ns) {
		return -EINVAL;
	}
	return 0;
}

/*
 * A new live entry for @id due at @tick, within the caps, taken from
 * @pool: -ENOMEM if the pool is empty (its filling failed).
 */
static int twheel_add_locked(struct twheel_ctx *ctx, struct twheel_pool *pool, u64 id,
			     u64 tick, struct tw_entry **out)
{
	struct tw_wheel *w = &ctx->wheel;
	struct tw_entry *e;
	int ret;

	lockdep_assert_held(&ctx->lock);
	if (twheel_entries_held(ctx) >= ctx->max_entries)
		return -ENOSPC;
	ret = twheel_charge(ctx->user, 1);
	if (ret)
		return ret;
	if (!pool->nr) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	e = pool->e[--pool->nr];
	e->id = id;
	ret = tw_add(w, e, tick);
	if (ret)
		goto err_unpool;
	*out = e;
	return 0;

err_unpool:
	pool->e[pool->nr++] = e;
err_uncharge:
	twheel_uncharge(ctx->user, 1);
	return ret;
}

/*
 * Where an ADD or REFRESH like @op, applied at @now, puts its id: the
 * deadline's tick, and the timeout a touch re-arms it with. -EINVAL for
 * an absolute deadline further ahead than the longest timeout.
 */
static int twheel_op_tick(const struct twheel_ctx *ctx, const struct twheel_op *op,
			  ktime_t now, u64 *tick, u64 *timeout)
{
	if (op->flags & TWHEEL_OPF_ABSTIME) {
		u64 deadline = twheel_from_user(ctx, op->timeout_ns);

		if (deadline > ktime_to_ns(now) &&
		    deadline - ktime_to_ns(now) > ctx->max_timeout_ns)
			return -EINVAL;
		*tick = twheel_abs_tick(ctx, now, deadline);
		*timeout = ctx->default_timeout_ns;
	} else {
		*timeout = op->flags & TWHEEL_OPF_TIMEOUT ? op->timeout_ns
							  : ctx->default_timeout_ns;
		*tick = twheel_deadline_tick(ctx, now, *timeout);
	}
	return 0;
}

/*
 * REFRESH of @id to @tick, with the flags and slot of @op: re-arm it, or
 * add it if @op says so. 0 with the entry in *@out, or -ENOENT, or the
 * add's error. Under ctx->lock.
 */
static int twheel_refresh_locked(struct twheel_ctx *ctx, struct twheel_pool *pool,
				 const struct twheel_op *op, u64 id, u64 tick, u64 timeout,
				 ktime_t now, struct tw_entry **out)
{
	struct tw_entry *e = tw_lookup(&ctx->wheel, id);
	int ret;

	if (e) {
		tw_rearm(&ctx->wheel, e, tick);
	} else if (op->flags & TWHEEL_OPF_ADD_IF_ABSENT) {
		ret = twheel_add_locked(ctx, pool, id, tick, &e);
		if (ret)
			return ret;
	} else {
		return -ENOENT;
	}
	if (ctx->touch.slots)
		twheel_touch_armed(ctx, e, op, now, timeout);
	*out = e;
	return 0;
}

/* Apply one checked operation. Fills the op's out fields. */
static void twheel_op_locked(struct twheel_ctx *ctx, struct twheel_pool *pool,
			     struct twheel_op *op, ktime_t now)
{
	struct tw_wheel *w = &ctx->wheel;
	struct tw_entry *e = NULL;
	u64 timeout = 0, tick = 0, deadline;
	int ret;

	lockdep_assert_held(&ctx->lock);
	ret = twheel_op_tick(ctx, op, now, &tick, &timeout);
	if (ret)
		goto out;

	switch (op->op) {
	case TWHEEL_OP_ADD:
		if (tw_lookup(w, op->id)) {
			ret = -EEXIST;
			break;
		}
		ret = twheel_add_locked(ctx, pool, op->id, tick, &e);
		if (!ret && ctx->touch.slots)
			twheel_touch_armed(ctx, e, op, now, timeout);
		break;
	case TWHEEL_OP_REFRESH:
		ret = twheel_refresh_locked(ctx, pool, op, op->id, tick, timeout, now, &e);
		break;
	case TWHEEL_OP_CANCEL:
	case TWHEEL_OP_QUERY:
		e = tw_lookup(w, op->id);
		if (!e)
			ret = -ENOENT;
		break;
	}
out:
	op->deadline_ns = 0;
	op->remaining_ns = 0;
	op->result = ret;
	if (ret)
		return;

	deadline = twheel_tick_to_ns(ctx, e->expires);
	op->deadline_ns = twheel_to_user(ctx, deadline);
	if (deadline > ktime_to_ns(now))
		op->remaining_ns = deadline - ktime_to_ns(now);
	if (op->op == TWHEEL_OP_CANCEL) {
		tw_remove(w, e);
		twheel_free_entry(ctx, e);
		twheel_uncharge(ctx->user, 1);
	}
}

static void twheel_op_one(struct twheel_ctx *ctx, struct twheel_pool *pool,
			  struct twheel_op *op, ktime_t now)
{
	int ret = twheel_op_check(ctx, op);

	if (ret) {
		op->deadline_ns = 0;
		op->remaining_ns = 0;
		op->result = ret;
	} else {
		twheel_op_locked(ctx, pool, op, now);
	}
	trace_twheel_op(ctx->serial, op);
}

/*
 * For a caller that must not sleep (@nowait): take the lock with every
 * entry the chunk may add already allocated, and the index's table, if
 * it asks for one, given; false (nothing applied) if either needs
 * reclaim or a large table. Takes ctx->lock on success.
 */
static bool twheel_apply_nowait_begin(struct twheel_ctx *ctx, struct twheel_pool *pool,
				      unsigned int may_add)
{
	if (!twheel_pool_fill_nowait(ctx, pool, may_add))
		return false;
	mutex_lock(&ctx->lock);
	if (may_add && !twheel_index_prepare_nowait(ctx)) {
		mutex_unlock(&ctx->lock);
		return false;
	}
	return true;
}

/*
 * Apply @n operations, each filling its out fields, under one lock hold
 * but where entries must be allocated (twheel_pool_fill()) or the index
 * asks for a table. With @nowait, allocated before, or -EAGAIN.
 */
int twheel_apply(struct twheel_ctx *ctx, struct twheel_op *ops, unsigned int n, bool nowait)
{
	struct twheel_pool pool = {};
	unsigned int i, j, may_add, tried = 0;
	bool placed = false;
	ktime_t now;

	if (nowait) {
		for (i = 0, may_add = 0; i < n; i++)
			may_add += twheel_op_may_add(&ops[i]);
		if (n > TWHEEL_POOL_MAX || !twheel_apply_nowait_begin(ctx, &pool, may_add)) {
			twheel_pool_drain(ctx, &pool);
			return -EAGAIN;
		}
	} else {
		mutex_lock(&ctx->lock);
		twheel_index_keep_up(ctx, &tried);
	}
	now = twheel_present(ctx);
	for (i = 0; i < n; i++) {
		/*
		 * Without @nowait, the index's table and the entries when
		 * needed; with it, the pool holds an entry for every op that
		 * may add, and a chain that grew long meanwhile moves to a new
		 * key at the next call that may sleep.
		 */
		if (!nowait && twheel_op_may_add(&ops[i]) && twheel_index_keep_up(ctx, &tried))
			now = twheel_present(ctx);
		if (!nowait && !twheel_op_check(ctx, &ops[i]) &&
		    twheel_pool_short(ctx, &pool, &ops[i], ops[i].id)) {
			for (j = i, may_add = 0; j < n; j++)
				may_add += twheel_op_may_add(&ops[j]);
			twheel_pool_fill(ctx, &pool, may_add);
			now = twheel_present(ctx);
		}
		twheel_op_one(ctx, &pool, &ops[i], now);
		placed |= !ops[i].result && (ops[i].op == TWHEEL_OP_ADD ||
					     ops[i].op == TWHEEL_OP_REFRESH);
		/* One failed allocation fails one op, not the rest of the chunk. */
		if (ops[i].result == -ENOMEM)
			tried = 0;
	}
	/* Only a deadline placed can make the next event earlier. */
	if (placed)
		twheel_arm(ctx);
	twheel_publish(ctx);
	mutex_unlock(&ctx->lock);
	twheel_pool_drain(ctx, &pool);
	return 0;
}

int twheel_refresh_prepare(const struct twheel_ctx *ctx, u32 flags, u64 timeout_ns,
			   struct twheel_op *tmpl)
{
	int ret;

	if (flags & ~(TWHEEL_OPF_TIMES | TWHEEL_OPF_ADD_IF_ABSENT))
		return -EINVAL;
	*tmpl = (struct twheel_op){
		.op = TWHEEL_OP_REFRESH,
		.flags = flags,
		.timeout_ns = timeout_ns,
	};
	ret = twheel_op_check(ctx, tmpl);
	if (ret)
		return ret;
	/*
	 * A deadline too far ahead fails the call, not each id: checked
	 * against the present once here, it can only come nearer later.
	 */
	if (tmpl->flags & TWHEEL_OPF_ABSTIME) {
		u64 tick, timeout;

		ret = twheel_op_tick(ctx, tmpl, twheel_ctx_now(ctx), &tick, &timeout);
		if (ret)
			return ret;
	}
	return 0;
}

long twheel_apply_refresh(struct twheel_ctx *ctx, const struct twheel_op *tmpl,
			  const u64 *ids, unsigned int n, u64 *failed, bool nowait)
{
	bool may_add = twheel_op_may_add(tmpl);
	unsigned int i, nr_failed = 0, tried = 0;
	struct twheel_pool pool = {};
	u64 tick, timeout;
	struct tw_entry *e;
	int bad, ret;
	ktime_t now;

	if (nowait) {
		if (n > TWHEEL_POOL_MAX ||
		    !twheel_apply_nowait_begin(ctx, &pool, may_add ? n : 0)) {
			twheel_pool_drain(ctx, &pool);
			return -EAGAIN;
		}
	} else {
		mutex_lock(&ctx->lock);
		twheel_index_keep_up(ctx, &tried);
	}
	now = twheel_present(ctx);
	bad = twheel_op_tick(ctx, tmpl, now, &tick, &timeout);
	for (i = 0; i < n; i++) {
		if (!nowait && may_add && !bad && twheel_index_keep_up(ctx, &tried)) {
			now = twheel_present(ctx);
			bad = twheel_op_tick(ctx, tmpl, now, &tick, &timeout);
		}
		/* Every id left may be added: allocate for them all at once. */
		if (!nowait && !bad && twheel_pool_short(ctx, &pool, tmpl, ids[i])) {
			twheel_pool_fill(ctx, &pool, n - i);
			now = twheel_present(ctx);
			bad = twheel_op_tick(ctx, tmpl, now, &tick, &timeout);
		}
		ret = bad ?: twheel_refresh_locked(ctx, &pool, tmpl, ids[i], tick, timeout, now,
						   &e);
		if (ret)
			failed[nr_failed++] = ids[i];
		/* One failed allocation fails one id, not the rest of the chunk. */
		if (ret == -ENOMEM)
			tried = 0;
		if (trace_twheel_op_enabled()) {
			struct twheel_op op = *tmpl;

			op.id = ids[i];
			op.result = ret;
			op.deadline_ns = ret ? 0 : twheel_user_deadline(ctx, e);
			trace_twheel_op(ctx->serial, &op);
		}
	}
	if (nr_failed < n)
		twheel_arm(ctx);
	twheel_publish(ctx);
	mutex_unlock(&ctx->lock);
	twheel_pool_drain(ctx, &pool);
	return nr_failed;
}

/* Fill @out, and where the dump goes on past each, from the core's entries. */
static void twheel_dump_fill(struct twheel_ctx *ctx, struct twheel_dump_entry *out,
			     u64 *after, struct tw_entry **found, unsigned int n)
{
	unsigned int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < n; i++) {
		out[i].id = found[i]->id;
		out[i].deadline_ns = twheel_user_deadline(ctx, found[i]);
		out[i].slot = ctx->touch.slots ? twheel_touch_entry(found[i])->slot
					       : TWHEEL_SLOT_NONE;
		out[i].pad = 0;
		after[i] = tw_dump_after(&ctx->wheel, found[i]);
	}
}

int twheel_dump_chunk(struct twheel_ctx *ctx, u64 *pos, struct twheel_dump_entry *out,
		      u64 *after, unsigned int room)
{
	struct tw_entry *found[TWHEEL_DUMP_CHUNK];
	int ret;

	room = min_t(unsigned int, room, TWHEEL_DUMP_CHUNK);
	mutex_lock(&ctx->lock);
	ret = tw_dump(&ctx->wheel, pos, found, room, TWHEEL_DUMP_BUDGET);
	if (ret > 0)
		twheel_dump_fill(ctx, out, after, found, ret);
	mutex_unlock(&ctx->lock);
	return ret;
}
