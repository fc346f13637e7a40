/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ring commands: the device's commands submitted through io_uring. See
 * uring.c and "Ring commands" in the uapi.
 */
#ifndef TWHEEL_URING_H
#define TWHEEL_URING_H

struct io_uring_cmd;

/* file_operations->uring_cmd of /dev/twheel, on kernels that have it. */
int twheel_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);

#endif /* TWHEEL_URING_H */
