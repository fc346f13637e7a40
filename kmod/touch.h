/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A wheel's touch table: slots of u64 stamps in pages shared with the
 * process, the module's own pages that it maps or the process's own
 * pages that it registers, and the entries bound to its slots, which a
 * touch re-arms. See touch.c, and "Touch table" and "Registered touch
 * table" in the uapi.
 */
#ifndef TWHEEL_TOUCH_H
#define TWHEEL_TOUCH_H

#include <asm/barrier.h>
#include <linux/ktime.h>
#include <linux/mm_types.h>
#include <linux/types.h>

struct cred;

#include "wheel.h"

struct twheel_ctx;
struct twheel_op;

/**
 * struct twheel_touch_table - the table
 * @pages:	the table's pages: the module's own, allocated at setup and
 *		charged to the memory cgroup of setup's caller; or, for a
 *		registered table, the process's pages pinned by REGISTER,
 *		NULL until then (set once, under ctx->lock, with a release
 *		store: twheel_touch_registered() reads it without the lock).
 *		NULL for a wheel without a table.
 * @nr_pages:	how many; set with @pages.
 * @slots:	how many slots; 0 for a wheel without a table.
 * @user:	the table is registered memory (TWHEEL_SETUPF_TOUCH_USER).
 * @mm:		for a registered table, the mm whose pinned_vm counts the
 *		pinned pages, held; set with @pages.
 * @pin_cred:	for a registered table, the credentials of the caller,
 *		held for their user, whose locked_vm counts the pages against
 *		its RLIMIT_MEMLOCK; NULL if the caller had CAP_IPC_LOCK. Set
 *		with @pages.
 *
 * @slots and @user are fixed from setup to release, the rest once set.
 */
struct twheel_touch_table {
	struct page **pages;
	unsigned int nr_pages;
	u32 slots;
	bool user;
	struct mm_struct *mm;
	const struct cred *pin_cred;
};

/* Pages a table of @slots slots takes. */
unsigned int twheel_touch_pages(u32 slots);

/* Allocate a zeroed table of @slots slots. Process context, may sleep. */
int twheel_touch_init(struct twheel_touch_table *t, u32 slots);

/*
 * Pin @slots slots of the caller's memory at @addr as a registered table
 * in @t, accounted to the caller. Process context, in the caller's mm;
 * may fault and sleep: never under ctx->lock.
 */
int twheel_touch_pin(struct twheel_touch_table *t, u64 addr, u32 slots);

/* Move the pinned pages of @from into @t, which has none. Under ctx->lock. */
void twheel_touch_install(struct twheel_touch_table *t, struct twheel_touch_table *from);

/* Free a table, own or registered (unpinned and unaccounted). May sleep. */
void twheel_touch_free(struct twheel_touch_table *t);

/* The table has its pages: always for the module's own, once registered. */
static inline bool twheel_touch_registered(const struct twheel_touch_table *t)
{
	/* Pairs with the release in twheel_touch_install(). */
	return smp_load_acquire(&t->pages);
}

/*
 * The stamp in slot @slot (< t->slots) of a table that has its pages, as
 * userspace last stored it: any value. Never faults, never sleeps.
 */
u64 twheel_touch_read(const struct twheel_touch_table *t, u32 slot);

/* Map the table into @vma: the file's mmap for a wheel with a table. */
int twheel_touch_mmap(struct twheel_touch_table *t, struct vm_area_struct *vma);

/**
 * struct twheel_touch_entry - an entry of a wheel with a touch table
 * @e:		the core's entry.
 * @timeout_ns:	what a touch re-arms the id with: the timeout of its last
 *		ADD or REFRESH (the default if that carried a deadline).
 * @armed_ns:	when its deadline was last set; stamps up to it are no touch.
 * @seen:	the last stamp that counted, or the one in the slot when the
 *		id was bound to it: a stamp counts once, so neither a stale
 *		stamp of a slot's previous id nor a time from the future left
 *		in the slot keeps the id alive more than one timeout.
 * @slot:	its touch slot, or TWHEEL_SLOT_NONE.
 *
 * Every entry of such a wheel is one, bound or not. Under the wheel's lock.
 */
struct twheel_touch_entry {
	struct tw_entry e;
	u64 timeout_ns;
	u64 armed_ns;
	u64 seen;
	u32 slot;
};

static inline struct twheel_touch_entry *twheel_touch_entry(struct tw_entry *e)
{
	return container_of(e, struct twheel_touch_entry, e);
}

/**
 * twheel_touch_armed() - note a new deadline of an entry of a touch wheel
 * @ctx:	the wheel, which has a touch table.
 * @e:		the entry, just added or re-armed by @op.
 * @op:		the ADD or REFRESH, checked: its flags and slot.
 * @now:	the present @op was applied at.
 * @timeout:	the timeout it was applied with.
 *
 * Under ctx->lock.
 */
void twheel_touch_armed(struct twheel_ctx *ctx, struct tw_entry *e,
			const struct twheel_op *op, ktime_t now, u64 timeout);

/**
 * twheel_touch_lazy() - the wheel's lazy hook (tw_wheel.lazy) with a table
 * @w:		ctx->wheel.
 * @e:		an entry whose deadline has come.
 * @now_ns:	the time the expiry work began at.
 * @expires:	where its new deadline's tick goes.
 *
 * If @e's slot was stamped after its deadline was set, re-arm it as a
 * REFRESH at that time would have. Under ctx->lock.
 *
 * Return: true if @e was touched and must not expire.
 */
bool twheel_touch_lazy(struct tw_wheel *w, struct tw_entry *e, u64 now_ns, u64 *expires);

/*
 * Widen the wheel's reach on a cascade (tw_wheel.lazy_ahead) to an eighth
 * of @timeout_ns, if that is wider: the default timeout's at setup, then
 * each longer timeout an id is armed with. Under ctx->lock.
 */
void twheel_touch_reach(struct twheel_ctx *ctx, u64 timeout_ns);

#endif /* TWHEEL_TOUCH_H */
