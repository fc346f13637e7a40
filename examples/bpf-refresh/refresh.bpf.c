// SPDX-License-Identifier: MIT
/*
 * The packet path of bpf-refresh: an XDP program on lo that keeps each
 * peer alive in the service's twheel wheel. For a UDP packet to the
 * service's port from a known peer it looks the peer's slot up (a hash
 * map the service fills: IPv4 source address -> slot) and stores
 * bpf_ktime_get_ns(), CLOCK_MONOTONIC as the kernel reads it, into that
 * slot of the array `stamps`. That array is mmap-able (BPF_F_MMAPABLE),
 * and the service registers its mapping as the wheel's touch table
 * (TWHEEL_IOC_TOUCH_REGISTER): the store is the refresh. The kernel
 * looks at a slot about once per timeout, when its id's deadline comes
 * or a level of its wheel before, so the cost per packet is a lookup
 * and a store, and the service does nothing per packet. The packet is then dropped: in this example the peers' packets
 * are keepalives and the program is their whole data path.
 *
 * Generic (skb) XDP because lo has no driver XDP; tc would do as well,
 * but needs the clsact qdisc, a module the test VM does not have.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "refresh.h"

/* Sizes are set by the service before loading (bpf_map__set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);		/* peer's IPv4 address, network order */
	__type(value, __u32);		/* its slot */
} peers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);		/* slot */
	__type(value, __u64);		/* last packet, CLOCK_MONOTONIC ns */
} stamps SEC(".maps");

/* Packets taken as a peer's, for the service's CPU per packet. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

SEC("xdp")
int refresh(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u32 addr, zero = 0, *slot;
	__u64 *stamp, *count;

	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
	    udp->dest != bpf_htons(REFRESH_PORT))
		return XDP_PASS;
	addr = ip->saddr;
	slot = bpf_map_lookup_elem(&peers, &addr);
	if (!slot)
		return XDP_PASS;	/* not a peer: the stack answers */
	stamp = bpf_map_lookup_elem(&stamps, slot);
	if (!stamp)
		return XDP_PASS;
	*stamp = bpf_ktime_get_ns();	/* one aligned 64-bit store */
	count = bpf_map_lookup_elem(&seen, &zero);
	if (count)
		(*count)++;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
