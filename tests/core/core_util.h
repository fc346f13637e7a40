/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What host programs of the wheel core do the way the device does it:
 * a fixed index key, and handing the index the tables it asks for.
 */
#ifndef TWHEEL_CORE_UTIL_H
#define TWHEEL_CORE_UTIL_H

#include "wheel.h"

/* Any key will do on the host; a fixed one keeps runs reproducible. */
static const hsiphash_key_t tw_test_key = { { 0x0706050403020100UL, 0x0f0e0d0c0b0a0908UL } };

/* Give the index the table it wants, if any; -ENOMEM if allocation failed. */
static inline int tw_test_prepare(struct tw_wheel *w)
{
	unsigned int bits = tw_index_wanted(w);
	struct tw_entry **tab;

	if (!bits)
		return 0;
	tab = tw_index_alloc(bits);
	if (!tab)
		return -ENOMEM;
	if (!tw_index_offer(w, tab, bits))
		abort();	/* it asked for exactly this */
	return 0;
}

/* tw_add() after tw_test_prepare(), as the device adds. */
static inline int tw_test_add(struct tw_wheel *w, struct tw_entry *e, u64 expires)
{
	tw_test_prepare(w);
	return tw_add(w, e, expires);
}

#endif /* TWHEEL_CORE_UTIL_H */
