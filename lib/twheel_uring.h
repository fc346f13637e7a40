/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libtwheel's io_uring helpers: fill an SQE with a twheel command, to be
 * submitted in the same ring as the program's socket work.
 *
 * Header-only and inline: the program brings its own io_uring (liburing,
 * or its own rings); libtwheel neither links nor calls it. Each helper
 * fills one struct io_uring_sqe with IORING_OP_URING_CMD on the wheel's
 * fd, the command's ioctl number as cmd_op and the argument's address in
 * the command area (see "Ring commands" in <linux/twheel.h>); the CQE's
 * res is what the ioctl returns. The argument, and what it points to,
 * must stay valid until that CQE arrives. Kernels 5.19 and later; older
 * ones do not know the opcode and complete the SQE with -EINVAL.
 *
 * The SQE is cleared first (the 64 bytes of a plain SQE), so the caller
 * sets user_data (and flags such as IOSQE_IO_LINK) afterwards.
 */
#ifndef LIBTWHEEL_URING_H
#define LIBTWHEEL_URING_H

#include <stdint.h>
#include <string.h>
#include <linux/io_uring.h>	/* or liburing's copy: the same guard */
#include <linux/twheel.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Any TWHEEL_IOC_* command @cmd with its argument @arg on wheel @fd. */
static inline void twheel_prep_uring_cmd(struct io_uring_sqe *sqe, int fd,
					 uint32_t cmd, void *arg)
{
	struct twheel_uring_cmd area;

	area.arg = (uint64_t)(uintptr_t)arg;
	area.pad = 0;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd;
	memcpy(sqe->cmd, &area, sizeof(area));
}

/* TWHEEL_IOC_OP on @op: res 0 or -errno, the op's result; out fields written. */
static inline void twheel_prep_uring_op(struct io_uring_sqe *sqe, int fd,
					struct twheel_op *op)
{
	twheel_prep_uring_cmd(sqe, fd, TWHEEL_IOC_OP, op);
}

/* TWHEEL_IOC_BATCH of @args: res the number of ops applied, or -errno. */
static inline void twheel_prep_uring_batch(struct io_uring_sqe *sqe, int fd,
					   struct twheel_batch_args *args)
{
	twheel_prep_uring_cmd(sqe, fd, TWHEEL_IOC_BATCH, args);
}

/* TWHEEL_IOC_REFRESH of @args: res the number of ids processed, or -errno. */
static inline void twheel_prep_uring_refresh(struct io_uring_sqe *sqe, int fd,
					     struct twheel_refresh_args *args)
{
	twheel_prep_uring_cmd(sqe, fd, TWHEEL_IOC_REFRESH, args);
}

#ifdef __cplusplus
}
#endif

#endif /* LIBTWHEEL_URING_H */
