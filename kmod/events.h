/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events side of a wheel: read(2) and poll(2) of expired entries,
 * and the wake-up of their readers. See events.c.
 */
#ifndef TWHEEL_EVENTS_H
#define TWHEEL_EVENTS_H

#include <linux/fs.h>
#include <linux/poll.h>

struct twheel_ctx;

/**
 * twheel_read_iter() - the file's read_iter: deliver and free the oldest events
 * @iocb:	the read of a /dev/twheel file; IOCB_NOWAIT (or O_NONBLOCK)
 *		makes it answer -EAGAIN rather than wait.
 * @to:		room for struct twheel_event records.
 *
 * Return: the bytes of the records delivered, or -errno.
 */
ssize_t twheel_read_iter(struct kiocb *iocb, struct iov_iter *to);

/**
 * twheel_poll() - the file's poll(2): readable while events wait
 * @file:	a /dev/twheel file.
 * @wait:	the poll table.
 *
 * Return: EPOLLIN | EPOLLRDNORM while events wait, else 0.
 */
__poll_t twheel_poll(struct file *file, struct poll_table_struct *wait);

/**
 * twheel_wake_readers() - tell readers and pollers that events came
 * @ctx:	the wheel. Without ctx->lock.
 */
void twheel_wake_readers(struct twheel_ctx *ctx);

#endif /* TWHEEL_EVENTS_H */
