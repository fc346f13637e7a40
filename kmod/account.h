/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Entry limits across wheels: per user and for the module as a whole.
 * See account.c.
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

int twheel_account_init(void);
void twheel_account_exit(void);

/* The calling task's user, referenced; NULL if out of memory. Process context. */
struct twheel_user *twheel_user_get(void);
void twheel_user_put(struct twheel_user *user);

/*
 * Charge @n entries to @user and to the module, or -ENOSPC if that would
 * pass either limit (then nothing is charged). Any context.
 */
int twheel_charge(struct twheel_user *user, long n);
void twheel_uncharge(struct twheel_user *user, long n);

kuid_t twheel_user_uid(const struct twheel_user *user);
/* Entries charged to @user now, over all of its wheels. */
long twheel_user_entries(const struct twheel_user *user);

#endif /* TWHEEL_ACCOUNT_H */
