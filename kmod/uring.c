// SPDX-License-Identifier: GPL-2.0
/*
 * Ring commands: the device's commands submitted through io_uring as
 * IORING_OP_URING_CMD, with the command's number as cmd_op and, in the
 * SQE's command area, a struct twheel_uring_cmd holding the pointer the
 * ioctl would take (uapi: "Ring commands"). Each is handed to
 * twheel_command(), the ioctl's own entry, and completes at once with
 * what the ioctl would return: one code path, so the same validation,
 * the same effects and the same errors, whichever way a command comes.
 *
 * Context: io_uring calls ->uring_cmd in process context, in a task of
 * the submitter's process (the submitter itself, its SQPOLL thread or an
 * io-wq worker), so the argument's user memory is the submitter's. The
 * first attempt, inline in the submission, carries IO_URING_F_NONBLOCK:
 * then SETUP (which allocates a touch table of up to 128 MiB) and
 * TOUCH_REGISTER (which pins one) answer -EAGAIN, and io_uring issues
 * them again from an io-wq worker; every other command runs inline as
 * the ioctl would, waiting only for the wheel's lock, which is never held
 * across a user copy or an allocation, but allocates without reclaim:
 * where its entries or the index's table would need reclaim (or the
 * table is large), it answers -EAGAIN before applying anything, and
 * io_uring issues it again from a worker (dev.h, twheel_command()).
 *
 * Kernels without ->uring_cmd (before 5.19) build none of this: their
 * io_uring has no IORING_OP_URING_CMD and fails such an SQE with -EINVAL.
 */
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/twheel.h>

#include "compat.h"
#include "dev.h"
#include "uring.h"

#ifdef TWHEEL_URING_CMD
int twheel_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	const struct twheel_uring_cmd *area = twheel_uring_cmd_area(ioucmd);
	/* The SQE is shared with userspace: read each field once. */
	u64 arg = READ_ONCE(area->arg), pad = READ_ONCE(area->pad);
	unsigned int cmd = ioucmd->cmd_op;
	long ret;

	BUILD_BUG_ON(sizeof(*area) > 16);
	/* No registered buffers, no multishot: the argument is a pointer. */
	if (pad || twheel_uring_cmd_flags(ioucmd))
		return -EINVAL;
	if ((cmd == TWHEEL_IOC_SETUP || cmd == TWHEEL_IOC_TOUCH_REGISTER ||
	     cmd == TWHEEL_IOC_NS_LIMIT) && issue_flags & IO_URING_F_NONBLOCK)
		return -EAGAIN;
	ret = twheel_command(ioucmd->file, cmd, u64_to_user_ptr(arg),
			     issue_flags & IO_URING_F_NONBLOCK);
	/* Nothing applied: io_uring issues it again from a worker. */
	if (ret == -EAGAIN && issue_flags & IO_URING_F_NONBLOCK)
		return -EAGAIN;
	/* ioctl(2) turns an unknown command into ENOTTY in the VFS; do so too. */
	if (ret == -ENOIOCTLCMD)
		ret = -ENOTTY;
	/* Where io_uring could lose a count, post the CQE here (compat.h). */
	return twheel_uring_cmd_post(ioucmd, ret, issue_flags);
}
#endif
