// SPDX-License-Identifier: GPL-2.0
/*
 * Entry limits across wheels.
 *
 * Each entry, a live id or an undelivered event, is charged for its
 * whole life to the user who opened its wheel (the opener's real uid, as
 * epoll charges its watches) and to the module. A wheel's own cap is the
 * device's business (dev.c); here are the two caps above it:
 *
 *  - max_user_entries: all wheels of one user together, so that one user
 *    cannot take what the module allows everybody. Default: what 1/25 of
 *    RAM holds, as fs.epoll.max_user_watches.
 *  - max_entries_total: all wheels of all users, a last safety net sized
 *    above any one user's limit (default: what 1/4 of RAM holds), so that
 *    no single user can reach it with the defaults.
 *
 * Memory itself is charged to the memory cgroup of whoever allocates it;
 * these counts bound what any user can pin in kernel memory through us
 * regardless of cgroups.
 *
 * Users are kept in a small hash table under twheel_users_lock, looked
 * up at open and dropped at release; the counts are atomics, charged and
 * uncharged under whatever lock the caller holds.
 */
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "account.h"

static unsigned long twheel_max_user_entries;
module_param_named(max_user_entries, twheel_max_user_entries, ulong, 0644);
MODULE_PARM_DESC(max_user_entries,
		 "Cap on live ids plus undelivered events of all wheels one user opened (default: 1/25 of RAM's worth)");

static unsigned long twheel_max_entries_total;
module_param_named(max_entries_total, twheel_max_entries_total, ulong, 0644);
MODULE_PARM_DESC(max_entries_total,
		 "Cap on live ids plus undelivered events of all wheels together (default: 1/4 of RAM's worth)");

/**
 * struct twheel_user - what one user has charged
 * @node:	in twheel_users, under twheel_users_lock.
 * @uid:	the user.
 * @ref:	wheels open by this user.
 * @entries:	entries charged, over all of the user's wheels.
 */
struct twheel_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic_long_t entries;
};

static DEFINE_HASHTABLE(twheel_users, 6);
static DEFINE_SPINLOCK(twheel_users_lock);
static atomic_long_t twheel_entries_total = ATOMIC_LONG_INIT(0);

int twheel_account_init(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;

	/* A value given at load time is kept; 0 (the default) is derived. */
	if (!twheel_max_user_entries)
		twheel_max_user_entries = div_u64(ram / 25, TWHEEL_ENTRY_COST);
	if (!twheel_max_entries_total)
		twheel_max_entries_total = div_u64(ram / 4, TWHEEL_ENTRY_COST);
	return 0;
}

void twheel_account_exit(void)
{
	/* Every wheel holds a module reference: all users are gone by now. */
	WARN_ON(!hash_empty(twheel_users));
	WARN_ON(atomic_long_read(&twheel_entries_total));
}

/* Under twheel_users_lock. */
static struct twheel_user *twheel_user_find(kuid_t uid)
{
	struct twheel_user *user;

	lockdep_assert_held(&twheel_users_lock);
	hash_for_each_possible(twheel_users, user, node, __kuid_val(uid))
		if (uid_eq(user->uid, uid))
			return user;
	return NULL;
}

struct twheel_user *twheel_user_get(void)
{
	kuid_t uid = current_uid();
	struct twheel_user *user, *new;

	spin_lock(&twheel_users_lock);
	user = twheel_user_find(uid);
	if (user)
		refcount_inc(&user->ref);
	spin_unlock(&twheel_users_lock);
	if (user)
		return user;

	new = kzalloc_obj(*new, GFP_KERNEL_ACCOUNT);
	if (!new)
		return NULL;
	new->uid = uid;
	refcount_set(&new->ref, 1);
	atomic_long_set(&new->entries, 0);

	/* Another wheel of this user may have been opened meanwhile. */
	spin_lock(&twheel_users_lock);
	user = twheel_user_find(uid);
	if (user) {
		refcount_inc(&user->ref);
	} else {
		hash_add(twheel_users, &new->node, __kuid_val(uid));
		user = new;
		new = NULL;
	}
	spin_unlock(&twheel_users_lock);
	kfree(new);
	return user;
}

void twheel_user_put(struct twheel_user *user)
{
	/* Under the lock, so that twheel_user_get() never finds it at 0. */
	spin_lock(&twheel_users_lock);
	if (refcount_dec_and_test(&user->ref))
		hash_del(&user->node);
	else
		user = NULL;
	spin_unlock(&twheel_users_lock);
	if (user) {
		WARN_ON(atomic_long_read(&user->entries));
		kfree(user);
	}
}

int twheel_charge(struct twheel_user *user, long n)
{
	/* Counts are never negative: compare them as the unsigned limits. */
	if ((unsigned long)atomic_long_add_return(n, &user->entries) >
	    READ_ONCE(twheel_max_user_entries))
		goto undo_user;
	if ((unsigned long)atomic_long_add_return(n, &twheel_entries_total) >
	    READ_ONCE(twheel_max_entries_total))
		goto undo_total;
	return 0;

undo_total:
	atomic_long_sub(n, &twheel_entries_total);
undo_user:
	atomic_long_sub(n, &user->entries);
	return -ENOSPC;
}

void twheel_uncharge(struct twheel_user *user, long n)
{
	atomic_long_sub(n, &twheel_entries_total);
	atomic_long_sub(n, &user->entries);
}

kuid_t twheel_user_uid(const struct twheel_user *user)
{
	return user->uid;
}

long twheel_user_entries(const struct twheel_user *user)
{
	return atomic_long_read(&user->entries);
}
