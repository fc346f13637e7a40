/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What main.c needs from the device layer: the misc device, its setup and
 * teardown, and the module parameters the device enforces.
 */
#ifndef TWHEEL_DEV_H
#define TWHEEL_DEV_H

#include <linux/miscdevice.h>

extern struct miscdevice twheel_misc;

/* Module parameters, defined in main.c. */
extern unsigned int twheel_max_entries_per_wheel;
extern unsigned long twheel_max_entries_total;

int twheel_dev_init(void);
void twheel_dev_exit(void);

#endif /* TWHEEL_DEV_H */
