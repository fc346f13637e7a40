/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The schedule every way of the scenario benchmark replays, and the
 * protocol between a driver and the harness (scenctl). Drivers in C, Java,
 * Go and Node read the same file and speak the same protocol, so a way in
 * a new language (a binding of twheel, say) is one more driver function.
 *
 * Schedule file (little-endian):
 *   struct scen_hdr, then hdr.nr_events events of 8 bytes, in time order:
 *     u32 t_us     when to apply it, in us after the start (t0)
 *     u32 id_op    id in the low 30 bits, op in the top 2: SCEN_ADD,
 *                  SCEN_REFRESH, SCEN_CANCEL, or SCEN_MARK (id = mark 1
 *                  or 2: the harness samples CPU time there)
 *   Every ADD and REFRESH arms its id with the header's timeout; nothing
 *   in a scenario arms an id for another length. The run ends at end_us.
 *   Every way that has a tick (a wheel, a ring, a scan, a poller) takes
 *   tick_ns, twheel's wheels included, so that all the ways of a row
 *   answer at one precision; a driver's loop waits at least gather_ns
 *   between turns (events due sooner wait for the next turn).
 *
 * Protocol (the driver is started as DRIVER WAY SCHEDULE):
 *   driver -> stdout  "ready\n" once set up (connected, schedule loaded)
 *   stdin -> driver   "go T0\n": T0 the CLOCK_MONOTONIC ns of the start
 *   driver -> stdout  "mark K\n" when it applies mark K; before mark 2, if
 *                     it likes, "stats K=V ...\n": counts of the window
 *                     (loop turns, system calls), put into the row
 *   driver -> stdout  "late F L A\n" after a loop turn that applied events
 *                     more than SCEN_LATE_NS after their time: F and L the
 *                     t_us of its first and last event, A the CLOCK_MONOTONIC
 *                     ns when it was done
 *   driver -> fd 3    one record per expiry it detects: u64 id, u64 the
 *                     CLOCK_MONOTONIC ns when it learnt of it
 *   stdin -> driver   "sampled\n" once the harness has sampled mark 2
 *   driver -> stdout  "heap LIVE COMMITTED\n" (a runtime with a garbage
 *                     collector, after "sampled" came): its heap's bytes
 *                     live after a full collection, and those it holds
 *   stdin -> driver   "measured\n" once the harness has read the cgroup's
 *                     memory for it: until then the driver waits, holding
 *                     all it held (an exit would free its memory and its
 *                     wheel's entries under the harness's read)
 *   driver -> stdout  "done applied=N lag_max_ns=L\n" at end_us (N events
 *                     applied, L the most an event was applied after its
 *                     time), then it exits
 * A refresh of an id the way no longer has (it expired while the
 * scenario kept it alive) re-adds it, as a server would; the harness
 * counts the expiry that went before as a live id reported, unless the
 * driver applied that refresh only after the deadline it had to beat (a
 * late turn: the way could not have known).
 */
#ifndef SCEN_H
#define SCEN_H

#include <stdint.h>

#define SCEN_MAGIC	0x324e454353ULL	/* "SCEN2" */

enum { SCEN_ADD, SCEN_REFRESH, SCEN_CANCEL, SCEN_MARK };

#define SCEN_LATE_NS	10000000ULL	/* 10 ms */

#define SCEN_ID_BITS	30
#define SCEN_ID(e)	((e)->id_op & ((1U << SCEN_ID_BITS) - 1))
#define SCEN_OP(e)	((e)->id_op >> SCEN_ID_BITS)

struct scen_hdr {
	uint64_t magic;
	char name[16];		/* im, ride, orders */
	uint64_t nr_ids;	/* ids are 0..nr_ids-1 */
	uint64_t nr_events;
	uint64_t timeout_ns;	/* every arm's timeout */
	uint64_t tick_ns;	/* the row's precision, scaled: every way's tick */
	uint64_t end_us;	/* the run ends here */
	uint64_t live_ids;	/* ids kept at the steady state: bytes per id divide by it */
	uint64_t scale;		/* time divided by this from the seeds' scenario */
	uint64_t precision_ns;	/* the row's precision in the seeds' time (unscaled) */
	uint64_t gather_ns;	/* the loop's least wait between turns, scaled */
};

struct scen_event {
	uint32_t t_us;
	uint32_t id_op;
};

/* One expiry as the driver reports it on fd 3. */
struct scen_expiry {
	uint64_t id;
	uint64_t ns;
};

#endif /* SCEN_H */
