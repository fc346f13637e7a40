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

#include <linux/hrtimer.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/slab.h>
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
 * lockdep_assert_not_held(): since 5.14. A macro, so its absence is the
 * test; before, the check is simply not made (it matters on the debug
 * kernel, which is the newest stable line).
 */
#ifndef lockdep_assert_not_held
#define lockdep_assert_not_held(l)	((void)(l))
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

#endif /* TWHEEL_COMPAT_H */
