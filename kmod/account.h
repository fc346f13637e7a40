/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Entry limits across wheels: per user, per user namespace, per owner of
 * user namespaces and for the module as a whole. See account.c.
 */
#ifndef TWHEEL_ACCOUNT_H
#define TWHEEL_ACCOUNT_H

#include <linux/types.h>
#include <linux/uidgid.h>

/*
 * Memory an entry costs, slab object and index share: sizes the default
 * limits, and turns other memory a user makes us keep (a touch table)
 * into entries, so the limits bound it too.
 */
#define TWHEEL_ENTRY_COST	64

struct twheel_user;
struct user_namespace;

int twheel_account_init(void);
void twheel_account_exit(void);

/*
 * The calling task's user (its real uid in its user namespace), with the
 * chain of owners above it, referenced; NULL if out of memory. Process
 * context.
 */
struct twheel_user *twheel_user_get(void);
void twheel_user_hold(struct twheel_user *user);
void twheel_user_put(struct twheel_user *user);

/*
 * Charge @n entries to @user, to each owner above it and to the module,
 * or -ENOSPC if that would pass a limit (then nothing is charged). Any
 * context.
 */
int twheel_charge(struct twheel_user *user, long n);
void twheel_uncharge(struct twheel_user *user, long n);

/*
 * The top of @user's chain as a reader in @reader sees it: the highest
 * level whose namespace is @reader or below it, so that a tenant is shown
 * its own usage and never that of the owner above its namespace, which
 * counts every other tenant of that owner too; @user itself if even its
 * own namespace is above @reader.
 */
struct twheel_user *twheel_user_top_within(struct twheel_user *user,
					   const struct user_namespace *reader);

/*
 * The entry limit of user namespace @ns (not the initial one, -EINVAL):
 * with @set, make *@limit its limit (0: none); always, *@limit is the
 * limit in force after and *@entries what its users and the namespaces
 * below it hold. -EPERM unless the caller has CAP_SYS_RESOURCE over the
 * parent of @ns. Process context.
 */
int twheel_ns_limit(struct user_namespace *ns, bool set, unsigned long *limit, long *entries);

/*
 * Entries charged to the user namespace of @user (a user, not a
 * namespace's level), and in *@limit its limit (0: none); -1 for a user
 * of the initial namespace, which has no such level.
 */
long twheel_user_ns_entries(const struct twheel_user *user, unsigned long *limit);

kuid_t twheel_user_uid(const struct twheel_user *user);
/* Entries charged to @user now, over all of its wheels and those below it. */
long twheel_user_entries(const struct twheel_user *user);

#endif /* TWHEEL_ACCOUNT_H */
