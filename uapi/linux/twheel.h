/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * twheel: millions of deadlines behind one file descriptor.
 *
 * This header is the whole ABI of /dev/twheel. Each open() of the device
 * creates a private timing wheel. The caller fixes its tick, default
 * timeout, clock and entry cap with TWHEEL_IOC_SETUP, then registers
 * 64-bit ids with deadlines (TWHEEL_IOC_OP, TWHEEL_IOC_BATCH) and reads
 * back one struct twheel_event per id whose deadline passed, with read(2),
 * in deadline order. poll/epoll report EPOLLIN while events wait.
 * TWHEEL_IOC_DUMP lists the live ids; a wheel set up with a touch table
 * (see "Touch table" below) is refreshed by plain stores into memory
 * mapped from its fd. Every command can also be submitted through
 * io_uring (see "Ring commands"), and io_uring reads the events without a
 * worker thread.
 *
 * Rules for every command:
 *  - All times are nanoseconds on the wheel's clock (the clockid given at
 *    setup, as read by clock_gettime(2)); timeouts are relative, deadlines
 *    absolute.
 *  - The wheel's clock is that of the time namespace (time_namespaces(7))
 *    of the task that set the wheel up, as timerfd's absolute times are
 *    its caller's: absolute deadlines and touch stamps are read, and
 *    deadline_ns, expired_ns and the deadlines of TWHEEL_IOC_DUMP are
 *    written, on that namespace's CLOCK_MONOTONIC or CLOCK_BOOTTIME,
 *    whatever the offsets. A wheel handed to a process of another time
 *    namespace (SCM_RIGHTS, fork after setns) keeps that clock: one wheel,
 *    one clock, since the kernel reads the touch table with no caller to
 *    ask; fdinfo's clock_offset_ns is what that namespace adds to the
 *    host's clock. Timeouts and remaining_ns are durations, the same in
 *    every namespace. Without CONFIG_TIME_NS there is only one clock.
 *  - Fields named pad and flag bits not defined here must be zero, else
 *    EINVAL. User pointers travel as __u64.
 *  - Unknown commands fail with ENOTTY; any command but TWHEEL_IOC_SETUP
 *    and TWHEEL_IOC_NS_LIMIT on a wheel not yet set up fails with EBADFD.
 *  - TWHEEL_IOC_SETUP, TWHEEL_IOC_OP, TWHEEL_IOC_BATCH,
 *    TWHEEL_IOC_REFRESH and TWHEEL_IOC_TOUCH_REGISTER change the wheel
 *    (OP and BATCH whatever their ops, QUERY included): on a descriptor
 *    opened without write access (O_RDONLY) they fail with EBADF, as
 *    write(2) does, before any other check. A wheel opened O_RDONLY can
 *    therefore never be set up: its TWHEEL_IOC_DUMP, read(2) and mmap(2)
 *    answer EBADFD, and poll(2) reports nothing. TWHEEL_IOC_DUMP,
 *    read(2), poll(2) and fdinfo need no write access; read(2) and
 *    mmap(2) need read access, as for any file (EBADF, EACCES on
 *    O_WRONLY).
 */
#ifndef _UAPI_LINUX_TWHEEL_H
#define _UAPI_LINUX_TWHEEL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define TWHEEL_DEVICE		"/dev/twheel"

/* Bounds on struct twheel_setup_args.tick_ns. */
#define TWHEEL_TICK_MIN_NS	100000ULL		/* 100 us */
#define TWHEEL_TICK_MAX_NS	3600000000000ULL	/* 1 h */

/*
 * Longest timeout: a timeout_ns larger than TWHEEL_MAX_TIMEOUT_TICKS *
 * tick_ns, or than TWHEEL_MAX_TIMEOUT_NS, is rejected with EINVAL.
 * (2^32 ticks: 49 days at a 1 ms tick, 136 years at 1 s; 2^62 ns is
 * 146 years.)
 */
#define TWHEEL_MAX_TIMEOUT_TICKS	(1ULL << 32)
#define TWHEEL_MAX_TIMEOUT_NS		(1ULL << 62)

/* struct twheel_setup_args.flags */
/* The wheel has a touch table of touch_slots slots (see "Touch table"). */
#define TWHEEL_SETUPF_TOUCH	(1U << 0)
/*
 * The wheel's touch table of touch_slots slots is memory of the process,
 * registered later with TWHEEL_IOC_TOUCH_REGISTER (see "Registered touch
 * table"). Not with TWHEEL_SETUPF_TOUCH.
 */
#define TWHEEL_SETUPF_TOUCH_USER	(1U << 1)

/* Most slots a touch table may have (128 MiB of slots). */
#define TWHEEL_TOUCH_MAX_SLOTS	(1U << 24)

/**
 * struct twheel_setup_args - argument of TWHEEL_IOC_SETUP
 * @tick_ns:		precision of the wheel, TWHEEL_TICK_MIN_NS to
 *			TWHEEL_TICK_MAX_NS. Deadlines are rounded up to a
 *			multiple of it, counted from the moment of setup.
 * @default_timeout_ns:	timeout of operations that do not carry their own
 *			(see TWHEEL_OPF_TIMEOUT). Same bounds as any timeout.
 * @clockid:		CLOCK_MONOTONIC, or CLOCK_BOOTTIME to count time spent
 *			in suspend.
 * @max_entries:	cap on live ids plus undelivered events; operations
 *			that would exceed it fail with ENOSPC. 0 selects the
 *			module parameter max_entries_per_wheel, which is also
 *			the upper bound. The entries of all wheels one user
 *			opened are also capped together (module parameter
 *			max_user_entries; the users of a user namespace count
 *			against the namespace's own limit, if one is set (see
 *			TWHEEL_IOC_NS_LIMIT), and against its creator as
 *			well), and those of all wheels.
 * @flags:		0, TWHEEL_SETUPF_TOUCH or TWHEEL_SETUPF_TOUCH_USER.
 * @touch_slots:	with either, the number of slots of the touch table,
 *			1 to TWHEEL_TOUCH_MAX_SLOTS and at most the wheel's
 *			cap; must be 0 otherwise. A table counts against the
 *			entry caps as its size in entries would (8 slots or
 *			so per entry), whoever's memory it is.
 *
 * Setup is done once per wheel: a second call fails with EBUSY.
 */
struct twheel_setup_args {
	__u64 tick_ns;
	__u64 default_timeout_ns;
	__u32 clockid;
	__u32 max_entries;
	__u32 flags;
	__u32 touch_slots;
};

/* Operation codes, struct twheel_op.op. */
enum twheel_op_code {
	TWHEEL_OP_ADD		= 1,	/* new id; EEXIST if live */
	TWHEEL_OP_REFRESH	= 2,	/* re-arm a live id; ENOENT if none */
	TWHEEL_OP_CANCEL	= 3,	/* remove a live id; ENOENT if none */
	TWHEEL_OP_QUERY		= 4,	/* a live id's deadline; ENOENT if none */
};

/* struct twheel_op.flags */
/* timeout_ns holds the timeout (ADD, REFRESH); else the wheel's default. */
#define TWHEEL_OPF_TIMEOUT		(1U << 0)
/* REFRESH only: add the id when it is not live instead of ENOENT. */
#define TWHEEL_OPF_ADD_IF_ABSENT	(1U << 1)
/*
 * ADD, REFRESH: timeout_ns holds an absolute deadline on the wheel's clock
 * instead of a timeout (TWHEEL_OPF_TIMEOUT may be set too, or not). A
 * deadline already past fires at the next tick; one further from now
 * than the longest timeout is EINVAL.
 */
#define TWHEEL_OPF_ABSTIME		(1U << 2)
/*
 * ADD, REFRESH, on a wheel with a touch table: bind the id to touch slot
 * @slot, or unbind it with TWHEEL_SLOT_NONE. Without this flag ADD leaves
 * the id unbound and REFRESH leaves its binding as it was.
 */
#define TWHEEL_OPF_TOUCH		(1U << 3)

/* No touch slot. */
#define TWHEEL_SLOT_NONE		0xffffffffU

/**
 * struct twheel_op - one operation on one id
 * @id:		the caller's id; every value, 0 and ~0 included, is valid.
 * @timeout_ns:	in, with TWHEEL_OPF_TIMEOUT: time from now to the
 *		deadline; 0 fires at the next tick. With TWHEEL_OPF_ABSTIME:
 *		the deadline itself. Must be 0 otherwise.
 * @deadline_ns: out: the id's deadline (on the tick grid) after the
 *		operation; for CANCEL, the deadline it had.
 * @remaining_ns: out: @deadline_ns minus the time of the operation,
 *		0 if that is already past.
 * @op:		enum twheel_op_code.
 * @flags:	TWHEEL_OPF_*; TIMEOUT, ABSTIME and TOUCH for ADD and
 *		REFRESH only, ADD_IF_ABSENT for REFRESH only.
 * @result:	out: 0 or a negative errno: EEXIST (ADD of a live id),
 *		ENOENT (REFRESH without ADD_IF_ABSENT, CANCEL or QUERY of an
 *		id that is not live; ADD never answers it), ENOSPC (the
 *		wheel's cap, its user's limit over all of the user's wheels,
 *		a user namespace's limit, or the module's, was reached), ENOMEM (no memory for the
 *		entry or the id index; or ids chosen to collide filled the
 *		chain of the index the id belongs in, until the index takes
 *		a new key: see TWHEEL_IOC_DUMP), EINVAL (bad op, flags,
 *		slot or timeout).
 * @slot:	in, with TWHEEL_OPF_TOUCH: a touch slot below the table's
 *		touch_slots, or TWHEEL_SLOT_NONE. Must be 0 otherwise.
 *
 * Once the tick that passes an id's deadline has been processed the id
 * is no longer live: REFRESH without ADD_IF_ABSENT, CANCEL and QUERY
 * answer ENOENT, and its event will be read exactly once; ADD (or
 * REFRESH with ADD_IF_ABSENT) starts a new entry.
 */
struct twheel_op {
	__u64 id;
	__u64 timeout_ns;
	__u64 deadline_ns;
	__u64 remaining_ns;
	__u32 op;
	__u32 flags;
	__s32 result;
	__u32 slot;
};

/**
 * struct twheel_batch_args - argument of TWHEEL_IOC_BATCH
 * @ops:	user pointer to an array of @count struct twheel_op.
 * @count:	number of operations, at most INT_MAX.
 * @flags:	must be 0.
 *
 * The operations are applied in array order, each as if alone, and each
 * gets its own result; a failing operation does not stop the batch.
 * The ioctl returns how many operations were applied and their results
 * written back. It stops early only when the array cannot be read or
 * written (EFAULT) or a signal is pending; then it returns the count done
 * so far, or the error if that count is 0. Nothing past the count was
 * applied: each chunk is written back unchanged before it is applied, so
 * an array that can be read but not written fails before any operation
 * of it is applied. (Only another thread's munmap or mprotect of the
 * array during the call can leave results of counted operations
 * unwritten.)
 */
struct twheel_batch_args {
	__u64 ops;
	__u32 count;
	__u32 flags;
};

/**
 * struct twheel_event - one expiry, as read(2) returns it
 * @id:		the id whose deadline passed; it is no longer live.
 * @deadline_ns: its deadline, on the tick grid.
 * @expired_ns:	when the wheel processed the tick that passed it;
 *		never before @deadline_ns. @expired_ns - @deadline_ns is the
 *		event's lateness: a fraction of a tick for a reader that
 *		waits in read(2), poll or epoll with CPUs free, more when it
 *		waits for a busy CPU or its cgroup's cpu.max, or looks late.
 *		The wheel has no thread: its timer marks it due and wakes
 *		its readers, and the task that reads, polls or sends a
 *		command does the expiry work, in its own context. The
 *		deadline itself is never early.
 *
 * read(2) (and readv(2), and reads submitted through io_uring) returns
 * whole records only, in deadline order (ids with the same deadline in
 * unspecified order); a buffer smaller than one record fails with
 * EINVAL. A read, and a poll, first do all the expiry work that is due
 * (CPU spent in the caller's system call, with chances to reschedule),
 * and every command first does a chunk of it (TWHEEL_IOC_OP of an id
 * whose deadline has passed finds it live only while that work has not
 * reached its tick yet, as before any tick is processed); fdinfo's
 * counts are those of the last such look. Without O_NONBLOCK a read
 * blocks until at least one event waits;
 * with it, or with RWF_NOWAIT, it fails with EAGAIN instead. A read
 * takes its events off the queue before copying them out, so each
 * event goes to one reader, a reader whose copy stalls (its buffer's
 * memory is slow to come) holds up no other, and poll(2) says EPOLLIN
 * exactly while there are events for a read to take (but to a kernel
 * thread, such as the kworker that completes aio's IOCB_CMD_POLL, which
 * does none of the wheel's work: it is told EPOLLIN while work is due,
 * and the read after it may find nothing). io_uring's reads
 * need no worker thread: the device answers
 * its non-blocking attempt EAGAIN and io_uring waits for EPOLLIN, so
 * IORING_OP_READ completes when events come, and
 * IORING_OP_READ_MULTISHOT (kernels 6.7 and later, with provided
 * buffers of at least one record each) completes once per batch of
 * events for as long as it stays armed. A signal
 * during the wait restarts it under SA_RESTART, else fails it with
 * EINTR; one that arrives while a large read is copying ends it with
 * the records read so far. If the buffer
 * faults part-way, read(2)
 * returns the records copied whole before the fault (EFAULT if none):
 * the record cut by the fault may be partly written in the buffer but is
 * not counted, and it and the records after it go back to the head of
 * the queue, for the next read.
 */
struct twheel_event {
	__u64 id;
	__u64 deadline_ns;
	__u64 expired_ns;
};

/**
 * struct twheel_refresh_args - argument of TWHEEL_IOC_REFRESH
 * @ids:	user pointer to @count ids.
 * @failed:	user pointer to room for @count ids, or 0. The ids that were
 *		not refreshed (not live; with TWHEEL_OPF_ADD_IF_ABSENT, not
 *		added: ENOSPC or ENOMEM) are written there, in order. The
 *		room past them may be written too: each chunk's room is
 *		written before the chunk is applied (see below).
 * @timeout_ns:	with TWHEEL_OPF_TIMEOUT, the timeout of every id; with
 *		TWHEEL_OPF_ABSTIME, their deadline (one further ahead than
 *		the wheel's max_timeout_ns fails the call with EINVAL before
 *		any id is applied); must be 0 otherwise (the wheel's default
 *		timeout).
 * @count:	number of ids, at most INT_MAX.
 * @flags:	TWHEEL_OPF_TIMEOUT or TWHEEL_OPF_ABSTIME, and
 *		TWHEEL_OPF_ADD_IF_ABSENT; nothing else.
 * @nr_failed:	out: how many ids were not refreshed (written to @failed
 *		if given); its value on input is ignored.
 * @pad:	must be 0.
 *
 * The common case of a batch, compact: REFRESH of each id in order, as
 * TWHEEL_IOC_BATCH of that many TWHEEL_OP_REFRESH ops would do, reading 8
 * bytes per id and writing back only the failures. Returns how many ids
 * were processed; it stops early, and nothing past the count was applied,
 * exactly as TWHEEL_IOC_BATCH (EFAULT, a pending signal). The room in
 * @failed for each chunk is written (with zeros) before the chunk is
 * applied, so unwritable room fails before anything of it is applied.
 */
struct twheel_refresh_args {
	__u64 ids;
	__u64 failed;
	__u64 timeout_ns;
	__u32 count;
	__u32 flags;
	__u32 nr_failed;
	__u32 pad;
};

/* The cursor of a dump that has listed every id. */
#define TWHEEL_DUMP_END		(~0ULL)

/**
 * struct twheel_dump_entry - one live id, as TWHEEL_IOC_DUMP lists it
 * @id:		the id.
 * @deadline_ns: its deadline, on the tick grid.
 * @slot:	its touch slot, or TWHEEL_SLOT_NONE.
 * @pad:	0.
 */
struct twheel_dump_entry {
	__u64 id;
	__u64 deadline_ns;
	__u32 slot;
	__u32 pad;
};

/**
 * struct twheel_dump_args - argument of TWHEEL_IOC_DUMP
 * @entries:	user pointer to an array of @count struct twheel_dump_entry.
 * @cursor:	in/out: 0 to begin; the value the previous call left to go
 *		on; TWHEEL_DUMP_END once every id has been listed. Bits 0 to
 *		55 are a position in the order, bits 56 to 62 the number of
 *		new keys the wheel's id index took (see "New keys" below),
 *		modulo 128; bit 63 is set only in TWHEEL_DUMP_END. A value
 *		with bit 63 set, but TWHEEL_DUMP_END, is EINVAL; one of another
 *		count of new keys than the wheel's (but 0) is ESTALE; any
 *		other is taken as a position in the order.
 * @count:	room in @entries, at least 1 (at most INT_MAX).
 * @flags:	must be 0.
 *
 * Lists live ids (not expired ones waiting to be read) in the order of a
 * keyed hash of the id, up to @count per call, and moves @cursor past
 * them; returns how many were written, which may be fewer than @count
 * (even 0) before the end. Call again with the cursor until it reads
 * TWHEEL_DUMP_END. The wheel is locked only briefly at a time, so a dump
 * of millions of ids neither stalls the wheel nor the CPU, and a signal
 * ends a call early with what it has.
 *
 * Under concurrent operations and expiries, every id live from the
 * dump's first call to its last is listed exactly once, with its deadline
 * at the time it was listed; ids added or removed in the meantime may be
 * listed or not, but no id is ever listed twice in one dump. If @entries
 * faults part-way, the ids copied before the fault are counted and the
 * cursor moved past them only (EFAULT if none).
 *
 * New keys. The order is that of the secret key of the wheel's id index,
 * the same however the index grows or shrinks; the order tells which ids
 * share a bucket of the index, so it leaks what a user needs to collect
 * ids that collide. Whatever leaks, no chain of the index holds more
 * than 16 ids: one that grows long makes the index move every id to a
 * new key, which changes the order. A call with a cursor returned before
 * that fails with ESTALE (nothing is listed and the cursor is left as
 * it was): begin again from 0, and drop what the failed dump listed, or
 * keep it and take ids that come twice. Ids that do not collide on
 * purpose practically never cause a new key (less than once in a
 * thousand fills of a wheel of 16M ids). While the ids move to a new key a call may
 * return 0 with the cursor where it was; call again. The count in the
 * cursor is modulo 128: a dump that lets a multiple of 128 new keys pass
 * between two of its calls is not told (only ids chosen to collide can
 * cause so many).
 *
 * Ids that share one position (56 bits of SipHash) are listed in one
 * call; a @count too small for such a group fails with EOVERFLOW (two
 * ids of random hashes share one in about one wheel of 16M ids in 500,
 * and then only a @count of 1 is too small).
 */
struct twheel_dump_args {
	__u64 entries;
	__u64 cursor;
	__u32 count;
	__u32 flags;
};

/*
 * Touch table.
 *
 * A wheel set up with TWHEEL_SETUPF_TOUCH has a table of touch_slots
 * __u64 slots, all 0 at setup, which the process maps with
 *	mmap(NULL, touch_slots * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
 * (the length may be anything up to the table's size rounded up to pages;
 * offset 0, MAP_SHARED, no PROT_EXEC; else EINVAL; ENODEV on a wheel
 * without a table, EBADFD before setup). The mapping shares the wheel's
 * life as any mapping of a file does: it keeps the wheel open, survives
 * fork, and is the same memory in every process.
 *
 * An id bound to a slot (TWHEEL_OPF_TOUCH) is refreshed by storing the
 * present time on the wheel's clock (clock_gettime(clockid) in the time
 * namespace the wheel was set up in; the vDSO reads it without a system
 * call) into its slot, with an aligned 64-bit store: no system call. The kernel looks at
 * the slot when the id's deadline comes: if the slot holds a time
 * later than the moment the id's deadline was last set (by ADD, REFRESH
 * or a previous look), the id is re-armed to that time plus its timeout,
 * rounded up to the tick grid, exactly as a REFRESH at that time would
 * have done; else it expires as any id. It may look earlier, in the last
 * eighth of the id's timeout, when its timing wheel moves the id one
 * level nearer its deadline (a deadline further than 64 ticks away is
 * kept on a coarser level first): a time found then, not one from the
 * future, that gives a later deadline re-arms the id as it would have
 * when the deadline came. Its timeout is that of its last
 * ADD or REFRESH, or the wheel's default if that one carried an absolute
 * deadline. A REFRESH by ioctl works on bound ids too: the later of the
 * two wins.
 *
 * The table is the user's memory: any value in it is safe. A time in the
 * future counts as the present; 0 or any time before the deadline was set
 * is no touch; a stamp counts once (the same value found again at a later
 * deadline is no touch), so a slot left holding a time from the future
 * keeps its id alive one timeout more, not forever. A look costs O(1) and
 * re-arms an id at most once; the kernel looks at an id at most once for
 * each level the wheel moves it down (five) and once when its deadline
 * comes. A store is seen if it is visible before the kernel processes
 * the deadline; a later one is not, whatever time it holds (a thread may
 * be preempted between its clock read and its store). The reader can
 * tell from the slot: a stamp
 * later than the event's deadline_ns minus the id's timeout is a touch
 * that came too late to count (one late by less than a tick may not
 * show, as the deadline was rounded up to the grid). Binding an id to a
 * slot never counts the value the slot holds then, whatever it is, so a
 * slot reused for a new id does not pass on the old id's stamp. The
 * kernel never writes to the table.
 */

/*
 * Registered touch table.
 *
 * A wheel set up with TWHEEL_SETUPF_TOUCH_USER takes its touch table from
 * the process instead: TWHEEL_IOC_TOUCH_REGISTER names touch_slots * 8
 * bytes of its memory, page-aligned and writable, of a shared mapping
 * (MAP_SHARED anonymous memory, shm or a memfd, or the mapping of a BPF
 * array made with BPF_F_MMAPABLE, whose element i is slot i; a private
 * mapping is EINVAL, for a fork or MADV_DONTNEED would send the
 * process's later stores to other pages than the pinned ones), and the
 * kernel pins those
 * pages until the wheel is released, as io_uring pins registered
 * buffers. As io_uring charges them, they count as locked memory of
 * the caller's user, against the caller's RLIMIT_MEMLOCK unless it has
 * CAP_IPC_LOCK in the initial user namespace (ENOMEM past it), and as
 * pinned memory of its process (VmPin in /proc/PID/status), for as long
 * as they stay pinned, whether or not that process lives on; and they
 * stay charged to the memory cgroup they were charged to; the table
 * counts against the entry caps from setup on.
 * The table is registered once (EBUSY after), by a writer (EBADF on
 * O_RDONLY), on a wheel set up so (EINVAL otherwise); later changes to
 * the mapping (munmap, a new mapping at the address) do not reach the
 * pinned pages. Until it is registered, binding an id to a slot
 * (TWHEEL_OPF_TOUCH with a slot other than TWHEEL_SLOT_NONE) fails with
 * EINVAL. mmap(2) of such a wheel answers ENODEV.
 *
 * Everything under "Touch table" holds for it, garbage stamps included,
 * with one difference: its stamps are on the kernel's own clock, the
 * wheel's clockid in the initial time namespace, which is what a BPF
 * program reads (bpf_ktime_get_ns() for CLOCK_MONOTONIC,
 * bpf_ktime_get_boot_ns() for CLOCK_BOOTTIME), whatever time namespace
 * set the wheel up. A process outside the initial time namespace that
 * stores into it itself subtracts fdinfo's clock_offset_ns.
 */

/**
 * struct twheel_touch_register_args - argument of TWHEEL_IOC_TOUCH_REGISTER
 * @addr:	user pointer to the table: page-aligned, @slots * 8 bytes,
 *		writable by the caller, of shared mappings only.
 * @slots:	the wheel's touch_slots, exactly.
 * @flags:	must be 0.
 *
 * Errors: EINVAL (a wheel not set up with TWHEEL_SETUPF_TOUCH_USER, a bad
 * @addr, @slots or @flags, a table in a private mapping), EBUSY
 * (registered already), EFAULT (memory that cannot be pinned for
 * writing: unmapped, read-only, a PFN or I/O mapping), ENOMEM
 * (RLIMIT_MEMLOCK, or no memory).
 */
struct twheel_touch_register_args {
	__u64 addr;
	__u32 slots;
	__u32 flags;
};

/*
 * User namespace limits.
 *
 * The entries of a user namespace's users, and of the namespaces below
 * it, are charged to the namespace as a whole, and then to its creator
 * (the uid that made it, in the parent namespace) up to the initial
 * namespace, each user against the module parameter max_user_entries. A
 * namespace has no limit of its own until one is set from outside it,
 * with TWHEEL_IOC_NS_LIMIT on any descriptor of /dev/twheel, set up or
 * not, readable or writable: so that the containers one user (root, say)
 * makes share that user's limit as the user decides, instead of the
 * first to fill it leaving nothing to the others and to the user. The
 * caller needs CAP_SYS_RESOURCE in the namespace's parent (a container's
 * runtime, or the root of a container for the namespaces below it); the
 * initial namespace's limits are the module's parameters. A limit is
 * never passed, and raises nothing: every level above still counts, its
 * creator's above all. Lowered below what the namespace holds, it
 * refuses new entries until enough have gone. It
 * lasts until set to 0, or until no task, file or namespace holds the
 * namespace any more (the module parameter ns_limits counts the limits
 * held). A container without a user namespace of its own is its host's
 * users: it shares their limits, as it shares every per-user limit of
 * the kernel; its memory cgroup, to which every entry is charged, is
 * what bounds it.
 */

/* struct twheel_ns_limit_args.flags */
/* Set the limit to @limit; without it, only read. */
#define TWHEEL_NS_LIMITF_SET	(1U << 0)

/**
 * struct twheel_ns_limit_args - argument of TWHEEL_IOC_NS_LIMIT
 * @pid:	a process (in the caller's pid namespace) whose user
 *		namespace is the one meant, as for kill(2).
 * @flags:	0 or TWHEEL_NS_LIMITF_SET.
 * @limit:	in, with TWHEEL_NS_LIMITF_SET: the most live ids plus
 *		undelivered events the namespace's wheels may hold
 *		together, 0 for no limit of its own; must be 0 otherwise.
 *		Out: the limit in force (0: none).
 * @entries:	out: what the namespace's wheels hold now, those of the
 *		namespaces below it included.
 *
 * Errors: EINVAL (bad @flags, @pid or @limit, a process of the initial
 * user namespace), ESRCH (no such process), EPERM (no CAP_SYS_RESOURCE
 * in the parent of the namespace), ENOMEM.
 */
struct twheel_ns_limit_args {
	__s32 pid;
	__u32 flags;
	__u64 limit;
	__u64 entries;
};

/*
 * Ring commands.
 *
 * On kernels that have io_uring commands (5.19 and later), every
 * TWHEEL_IOC_* command can be submitted through io_uring, as an
 * IORING_OP_URING_CMD SQE on the wheel's fd with the command's number
 * (TWHEEL_IOC_OP, TWHEEL_IOC_BATCH, TWHEEL_IOC_REFRESH, ...) as cmd_op
 * and a struct twheel_uring_cmd in the SQE's command area (sqe->cmd, the
 * 16 bytes of a plain SQE: no IORING_SETUP_SQE128 needed). It is the
 * ioctl: the same validation, the same effects on the memory @arg points
 * to (an op's out fields, a batch's results, a REFRESH's failures), and
 * the CQE's res is what the ioctl would return (0, a count, or -errno).
 * That memory must stay valid until the CQE arrives. Most commands run
 * inline, in the submitting task (or the SQPOLL thread), as the ioctl
 * runs in its caller: a huge batch keeps the submission as long as the
 * ioctl would keep its caller (IOSQE_ASYNC hands it to an io-wq worker
 * instead). Inline, a command never sleeps for memory: it allocates its
 * entries (and a small id index table) without reclaim before applying
 * anything, and where that fails, or the index wants a large table, it
 * runs from an io-wq worker instead, with the same result; a BATCH or
 * REFRESH that meets this after its first chunk completes with the count
 * it applied, as one cut by a signal does, and the rest can be submitted
 * again. TWHEEL_IOC_SETUP, TWHEEL_IOC_TOUCH_REGISTER and
 * TWHEEL_IOC_NS_LIMIT always run from an io-wq worker. Kernels before
 * 5.19 have no IORING_OP_URING_CMD and complete the SQE with -EINVAL, as
 * for any opcode they do not know (io_uring's probe,
 * IORING_REGISTER_PROBE, tells beforehand).
 */

/**
 * struct twheel_uring_cmd - the command area of a ring command's SQE
 * @arg:	the ioctl's argument: a user pointer to its struct.
 * @pad:	must be 0 (else the CQE's res is -EINVAL), as must the SQE's
 *		uring_cmd_flags (no registered buffers, no multishot).
 *
 * A pointer rather than the argument itself: the results go back to user
 * memory anyway (a CQE carries 32 bits), a struct twheel_op would not fit
 * the 16 bytes without SQE128 for every SQE of the ring, and the command
 * reads the same memory through the same code as the ioctl.
 */
struct twheel_uring_cmd {
	__u64 arg;
	__u64 pad;
};

#define TWHEEL_IOC_MAGIC	0xF7

/* Fix tick, default timeout, clock and cap. 0 or -errno. */
#define TWHEEL_IOC_SETUP	_IOW(TWHEEL_IOC_MAGIC, 0, struct twheel_setup_args)
/* One operation; fills the out fields. 0, or -errno equal to result. */
#define TWHEEL_IOC_OP		_IOWR(TWHEEL_IOC_MAGIC, 1, struct twheel_op)
/* Many operations; returns how many were applied. */
#define TWHEEL_IOC_BATCH	_IOW(TWHEEL_IOC_MAGIC, 2, struct twheel_batch_args)
/* List live ids from a cursor; returns how many were written. */
#define TWHEEL_IOC_DUMP		_IOWR(TWHEEL_IOC_MAGIC, 3, struct twheel_dump_args)
/* Refresh many ids, failures only out; returns how many were processed. */
#define TWHEEL_IOC_REFRESH	_IOWR(TWHEEL_IOC_MAGIC, 4, struct twheel_refresh_args)
/* Register the touch table of a TWHEEL_SETUPF_TOUCH_USER wheel. 0 or -errno. */
#define TWHEEL_IOC_TOUCH_REGISTER	_IOW(TWHEEL_IOC_MAGIC, 5, struct twheel_touch_register_args)
/* A user namespace's entry limit, set or read; fills the out fields. 0 or -errno. */
#define TWHEEL_IOC_NS_LIMIT	_IOWR(TWHEEL_IOC_MAGIC, 6, struct twheel_ns_limit_args)

#endif /* _UAPI_LINUX_TWHEEL_H */
