/* SPDX-License-Identifier: GPL-2.0 */
/* <linux/bitops.h> of kmod/wheel.c's host build: what it needs is in host.h. */
#include "../../host.h"
