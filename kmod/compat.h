/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, all of them. The rest of the module is
 * written for the newest kernel it supports; each entry here supplies a
 * newer interface on the older kernels that lack it, says since which
 * version the kernel has it, and goes away when that version becomes the
 * oldest one supported. Nothing else in kmod/ tests a kernel version.
 *
 * Supported: 5.10 and later.
 */
#ifndef TWHEEL_COMPAT_H
#define TWHEEL_COMPAT_H

#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>
#include <linux/version.h>

/* hrtimer_setup(): since 6.13; hrtimer_init() is gone since 6.15. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void twheel_hrtimer_setup(struct hrtimer *timer,
					enum hrtimer_restart (*function)(struct hrtimer *),
					clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}

#define hrtimer_setup twheel_hrtimer_setup
#endif

/*
 * kzalloc_obj(), kvzalloc_obj(): typed allocation of one object, in the
 * 7.x kernels (7.2 and 7.3 have them, 6.12 does not), which checkpatch
 * now asks for over k(v)zalloc(sizeof(...)). Macros, so their absence is
 * the test: no version to guess.
 */
#ifndef kzalloc_obj
#define kzalloc_obj(P, GFP)	kzalloc(sizeof(P), GFP)
#define kvzalloc_obj(P, GFP)	kvzalloc(sizeof(P), GFP)
#endif

/*
 * The references held on a user namespace: ns_ref_read() in the 7.x
 * kernels (7.2 has it, 6.12 not; a macro, so its presence is the test),
 * the refcount_t of its ns_common from 5.11, an atomic_t of its own
 * before.
 */
#if defined(ns_ref_read)
#define twheel_userns_refs(userns)	ns_ref_read(userns)
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(5, 11, 0)
#define twheel_userns_refs(userns)	refcount_read(&(userns)->ns.count)
#else
#define twheel_userns_refs(userns)	atomic_read(&(userns)->count)
#endif

/*
 * How the touch table's pages reach user space. Before 5.11 an accounted
 * page (alloc_page(__GFP_ACCOUNT) in a memory cgroup other than the root)
 * is typed PageKmemcg in page->page_type, which shares its word with
 * _mapcount: a mapping that counts itself in the page corrupts it ("BUG:
 * Bad page map ... mapcount:-512" at unmap, 5.10). There the fault
 * handler inserts the page frame instead (VM_PFNMAP, no mapcount, no
 * reference): the table stays charged to the memory cgroup, and lives as
 * long as its mappings all the same, since each holds the file. From
 * 5.11 the charge is a flag of its own and the page is mapped as a page.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define TWHEEL_TOUCH_PFNMAP	1
#else
#define TWHEEL_TOUCH_PFNMAP	0
#endif

/*
 * lockdep_assert_not_held(): since 5.14. A macro, so its absence is the
 * test; before, the check is simply not made (it matters on the debug
 * kernel, which is the newest stable line).
 */
#ifndef lockdep_assert_not_held
#define lockdep_assert_not_held(l)	((void)(l))
#endif

/*
 * kmap_local_page(), kunmap_local(): since 5.11. Before, kmap_atomic()
 * maps a page as locally, for as short a while, at the price of
 * disabling preemption, which a read of one slot does not mind.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define kmap_local_page(page)	kmap_atomic(page)
#define kunmap_local(addr)	kunmap_atomic((void *)(addr))
#endif

/* vm_flags_set(), vm_flags_clear(): since 6.3, when vm_flags became read-only. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * Ring commands: file_operations->uring_cmd and struct io_uring_cmd, since
 * 5.19. Where they exist, TWHEEL_URING_CMD is defined, uring.c builds its
 * handler and twheel_uring_cmd_fop() names it in the file_operations;
 * elsewhere neither the field nor the opcode exists (-EINVAL to the SQE).
 * What the handler needs of them, across the versions:
 *  - the SQE's command area: ioucmd->cmd until 6.4; ioucmd->sqe and
 *    io_uring_sqe_cmd(sqe) since 6.5; io_uring_sqe_cmd(sqe, type), a
 *    macro that checks the type fits, in the 7.x kernels;
 *  - the header: <linux/io_uring.h> until 6.7, <linux/io_uring/cmd.h>
 *    since 6.8;
 *  - the SQE's uring_cmd_flags, as ioucmd->flags since 6.1, which added
 *    the first of them, IORING_URING_CMD_FIXED (a pad field before); the
 *    uapi names the ones userspace may set IORING_URING_CMD_MASK since
 *    it has more than one. Both tested by their uapi macros.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 19, 0)
#define TWHEEL_URING_CMD
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif
#include <linux/twheel.h>

#define twheel_uring_cmd_fop(fn)	.uring_cmd = (fn),

static inline const struct twheel_uring_cmd *
twheel_uring_cmd_area(const struct io_uring_cmd *ioucmd)
{
#if defined(io_uring_sqe_cmd)
	return io_uring_sqe_cmd(ioucmd->sqe, struct twheel_uring_cmd);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return io_uring_sqe_cmd(ioucmd->sqe);
#else
	return ioucmd->cmd;
#endif
}

/* The uring_cmd_flags userspace set in the SQE (io_uring checked them). */
static inline u32 twheel_uring_cmd_flags(const struct io_uring_cmd *ioucmd)
{
#if defined(IORING_URING_CMD_MASK)
	return ioucmd->flags & IORING_URING_CMD_MASK;
#elif defined(IORING_URING_CMD_FIXED)
	return ioucmd->flags & IORING_URING_CMD_FIXED;
#else
	return 0;
#endif
}

/*
 * io_uring of 6.1 loses the CQE of a command that returns a positive
 * value (BATCH, REFRESH, DUMP: a count) when it runs from an io-wq worker
 * (IOSQE_ASYNC): io_uring_cmd() returns the count to io-wq, which takes
 * any value but -EAGAIN for done and posts nothing. Inline, the count is
 * posted through the failure path, which cancels an IOSQE_IO_LINK chain.
 * io_uring fixed it in 2024 by completing such commands as IOU_OK
 * (liburing issue 1181); 6.12 has the fix, 6.1 (6.1.0-57) does not. Up
 * to 6.11 the handler posts every result itself, as an asynchronous
 * command does (io_uring_cmd_done(), then -EIOCBQUEUED), which is right
 * on every version. io_uring_cmd_done() takes the issue flags since
 * 6.1's stable releases (6.3 upstream).
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
static inline long twheel_uring_cmd_post(struct io_uring_cmd *ioucmd, long ret,
					 unsigned int issue_flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 1, 0)
	io_uring_cmd_done(ioucmd, ret, 0, issue_flags);
#else
	io_uring_cmd_done(ioucmd, ret, 0);
#endif
	return -EIOCBQUEUED;
}
#else
static inline long twheel_uring_cmd_post(struct io_uring_cmd *ioucmd, long ret,
					 unsigned int issue_flags)
{
	return ret;
}
#endif
#else
#define twheel_uring_cmd_fop(fn)
#endif

#endif /* TWHEEL_COMPAT_H */
