/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device layer, as main.c sees it: bring /dev/twheel up and down.
 */
#ifndef TWHEEL_DEV_H
#define TWHEEL_DEV_H

int twheel_dev_init(void);
void twheel_dev_exit(void);

#endif /* TWHEEL_DEV_H */
