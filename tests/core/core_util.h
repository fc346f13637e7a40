/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What host programs of the wheel core do the way the device does it:
 * a fixed index key, and handing the index the tables (and new keys) it
 * asks for.
 */
#ifndef TWHEEL_CORE_UTIL_H
#define TWHEEL_CORE_UTIL_H

#include "wheel.h"

/* Any key will do on the host; a fixed one keeps runs reproducible. */
static const hsiphash_key_t tw_test_key = { { 0x0706050403020100UL, 0x0f0e0d0c0b0a0908UL } };

/*
 * The key offered with each table, which the index takes when it wants a
 * new one: a fixed sequence from tw_test_keys_given on, for reproducible
 * runs (the fuzzer starts it over for each input), unknown to the ids.
 */
static unsigned long tw_test_keys_given;

static inline hsiphash_key_t tw_test_next_key(void)
{
	hsiphash_key_t k;

	tw_test_keys_given++;
	k.key[0] = 0x9e3779b97f4a7c15UL * tw_test_keys_given;
	k.key[1] = 0xc2b2ae3d27d4eb4fUL ^ tw_test_keys_given;
	return k;
}

/* Give the index the table it wants, if any; -ENOMEM if allocation failed. */
static inline int tw_test_prepare(struct tw_wheel *w)
{
	unsigned int bits = tw_index_wanted(w);
	hsiphash_key_t key = tw_test_next_key();
	struct tw_entry **tab;

	if (!bits)
		return 0;
	tab = tw_index_alloc(bits);
	if (!tab)
		return -ENOMEM;
	if (!tw_index_offer(w, tab, bits, &key))
		abort();	/* it asked for exactly this */
	return 0;
}

/* The longest chain of the index, in either table. */
static inline unsigned int tw_test_longest_chain(const struct tw_wheel *w)
{
	const struct tw_index *ix = &w->index;
	struct tw_entry **tabs[2] = { ix->cur, ix->old };
	unsigned int bits[2] = { ix->cur_bits, ix->old_bits };
	unsigned int t, longest = 0;

	for (t = 0; t < 2; t++) {
		unsigned long b;

		for (b = 0; tabs[t] && b < (1UL << bits[t]); b++) {
			const struct tw_entry *e;
			unsigned int len = 0;

			for (e = tabs[t][b]; e; e = e->hnext)
				len++;
			if (len > longest)
				longest = len;
		}
	}
	return longest;
}

/*
 * The strongest attacker: a random id whose bucket under @key, in a table
 * of 2^@bits buckets, is @bucket (so it shares that bucket with every
 * other one in each smaller table too). About 2^@bits tries.
 */
static inline u64 tw_test_id_in_bucket(const hsiphash_key_t *key, unsigned int bits,
				       unsigned long bucket, uint64_t *seed)
{
	for (;;) {
		u64 id;

		*seed += 0x9e3779b97f4a7c15ULL;
		id = *seed ^ (*seed >> 31);
		id *= 0xbf58476d1ce4e5b9ULL;
		id ^= id >> 29;
		if ((hsiphash_2u32((u32)id, id >> 32, key) >> (32 - bits)) == bucket)
			return id;
	}
}

/* tw_add() after tw_test_prepare(), as the device adds. */
static inline int tw_test_add(struct tw_wheel *w, struct tw_entry *e, u64 expires)
{
	tw_test_prepare(w);
	return tw_add(w, e, expires);
}

#endif /* TWHEEL_CORE_UTIL_H */
