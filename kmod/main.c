// SPDX-License-Identifier: GPL-2.0
/*
 * twheel module entry: parameters, registration and unregistration only.
 * The wheel lives in wheel.c, the file interface in dev.c.
 */
#include <linux/module.h>

#include "dev.h"

unsigned int twheel_max_entries_per_wheel = 1U << 24;
module_param_named(max_entries_per_wheel, twheel_max_entries_per_wheel, uint, 0644);
MODULE_PARM_DESC(max_entries_per_wheel,
		 "Largest cap a wheel may set, and the cap of a wheel that sets 0 (default 16M)");

unsigned long twheel_max_entries_total = 1UL << 26;
module_param_named(max_entries_total, twheel_max_entries_total, ulong, 0644);
MODULE_PARM_DESC(max_entries_total,
		 "Cap on live ids plus undelivered events of all wheels together (default 64M)");

static int __init twheel_init(void)
{
	int ret;

	ret = twheel_dev_init();
	if (ret)
		return ret;
	ret = misc_register(&twheel_misc);
	if (ret)
		goto err_dev;
	return 0;

err_dev:
	twheel_dev_exit();
	return ret;
}

static void __exit twheel_exit(void)
{
	misc_deregister(&twheel_misc);
	twheel_dev_exit();
}

module_init(twheel_init);
module_exit(twheel_exit);

MODULE_DESCRIPTION("Timing wheel for millions of userspace deadlines behind one fd");
MODULE_AUTHOR("The twheel authors");
MODULE_LICENSE("GPL");
