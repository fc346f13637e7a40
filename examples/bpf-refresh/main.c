// SPDX-License-Identifier: MIT
/*
 * bpf-refresh: a UDP service with many peers, kept alive by a BPF
 * program on the packet path; the service itself only reads expirations.
 * Run with no argument (or "check"), it is its own check, what `make
 * check` runs in a VM (root: BPF, and lo brought up if it is down):
 *
 *   bpf-refresh [check] [-n peers] [-s silent] [-r seed]
 *
 * The service (service.c) loads the BPF program and attaches it to lo;
 * the peers (peers.c) send one round, whose time sets the timeout T
 * (eight rounds in whole seconds, 3 to 60 s: a slow or loaded VM gets a
 * longer T rather than peers that cannot keep up); then the wheel is
 * armed with the BPF array as its touch table, and the service's thread
 * reads expirations while every peer sends a packet every T/4 (or as
 * fast as it can) for 1.25 T, so that every id passes its
 * first deadline kept alive by the program alone. Then the silent set,
 * chosen at random, stops, and the rest go on for 1.25 T more; the
 * service waits up to T/4 longer for the last silent ones.
 *
 * It passes only if every silent peer was reported exactly once and no
 * live one at all; no expiry is early (each event's deadline is at least
 * T after the peer's last send, the time taken before the send call);
 * and every packet sent reached the program. The service's CPU per
 * packet is its thread's CPU time over the packets the program took
 * while that thread ran.
 * Last line, after one TAP line ("ok 1" or "not ok 1", plan "1..1"):
 *   bpf-refresh: peers=N silent=S reported=S live_reported=0 early=0
 *     service_cpu_ns_per_packet=C
 * Exit status 0 only if all of that holds.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf-refresh.h"

struct opts {
	uint32_t nr_peers, nr_silent;
	uint64_t seed;
};

/* What the service read, by id; written by its thread, read after the join. */
struct seen {
	struct refresh_service *svc;
	uint32_t nr_peers;
	const bool *chosen;			/* the silent set */
	uint32_t *events;
	uint64_t *deadline, *expired;
	uint32_t nr_silent, silent_reported;	/* those the service has read */
	unsigned long long unknown;		/* ids that are no peer's */
	uint64_t grace_ns;
	int stop_fd;
	long long cpu_ns;
};

static void usage(void)
{
	fprintf(stderr, "usage: bpf-refresh [check] [-n peers] [-s silent] [-r seed]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	int opt;

	while ((opt = getopt(argc, argv, "n:s:r:")) != -1) {
		switch (opt) {
		case 'n': o->nr_peers = strtoul(optarg, NULL, 0); break;
		case 's': o->nr_silent = strtoul(optarg, NULL, 0); break;
		case 'r': o->seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (!o->nr_peers || o->nr_peers > MAX_PEERS || o->nr_silent > o->nr_peers) {
		fprintf(stderr, "bpf-refresh: need 0 < peers <= %u, silent <= peers\n",
			MAX_PEERS);
		exit(2);
	}
}

/* In the service's thread: one expiration. */
static void record(void *arg, const struct twheel_event *ev)
{
	struct seen *sn = arg;

	if (ev->id >= sn->nr_peers) {
		sn->unknown++;
		return;
	}
	if (!sn->events[ev->id]++) {
		sn->deadline[ev->id] = ev->deadline_ns;
		sn->expired[ev->id] = ev->expired_ns;
		if (sn->chosen[ev->id])
			sn->silent_reported++;
	}
}

static bool all_silent_reported(void *arg)
{
	struct seen *sn = arg;

	return sn->silent_reported == sn->nr_silent;
}

static void *service_thread(void *arg)
{
	struct seen *sn = arg;

	sn->cpu_ns = refresh_service_run(sn->svc, sn->stop_fd, sn->grace_ns, record,
					 all_silent_reported, sn);
	return NULL;
}

static int check(const struct opts *o)
{
	struct refresh_service svc;
	struct peers peers;
	struct peers_cfg pcfg = { .nr_peers = o->nr_peers };
	struct seen sn = { 0 };
	uint32_t *addrs = calloc(o->nr_peers, sizeof(*addrs));
	uint32_t *order = calloc(o->nr_peers, sizeof(*order));
	bool *chosen = calloc(o->nr_peers, sizeof(*chosen));
	uint64_t *lat = calloc(o->nr_silent ? o->nr_silent : 1, sizeof(*lat));
	uint32_t reported = 0, live_reported = 0, early = 0, twice = 0, n = 0;
	uint64_t seed = o->seed, timeout_ns, tick_ns, packets, max_live_gap = 0;
	uint64_t packets_before;
	unsigned long long sent;
	long long first_round, longest, rearms, registered;
	double cpu_per_packet;
	pthread_t thread;
	bool ok = false;

	sn.events = calloc(o->nr_peers, sizeof(*sn.events));
	sn.deadline = calloc(o->nr_peers, sizeof(*sn.deadline));
	sn.expired = calloc(o->nr_peers, sizeof(*sn.expired));
	if (!addrs || !order || !chosen || !lat || !sn.events || !sn.deadline || !sn.expired) {
		fprintf(stderr, "bpf-refresh: %s\n", strerror(ENOMEM));
		return 1;
	}
	printf("TAP version 13\n1..1\n");
	if (lo_up("bpf-refresh"))
		return 1;
	for (uint32_t i = 0; i < o->nr_peers; i++)
		addrs[i] = htonl(PEER_ADDR_BASE + i);
	if (refresh_service_open(&svc, addrs, o->nr_peers))
		return 1;
	/* From here on every way out detaches the program from lo. */
	if (peers_open(&peers, &pcfg))
		goto out;

	/* One round, back to back: how fast this machine sends. */
	first_round = peers_send(&peers, 0);
	if (first_round < 0)
		goto out;
	timeout_ns = (8 * (uint64_t)first_round + NSEC_PER_SEC - 1) / NSEC_PER_SEC * NSEC_PER_SEC;
	if (timeout_ns < 3 * NSEC_PER_SEC)
		timeout_ns = 3 * NSEC_PER_SEC;
	if (timeout_ns > 60 * NSEC_PER_SEC)
		timeout_ns = 60 * NSEC_PER_SEC;
	tick_ns = timeout_ns / 100;
	printf("bpf-refresh: %u peers over loopback, kept alive by an XDP program on lo; "
	       "a round of their packets took %.0f ms, so the timeout is %llu ms (tick %llu ms); "
	       "%u will go silent\n", o->nr_peers, first_round / 1e6,
	       (unsigned long long)(timeout_ns / NSEC_PER_MSEC),
	       (unsigned long long)(tick_ns / NSEC_PER_MSEC), o->nr_silent);
	if (refresh_service_arm(&svc, timeout_ns, tick_ns))
		goto out;

	sn.svc = &svc;
	sn.nr_peers = o->nr_peers;
	sn.chosen = chosen;
	sn.nr_silent = o->nr_silent;
	sn.grace_ns = timeout_ns / 4;
	sn.stop_fd = eventfd(0, EFD_CLOEXEC);
	/* The silent set, chosen now: a partial Fisher-Yates shuffle. */
	for (uint32_t i = 0; i < o->nr_peers; i++)
		order[i] = i;
	for (uint32_t i = 0; i < o->nr_silent; i++) {
		uint32_t j = i + rnd(&seed) % (o->nr_peers - i), t = order[i];

		order[i] = order[j];
		order[j] = t;
		chosen[order[i]] = true;
	}
	packets_before = refresh_service_packets(&svc);
	if (sn.stop_fd < 0 || pthread_create(&thread, NULL, service_thread, &sn)) {
		fprintf(stderr, "bpf-refresh: the service's thread: %s\n", strerror(errno));
		goto out;
	}

	peers.cfg.round_ns = timeout_ns / 4;
	longest = peers_send(&peers, timeout_ns + timeout_ns / 4);
	for (uint32_t i = 0; i < o->nr_silent; i++)
		peers.peer[order[i]].silent = true;
	if (longest >= 0) {
		long long l = peers_send(&peers, timeout_ns + timeout_ns / 4);

		longest = l < 0 ? l : l > longest ? l : longest;
	}
	if (eventfd_write(sn.stop_fd, 1) || pthread_join(thread, NULL)) {
		fprintf(stderr, "bpf-refresh: stop the service: %s\n", strerror(errno));
		goto out;
	}
	if (longest < 0 || sn.cpu_ns < 0)
		goto out;
	sent = peers.sent;
	packets = refresh_service_packets(&svc);
	rearms = refresh_service_fdinfo(&svc, "touch_rearms");
	registered = refresh_service_fdinfo(&svc, "touch_registered");

	for (uint32_t i = 0; i < o->nr_peers; i++) {
		const struct peer *pe = &peers.peer[i];

		if (!pe->silent && pe->max_gap > max_live_gap)
			max_live_gap = pe->max_gap;
		if (!sn.events[i]) {
			if (pe->silent)
				complain("bpf-refresh: silent peer %u never reported "
					 "(last send %.1f ms before the end)\n", i,
					 (mono_ns() - pe->last_send) / 1e6);
			continue;
		}
		twice += sn.events[i] > 1;
		if (sn.deadline[i] < pe->last_send + timeout_ns) {
			early++;
			complain("bpf-refresh: peer %u expired early: deadline %.1f ms "
				 "after its last send\n", i,
				 ((double)sn.deadline[i] - pe->last_send) / 1e6);
		}
		if (!pe->silent) {
			live_reported++;
			complain("bpf-refresh: live peer %u reported (longest gap between "
				 "its sends %.1f ms)\n", i, pe->max_gap / 1e6);
			continue;
		}
		reported++;
		if (sn.expired[i] >= pe->last_send + timeout_ns)
			lat[n++] = sn.expired[i] - pe->last_send - timeout_ns;
	}
	if (max_live_gap >= timeout_ns)
		complain("bpf-refresh: the peers could not keep up: a live one sent "
			 "nothing for %.0f ms, more than the timeout\n", max_live_gap / 1e6);
	qsort(lat, n, sizeof(*lat), cmp_u64);
	/* The packets while the service's thread ran, not the first round. */
	cpu_per_packet = packets > packets_before ?
			 (double)sn.cpu_ns / (packets - packets_before) : -1;

	ok = reported == o->nr_silent && !live_reported && !early && !twice &&
	     !sn.unknown && packets == sent && registered == 1;
	printf("bpf-refresh: %llu packets sent, %llu taken by the program; longest "
	       "round %.0f ms, longest gap between a live peer's sends %.0f ms\n",
	       sent, (unsigned long long)packets, longest / 1e6, max_live_gap / 1e6);
	printf("bpf-refresh: %u of %u silent peers reported, %u live ones, %u early, "
	       "%u twice, %llu unknown ids; touch_registered=%lld, %lld looks by the "
	       "kernel that found a packet's stamp\n", reported, o->nr_silent,
	       live_reported, early, twice, sn.unknown, registered, rearms);
	printf("bpf-refresh: detection, the expiry after the last send + %llu ms: "
	       "p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
	       (unsigned long long)(timeout_ns / NSEC_PER_MSEC), pct_ms(lat, n, 50),
	       pct_ms(lat, n, 99), n ? lat[n - 1] / 1e6 : 0);
	printf("bpf-refresh: the service's thread used %.3f ms of CPU while reading "
	       "expirations (%.3f ms in the reads): %llu wakeups, %llu reads\n",
	       sn.cpu_ns / 1e6, svc.read_cpu_ns / 1e6, svc.wakeups, svc.reads);
	printf("%sok 1 bpf-refresh: peers kept alive by a BPF program, the silent ones "
	       "reported\n", ok ? "" : "not ");
	printf("bpf-refresh: peers=%u silent=%u reported=%u live_reported=%u early=%u "
	       "service_cpu_ns_per_packet=%.1f\n", o->nr_peers, o->nr_silent, reported,
	       live_reported, early, cpu_per_packet);
out:
	peers_close(&peers);
	refresh_service_close(&svc);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct opts o = { .nr_peers = 100000, .nr_silent = 10000, .seed = 0xb9f };

	if (argc > 1 && argv[1][0] != '-') {
		if (strcmp(argv[1], "check"))
			usage();
		argc--;
		argv++;
	}
	parse(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return check(&o);
}
