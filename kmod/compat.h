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
#include <linux/version.h>

/* kvcalloc(), kvfree(): in <linux/slab.h> since 5.16, <linux/mm.h> before. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 16, 0)
#include <linux/mm.h>
#endif

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

#endif /* TWHEEL_COMPAT_H */
