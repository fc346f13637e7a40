/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hash map (and set) of the C ways of the scenario benchmark: what a
 * C programmer writes for the seeds' Map<uid, last_time>, Map<uid, slot>
 * and Set<uid>, and for the id -> fd map of one timerfd per id. Open
 * addressing with linear probing, u64 keys (UINT64_MAX marks a free
 * slot), a u64 value per key unless it is a set, grown by doubling at
 * 3/4 full, deletion by backward shift (no tombstones, so a map that
 * sees millions of deletions stays as fast as a fresh one).
 *
 * Header-only and static: each driver is one program.
 */
#ifndef HMAP_H
#define HMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HMAP_FREE	UINT64_MAX

struct hmap {
	uint64_t *keys;
	uint64_t *vals;		/* NULL for a set */
	size_t mask;		/* capacity - 1, capacity a power of two */
	size_t len;
};

static inline size_t hmap_slot(const struct hmap *m, uint64_t key)
{
	/* Fibonacci hashing: sequential ids spread over the whole table. */
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & m->mask;
}

static inline void hmap_alloc(struct hmap *m, size_t cap, bool set)
{
	m->mask = cap - 1;
	m->len = 0;
	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = set ? NULL : malloc(cap * sizeof(*m->vals));
	if (!m->keys || (!set && !m->vals))
		abort();
	memset(m->keys, 0xff, cap * sizeof(*m->keys));
}

static inline void hmap_init(struct hmap *m, bool set)
{
	hmap_alloc(m, 16, set);
}

static inline void hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
}

/* The slot holding @key, or the free slot where it would go. */
static inline size_t hmap_find(const struct hmap *m, uint64_t key)
{
	size_t i = hmap_slot(m, key);

	while (m->keys[i] != HMAP_FREE && m->keys[i] != key)
		i = (i + 1) & m->mask;
	return i;
}

static inline void hmap_put(struct hmap *m, uint64_t key, uint64_t val);

static inline void hmap_grow(struct hmap *m)
{
	struct hmap old = *m;
	size_t i;

	hmap_alloc(m, (old.mask + 1) * 2, !old.vals);
	for (i = 0; i <= old.mask; i++)
		if (old.keys[i] != HMAP_FREE)
			hmap_put(m, old.keys[i], old.vals ? old.vals[i] : 0);
	hmap_free(&old);
}

/* Insert or overwrite. */
static inline void hmap_put(struct hmap *m, uint64_t key, uint64_t val)
{
	size_t i = hmap_find(m, key);

	if (m->keys[i] == HMAP_FREE) {
		if ((m->len + 1) * 4 > (m->mask + 1) * 3) {
			hmap_grow(m);
			i = hmap_find(m, key);
		}
		m->keys[i] = key;
		m->len++;
	}
	if (m->vals)
		m->vals[i] = val;
}

/* The value of @key into *@val; false if absent. */
static inline bool hmap_get(const struct hmap *m, uint64_t key, uint64_t *val)
{
	size_t i = hmap_find(m, key);

	if (m->keys[i] == HMAP_FREE)
		return false;
	if (val && m->vals)
		*val = m->vals[i];
	return true;
}

/*
 * Remove the entry in slot @i: the entries after it in its probe run
 * move back into the hole if their home slot allows.
 */
static inline void hmap_del_at(struct hmap *m, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & m->mask;
		if (m->keys[j] == HMAP_FREE)
			break;
		home = hmap_slot(m, m->keys[j]);
		/* Stays if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->keys[i] = m->keys[j];
		if (m->vals)
			m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = HMAP_FREE;
	m->len--;
}

static inline bool hmap_del(struct hmap *m, uint64_t key)
{
	size_t i = hmap_find(m, key);

	if (m->keys[i] == HMAP_FREE)
		return false;
	hmap_del_at(m, i);
	return true;
}

#endif /* HMAP_H */
