// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libtwheel: the system calls behind lib/twheel.h.
 *
 * Each function is one open(2), ioctl(2), read(2), mmap(2), munmap(2) or
 * clock_gettime(2).
 * The kernel's -1/errno convention is turned into a -errno return in one
 * place, sys_ret(), so that no caller ever has to look at errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "twheel.h"

static long sys_ret(long ret)
{
	return ret < 0 ? -errno : ret;
}

int twheel_open(int flags)
{
	if (flags & ~(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	return sys_ret(open(TWHEEL_DEVICE, O_RDWR | flags));
}

int twheel_setup_params(int fd, const struct twheel_setup_args *args)
{
	return sys_ret(ioctl(fd, TWHEEL_IOC_SETUP, args));
}

int twheel_setup(int fd, uint64_t tick_ns, uint64_t default_timeout_ns,
		 clockid_t clockid, uint32_t max_entries)
{
	struct twheel_setup_args args = {
		.tick_ns = tick_ns,
		.default_timeout_ns = default_timeout_ns,
		.clockid = (uint32_t)clockid,
		.max_entries = max_entries,
	};

	if (clockid < 0)
		return -EINVAL;
	return twheel_setup_params(fd, &args);
}

int twheel_submit_op(int fd, struct twheel_op *op)
{
	return sys_ret(ioctl(fd, TWHEEL_IOC_OP, op));
}

int twheel_add(int fd, uint64_t id, uint64_t timeout_ns)
{
	struct twheel_op op;

	twheel_prep_add(&op, id, timeout_ns);
	return twheel_submit_op(fd, &op);
}

int twheel_refresh(int fd, uint64_t id, uint64_t timeout_ns, uint32_t flags)
{
	struct twheel_op op;

	twheel_prep_refresh(&op, id, timeout_ns, flags);
	return twheel_submit_op(fd, &op);
}

int twheel_cancel(int fd, uint64_t id)
{
	struct twheel_op op;

	twheel_prep_cancel(&op, id);
	return twheel_submit_op(fd, &op);
}

int twheel_query(int fd, uint64_t id, uint64_t *deadline_ns,
		 uint64_t *remaining_ns)
{
	struct twheel_op op;
	int ret;

	twheel_prep_query(&op, id);
	ret = twheel_submit_op(fd, &op);
	if (ret < 0)
		return ret;
	if (deadline_ns)
		*deadline_ns = op.deadline_ns;
	if (remaining_ns)
		*remaining_ns = op.remaining_ns;
	return 0;
}

int twheel_batch(int fd, struct twheel_op *ops, unsigned int count)
{
	struct twheel_batch_args args = {
		.ops = (uint64_t)(uintptr_t)ops,
		.count = count,
	};

	return sys_ret(ioctl(fd, TWHEEL_IOC_BATCH, &args));
}

int twheel_refresh_ids(int fd, const uint64_t *ids, unsigned int count,
		       uint64_t timeout_ns, uint32_t flags, uint64_t *failed,
		       unsigned int *nr_failed)
{
	struct twheel_refresh_args args = {
		.ids = (uint64_t)(uintptr_t)ids,
		.failed = (uint64_t)(uintptr_t)failed,
		.count = count,
		.flags = flags,
	};
	long ret;

	if (timeout_ns != TWHEEL_TIMEOUT_DEFAULT) {
		args.timeout_ns = timeout_ns;
		if (!(flags & TWHEEL_OPF_ABSTIME))
			args.flags |= TWHEEL_OPF_TIMEOUT;
	}
	ret = sys_ret(ioctl(fd, TWHEEL_IOC_REFRESH, &args));
	if (ret >= 0 && nr_failed)
		*nr_failed = args.nr_failed;
	return ret;
}

int twheel_read_events(int fd, struct twheel_event *events, unsigned int max)
{
	long ret;

	/* Keep the byte count, and so the record count, within an int. */
	if (max > INT_MAX / sizeof(*events))
		max = INT_MAX / sizeof(*events);
	ret = sys_ret(read(fd, events, (size_t)max * sizeof(*events)));
	if (ret < 0)
		return ret;
	return ret / sizeof(*events);
}

uint64_t twheel_now(clockid_t clockid)
{
	struct timespec ts;

	if (clock_gettime(clockid, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int twheel_dump(int fd, struct twheel_dump_entry *entries, unsigned int count,
		uint64_t *cursor)
{
	struct twheel_dump_args args = {
		.entries = (uint64_t)(uintptr_t)entries,
		.cursor = *cursor,
		.count = count,
	};
	long ret = sys_ret(ioctl(fd, TWHEEL_IOC_DUMP, &args));

	if (ret >= 0)
		*cursor = args.cursor;
	return ret;
}

int twheel_touch_map(int fd, uint32_t nr_slots, clockid_t clockid,
		     struct twheel_touch *touch)
{
	size_t len = (size_t)nr_slots * sizeof(*touch->slots);
	void *p;

	/* Stamps on another clock would all be "from the future". */
	if (!nr_slots || (clockid != CLOCK_MONOTONIC && clockid != CLOCK_BOOTTIME))
		return -EINVAL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	touch->slots = p;
	touch->nr_slots = nr_slots;
	touch->clockid = clockid;
	touch->map_len = len;
	return 0;
}

int twheel_touch_unmap(struct twheel_touch *touch)
{
	int ret = sys_ret(munmap(touch->slots, touch->map_len));

	if (!ret)
		touch->slots = NULL;
	return ret;
}

int twheel_touch_register(int fd, void *table, uint32_t nr_slots)
{
	struct twheel_touch_register_args args = {
		.addr = (uint64_t)(uintptr_t)table,
		.slots = nr_slots,
	};

	return sys_ret(ioctl(fd, TWHEEL_IOC_TOUCH_REGISTER, &args));
}
