// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * twheel_jni: the native half of org.twheel.Wheel, one function per
 * native method, each a thin call of libtwheel (compiled into this
 * library) that answers >= 0 or -errno; the Java side turns errnos into
 * exceptions, with the id or op at hand for the message.
 *
 * The fd's lifetime. Java may close a wheel on one thread while others
 * are inside any of these calls, blocked in a read or in the middle of a
 * batch; none of them may then act on a closed, or worse reused, fd
 * number. Every call that uses the fd brackets it with jw_enter() and
 * jw_leave(), a count of users in jw->state; close sets JW_CLOSING in
 * the same word, so no new user gets in, wakes blocked readers through
 * an eventfd that is in every poll, waits for the count to drain and
 * only then closes the fd. The struct itself outlives close: it is
 * freed by nFree(), which Java's Cleaner calls once the Wheel object is
 * unreachable, that is, once no thread can be in a call with its handle
 * (the natives are instance methods, so the Wheel is a live local
 * reference of every call).
 *
 * The touch table's mapping belongs to its ByteBuffer, not to the
 * wheel: Java unmaps it (nUnmap) when that buffer is unreachable, so a
 * store into it after close lands in memory that is still mapped (the
 * mapping keeps the kernel's wheel alive, as any file mapping does) and
 * can never fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jni.h>

#include "twheel.h"
#include "org_twheel_Wheel.h"

/* jw->state: the number of users, and this bit once close has begun. */
#define JW_CLOSING	(1U << 31)

/* Ids per TWHEEL_IOC_REFRESH call: 8 KiB of ids and failures on the stack. */
#define REFRESH_CHUNK	512

struct jw {
	int fd;			/* the wheel, O_NONBLOCK; -1 once closed */
	int wake;		/* eventfd, readable once close has begun */
	_Atomic unsigned int state;
	pthread_mutex_t lock;	/* with idle: close waits for users */
	pthread_cond_t idle;
};

static struct jw *handle(jlong h)
{
	return (struct jw *)(uintptr_t)h;
}

static void jw_leave(struct jw *w)
{
	unsigned int v = atomic_fetch_sub_explicit(&w->state, 1, memory_order_release) - 1;

	/* The last user out of a closing wheel: the closer may go on. */
	if (v == JW_CLOSING) {
		pthread_mutex_lock(&w->lock);
		pthread_cond_broadcast(&w->idle);
		pthread_mutex_unlock(&w->lock);
	}
}

static bool jw_enter(struct jw *w)
{
	unsigned int v = atomic_fetch_add_explicit(&w->state, 1, memory_order_acquire);

	if (!(v & JW_CLOSING))
		return true;
	/* Counted in for a moment, so out as any user: the closer may wait for it. */
	jw_leave(w);
	return false;
}

JNIEXPORT jlong JNICALL Java_org_twheel_Wheel_nOpen(JNIEnv *env, jclass cls)
{
	struct jw *w = calloc(1, sizeof(*w));
	int err;

	(void)env;
	(void)cls;
	if (!w)
		return -ENOMEM;
	w->fd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	if (w->fd < 0) {
		err = w->fd;
		goto free_w;
	}
	w->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->wake < 0) {
		err = -errno;
		goto close_fd;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->idle, NULL);
	return (jlong)(uintptr_t)w;

close_fd:
	close(w->fd);
free_w:
	free(w);
	return err;
}

JNIEXPORT jint JNICALL Java_org_twheel_Wheel_nSetup(JNIEnv *env, jobject self, jlong h,
						    jlong tick_ns, jlong timeout_ns,
						    jint clockid, jint max_entries,
						    jint touch_slots)
{
	struct twheel_setup_args args = {
		.tick_ns = (uint64_t)tick_ns,
		.default_timeout_ns = (uint64_t)timeout_ns,
		.clockid = (uint32_t)clockid,
		.max_entries = (uint32_t)max_entries,
		.flags = touch_slots ? TWHEEL_SETUPF_TOUCH : 0,
		.touch_slots = (uint32_t)touch_slots,
	};
	struct jw *w = handle(h);
	int ret;

	(void)env;
	(void)self;
	if (!jw_enter(w))
		return -EBADF;
	ret = twheel_setup_params(w->fd, &args);
	jw_leave(w);
	return ret;
}

/* 0 once closed by this call, 1 if another call closed or is closing it. */
JNIEXPORT jint JNICALL Java_org_twheel_Wheel_nClose(JNIEnv *env, jobject self, jlong h)
{
	struct jw *w = handle(h);

	(void)env;
	(void)self;
	if (atomic_fetch_or_explicit(&w->state, JW_CLOSING, memory_order_acq_rel) & JW_CLOSING)
		return 1;
	eventfd_write(w->wake, 1);
	pthread_mutex_lock(&w->lock);
	while (atomic_load_explicit(&w->state, memory_order_acquire) != JW_CLOSING)
		pthread_cond_wait(&w->idle, &w->lock);
	pthread_mutex_unlock(&w->lock);
	close(w->fd);
	close(w->wake);
	w->fd = -1;
	w->wake = -1;
	return 0;
}

/* Called by the Cleaner: no thread can be in a call with @h any more. */
JNIEXPORT void JNICALL Java_org_twheel_Wheel_nFree(JNIEnv *env, jclass cls, jlong h)
{
	struct jw *w = handle(h);

	(void)env;
	(void)cls;
	if (w->fd >= 0)
		close(w->fd);
	if (w->wake >= 0)
		close(w->wake);
	pthread_cond_destroy(&w->idle);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* One op; returns the deadline (>= 0) or -errno. @out: deadline, remaining. */
JNIEXPORT jlong JNICALL Java_org_twheel_Wheel_nOp(JNIEnv *env, jobject self, jlong h,
						  jint code, jlong id, jlong timeout_ns,
						  jint flags, jint slot, jlongArray out)
{
	struct twheel_op op = {
		.id = (uint64_t)id,
		.timeout_ns = (uint64_t)timeout_ns,
		.op = (uint32_t)code,
		.flags = (uint32_t)flags,
		.slot = (uint32_t)slot,
	};
	struct jw *w = handle(h);
	int ret;

	(void)self;
	if (!jw_enter(w))
		return -EBADF;
	ret = twheel_submit_op(w->fd, &op);
	jw_leave(w);
	if (ret < 0)
		return ret;
	if (out) {
		jlong v[2] = { (jlong)op.deadline_ns, (jlong)op.remaining_ns };

		(*env)->SetLongArrayRegion(env, out, 0, 2, v);
	}
	return (jlong)op.deadline_ns;
}

/* The address of @count records of @size bytes from record @from of @buf, or NULL. */
static void *records(JNIEnv *env, jobject buf, jint from, jint count, size_t size)
{
	char *base = (*env)->GetDirectBufferAddress(env, buf);
	jlong cap = (*env)->GetDirectBufferCapacity(env, buf);

	if (!base || from < 0 || count < 0 ||
	    ((jlong)from + count) * (jlong)size > cap)
		return NULL;
	return base + (size_t)from * size;
}

/* TWHEEL_IOC_BATCH of ops [@from, @from + @count) of @buf: how many applied, or -errno. */
JNIEXPORT jint JNICALL Java_org_twheel_Wheel_nBatch(JNIEnv *env, jobject self, jlong h,
						    jobject buf, jint from, jint count)
{
	struct twheel_op *ops = records(env, buf, from, count, sizeof(*ops));
	struct jw *w = handle(h);
	int ret;

	(void)self;
	if (!ops)
		return -EINVAL;
	if (!jw_enter(w))
		return -EBADF;
	do
		ret = twheel_batch(w->fd, ops, (unsigned int)count);
	while (ret == -EINTR);
	jw_leave(w);
	return ret;
}

/*
 * TWHEEL_IOC_REFRESH of @len ids from @ids[@off], in chunks: how many were
 * processed (every id, unless the kernel stopped part-way: then the ids
 * past the count were not applied), or -errno if none was. The ids not
 * refreshed go to @failed from @failed_off (room for @len), their number
 * to @nr_failed[0].
 */
JNIEXPORT jint JNICALL Java_org_twheel_Wheel_nRefresh(JNIEnv *env, jobject self, jlong h,
						      jlongArray ids, jint off, jint len,
						      jlong timeout_ns, jint flags,
						      jlongArray failed, jint failed_off,
						      jintArray nr_failed)
{
	uint64_t chunk[REFRESH_CHUNK], bad[REFRESH_CHUNK];
	struct jw *w = handle(h);
	jint done = 0, nbad = 0;
	int ret = 0;

	(void)self;
	if (!jw_enter(w))
		return -EBADF;
	while (done < len) {
		unsigned int k = len - done < REFRESH_CHUNK ? len - done : REFRESH_CHUNK, nf = 0;

		(*env)->GetLongArrayRegion(env, ids, off + done, k, (jlong *)chunk);
		if ((*env)->ExceptionCheck(env))
			break;
		do
			ret = twheel_refresh_ids(w->fd, chunk, k, (uint64_t)timeout_ns,
						 (uint32_t)flags, bad, &nf);
		while (ret == -EINTR);
		if (ret < 0)
			break;
		if (nf)
			(*env)->SetLongArrayRegion(env, failed, failed_off + nbad, nf, (jlong *)bad);
		nbad += nf;
		done += ret;
		if ((unsigned int)ret < k)
			break;
	}
	jw_leave(w);
	(*env)->SetIntArrayRegion(env, nr_failed, 0, 1, &nbad);
	return done ? done : ret;
}

/*
 * read(2) up to @max events into @buf: how many (0 when @timeout_ns
 * passed first, or at once if it is 0), -EBADF once the wheel is closing,
 * or -errno. @timeout_ns < 0 waits for ever.
 */
JNIEXPORT jint JNICALL Java_org_twheel_Wheel_nRead(JNIEnv *env, jobject self, jlong h,
						   jobject buf, jint max, jlong timeout_ns)
{
	struct twheel_event *ev = records(env, buf, 0, max, sizeof(*ev));
	struct jw *w = handle(h);
	uint64_t end = 0;
	int ret;

	(void)self;
	if (!ev || max < 1)
		return -EINVAL;
	if (timeout_ns > 0)
		end = twheel_now(CLOCK_MONOTONIC) + (uint64_t)timeout_ns;
	if (!jw_enter(w))
		return -EBADF;
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = w->fd, .events = POLLIN },
			{ .fd = w->wake, .events = POLLIN },
		};
		struct timespec ts, *tsp = NULL;

		ret = twheel_read_events(w->fd, ev, (unsigned int)max);
		if (ret == -EINTR)
			continue;
		if (ret != -EAGAIN)
			break;
		ret = 0;
		if (!timeout_ns)
			break;
		if (timeout_ns > 0) {
			uint64_t now = twheel_now(CLOCK_MONOTONIC);

			if (now >= end)
				break;
			ts.tv_sec = (end - now) / 1000000000ULL;
			ts.tv_nsec = (end - now) % 1000000000ULL;
			tsp = &ts;
		}
		if (ppoll(p, 2, tsp, NULL) < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (p[1].revents) {
			ret = -EBADF;
			break;
		}
	}
	jw_leave(w);
	return ret;
}

/* TWHEEL_IOC_DUMP into @buf from @cursor[0], moved on: how many, or -errno. */
JNIEXPORT jint JNICALL Java_org_twheel_Wheel_nDump(JNIEnv *env, jobject self, jlong h,
						   jobject buf, jint max, jlongArray cursor)
{
	struct twheel_dump_entry *ent = records(env, buf, 0, max, sizeof(*ent));
	struct jw *w = handle(h);
	jlong c;
	int ret;

	(void)self;
	if (!ent || max < 1)
		return -EINVAL;
	(*env)->GetLongArrayRegion(env, cursor, 0, 1, &c);
	if (!jw_enter(w))
		return -EBADF;
	do
		ret = twheel_dump(w->fd, ent, (unsigned int)max, (uint64_t *)&c);
	while (ret == -EINTR);
	jw_leave(w);
	if (ret >= 0)
		(*env)->SetLongArrayRegion(env, cursor, 0, 1, &c);
	return ret;
}

/* mmap of the touch table of @slots slots: its address, or -errno. */
JNIEXPORT jlong JNICALL Java_org_twheel_Wheel_nMapTouch(JNIEnv *env, jobject self, jlong h,
							jint slots, jint clockid)
{
	struct twheel_touch t;
	struct jw *w = handle(h);
	int ret;

	(void)env;
	(void)self;
	if (!jw_enter(w))
		return -EBADF;
	ret = twheel_touch_map(w->fd, (uint32_t)slots, clockid, &t);
	jw_leave(w);
	return ret < 0 ? ret : (jlong)(uintptr_t)t.slots;
}

/* A ByteBuffer over @len bytes at @addr (the touch table's mapping). */
JNIEXPORT jobject JNICALL Java_org_twheel_Wheel_nBuffer(JNIEnv *env, jclass cls,
							jlong addr, jlong len)
{
	(void)cls;
	return (*env)->NewDirectByteBuffer(env, (void *)(uintptr_t)addr, len);
}

/* Called by the Cleaner of the touch table's buffer. */
JNIEXPORT jint JNICALL Java_org_twheel_Wheel_nUnmap(JNIEnv *env, jclass cls,
						    jlong addr, jlong len)
{
	(void)env;
	(void)cls;
	return munmap((void *)(uintptr_t)addr, (size_t)len) ? -errno : 0;
}

/* The wheel's /proc/self/fdinfo text, or NULL once closed. */
JNIEXPORT jstring JNICALL Java_org_twheel_Wheel_nFdinfo(JNIEnv *env, jobject self, jlong h)
{
	struct jw *w = handle(h);
	char path[64], text[4096];
	ssize_t n = -1;
	int fd;

	(void)self;
	if (!jw_enter(w))
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", w->fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	jw_leave(w);
	text[n > 0 ? n : 0] = '\0';
	return (*env)->NewStringUTF(env, text);
}

/* The time on @clockid in ns, or -EINVAL if it cannot be read. */
JNIEXPORT jlong JNICALL Java_org_twheel_Wheel_nNow(JNIEnv *env, jclass cls, jint clockid)
{
	struct timespec ts;

	(void)env;
	(void)cls;
	if (clock_gettime(clockid, &ts))
		return -EINVAL;
	return (jlong)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* "ENOENT (No such file or directory)" for 2, and so on. */
JNIEXPORT jstring JNICALL Java_org_twheel_Wheel_nStrerror(JNIEnv *env, jclass cls, jint err)
{
	const char *name = strerrorname_np(err);
	char text[160];

	(void)cls;
	snprintf(text, sizeof(text), "%s (%s)", name ? name : "errno", strerror(err));
	return (*env)->NewStringUTF(env, text);
}
