/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of twheel, in the kernel's usual layout: perf, bpftrace and
 * tracefs see them as twheel:twheel_op, twheel:twheel_expire,
 * twheel:twheel_read and twheel:twheel_touch_rearm. A wheel is named by
 * the number fdinfo shows as "wheel:", never by a kernel pointer.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM twheel

#if !defined(_TWHEEL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TWHEEL_TRACE_H

#include <linux/tracepoint.h>
#include <linux/twheel.h>

/* One operation, after it was applied (or refused). */
TRACE_EVENT(twheel_op,
	TP_PROTO(u64 wheel, const struct twheel_op *op),
	TP_ARGS(wheel, op),
	TP_STRUCT__entry(
		__field(u64, wheel)
		__field(u64, id)
		__field(u64, deadline_ns)
		__field(u32, op)
		__field(u32, flags)
		__field(s32, result)
	),
	TP_fast_assign(
		__entry->wheel = wheel;
		__entry->id = op->id;
		__entry->deadline_ns = op->deadline_ns;
		__entry->op = op->op;
		__entry->flags = op->flags;
		__entry->result = op->result;
	),
	TP_printk("wheel=%llu id=%llu op=%s flags=0x%x result=%d deadline_ns=%llu",
		  __entry->wheel, __entry->id,
		  __print_symbolic(__entry->op,
				   { TWHEEL_OP_ADD, "add" },
				   { TWHEEL_OP_REFRESH, "refresh" },
				   { TWHEEL_OP_CANCEL, "cancel" },
				   { TWHEEL_OP_QUERY, "query" }),
		  __entry->flags, __entry->result, __entry->deadline_ns)
);

/* An id expired: its event now waits for a reader. */
TRACE_EVENT(twheel_expire,
	TP_PROTO(u64 wheel, u64 id, u64 deadline_ns, u64 expired_ns),
	TP_ARGS(wheel, id, deadline_ns, expired_ns),
	TP_STRUCT__entry(
		__field(u64, wheel)
		__field(u64, id)
		__field(u64, deadline_ns)
		__field(u64, lateness_ns)
	),
	TP_fast_assign(
		__entry->wheel = wheel;
		__entry->id = id;
		__entry->deadline_ns = deadline_ns;
		__entry->lateness_ns = expired_ns - deadline_ns;
	),
	TP_printk("wheel=%llu id=%llu deadline_ns=%llu lateness_ns=%llu",
		  __entry->wheel, __entry->id, __entry->deadline_ns,
		  __entry->lateness_ns)
);

/* A read(2) returned @count events; @waiting are left. */
TRACE_EVENT(twheel_read,
	TP_PROTO(u64 wheel, u64 count, u64 waiting),
	TP_ARGS(wheel, count, waiting),
	TP_STRUCT__entry(
		__field(u64, wheel)
		__field(u64, count)
		__field(u64, waiting)
	),
	TP_fast_assign(
		__entry->wheel = wheel;
		__entry->count = count;
		__entry->waiting = waiting;
	),
	TP_printk("wheel=%llu count=%llu waiting=%llu",
		  __entry->wheel, __entry->count, __entry->waiting)
);

/* A bound id's deadline came, its slot showed a touch: re-armed. */
TRACE_EVENT(twheel_touch_rearm,
	TP_PROTO(u64 wheel, u64 id, u64 touched_ns, u64 deadline_ns),
	TP_ARGS(wheel, id, touched_ns, deadline_ns),
	TP_STRUCT__entry(
		__field(u64, wheel)
		__field(u64, id)
		__field(u64, touched_ns)
		__field(u64, deadline_ns)
	),
	TP_fast_assign(
		__entry->wheel = wheel;
		__entry->id = id;
		__entry->touched_ns = touched_ns;
		__entry->deadline_ns = deadline_ns;
	),
	TP_printk("wheel=%llu id=%llu touched_ns=%llu deadline_ns=%llu",
		  __entry->wheel, __entry->id, __entry->touched_ns,
		  __entry->deadline_ns)
);

#endif /* _TWHEEL_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
