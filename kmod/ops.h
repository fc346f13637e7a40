/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wheel's operations, checked and applied in one place whatever the
 * way in (TWHEEL_IOC_OP, BATCH, REFRESH, DUMP): on kernel copies of the
 * caller's arguments, never on user memory. See ops.c.
 */
#ifndef TWHEEL_OPS_H
#define TWHEEL_OPS_H

#include <linux/types.h>

struct twheel_ctx;
struct twheel_dump_entry;
struct twheel_op;

/* Operations of a batch copied in and out at a time (on the stack). */
#define TWHEEL_BATCH_CHUNK	16
/* Ids of TWHEEL_IOC_REFRESH copied in at a time, and failures out (stack). */
#define TWHEEL_REFRESH_CHUNK	32
/* Ids a dump lists per lock hold (on the stack). */
#define TWHEEL_DUMP_CHUNK	16

/**
 * twheel_apply() - check and apply operations
 * @ctx:	a wheel that is set up.
 * @ops:	the operations; each one's out fields (deadline_ns,
 *		remaining_ns, result) are filled in.
 * @n:		how many, best at most TWHEEL_BATCH_CHUNK.
 * @nowait:	the caller must not sleep (an io_uring command issued
 *		inline): allocate without reclaim, before the lock, at most
 *		a small index table.
 *
 * Under one hold of ctx->lock, but where entries must be allocated or the
 * id index asks for a table. Process context, without ctx->lock.
 *
 * Return: 0, or -EAGAIN with @nowait when applying would have to sleep
 * for memory: then nothing is applied.
 */
int twheel_apply(struct twheel_ctx *ctx, struct twheel_op *ops, unsigned int n, bool nowait);

/**
 * twheel_refresh_prepare() - check a REFRESH of many ids, and make its template
 * @ctx:	a wheel that is set up.
 * @flags:	TWHEEL_OPF_TIMEOUT, TWHEEL_OPF_ABSTIME, TWHEEL_OPF_ADD_IF_ABSENT.
 * @timeout_ns:	the timeout or absolute deadline, as a TWHEEL_OP_REFRESH's.
 * @tmpl:	the REFRESH to apply to each id, filled in on success.
 *
 * A deadline too far ahead fails here, once, not each id.
 *
 * Return: 0, or -EINVAL.
 */
int twheel_refresh_prepare(const struct twheel_ctx *ctx, u32 flags, u64 timeout_ns,
			   struct twheel_op *tmpl);

/**
 * twheel_apply_refresh() - apply a REFRESH template to many ids
 * @ctx:	a wheel that is set up.
 * @tmpl:	from twheel_refresh_prepare().
 * @ids:	the ids.
 * @n:		how many, best at most TWHEEL_REFRESH_CHUNK.
 * @failed:	room for @n ids: those that failed.
 * @nowait:	as twheel_apply()'s.
 *
 * Under one hold of ctx->lock (but where entries must be allocated or the
 * index asks for a table): one deadline for all of them, or for those
 * after such a break. Process context, without ctx->lock.
 *
 * Return: how many ids failed, or -EAGAIN as twheel_apply() does.
 */
long twheel_apply_refresh(struct twheel_ctx *ctx, const struct twheel_op *tmpl,
			  const u64 *ids, unsigned int n, u64 *failed, bool nowait);

/**
 * twheel_dump_chunk() - list the next ids of a dump
 * @ctx:	a wheel that is set up.
 * @pos:	the dump's cursor; moved on past what is listed.
 * @out:	room for @room entries.
 * @after:	room for @room cursors: where the dump goes on past each.
 * @room:	at most TWHEEL_DUMP_CHUNK.
 *
 * Under one hold of ctx->lock. Process context, without ctx->lock.
 *
 * Return: how many entries were listed, or tw_dump()'s error (wheel.h).
 */
int twheel_dump_chunk(struct twheel_ctx *ctx, u64 *pos, struct twheel_dump_entry *out,
		      u64 *after, unsigned int room);

/**
 * twheel_index_prepare() - give the id index the table it asks for
 * @ctx:	the wheel.
 *
 * Allocated without the lock (so neither the work nor other callers wait
 * on it) and charged to the caller, with a fresh secret key for it to
 * take if a chain grew long. Under ctx->lock, which it may drop and
 * retake.
 */
void twheel_index_prepare(struct twheel_ctx *ctx);

#endif /* TWHEEL_OPS_H */
