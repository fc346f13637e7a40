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
 * A user namespace is a level of its own too, between its users and its
 * owner: all the entries of its users and of the namespaces below it.
 * It has no limit until one is set from outside it (TWHEEL_IOC_NS_LIMIT:
 * a task with CAP_SYS_RESOURCE over the namespace's parent, as a
 * container's runtime has), so that the tenants of one owner, the
 * containers root makes above all, cannot take each other's share of
 * the owner's limit, nor the owner's own. The limit of a namespace
 * below one's own can be set from inside one's own, so a tenant can
 * divide its share among the namespaces it makes; never raised past
 * what the levels above allow, since every level is charged.
 *
 * A limit holds its level, and the level its namespace, after the last
 * wheel in it is closed: set before the first one opens, it must still
 * be there. Limits whose namespace nobody else holds any more (its tasks
 * and files are gone, so nobody can open a wheel in it again) are
 * dropped, a few looked at whenever a limit is set or read, all at
 * unload. A dead namespace that a limit keeps still counts against its
 * creator's max_user_namespaces (ucounts), so a tenant cannot pin more
 * of them than it could make live.
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
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "account.h"
#include "compat.h"

static unsigned long twheel_max_user_entries;
module_param_named(max_user_entries, twheel_max_user_entries, ulong, 0644);
MODULE_PARM_DESC(max_user_entries,
		 "Cap on live ids plus undelivered events of all wheels one user opened (default: 1/25 of RAM's worth)");

static unsigned long twheel_max_entries_total;
module_param_named(max_entries_total, twheel_max_entries_total, ulong, 0644);
MODULE_PARM_DESC(max_entries_total,
		 "Cap on live ids plus undelivered events of all wheels together (default: 1/4 of RAM's worth)");

/**
 * struct twheel_user - what one user, or one user namespace, has charged
 * @node:	in twheel_users, under twheel_users_lock.
 * @ns:		the user namespace of the user, referenced; a key, with @uid.
 * @uid:	the user; INVALID_UID for the level of @ns as a whole.
 * @parent:	a user's: the level of its namespace, or NULL in the initial
 *		namespace; a namespace's: its owner. Referenced.
 * @ref:	wheels open by this user, levels it is the parent of, and
 *		the limit of a namespace's level while it has one.
 * @entries:	entries charged, over all of the user's wheels and those of
 *		the users below it.
 * @limit:	a namespace's level: its limit, 0 for none (set and read
 *		under twheel_users_lock, read locklessly by charges).
 * @limited:	a namespace's level with a limit: in twheel_limited, under
 *		twheel_users_lock.
 */
struct twheel_user {
	struct hlist_node node;
	struct user_namespace *ns;
	kuid_t uid;
	struct twheel_user *parent;
	refcount_t ref;
	atomic_long_t entries;
	unsigned long limit;
	struct list_head limited;
};

static DEFINE_HASHTABLE(twheel_users, 6);
static LIST_HEAD(twheel_limited);
static DEFINE_SPINLOCK(twheel_users_lock);
static atomic_long_t twheel_entries_total = ATOMIC_LONG_INIT(0);

/* The limits in twheel_limited, under twheel_users_lock; for the admin's eyes. */
static int twheel_nr_limits;
module_param_named(ns_limits, twheel_nr_limits, int, 0444);
MODULE_PARM_DESC(ns_limits, "User namespaces with an entry limit set (TWHEEL_IOC_NS_LIMIT)");

static u32 twheel_user_hash(const struct user_namespace *ns, kuid_t uid)
{
	return hash_ptr(ns, 32) ^ __kuid_val(uid);
}

static bool twheel_is_ns_level(const struct twheel_user *user)
{
	return !uid_valid(user->uid);
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

static void twheel_limits_drop(bool all);

void twheel_account_exit(void)
{
	/* Every wheel holds a module reference: only the limits are left. */
	twheel_limits_drop(true);
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
	INIT_LIST_HEAD(&new->limited);
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

/*
 * The user @uid of @user_ns with the levels above it, referenced; with
 * INVALID_UID, the level of @user_ns as a whole. NULL if out of memory.
 */
static struct twheel_user *twheel_user_chain(struct user_namespace *user_ns, kuid_t uid)
{
	struct twheel_user *user = NULL;
	int level;

	/* From the initial namespace down, so that each level finds its parent. */
	for (level = user_ns->level; level >= 0; level--) {
		struct user_namespace *ns = user_ns;
		kuid_t id = uid;
		int up;

		for (up = level; up > 0; up--) {
			id = ns->owner;
			ns = ns->parent;
		}
		/* Below the initial namespace, the namespace's level comes first. */
		if (ns != &init_user_ns) {
			user = twheel_user_level(ns, INVALID_UID, user);
			if (!user)
				return NULL;
		}
		/* Owners are valid uids: this is the bottom, and the level was asked for. */
		if (!uid_valid(id))
			break;
		user = twheel_user_level(ns, id, user);
		if (!user)
			return NULL;
	}
	return user;
}

struct twheel_user *twheel_user_get(void)
{
	const struct cred *cred = current_cred();

	return twheel_user_chain(cred->user_ns, cred->uid);
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

/* What @user's level may hold: a namespace's own limit, or none. */
static unsigned long twheel_level_max(const struct twheel_user *user, unsigned long user_max)
{
	unsigned long limit;

	if (!twheel_is_ns_level(user))
		return user_max;
	limit = READ_ONCE(user->limit);
	return limit ?: ULONG_MAX;
}

int twheel_charge(struct twheel_user *user, long n)
{
	unsigned long max = READ_ONCE(twheel_max_user_entries);
	struct twheel_user *u, *v;

	for (u = user; u; u = u->parent)
		if (!twheel_add_below(&u->entries, n, twheel_level_max(u, max)))
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
	struct twheel_user *top = user, *u;

	if (!twheel_ns_within(user->ns, reader))
		return user;
	/* Users only: a namespace's level is no one's uid. */
	for (u = user->parent; u && twheel_ns_within(u->ns, reader); u = u->parent)
		if (!twheel_is_ns_level(u))
			top = u;
	return top;
}

/*
 * Limits looked at per TWHEEL_IOC_NS_LIMIT: the lock is everyone's (every
 * open takes it), and the limits can be as many as the namespaces their
 * setters may make, so each call looks at a few, in turn.
 */
#define TWHEEL_LIMITS_LOOK	16

/*
 * Drop the limits whose namespace only their level holds, of the next
 * TWHEEL_LIMITS_LOOK (@all: every limit, at unload, when no wheel is
 * left). A level whose one reference is its limit has no wheel and no
 * level below it; a namespace whose one reference is that level's has
 * no task, file or namespace below it that could open a wheel in it,
 * and nobody can take a new reference to it but from us. The limits
 * kept go to the back of the list, so that the next call looks further.
 */
static void twheel_limits_drop(bool all)
{
	struct twheel_user *user, *next;
	int looked = 0;
	LIST_HEAD(dead);

	spin_lock(&twheel_users_lock);
	list_for_each_entry_safe(user, next, &twheel_limited, limited) {
		if (!all && looked++ == TWHEEL_LIMITS_LOOK)
			break;
		if (!all && (refcount_read(&user->ref) != 1 ||
			     twheel_userns_refs(user->ns) != 1)) {
			list_move_tail(&user->limited, &twheel_limited);
			continue;
		}
		WRITE_ONCE(user->limit, 0);
		list_move(&user->limited, &dead);
		twheel_nr_limits--;
	}
	spin_unlock(&twheel_users_lock);
	/* Off the list, their references are ours. */
	list_for_each_entry_safe(user, next, &dead, limited) {
		list_del_init(&user->limited);
		twheel_user_put(user);
	}
}

int twheel_ns_limit(struct user_namespace *ns, bool set, unsigned long *limit, long *entries)
{
	struct twheel_user *level;
	int puts = 1;

	twheel_limits_drop(false);
	/* The initial namespace's limits are the module's parameters. */
	if (ns == &init_user_ns)
		return -EINVAL;
	/* Set and read from above, as the parent's resources are. */
	if (!ns_capable(ns->parent, CAP_SYS_RESOURCE))
		return -EPERM;
	if (!set) {
		spin_lock(&twheel_users_lock);
		level = twheel_user_find(ns, INVALID_UID);
		*limit = level ? level->limit : 0;
		*entries = level ? atomic_long_read(&level->entries) : 0;
		spin_unlock(&twheel_users_lock);
		return 0;
	}

	level = twheel_user_chain(ns, INVALID_UID);
	if (!level)
		return -ENOMEM;
	spin_lock(&twheel_users_lock);
	if (*limit && list_empty(&level->limited)) {
		/* Our reference becomes the limit's. */
		list_add(&level->limited, &twheel_limited);
		twheel_nr_limits++;
		puts = 0;
	} else if (!*limit && !list_empty(&level->limited)) {
		/* The limit's reference goes with ours. */
		list_del_init(&level->limited);
		twheel_nr_limits--;
		puts = 2;
	}
	WRITE_ONCE(level->limit, *limit);
	*entries = atomic_long_read(&level->entries);
	spin_unlock(&twheel_users_lock);
	while (puts--)
		twheel_user_put(level);
	return 0;
}

long twheel_user_ns_entries(const struct twheel_user *user, unsigned long *limit)
{
	const struct twheel_user *level = user->parent;

	/* A user's parent is its namespace's level, but in the initial one. */
	if (!level || !twheel_is_ns_level(level))
		return -1;
	*limit = READ_ONCE(level->limit);
	return atomic_long_read(&level->entries);
}

kuid_t twheel_user_uid(const struct twheel_user *user)
{
	return user->uid;
}

long twheel_user_entries(const struct twheel_user *user)
{
	return atomic_long_read(&user->entries);
}
