/* SPDX-License-Identifier: MIT */
/*
 * What the examples share, written once: each example's own header
 * includes this one. Plain C for a program that links libtwheel; nothing
 * here knows the device.
 */
#ifndef TWHEEL_EXAMPLE_H
#define TWHEEL_EXAMPLE_H

#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef NSEC_PER_SEC
#define NSEC_PER_SEC	1000000000ULL
#endif
#ifndef NSEC_PER_MSEC
#define NSEC_PER_MSEC	1000000ULL
#endif

/* At most 10 lines of detail on stderr: the counts tell the rest. */
static inline void __attribute__((format(printf, 1, 2))) complain(const char *fmt, ...)
{
	static unsigned int said;
	va_list ap;

	if (said++ >= 10)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* CLOCK_MONOTONIC, the clock of the examples' wheels, in ns. */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Sleep @ns whatever signals come. */
static inline void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* xorshift64*: a fixed seed makes a run replayable. */
static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/*
 * Bring lo up: a bare VM boots with it down; a system with it up is left
 * alone. 0, or -1 with the reason on stderr after "@prog: ".
 */
static inline int lo_up(const char *prog)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret = 0;

	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		ret = -1;
	else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	if (ret)
		fprintf(stderr, "%s: bring lo up: %s\n", prog, strerror(errno));
	if (s >= 0)
		close(s);
	return ret;
}

/* The value of "@key:" in /proc/self/fdinfo/@fd (a wheel's settings and counters), or -1. */
static inline long long fdinfo_value(int fd, const char *key)
{
	char path[64], line[128];
	size_t klen = strlen(key);
	long long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			val = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return val;
}

/* For qsort(3) of uint64_t. */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The @p-th percentile of the sorted @v[@n], in ms. */
static inline double pct_ms(const uint64_t *v, unsigned int n, unsigned int p)
{
	unsigned int i = (unsigned int)(((unsigned long long)n * p + 99) / 100);

	return n ? v[i ? i - 1 : 0] / 1e6 : 0;
}

#endif /* TWHEEL_EXAMPLE_H */
