/* SPDX-License-Identifier: MIT */
/*
 * bpf-refresh: a UDP service whose peers are kept alive by a BPF program
 * on the packet path, storing the time of each packet into the peer's
 * slot of a BPF array that is the twheel wheel's touch table. The parts:
 * refresh.bpf.c (the BPF program, built with clang -target bpf), service.c
 * (the service: the BPF program, the wheel, the expirations; the part to
 * read), peers.c (the peers, simulated over loopback) and main.c (the
 * check that runs both and judges what the service reported).
 */
#ifndef BPF_REFRESH_H
#define BPF_REFRESH_H

#include "../example.h"

#include <stdbool.h>
#include <stdint.h>

#include <linux/twheel.h>

#include "refresh.h"

/*
 * Peer i sends from 127.1.0.0 + i: loopback answers for all of
 * 127.0.0.0/8, so one socket speaks for every peer (IP_PKTINFO).
 */
#define PEER_ADDR_BASE		0x7f010000U	/* 127.1.0.0, host order */
#define MAX_PEERS		(1U << 22)	/* up to 127.64.255.255 */

struct refresh_service {
	struct bpf_object *obj;
	int ifindex;		/* lo, where the XDP program is attached */
	int seen_fd;		/* the program's per-CPU packet counter */
	int wfd;		/* the wheel, -1 before refresh_service_arm() */
	uint64_t *stamps;	/* the BPF array, mapped: the touch table */
	size_t stamps_len;
	uint32_t nr_peers;
	uint64_t timeout_ns;
	/* What refresh_service_run() did: poll wakeups, reads, their CPU. */
	unsigned long long wakeups, reads;
	uint64_t read_cpu_ns;
};

/*
 * Load the BPF program, give it the peers (peer i's address, network
 * order, is @addrs[i]; its slot is i) and attach it to lo. From here on
 * every packet of a peer to REFRESH_PORT stamps its slot and is dropped.
 * 0, or -1 after a message on stderr.
 */
int refresh_service_open(struct refresh_service *s, const uint32_t *addrs,
			 uint32_t nr_peers);

/*
 * The wheel: timeout @timeout_ns, tick @tick_ns, the BPF array as its
 * registered touch table, peer i as id i bound to slot i. 0 or -1.
 */
int refresh_service_arm(struct refresh_service *s, uint64_t timeout_ns,
			uint64_t tick_ns);

/* Called for each expiry the service reads. */
typedef void (*refresh_expired_fn)(void *arg, const struct twheel_event *ev);

/*
 * Read expirations, calling @fn for each, until @stop_fd is readable and
 * then until @until(arg) is true or @grace_ns more have passed. Returns
 * the CPU time the calling thread spent in here (ns), or -1 on failure.
 */
long long refresh_service_run(struct refresh_service *s, int stop_fd,
			      uint64_t grace_ns, refresh_expired_fn fn,
			      bool (*until)(void *arg), void *arg);

/* Packets the BPF program took as a peer's (all CPUs). */
uint64_t refresh_service_packets(const struct refresh_service *s);

/* The value of @key in the wheel's fdinfo, or -1. */
long long refresh_service_fdinfo(const struct refresh_service *s, const char *key);

/* Detach and free everything. */
void refresh_service_close(struct refresh_service *s);

/* What the peers did, each one's times CLOCK_MONOTONIC ns. */
struct peer {
	uint64_t last_send;	/* taken before the send of its last packet */
	uint64_t max_gap;	/* longest time between two of its sends */
	bool silent;		/* stopped sending at the silence */
};

struct peers_cfg {
	uint32_t nr_peers;
	uint64_t round_ns;	/* a round (one packet per sending peer) every */
};

struct peers {
	struct peers_cfg cfg;
	struct peer *peer;
	int fd;
	unsigned long long sent;
};

/* The socket and the state; 0, or -1 after a message on stderr. */
int peers_open(struct peers *p, const struct peers_cfg *cfg);

/*
 * Rounds until @duration_ns has passed (at least one): every peer that
 * is not silent sends one packet per round, a round every cfg.round_ns
 * (or back to back if a round takes longer). Returns the longest round
 * in ns, or -1.
 */
long long peers_send(struct peers *p, uint64_t duration_ns);

void peers_close(struct peers *p);

#endif /* BPF_REFRESH_H */
