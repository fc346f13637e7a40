/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the selftests share that needs kselftest_harness.h (its
 * _metadata and EXPECT_* macros): include it after that header. The
 * rest, which reports nothing, is twheel_util.h.
 */
#ifndef TWHEEL_HARNESS_H
#define TWHEEL_HARNESS_H

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "twheel_util.h"

/*
 * Issue @op with TWHEEL_IOC_OP, its out fields junk first; check that
 * the return value and errno agree with op->result and that a failed op
 * has its deadline and remaining written as zero. Returns 0 or the
 * positive errno.
 */
static inline int run_op(struct __test_metadata *_metadata, int fd, struct twheel_op *op)
{
	int ret, err;

	op->result = (int32_t)JUNK64;
	op->deadline_ns = JUNK64;
	op->remaining_ns = JUNK64;
	errno = 0;
	ret = ioctl(fd, TWHEEL_IOC_OP, op);
	err = errno;
	if (ret == 0) {
		EXPECT_EQ(0, op->result);
		return 0;
	}
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(-err, op->result);
	EXPECT_EQ(0, op->deadline_ns);
	EXPECT_EQ(0, op->remaining_ns);
	return err;
}

#endif /* TWHEEL_HARNESS_H */
