// SPDX-License-Identifier: GPL-2.0
/*
 * scale: ten million ids in one wheel, none lost, and what each costs.
 *
 * All ids are added in batches of 65536 with a one-hour timeout, then
 * refreshed to timeouts of 0..255 ms while a reader drains the wheel with
 * 1 MiB reads: every refresh must find its id live, every id must be read
 * exactly once (a bitmap), no event early, each read in deadline order,
 * and the wheel empty at the end. The memory per id is measured while all
 * ids are live: the entries from the slab statistics of the twheel_entry
 * cache (/proc/slabinfo: slabs x pages per slab, or /sys/kernel/slab when
 * the cache is merged away), plus the id index (a kvcalloc'd hash table,
 * seen as the growth of VmallocUsed in /proc/meminfo).
 *
 *   scale [IDS]	(default $TWHEEL_SCALE_IDS, else 10000000 on a Debian
 *			 6.12 kernel, 1000000 on other Debian kernels and
 *			 200000 on the debug kernel; capped to fit the
 *			 guest's memory)
 *
 * Prints TAP and "scale: ids=N bytes_per_id=B lost=N".
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/utsname.h>

#include "twheel_test.h"
#include "kselftest.h"

#define BATCH		65536
#define READ_BYTES	(1 << 20)
/* The caps n_ids must fit under: raised for the run, restored after. */
static const char *const caps[] = {
	"max_entries_per_wheel", "max_user_entries", "max_entries_total",
};
#define NR_CAPS		(sizeof(caps) / sizeof(caps[0]))

static int fd;
static uint64_t n_ids;
static uint8_t *bitmap;			/* one bit per id: read once */
static atomic_int refresh_done;
static uint64_t got, dups, phantoms, early, disorder;

/* A field of /proc/meminfo in bytes, or -1. */
static long long meminfo(const char *field)
{
	static char buf[8192];
	char *s;

	if (read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	s = strstr(buf, field);
	if (!s)
		return -1;
	return strtoll(s + strlen(field) + 1, NULL, 10) * 1024;
}

struct slabstat {
	long long bytes;	/* memory of the cache's slabs */
	long long active, objsize, perslab, pages;
	int from;		/* 0 none, 1 /proc/slabinfo, 2 /sys/kernel/slab */
};

static void slab_entry(struct slabstat *st)
{
	static char buf[1 << 16];
	long long num_objs, active_slabs, num_slabs, order;
	char *s;

	memset(st, 0, sizeof(*st));
	if (read_file("/proc/slabinfo", buf, sizeof(buf)) > 0 && (s = strstr(buf, "\ntwheel_entry "))) {
		/* name active_objs num_objs objsize objperslab pagesperslab : tunables l b s :
		 * slabdata active_slabs num_slabs sharedavail */
		if (sscanf(s + 1, "twheel_entry %lld %lld %lld %lld %lld : tunables %*d %*d %*d : slabdata %lld %lld",
			   &st->active, &num_objs, &st->objsize, &st->perslab, &st->pages,
			   &active_slabs, &num_slabs) == 7) {
			st->bytes = num_slabs * st->pages * 4096;
			st->from = 1;
			return;
		}
	}
	num_slabs = read_ll("/sys/kernel/slab/twheel_entry/slabs");
	order = read_ll("/sys/kernel/slab/twheel_entry/order");
	if (num_slabs >= 0 && order >= 0) {
		st->bytes = num_slabs * (4096LL << order);
		st->objsize = read_ll("/sys/kernel/slab/twheel_entry/slab_size");
		st->perslab = read_ll("/sys/kernel/slab/twheel_entry/objs_per_slab");
		st->pages = 1LL << order;
		st->active = read_ll("/sys/kernel/slab/twheel_entry/objects");
		st->from = 2;
	}
}

static void *reader_main(void *arg)
{
	struct twheel_event *ev = malloc(READ_BYTES);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t quiet_since = 0;

	(void)arg;
	for (;;) {
		ssize_t n = read(fd, ev, READ_BYTES);
		size_t i, k;

		if (n <= 0) {
			if (got >= n_ids)
				break;
			if (atomic_load(&refresh_done)) {
				if (!quiet_since)
					quiet_since = mono_ns();
				else if (mono_ns() - quiet_since > 30000 * NSEC_PER_MSEC)
					break;	/* nothing for 30 s: the rest is lost */
			}
			poll(&p, 1, 200);
			continue;
		}
		quiet_since = 0;
		k = n / sizeof(*ev);
		for (i = 0; i < k; i++) {
			uint64_t id = ev[i].id;

			if (id >= n_ids) {
				phantoms++;
				continue;
			}
			if (bitmap[id / 8] & (1 << (id % 8)))
				dups++;
			else
				got++;
			bitmap[id / 8] |= 1 << (id % 8);
			if (ev[i].expired_ns < ev[i].deadline_ns)
				early++;
			if (i && ev[i].deadline_ns < ev[i - 1].deadline_ns)
				disorder++;
		}
	}
	free(ev);
	return NULL;
}

static uint64_t default_ids(void)
{
	struct utsname u;

	uname(&u);
	/* 10M under emulation takes minutes: once, on Debian 6.12. */
	if (!strncmp(u.release, "6.12.", 5) && strstr(u.release, "-amd64"))
		return 10000000;
	/* Debian's other kernels 1M; a debug kernel (KASAN) is 5x slower again. */
	return strstr(u.release, "-amd64") ? 1000000 : 200000;
}

/* Apply @code to every id in batches; returns ops whose result was not 0. */
static uint64_t for_all(uint32_t code, uint32_t flags, uint64_t (*timeout)(uint64_t id),
			struct twheel_op *ops, uint64_t *bad_batches)
{
	uint64_t id, bad = 0;

	for (id = 0; id < n_ids; id += BATCH) {
		uint32_t i, k = n_ids - id < BATCH ? n_ids - id : BATCH;

		for (i = 0; i < k; i++)
			op_init(&ops[i], code, id + i, flags, timeout(id + i));
		if (twheel_batch(fd, ops, k) != (long)k) {
			(*bad_batches)++;
			continue;
		}
		for (i = 0; i < k; i++)
			bad += ops[i].result != 0;
	}
	return bad;
}

static uint64_t hour(uint64_t id)
{
	(void)id;
	return 3600 * NSEC_PER_SEC;
}

static uint64_t short_spread(uint64_t id)
{
	return (id % 256) * NSEC_PER_MSEC;
}

int main(int argc, char **argv)
{
	uint64_t want = arg_or_env(argc, argv, "TWHEEL_SCALE_IDS", default_ids());
	long long avail = meminfo("MemAvailable:"), vm0, vm1, slab0, slab1;
	unsigned long long saved_cap[NR_CAPS];
	unsigned int i;
	struct twheel_op *ops = calloc(BATCH, sizeof(*ops));
	uint64_t t0, t1, t2, bad_add, bad_ref, bad_batches = 0, lost, bytes_per_id;
	struct slabstat s0, s1;
	pthread_t th;

	ksft_print_header();
	ksft_set_plan(7);
	n_ids = want;
	/* About 100 bytes per id in the kernel, and a bit in here. */
	if (avail > 0 && n_ids * 110 > (uint64_t)avail) {
		n_ids = avail / 110;
		ksft_print_msg("only %lld MiB available: %llu ids instead of %llu\n", avail >> 20,
			       (unsigned long long)n_ids, (unsigned long long)want);
	}
	bitmap = calloc(n_ids / 8 + 1, 1);
	if (!ops || !bitmap) {
		perror("calloc");
		return 2;
	}
	for (i = 0; i < NR_CAPS; i++) {
		saved_cap[i] = module_param(caps[i], 0);
		if (n_ids > saved_cap[i])
			module_param_set(caps[i], n_ids);
		else
			saved_cap[i] = 0;
	}
	fd = wheel_new(O_NONBLOCK | O_CLOEXEC, NSEC_PER_MSEC, 3600 * NSEC_PER_SEC, 0);
	if (fd < 0) {
		ksft_test_result(0, "open and set up: %s\n", strerror(-fd));
		printf("scale: ids=0 bytes_per_id=0 lost=%llu\n", (unsigned long long)n_ids);
		return 1;
	}

	slab_entry(&s0);
	vm0 = meminfo("VmallocUsed:");
	slab0 = meminfo("Slab:");
	t0 = mono_ns();
	bad_add = for_all(TWHEEL_OP_ADD, TWHEEL_OPF_TIMEOUT, hour, ops, &bad_batches);
	t1 = mono_ns();
	slab_entry(&s1);
	vm1 = meminfo("VmallocUsed:");
	slab1 = meminfo("Slab:");
	ksft_print_msg("added %llu ids in %.1f s (%.0f/s)\n", (unsigned long long)n_ids,
		       (t1 - t0) / 1e9, n_ids / ((t1 - t0) / 1e9));
	ksft_test_result(!bad_add && !bad_batches && fdinfo_get(fd, "live") == (long long)n_ids,
			 "%llu ids added in batches of %d, all live\n", (unsigned long long)n_ids, BATCH);

	if (s1.from)
		ksft_print_msg("twheel_entry (%s): active_objs %lld objsize %lld objperslab %lld pagesperslab %lld, %lld bytes -> %lld\n",
			       s1.from == 1 ? "/proc/slabinfo" : "/sys/kernel/slab, maybe merged",
			       s1.active, s1.objsize, s1.perslab, s1.pages, s0.bytes, s1.bytes);
	ksft_print_msg("VmallocUsed %lld -> %lld, Slab %lld -> %lld\n", vm0, vm1, slab0, slab1);
	bytes_per_id = s1.from ? (s1.bytes - s0.bytes + (vm1 - vm0)) / n_ids
			       : (slab1 - slab0 + (vm1 - vm0)) / n_ids;
	ksft_print_msg("per id: entry %.1f B (slab), index %.1f B (vmalloc); Slab+Vmalloc delta %.1f B\n",
		       s1.from ? (double)(s1.bytes - s0.bytes) / n_ids : 0.0, (double)(vm1 - vm0) / n_ids,
		       (double)(slab1 - slab0 + vm1 - vm0) / n_ids);
	ksft_test_result(bytes_per_id > 0 && bytes_per_id < 256,
			 "memory per id measured: %llu bytes\n",
			 (unsigned long long)bytes_per_id);

	pthread_create(&th, NULL, reader_main, NULL);
	bad_batches = 0;
	bad_ref = for_all(TWHEEL_OP_REFRESH, TWHEEL_OPF_TIMEOUT, short_spread, ops, &bad_batches);
	t2 = mono_ns();
	atomic_store(&refresh_done, 1);
	ksft_print_msg("refreshed %llu ids to 0..255 ms in %.1f s\n", (unsigned long long)n_ids,
		       (t2 - t1) / 1e9);
	ksft_test_result(!bad_ref && !bad_batches,
			 "every refresh found its id live (%llu did not)\n",
			 (unsigned long long)bad_ref);
	pthread_join(th, NULL);
	ksft_print_msg("read %llu events in %.1f s after the refreshes began\n",
		       (unsigned long long)got, (mono_ns() - t1) / 1e9);
	lost = n_ids - got;
	ksft_test_result(!lost && !dups && !phantoms,
			 "every id read exactly once (lost %llu, dup %llu, unknown %llu)\n",
			 (unsigned long long)lost, (unsigned long long)dups, (unsigned long long)phantoms);
	ksft_test_result(!early, "no event early (%llu)\n", (unsigned long long)early);
	ksft_test_result(!disorder, "each read in deadline order (%llu inversions)\n",
			 (unsigned long long)disorder);
	ksft_test_result(fdinfo_get(fd, "live") == 0 && fdinfo_get(fd, "events_waiting") == 0 &&
			 fdinfo_get(fd, "expired_total") == (long long)n_ids,
			 "wheel empty, expired_total %lld\n", fdinfo_get(fd, "expired_total"));
	close(fd);
	for (i = 0; i < NR_CAPS; i++)
		if (saved_cap[i])
			module_param_set(caps[i], saved_cap[i]);
	printf("scale: ids=%llu bytes_per_id=%llu lost=%llu\n", (unsigned long long)n_ids,
	       (unsigned long long)bytes_per_id, (unsigned long long)lost);
	ksft_finished();
}
