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
 * twheel_read() - the file's read(2): deliver and free the oldest events
 * @file:	a /dev/twheel file.
 * @buf:	room for struct twheel_event records.
 * @count:	its size in bytes.
 * @ppos:	unused: the file is a stream.
 *
 * Return: the bytes of the records delivered, or -errno.
 */
ssize_t twheel_read(struct file *file, char __user *buf, size_t count, loff_t *ppos);

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
