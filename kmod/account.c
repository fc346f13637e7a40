// SPDX-License-Identifier: GPL-2.0
/*
 * Entry limits across wheels.
 *
 * Each entry, a live id or an undelivered event, is charged for its
 * whole life to the user who opened its wheel (the opener's real uid, as
 * epoll charges its watches) and to the module. A wheel's own cap is the
 * device's business (set in dev.c, kept in ops.c); here are the two caps
 * above it:
 *
 *  - max_user_entries: all wheels of one user together, so that one user
 *    cannot take what the module allows everybody. Default: what 1/25 of
 *    RAM holds, as fs.epoll.max_user_watches.
 *  - max_entries_total: all wheels of all users, a last safety net sized
 *    above any one user's limit (default: what 1/4 of RAM holds), so that
 *    no single user can reach it with the defaults.
 *
 * A user is a uid in a user namespace, and user namespaces nest: one
 * person with a range of subordinate uids (/etc/subuid) owns a namespace
 * of up to 65536 of them, each a kuid of its own. So a user here is the
 * pair (namespace, uid), and its entries are charged to it and to the
 * user that owns its namespace (the creator's uid in the parent
 * namespace), and so on up to the initial namespace, each level against
 * max_user_entries, as the kernel's ucounts count inotify instances: all
 * the uids of the containers alice made count against alice, however
 * many they are, while the users of the initial namespace count as each
 * their own. The module cannot add a ucount type, hence this equivalent.
 *
 * Memory itself is charged to the memory cgroup of whoever allocates it;
 * these counts bound what any user can pin in kernel memory through us
 * regardless of cgroups.
 *
 * Users are kept in a small hash table under twheel_users_lock, looked
 * up at open and dropped at release, each holding its namespace and its
 * parent; the counts are atomics, charged and uncharged under whatever
 * lock the caller holds.
 */
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

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
 * @ns:		the user namespace of the user, referenced; a key, with @uid.
 * @uid:	the user.
 * @parent:	the owner of @ns, referenced; NULL in the initial namespace.
 * @ref:	wheels open by this user, users it is the parent of.
 * @entries:	entries charged, over all of the user's wheels and those of
 *		the users below it.
 */
struct twheel_user {
	struct hlist_node node;
	struct user_namespace *ns;
	kuid_t uid;
	struct twheel_user *parent;
	refcount_t ref;
	atomic_long_t entries;
};

static DEFINE_HASHTABLE(twheel_users, 6);
static DEFINE_SPINLOCK(twheel_users_lock);
static atomic_long_t twheel_entries_total = ATOMIC_LONG_INIT(0);

static u32 twheel_user_hash(const struct user_namespace *ns, kuid_t uid)
{
	return hash_ptr(ns, 32) ^ __kuid_val(uid);
}

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
static struct twheel_user *twheel_user_find(const struct user_namespace *ns, kuid_t uid)
{
	struct twheel_user *user;

	lockdep_assert_held(&twheel_users_lock);
	hash_for_each_possible(twheel_users, user, node, twheel_user_hash(ns, uid))
		if (user->ns == ns && uid_eq(user->uid, uid))
			return user;
	return NULL;
}

/*
 * The user (@ns, @uid), referenced, whose parent is @parent: the caller's
 * reference to @parent passes to a user made here, and is dropped if the
 * user was there already. NULL if out of memory (@parent dropped too).
 */
static struct twheel_user *twheel_user_level(struct user_namespace *ns, kuid_t uid,
					     struct twheel_user *parent)
{
	struct twheel_user *user, *new;

	spin_lock(&twheel_users_lock);
	user = twheel_user_find(ns, uid);
	if (user)
		refcount_inc(&user->ref);
	spin_unlock(&twheel_users_lock);
	if (user)
		goto put_parent;

	new = kzalloc_obj(*new, GFP_KERNEL_ACCOUNT);
	if (!new)
		goto put_parent;
	new->ns = get_user_ns(ns);
	new->uid = uid;
	new->parent = parent;
	refcount_set(&new->ref, 1);
	atomic_long_set(&new->entries, 0);

	/* Another wheel of this user may have been opened meanwhile. */
	spin_lock(&twheel_users_lock);
	user = twheel_user_find(ns, uid);
	if (user) {
		refcount_inc(&user->ref);
	} else {
		hash_add(twheel_users, &new->node, twheel_user_hash(ns, uid));
		user = new;
		new = NULL;
	}
	spin_unlock(&twheel_users_lock);
	if (!new)
		return user;
	put_user_ns(new->ns);
	kfree(new);
put_parent:
	if (parent)
		twheel_user_put(parent);
	return user;
}

struct twheel_user *twheel_user_get(void)
{
	const struct cred *cred = current_cred();
	struct twheel_user *user = NULL;
	int level;

	/* From the initial namespace down, so that each level finds its parent. */
	for (level = cred->user_ns->level; level >= 0; level--) {
		struct user_namespace *ns = cred->user_ns;
		kuid_t uid = cred->uid;
		int up;

		for (up = level; up > 0; up--) {
			uid = ns->owner;
			ns = ns->parent;
		}
		user = twheel_user_level(ns, uid, user);
		if (!user)
			return NULL;
	}
	return user;
}

void twheel_user_hold(struct twheel_user *user)
{
	refcount_inc(&user->ref);
}

void twheel_user_put(struct twheel_user *user)
{
	while (user) {
		struct twheel_user *parent = user->parent;

		/* Under the lock, so that a lookup never finds it at 0. */
		spin_lock(&twheel_users_lock);
		if (!refcount_dec_and_test(&user->ref)) {
			spin_unlock(&twheel_users_lock);
			return;
		}
		hash_del(&user->node);
		spin_unlock(&twheel_users_lock);
		WARN_ON(atomic_long_read(&user->entries));
		put_user_ns(user->ns);
		kfree(user);
		user = parent;
	}
}

/*
 * Add @n to @count unless that passes @max: never above it, even for a
 * moment, so that a charge that fails (a huge one, say) cannot make
 * others fail that fit, as the kernel's ucounts and io_uring's locked
 * memory count.
 */
static bool twheel_add_below(atomic_long_t *count, long n, unsigned long max)
{
	long old = atomic_long_read(count);

	do {
		/* Counts are never negative: compare them as the unsigned limits. */
		if ((unsigned long)old > max || n > max - (unsigned long)old)
			return false;
	} while (!atomic_long_try_cmpxchg(count, &old, old + n));
	return true;
}

int twheel_charge(struct twheel_user *user, long n)
{
	unsigned long max = READ_ONCE(twheel_max_user_entries);
	struct twheel_user *u, *v;

	for (u = user; u; u = u->parent)
		if (!twheel_add_below(&u->entries, n, max))
			goto undo_users;
	if (!twheel_add_below(&twheel_entries_total, n, READ_ONCE(twheel_max_entries_total)))
		goto undo_users;
	return 0;

undo_users:
	/* The levels below @u were charged, @u not; all of them if @u is NULL. */
	for (v = user; v != u; v = v->parent)
		atomic_long_sub(n, &v->entries);
	return -ENOSPC;
}

void twheel_uncharge(struct twheel_user *user, long n)
{
	atomic_long_sub(n, &twheel_entries_total);
	for (; user; user = user->parent)
		atomic_long_sub(n, &user->entries);
}

/* @ns is @reader or one of the namespaces below it. */
static bool twheel_ns_within(const struct user_namespace *ns,
			     const struct user_namespace *reader)
{
	for (; ns; ns = ns->parent)
		if (ns == reader)
			return true;
	return false;
}

struct twheel_user *twheel_user_top_within(struct twheel_user *user,
					   const struct user_namespace *reader)
{
	if (!twheel_ns_within(user->ns, reader))
		return user;
	while (user->parent && twheel_ns_within(user->parent->ns, reader))
		user = user->parent;
	return user;
}

kuid_t twheel_user_uid(const struct twheel_user *user)
{
	return user->uid;
}

long twheel_user_entries(const struct twheel_user *user)
{
	return atomic_long_read(&user->entries);
}
