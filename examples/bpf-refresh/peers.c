// SPDX-License-Identifier: MIT
/*
 * The peers: one UDP socket speaks for all of them. Peer i's packets
 * leave from 127.1.0.0 + i (an IP_PKTINFO source address per message:
 * lo is every address of 127.0.0.0/8), to 127.0.0.1:REFRESH_PORT, sent in
 * batches with sendmmsg(2). A round is one packet from every peer that is
 * not silent; each peer's last send time is taken before the call that
 * sends its packet, so the kernel cannot have seen it earlier.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf-refresh.h"

#define BATCH	256

int peers_open(struct peers *p, const struct peers_cfg *cfg)
{
	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	p->peer = calloc(cfg->nr_peers, sizeof(*p->peer));
	p->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (!p->peer || p->fd < 0) {
		fprintf(stderr, "bpf-refresh: peers' socket: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* One packet from each peer of @from.. that is not silent, up to BATCH of them. */
static int send_batch(struct peers *p, uint32_t *from)
{
	static char cbuf[BATCH][CMSG_SPACE(sizeof(struct in_pktinfo))];
	static struct mmsghdr msg[BATCH];
	static struct iovec iov[BATCH];
	static uint32_t who[BATCH];
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons(REFRESH_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	static const char hello[] = "keepalive";
	unsigned int n = 0, done = 0;
	uint64_t now;

	for (; *from < p->cfg.nr_peers && n < BATCH; (*from)++) {
		struct msghdr *m = &msg[n].msg_hdr;
		struct cmsghdr *c;
		struct in_pktinfo *pi;

		if (p->peer[*from].silent)
			continue;
		iov[n] = (struct iovec){ .iov_base = (void *)hello, .iov_len = sizeof(hello) };
		*m = (struct msghdr){
			.msg_name = &to, .msg_namelen = sizeof(to),
			.msg_iov = &iov[n], .msg_iovlen = 1,
			.msg_control = cbuf[n], .msg_controllen = sizeof(cbuf[n]),
		};
		c = CMSG_FIRSTHDR(m);
		c->cmsg_level = SOL_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(*pi));
		pi = (struct in_pktinfo *)CMSG_DATA(c);
		memset(pi, 0, sizeof(*pi));
		pi->ipi_spec_dst.s_addr = htonl(PEER_ADDR_BASE + *from);
		who[n++] = *from;
	}
	now = mono_ns();
	while (done < n) {
		int ret = sendmmsg(p->fd, msg + done, n - done, 0);

		if (ret < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "bpf-refresh: sendmmsg: %s\n", strerror(errno));
			return -1;
		}
		done += ret;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct peer *pe = &p->peer[who[i]];

		if (pe->last_send && now - pe->last_send > pe->max_gap)
			pe->max_gap = now - pe->last_send;
		pe->last_send = now;
	}
	p->sent += n;
	return 0;
}

long long peers_send(struct peers *p, uint64_t duration_ns)
{
	uint64_t start = mono_ns(), longest = 0;

	do {
		uint64_t round = mono_ns(), took;
		uint32_t from = 0;

		while (from < p->cfg.nr_peers)
			if (send_batch(p, &from))
				return -1;
		took = mono_ns() - round;
		if (took > longest)
			longest = took;
		if (took < p->cfg.round_ns) {
			uint64_t left = duration_ns - (mono_ns() - start);

			if ((int64_t)left > 0)
				sleep_ns(p->cfg.round_ns - took < left ? p->cfg.round_ns - took : left);
		}
	} while (mono_ns() - start < duration_ns);
	return (long long)longest;
}

void peers_close(struct peers *p)
{
	if (p->fd >= 0)
		close(p->fd);
	free(p->peer);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}
