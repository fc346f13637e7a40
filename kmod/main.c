// SPDX-License-Identifier: GPL-2.0
/*
 * twheel module entry: registration and unregistration only. The wheel
 * lives in wheel.c, the file interface and its parameters in dev.c (which
 * names the other files of the device layer).
 */
#include <linux/module.h>

#include "dev.h"

static int __init twheel_init(void)
{
	return twheel_dev_init();
}

static void __exit twheel_exit(void)
{
	twheel_dev_exit();
}

module_init(twheel_init);
module_exit(twheel_exit);

MODULE_DESCRIPTION("Timing wheel for millions of userspace deadlines behind one fd");
MODULE_AUTHOR("The twheel authors");
MODULE_LICENSE("GPL");
#ifdef TWHEEL_VERSION
MODULE_VERSION(TWHEEL_VERSION);
#endif
