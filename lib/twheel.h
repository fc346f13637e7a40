/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libtwheel: a thin C library over /dev/twheel.
 *
 * Each function is one system call (or none: the twheel_prep_*() helpers
 * only fill a struct twheel_op for twheel_batch(), and twheel_touch() is
 * a clock read and a store into the mapped touch table). Every function that
 * can fail returns a value >= 0 on success and a negative errno on
 * failure; errno itself is left as the system call left it and is never
 * the way an answer is given. The library keeps no state, starts no
 * thread and allocates nothing.
 *
 * The ABI, its rules and its error codes are those of <linux/twheel.h>;
 * see twheel(4) and libtwheel(3).
 */
#ifndef LIBTWHEEL_H
#define LIBTWHEEL_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>	/* clockid_t, also under -std=c11 */
#include <time.h>
#include <linux/twheel.h>

/*
 * twheel_touch() reads the clock inline, but <time.h> declares
 * clock_gettime() only to programs that ask for POSIX, which -std=c11
 * alone does not: then declare it here, as POSIX does. (glibc defines
 * _POSIX_C_SOURCE for every program that asks for POSIX in any way; C++
 * compilers ask for it themselves.)
 */
#if !defined(_POSIX_C_SOURCE) && !defined(__cplusplus)
int clock_gettime(clockid_t clockid, struct timespec *tp);
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A timeout argument that selects the wheel's default timeout. */
#define TWHEEL_TIMEOUT_DEFAULT	UINT64_MAX

/* Open a new wheel; @flags: 0, O_CLOEXEC, O_NONBLOCK. Returns the fd. */
int twheel_open(int flags);

/* TWHEEL_IOC_SETUP with the fields given one by one (flags, pad 0). */
int twheel_setup(int fd, uint64_t tick_ns, uint64_t default_timeout_ns,
		 clockid_t clockid, uint32_t max_entries);

/* TWHEEL_IOC_SETUP with a caller-filled struct, passed as is. */
int twheel_setup_params(int fd, const struct twheel_setup_args *args);

/*
 * Single operations. @timeout_ns is relative, on the wheel's clock, or
 * TWHEEL_TIMEOUT_DEFAULT. Each returns 0 or -errno (the op's result).
 */
int twheel_add(int fd, uint64_t id, uint64_t timeout_ns);
/* @flags: 0 or TWHEEL_OPF_ADD_IF_ABSENT. */
int twheel_refresh(int fd, uint64_t id, uint64_t timeout_ns, uint32_t flags);
int twheel_cancel(int fd, uint64_t id);
/* Either out pointer may be NULL. */
int twheel_query(int fd, uint64_t id, uint64_t *deadline_ns,
		 uint64_t *remaining_ns);

/* TWHEEL_IOC_OP on a caller-filled op: 0 or -errno; out fields written. */
int twheel_submit_op(int fd, struct twheel_op *op);

/*
 * TWHEEL_IOC_BATCH: apply @count ops in order. Returns how many were
 * applied (each with its own op->result), or -errno if none was.
 */
int twheel_batch(int fd, struct twheel_op *ops, unsigned int count);

/*
 * TWHEEL_IOC_REFRESH: refresh @count ids with one timeout (@timeout_ns,
 * or TWHEEL_TIMEOUT_DEFAULT; with TWHEEL_OPF_ABSTIME in @flags, one
 * deadline), reading 8 bytes per id. @flags: 0, TWHEEL_OPF_ABSTIME,
 * TWHEEL_OPF_ADD_IF_ABSENT. The ids not refreshed go to @failed (room for
 * @count, or NULL) and their number to *@nr_failed (or NULL). Returns how
 * many ids were processed, or -errno if none was.
 */
int twheel_refresh_ids(int fd, const uint64_t *ids, unsigned int count,
		       uint64_t timeout_ns, uint32_t flags, uint64_t *failed,
		       unsigned int *nr_failed);

/*
 * read(2) up to @max events. Returns the number read (>= 1), or -errno:
 * -EAGAIN on an O_NONBLOCK wheel with nothing waiting, -EINTR, ...
 */
int twheel_read_events(int fd, struct twheel_event *events, unsigned int max);

/*
 * The time on @clockid in ns, as the wheel sees it: compare deadlines
 * and expiry stamps with it. 0 if @clockid cannot be read.
 */
uint64_t twheel_now(clockid_t clockid);

/*
 * TWHEEL_IOC_DUMP: list up to @count live ids from *@cursor (0 to begin)
 * and move the cursor on. Returns how many were written (maybe 0 before
 * the end), or -errno. The dump is over when *@cursor == TWHEEL_DUMP_END;
 * -ESTALE means the wheel's id index took a new key since the cursor was
 * returned: begin again from 0.
 */
int twheel_dump(int fd, struct twheel_dump_entry *entries, unsigned int count,
		uint64_t *cursor);

/* A mapped touch table (see "Touch table" in <linux/twheel.h>). */
struct twheel_touch {
	uint64_t *slots;	/* nr_slots stamps, shared with the kernel */
	uint32_t nr_slots;
	clockid_t clockid;	/* the wheel's clock */
	size_t map_len;
};

/*
 * Map the touch table of @fd, a wheel set up with TWHEEL_SETUPF_TOUCH and
 * @nr_slots slots on @clockid (the wheel's: CLOCK_MONOTONIC or
 * CLOCK_BOOTTIME, else -EINVAL). 0 or -errno.
 */
int twheel_touch_map(int fd, uint32_t nr_slots, clockid_t clockid,
		     struct twheel_touch *touch);
int twheel_touch_unmap(struct twheel_touch *touch);

/*
 * TWHEEL_IOC_TOUCH_REGISTER: give @fd, a wheel set up with
 * TWHEEL_SETUPF_TOUCH_USER and @nr_slots slots, its touch table in the
 * caller's memory: @table, page-aligned, @nr_slots * 8 bytes, writable,
 * of a shared mapping (MAP_SHARED anonymous memory, shm or a memfd, an
 * mmap-able BPF array; a private one is EINVAL). The kernel pins it
 * until the wheel is released, charged to the caller's user against its
 * RLIMIT_MEMLOCK. Its stamps are on the wheel's clock in the
 * initial time namespace (see "Registered touch table" in
 * <linux/twheel.h>). 0 or -errno.
 */
int twheel_touch_register(int fd, void *table, uint32_t nr_slots);

/* Refresh the id bound to @slot with the time @now_ns: one store. */
static inline void twheel_touch_at(const struct twheel_touch *touch, uint32_t slot,
				   uint64_t now_ns)
{
	__atomic_store_n(&touch->slots[slot], now_ns, __ATOMIC_RELAXED);
}

/* Refresh the id bound to @slot: a vDSO clock read and a store. */
static inline void twheel_touch(const struct twheel_touch *touch, uint32_t slot)
{
	struct timespec ts;

	clock_gettime(touch->clockid, &ts);
	twheel_touch_at(touch, slot, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
}

/* Fill @op for twheel_batch(). Nothing is sent. */
static inline void twheel_prep_op(struct twheel_op *op, uint32_t code,
				  uint64_t id, uint64_t timeout_ns,
				  uint32_t flags)
{
	memset(op, 0, sizeof(*op));
	op->op = code;
	op->id = id;
	if (timeout_ns != TWHEEL_TIMEOUT_DEFAULT) {
		op->timeout_ns = timeout_ns;
		flags |= TWHEEL_OPF_TIMEOUT;
	}
	op->flags = flags;
}

static inline void twheel_prep_add(struct twheel_op *op, uint64_t id,
				   uint64_t timeout_ns)
{
	twheel_prep_op(op, TWHEEL_OP_ADD, id, timeout_ns, 0);
}

static inline void twheel_prep_refresh(struct twheel_op *op, uint64_t id,
				       uint64_t timeout_ns, uint32_t flags)
{
	twheel_prep_op(op, TWHEEL_OP_REFRESH, id, timeout_ns, flags);
}

static inline void twheel_prep_cancel(struct twheel_op *op, uint64_t id)
{
	twheel_prep_op(op, TWHEEL_OP_CANCEL, id, TWHEEL_TIMEOUT_DEFAULT, 0);
}

static inline void twheel_prep_query(struct twheel_op *op, uint64_t id)
{
	twheel_prep_op(op, TWHEEL_OP_QUERY, id, TWHEEL_TIMEOUT_DEFAULT, 0);
}

/* ADD with an absolute deadline on the wheel's clock (TWHEEL_OPF_ABSTIME). */
static inline void twheel_prep_add_at(struct twheel_op *op, uint64_t id,
				      uint64_t deadline_ns)
{
	twheel_prep_op(op, TWHEEL_OP_ADD, id, TWHEEL_TIMEOUT_DEFAULT, TWHEEL_OPF_ABSTIME);
	op->timeout_ns = deadline_ns;
}

/* REFRESH to an absolute deadline; @flags: 0 or TWHEEL_OPF_ADD_IF_ABSENT. */
static inline void twheel_prep_refresh_at(struct twheel_op *op, uint64_t id,
					  uint64_t deadline_ns, uint32_t flags)
{
	twheel_prep_op(op, TWHEEL_OP_REFRESH, id, TWHEEL_TIMEOUT_DEFAULT,
		       flags | TWHEEL_OPF_ABSTIME);
	op->timeout_ns = deadline_ns;
}

/*
 * Make a prepared ADD or REFRESH also bind its id to touch slot @slot
 * (TWHEEL_SLOT_NONE unbinds).
 */
static inline void twheel_prep_bind(struct twheel_op *op, uint32_t slot)
{
	op->flags |= TWHEEL_OPF_TOUCH;
	op->slot = slot;
}

#ifdef __cplusplus
}
#endif

#endif /* LIBTWHEEL_H */
