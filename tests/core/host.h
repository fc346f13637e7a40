/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel helpers kmod/wheel.c uses, for building it into host
 * programs (unit tests, fuzzer, benchmark). Semantics follow the kernel's
 * include/linux/list.h, siphash.h and bitops.h; only what wheel.c needs
 * (memset and ULONG_MAX come from the C library's headers).
 *
 * kmod/ has no host-build conditionals: wheel.c and wheel.h include the
 * kernel's headers, and with -Iinclude the host build finds those of
 * include/linux/, each of which is this file. <linux/types.h> and
 * <linux/limits.h> are the C library's own uapi copies (its <limits.h>
 * includes the latter), harmless, and no stand-in may shadow them.
 */
#ifndef TWHEEL_HOST_H
#define TWHEEL_HOST_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;

#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)	((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define BUILD_BUG_ON(c)	_Static_assert(!(c), #c)
#define WARN_ON_ONCE(c) ({						\
	bool __c = (c);							\
	if (__c) {							\
		fprintf(stderr, "WARN_ON_ONCE(%s) at %s:%d\n", #c,	\
			__FILE__, __LINE__);				\
		abort();						\
	}								\
	__c;								\
})

/* Allocation: the gfp argument is accepted and ignored. */
typedef unsigned int gfp_t;
#define GFP_KERNEL_ACCOUNT	0u
#define __GFP_NOWARN		0u
#define __GFP_RETRY_MAYFAIL	0u
/* Tests set this to make the next N allocations fail (fault injection). */
extern unsigned long tw_host_fail_alloc;
static inline void *kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	(void)gfp;
	if (tw_host_fail_alloc) {
		tw_host_fail_alloc--;
		return NULL;
	}
	return calloc(n, size);
}
static inline void kvfree(const void *p)
{
	free((void *)p);
}

/* Doubly linked list, as include/linux/list.h. */
struct list_head {
	struct list_head *next, *prev;
};

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}
static inline void __list_add(struct list_head *n, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}
static inline void list_add(struct list_head *n, struct list_head *h)
{
	__list_add(n, h, h->next);
}
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	__list_add(n, h->prev, h);
}
static inline void list_del(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	e->next = (struct list_head *)0x100;	/* LIST_POISON1 */
	e->prev = (struct list_head *)0x122;	/* LIST_POISON2 */
}
static inline void list_del_init(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	INIT_LIST_HEAD(e);
}
static inline bool list_is_last(const struct list_head *e, const struct list_head *h)
{
	return e->next == h;
}
static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}
static inline void list_move_tail(struct list_head *e, struct list_head *h)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	list_add_tail(e, h);
}
/* Singly headed list, as include/linux/list.h's hlist. */
struct hlist_node {
	struct hlist_node *next, **pprev;
};
struct hlist_head {
	struct hlist_node *first;
};

static inline void INIT_HLIST_HEAD(struct hlist_head *h)
{
	h->first = NULL;
}
static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	n->next = first;
	if (first)
		first->pprev = &n->next;
	h->first = n;
	n->pprev = &h->first;
}
static inline void hlist_del(struct hlist_node *n)
{
	struct hlist_node *next = n->next;

	*n->pprev = next;
	if (next)
		next->pprev = n->pprev;
	n->next = (struct hlist_node *)0x100;	/* LIST_POISON1 */
	n->pprev = (struct hlist_node **)0x122;	/* LIST_POISON2 */
}
#define hlist_entry(ptr, type, member)	container_of(ptr, type, member)
#define hlist_entry_safe(ptr, type, member) \
	({ __typeof__(ptr) ____ptr = (ptr); \
	   ____ptr ? hlist_entry(____ptr, type, member) : NULL; })
#define hlist_for_each_entry_safe(pos, n, head, member)			\
	for (pos = hlist_entry_safe((head)->first, __typeof__(*pos), member); \
	     pos && ({ n = pos->member.next; 1; });			\
	     pos = hlist_entry_safe(n, __typeof__(*pos), member))

#define list_entry(ptr, type, member)	container_of(ptr, type, member)
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)
#define list_last_entry(h, type, member) list_entry((h)->prev, type, member)
#define list_first_entry_or_null(h, type, member) \
	(list_empty(h) ? NULL : list_first_entry(h, type, member))
#define list_next_entry(pos, member) \
	list_entry((pos)->member.next, __typeof__(*(pos)), member)
#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_first_entry(head, __typeof__(*pos), member),	\
	     n = list_next_entry(pos, member);				\
	     &pos->member != (head);					\
	     pos = n, n = list_next_entry(n, member))

/*
 * include/linux/siphash.h's hsiphash on a 64-bit kernel: SipHash-1-3 of
 * the arguments as little-endian bytes, truncated to 32 bits.
 */
typedef struct {
	unsigned long key[2];
} hsiphash_key_t;

#define TW_HOST_ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))
#define TW_HOST_SIPROUND(v0, v1, v2, v3) do {				\
	v0 += v1; v1 = TW_HOST_ROTL(v1, 13); v1 ^= v0; v0 = TW_HOST_ROTL(v0, 32); \
	v2 += v3; v3 = TW_HOST_ROTL(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = TW_HOST_ROTL(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = TW_HOST_ROTL(v1, 17); v1 ^= v2; v2 = TW_HOST_ROTL(v2, 32); \
} while (0)

/* SipHash-1-3 of the 8-byte word @m (if @len > 8) and the last block @b. */
static inline u32 tw_host_sip13(u64 m, bool full, u64 b, const hsiphash_key_t *key)
{
	u64 v0 = key->key[0] ^ 0x736f6d6570736575ULL;
	u64 v1 = key->key[1] ^ 0x646f72616e646f6dULL;
	u64 v2 = key->key[0] ^ 0x6c7967656e657261ULL;
	u64 v3 = key->key[1] ^ 0x7465646279746573ULL;

	if (full) {
		v3 ^= m;
		TW_HOST_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	v3 ^= b;
	TW_HOST_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	TW_HOST_SIPROUND(v0, v1, v2, v3);
	TW_HOST_SIPROUND(v0, v1, v2, v3);
	TW_HOST_SIPROUND(v0, v1, v2, v3);
	return (u32)(v0 ^ v1 ^ v2 ^ v3);
}

static inline u32 hsiphash_2u32(u32 a, u32 b, const hsiphash_key_t *key)
{
	return tw_host_sip13((u64)b << 32 | a, true, 8ULL << 56, key);
}

static inline u32 hsiphash_3u32(u32 a, u32 b, u32 c, const hsiphash_key_t *key)
{
	return tw_host_sip13((u64)b << 32 | a, true, 12ULL << 56 | c, key);
}

/* include/linux/bitops.h */
static inline u64 ror64(u64 word, unsigned int shift)
{
	return (word >> (shift & 63)) | (word << ((-shift) & 63));
}
static inline unsigned long __ffs64(u64 word)
{
	return (unsigned long)__builtin_ctzll(word);
}
static inline int fls64(u64 word)
{
	return word ? 64 - __builtin_clzll(word) : 0;
}
static inline unsigned long __ffs(unsigned long word)
{
	return (unsigned long)__builtin_ctzl(word);
}

#endif /* TWHEEL_HOST_H */
