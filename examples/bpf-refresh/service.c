// SPDX-License-Identifier: MIT
/*
 * The service: a BPF program keeps its peers alive, the wheel tells it
 * which went silent, and it does nothing per packet.
 *
 * Setup, once:
 *  - the BPF object (refresh.bpf.c, built into this binary) is loaded with
 *    libbpf, its array `stamps` sized to one slot per peer and its hash
 *    map `peers` filled with each peer's address -> slot; the program is
 *    attached to lo as generic XDP;
 *  - a wheel is set up with TWHEEL_SETUPF_TOUCH_USER and the mapping of
 *    `stamps` (mmap of the map's fd: BPF_F_MMAPABLE) is registered as its
 *    touch table (twheel_touch_register, TWHEEL_IOC_TOUCH_REGISTER); the
 *    kernel pins those pages, and the program's stores land in the table
 *    the wheel reads;
 *  - peer i becomes id i, bound to slot i, in one batch.
 *
 * Then the program stores bpf_ktime_get_ns() into a peer's slot for each
 * of its packets, and the kernel looks at the slot when the id's
 * deadline comes (or a level of its wheel before): touched since, it
 * re-arms the id to the touch plus the timeout; not touched, it expires. The service's loop only reads those
 * expirations from the wheel's fd: its CPU time does not grow with the
 * traffic.
 *
 * Slots are given by the service, not derived from the packet: a hash map
 * from the peer's address is what a real service has (peers come and go,
 * addresses are anywhere), it keeps the program free of arithmetic on
 * addresses, and a packet from a stranger finds no slot and touches
 * nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include <twheel.h>

#include "bpf-refresh.h"

/* refresh.bpf.o, built into the binary by refresh-obj.S. */
extern const char refresh_bpf_obj[], refresh_bpf_obj_end[];

static int fail(const char *what, int err)
{
	fprintf(stderr, "bpf-refresh: %s: %s\n", what, strerror(err));
	return -1;
}

static int fill_peers(int map_fd, const uint32_t *addrs, uint32_t nr)
{
	uint32_t *slots = malloc(nr * sizeof(*slots));
	uint32_t count = nr;
	int ret;

	if (!slots)
		return fail("peers", ENOMEM);
	for (uint32_t i = 0; i < nr; i++)
		slots[i] = i;
	ret = bpf_map_update_batch(map_fd, addrs, slots, &count, NULL);
	free(slots);
	if (ret || count != nr)
		return fail("fill the peers map", ret ? -ret : EIO);
	return 0;
}

static int service_open(struct refresh_service *s, const uint32_t *addrs,
			uint32_t nr_peers)
{
	struct bpf_map *peers, *stamps, *seen;
	struct bpf_program *prog;
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	memset(s, 0, sizeof(*s));
	s->wfd = -1;
	s->nr_peers = nr_peers;
	s->obj = bpf_object__open_mem(refresh_bpf_obj, refresh_bpf_obj_end - refresh_bpf_obj,
				      NULL);
	if (!s->obj)
		return fail("open the BPF object", errno);
	peers = bpf_object__find_map_by_name(s->obj, "peers");
	stamps = bpf_object__find_map_by_name(s->obj, "stamps");
	seen = bpf_object__find_map_by_name(s->obj, "seen");
	prog = bpf_object__find_program_by_name(s->obj, "refresh");
	if (!peers || !stamps || !seen || !prog)
		return fail("the BPF object", ENOENT);
	if (bpf_map__set_max_entries(peers, nr_peers) ||
	    bpf_map__set_max_entries(stamps, nr_peers))
		return fail("size the maps", EINVAL);
	ret = bpf_object__load(s->obj);
	if (ret)
		return fail("load the BPF object", -ret);
	if (fill_peers(bpf_map__fd(peers), addrs, nr_peers))
		return -1;
	s->seen_fd = bpf_map__fd(seen);

	/* The array's values begin on a page: element i is slot i. */
	s->stamps_len = ((size_t)nr_peers * sizeof(uint64_t) + page - 1) / page * page;
	s->stamps = mmap(NULL, s->stamps_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(stamps), 0);
	if (s->stamps == MAP_FAILED) {
		s->stamps = NULL;
		return fail("mmap the stamps array", errno);
	}

	s->ifindex = if_nametoindex("lo");
	if (!s->ifindex)
		return fail("lo", errno);
	ret = bpf_xdp_attach(s->ifindex, bpf_program__fd(prog), XDP_FLAGS_SKB_MODE, NULL);
	if (ret) {
		s->ifindex = 0;
		return fail("attach the program to lo (generic XDP)", -ret);
	}
	return 0;
}

int refresh_service_open(struct refresh_service *s, const uint32_t *addrs,
			 uint32_t nr_peers)
{
	if (!service_open(s, addrs, nr_peers))
		return 0;
	refresh_service_close(s);
	return -1;
}

int refresh_service_arm(struct refresh_service *s, uint64_t timeout_ns, uint64_t tick_ns)
{
	struct twheel_setup_args sa = {
		.tick_ns = tick_ns,
		.default_timeout_ns = timeout_ns,
		.clockid = CLOCK_MONOTONIC,	/* bpf_ktime_get_ns()'s clock */
		.flags = TWHEEL_SETUPF_TOUCH_USER,
		.touch_slots = s->nr_peers,
	};
	struct twheel_op *ops;
	int ret;

	s->timeout_ns = timeout_ns;
	s->wfd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	if (s->wfd < 0)
		return fail("open " TWHEEL_DEVICE, -s->wfd);
	ret = twheel_setup_params(s->wfd, &sa);
	if (ret < 0)
		return fail("wheel setup", -ret);
	ret = twheel_touch_register(s->wfd, s->stamps, s->nr_peers);
	if (ret < 0)
		return fail("register the stamps array as the touch table", -ret);

	/* Binding never counts what a slot holds then: earlier packets are no touch. */
	ops = calloc(s->nr_peers, sizeof(*ops));
	if (!ops)
		return fail("ids", ENOMEM);
	for (uint32_t i = 0; i < s->nr_peers; i++) {
		twheel_prep_add(&ops[i], i, TWHEEL_TIMEOUT_DEFAULT);
		twheel_prep_bind(&ops[i], i);
	}
	ret = twheel_batch(s->wfd, ops, s->nr_peers);
	for (uint32_t i = 0; ret == (int)s->nr_peers && i < s->nr_peers; i++)
		if (ops[i].result)
			ret = ops[i].result;
	free(ops);
	if (ret != (int)s->nr_peers)
		return fail("add the peers' ids", ret < 0 ? -ret : EIO);
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

long long refresh_service_run(struct refresh_service *s, int stop_fd,
			      uint64_t grace_ns, refresh_expired_fn fn,
			      bool (*until)(void *arg), void *arg)
{
	struct pollfd pfd[2] = {
		{ .fd = s->wfd, .events = POLLIN },
		{ .fd = stop_fd, .events = POLLIN },
	};
	struct twheel_event ev[256];
	uint64_t cpu = thread_cpu_ns(), end = 0, read_cpu = 0;

	for (;;) {
		int timeout_ms = -1, n;

		if (end) {
			uint64_t now = mono_ns();

			if (now >= end || until(arg))
				break;
			timeout_ms = (int)((end - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
		}
		if (poll(pfd, end ? 1 : 2, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			return fail("poll", errno);
		}
		if (!end && pfd[1].revents)
			end = mono_ns() + grace_ns;
		s->wakeups++;
		read_cpu -= thread_cpu_ns();
		while ((n = twheel_read_events(s->wfd, ev, 256)) > 0) {
			s->reads++;
			for (int i = 0; i < n; i++)
				fn(arg, &ev[i]);
		}
		read_cpu += thread_cpu_ns();
		if (n != -EAGAIN)
			return fail("read expirations", -n);
	}
	s->read_cpu_ns = read_cpu;
	return (long long)(thread_cpu_ns() - cpu);
}

uint64_t refresh_service_packets(const struct refresh_service *s)
{
	int nr_cpus = libbpf_num_possible_cpus();
	uint64_t *v, sum = 0;
	uint32_t zero = 0;

	if (nr_cpus <= 0)
		return 0;
	v = calloc(nr_cpus, sizeof(*v));
	if (v && !bpf_map_lookup_elem(s->seen_fd, &zero, v))
		for (int i = 0; i < nr_cpus; i++)
			sum += v[i];
	free(v);
	return sum;
}

long long refresh_service_fdinfo(const struct refresh_service *s, const char *key)
{
	return fdinfo_value(s->wfd, key);
}

void refresh_service_close(struct refresh_service *s)
{
	if (s->ifindex)
		bpf_xdp_detach(s->ifindex, XDP_FLAGS_SKB_MODE, NULL);
	if (s->wfd >= 0)
		close(s->wfd);
	if (s->stamps)
		munmap(s->stamps, s->stamps_len);
	bpf_object__close(s->obj);
	memset(s, 0, sizeof(*s));
	s->wfd = -1;
}
