// SPDX-License-Identifier: GPL-2.0
/*
 * The twheel tracepoints, read through tracefs in a trace instance of
 * their own: every op (refused ones too) with its id, op name, flags,
 * result and the deadline it returned; every expiry with the deadline and
 * lateness the reader gets in the event; every read with its count and
 * what is left; every touch re-arm with the stamp and the new deadline;
 * the wheel= field equal to fdinfo's "wheel:" line; no pointer in any
 * event's fields; nothing recorded once disabled. Skips when tracefs is
 * absent.
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(NSEC_PER_SEC)
#define MAX_LINES	4096

static const char *const events[] = {
	"twheel_op", "twheel_expire", "twheel_read", "twheel_touch_rearm",
};

/* One parsed twheel trace line. */
struct tline {
	char event[32];
	uint64_t wheel, id, deadline_ns, a, b;	/* a, b: event-specific */
	char op[16];
	unsigned int flags;
	int result;
};

FIXTURE(trace) {
	char root[128];		/* tracefs */
	char inst[192];		/* our instance in it */
	bool mounted;
	int record_cmd, record_tgid;	/* the options as they were, or -1 */
	int fd;
	uint64_t wheel;
	struct tline *lines;
	int nr;
};

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Where tracefs is, mounting it on /sys/kernel/tracing if need be. */
static bool find_tracefs(FIXTURE_DATA(trace) *self)
{
	if (is_dir("/sys/kernel/tracing/events")) {
		strcpy(self->root, "/sys/kernel/tracing");
		return true;
	}
	if (is_dir("/sys/kernel/tracing") &&
	    !mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		self->mounted = true;
		strcpy(self->root, "/sys/kernel/tracing");
		return true;
	}
	if (is_dir("/sys/kernel/debug/tracing/events")) {
		strcpy(self->root, "/sys/kernel/debug/tracing");
		return true;
	}
	return false;
}

static int enable(FIXTURE_DATA(trace) *self, const char *event, int on)
{
	char p[320];

	if (event)
		snprintf(p, sizeof(p), "%s/events/twheel/%s/enable", self->inst, event);
	else
		snprintf(p, sizeof(p), "%s/events/twheel/enable", self->inst);
	return write_file(p, on ? "1" : "0");
}

/* Set a top-level trace option; returns what it was (0 or 1), or -1. */
static int set_option(FIXTURE_DATA(trace) *self, const char *name, const char *val)
{
	char p[320], buf[8];
	int was;

	snprintf(p, sizeof(p), "%s/options/%s", self->root, name);
	if (read_file(p, buf, sizeof(buf)) <= 0)
		return -1;
	was = buf[0] == '1';
	return write_file(p, val) ? -1 : was;
}

FIXTURE_SETUP(trace)
{
	char p[320];

	self->mounted = false;
	self->record_cmd = -1;
	self->record_tgid = -1;
	self->inst[0] = 0;
	self->fd = -1;
	if (!find_tracefs(self))
		SKIP(return, "no tracefs: neither /sys/kernel/tracing nor debugfs tracing");
	snprintf(p, sizeof(p), "%s/events/twheel", self->root);
	ASSERT_TRUE(is_dir(p)) TH_LOG("tracefs has no twheel events: %s", p);
	/*
	 * No comm/tgid recording: it hooks sched_switch, patching the
	 * scheduler's text while every CPU runs it. The test needs none of
	 * it, and QEMU's multi-threaded TCG has been seen to take a stale
	 * int3 from such a patch in __schedule (Debian's 7.2 guest, Oops).
	 * Top-level options, which a new instance inherits; put back after.
	 */
	self->record_cmd = set_option(self, "record-cmd", "0");
	self->record_tgid = set_option(self, "record-tgid", "0");
	snprintf(self->inst, sizeof(self->inst), "%s/instances/twheel-selftest-%d",
		 self->root, getpid());
	ASSERT_EQ(0, mkdir(self->inst, 0755)) TH_LOG("%s: %s", self->inst, strerror(errno));
	ASSERT_EQ(0, enable(self, NULL, 1));
	self->lines = calloc(MAX_LINES, sizeof(*self->lines));
	ASSERT_NE(NULL, self->lines);
	self->fd = wheel_new(O_CLOEXEC | O_NONBLOCK, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, self->fd);
	self->wheel = fdinfo_get(self->fd, "wheel");
	ASSERT_LT(0, (long long)self->wheel);
}

FIXTURE_TEARDOWN(trace)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->inst[0]) {
		enable(self, NULL, 0);
		rmdir(self->inst);
	}
	if (self->record_cmd >= 0)
		set_option(self, "record-cmd", self->record_cmd ? "1" : "0");
	if (self->record_tgid >= 0)
		set_option(self, "record-tgid", self->record_tgid ? "1" : "0");
	if (self->mounted)
		umount("/sys/kernel/tracing");
	free(self->lines);
}

/* Parse one line of the trace file; false if it is no twheel event. */
static bool parse(const char *s, struct tline *l)
{
	const char *p;
	int i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < 4; i++) {
		char tag[40];

		snprintf(tag, sizeof(tag), " %s: ", events[i]);
		p = strstr(s, tag);
		if (p) {
			strcpy(l->event, events[i]);
			p += strlen(tag);
			break;
		}
	}
	if (i == 4)
		return false;
	switch (i) {
	case 0:
		return sscanf(p, "wheel=%lu id=%lu op=%15s flags=0x%x result=%d deadline_ns=%lu",
			      &l->wheel, &l->id, l->op, &l->flags, &l->result,
			      &l->deadline_ns) == 6;
	case 1:	/* a: lateness_ns */
		return sscanf(p, "wheel=%lu id=%lu deadline_ns=%lu lateness_ns=%lu",
			      &l->wheel, &l->id, &l->deadline_ns, &l->a) == 4;
	case 2:	/* a: count, b: waiting */
		return sscanf(p, "wheel=%lu count=%lu waiting=%lu", &l->wheel, &l->a, &l->b) == 3;
	default: /* a: touched_ns */
		return sscanf(p, "wheel=%lu id=%lu touched_ns=%lu deadline_ns=%lu",
			      &l->wheel, &l->id, &l->a, &l->deadline_ns) == 4;
	}
}

/*
 * Read the instance's trace: keep the twheel lines of wheel @wheel (any
 * wheel if 0), in order. Returns how many; a line that names a twheel
 * event but does not parse fails the test.
 */
static int collect(struct __test_metadata *_metadata, FIXTURE_DATA(trace) *self,
		   uint64_t wheel)
{
	char p[320], line[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/trace", self->inst);
	f = fopen(p, "r");
	ASSERT_NE(NULL, f);
	self->nr = 0;
	while (fgets(line, sizeof(line), f)) {
		struct tline l;

		if (line[0] == '#' || !strstr(line, " twheel_"))
			continue;
		EXPECT_TRUE(parse(line, &l)) TH_LOG("cannot parse: %s", line);
		if (wheel && l.wheel != wheel)
			continue;
		ASSERT_GT(MAX_LINES, self->nr);
		self->lines[self->nr++] = l;
	}
	fclose(f);
	return self->nr;
}

/* The lines of one event, in order, into @out (at most @max). */
static int pick(FIXTURE_DATA(trace) *self, const char *event, struct tline *out, int max)
{
	int i, n = 0;

	for (i = 0; i < self->nr; i++)
		if (!strcmp(self->lines[i].event, event) && n < max)
			out[n++] = self->lines[i];
	return n;
}

/* Every field of every event is a number: no pointer reaches the trace. */
TEST_F(trace, events_have_the_documented_fields_and_no_pointers)
{
	static const char *const fields[][5] = {
		{ "wheel", "id", "deadline_ns", "result", "flags" },
		{ "wheel", "id", "deadline_ns", "lateness_ns", NULL },
		{ "wheel", "count", "waiting", NULL, NULL },
		{ "wheel", "id", "touched_ns", "deadline_ns", NULL },
	};
	char p[320], line[512];
	unsigned int i, j;

	for (i = 0; i < 4; i++) {
		char seen[512] = "";
		FILE *f;

		snprintf(p, sizeof(p), "%s/events/twheel/%s/format", self->root, events[i]);
		f = fopen(p, "r");
		ASSERT_NE(NULL, f) TH_LOG("%s", p);
		while (fgets(line, sizeof(line), f)) {
			char *decl = strstr(line, "field:");

			if (!decl)
				continue;
			EXPECT_EQ(NULL, strchr(decl, '*')) TH_LOG("%s: %s", events[i], line);
			strncat(seen, decl, sizeof(seen) - strlen(seen) - 1);
		}
		fclose(f);
		for (j = 0; j < 5 && fields[i][j]; j++) {
			char want[64];

			snprintf(want, sizeof(want), " %s;", fields[i][j]);
			EXPECT_NE(NULL, strstr(seen, want)) TH_LOG("%s lacks %s", events[i],
								    fields[i][j]);
		}
	}
}

/* Each op, applied or refused, single or batched: one line with its outcome. */
TEST_F(trace, ops_show_id_op_flags_result_and_deadline)
{
	struct twheel_op ops[11];
	struct tline got[16];
	int i, n;

	dev_prep_add(&ops[0], 101, NSEC_PER_SEC);
	dev_prep_refresh(&ops[1], 101, 2 * NSEC_PER_SEC, 0);
	dev_prep_query(&ops[2], 101);
	dev_prep_cancel(&ops[3], 101);
	dev_prep_cancel(&ops[4], 101);
	dev_prep_op(&ops[5], TWHEEL_OP_ADD, 102, DEV_TIMEOUT_DEFAULT, 0x80);
	dev_prep_refresh(&ops[6], 103, DEV_TIMEOUT_DEFAULT, 0);
	dev_prep_add_at(&ops[7], 104, mono_ns() + NSEC_PER_SEC);
	dev_prep_refresh(&ops[8], 105, DEV_TIMEOUT_DEFAULT, TWHEEL_OPF_ADD_IF_ABSENT);
	dev_prep_op(&ops[9], 9, 106, DEV_TIMEOUT_DEFAULT, 0);
	dev_prep_query(&ops[10], 105);
	for (i = 0; i < 8; i++)
		dev_submit_op(self->fd, &ops[i]);
	ASSERT_EQ(3, dev_batch(self->fd, &ops[8], 3));

	collect(_metadata, self, self->wheel);
	n = pick(self, "twheel_op", got, 16);
	ASSERT_EQ(11, n);
	for (i = 0; i < n; i++) {
		static const char *const names[] = { "", "add", "refresh", "cancel", "query" };
		char name[16];

		if (ops[i].op >= 1 && ops[i].op <= 4)
			snprintf(name, sizeof(name), "%s", names[ops[i].op]);
		else
			snprintf(name, sizeof(name), "0x%x", ops[i].op);
		EXPECT_EQ(ops[i].id, got[i].id) TH_LOG("op %d", i);
		EXPECT_STREQ(name, got[i].op) TH_LOG("op %d", i);
		EXPECT_EQ(ops[i].flags, got[i].flags) TH_LOG("op %d", i);
		EXPECT_EQ(ops[i].result, got[i].result) TH_LOG("op %d", i);
		EXPECT_EQ(ops[i].deadline_ns, got[i].deadline_ns) TH_LOG("op %d", i);
	}
	/* The outcomes themselves, so that the comparison means something. */
	EXPECT_EQ(0, ops[3].result);
	EXPECT_EQ(ops[1].deadline_ns, ops[3].deadline_ns);
	EXPECT_EQ(-ENOENT, ops[4].result);
	EXPECT_EQ(-EINVAL, ops[5].result);
	EXPECT_EQ(-ENOENT, ops[6].result);
	EXPECT_EQ(-EINVAL, ops[9].result);
	EXPECT_EQ(0, ops[10].result);
}

/* Each expiry: its id, the deadline and lateness the reader sees in the event. */
TEST_F(trace, expiries_show_the_deadline_and_lateness_of_each_event)
{
	enum { N = 5 };
	struct twheel_event ev[N];
	struct tline got[N + 1];
	int i, j, n;

	for (i = 0; i < N; i++)
		ASSERT_EQ(0, dev_add(self->fd, 200 + i, i * 5 * NSEC_PER_MSEC));
	ASSERT_EQ(N, drain_until(self->fd, ev, N, mono_ns() + 10 * NSEC_PER_SEC));
	collect(_metadata, self, self->wheel);
	n = pick(self, "twheel_expire", got, N + 1);
	ASSERT_EQ(N, n);
	for (i = 0; i < N; i++) {
		for (j = 0; j < n && got[j].id != ev[i].id; j++)
			;
		ASSERT_GT(n, j) TH_LOG("no expiry traced for id %llu", (unsigned long long)ev[i].id);
		EXPECT_EQ(ev[i].deadline_ns, got[j].deadline_ns);
		EXPECT_EQ(ev[i].expired_ns - ev[i].deadline_ns, got[j].a);
		EXPECT_GT(1ULL << 63, got[j].a) TH_LOG("negative lateness");
	}
	for (j = 1; j < n; j++)
		EXPECT_LE(got[j - 1].deadline_ns, got[j].deadline_ns);
}

TEST_F(trace, reads_show_the_count_and_what_is_left)
{
	struct twheel_event ev[10];
	struct tline got[4];
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, dev_add(self->fd, 300 + i, 0));
	ASSERT_EQ(5, wait_waiting(self->fd, 5));
	ASSERT_EQ(2, dev_read_events(self->fd, ev, 2));
	ASSERT_EQ(3, dev_read_events(self->fd, ev, 10));
	collect(_metadata, self, self->wheel);
	ASSERT_EQ(2, pick(self, "twheel_read", got, 4));
	EXPECT_EQ(2, got[0].a);
	EXPECT_EQ(3, got[0].b);
	EXPECT_EQ(3, got[1].a);
	EXPECT_EQ(0, got[1].b);
}

/*
 * A re-arm by touch: the stamp the kernel used and the deadline it gave,
 * which is the deadline of the event when the id, not touched again,
 * expires. The timeout is a second, so that the touch 50 ms after the
 * ADD still comes before the deadline on a stalled VM.
 */
TEST_F(trace, touch_rearm_shows_the_stamp_and_the_new_deadline)
{
	struct twheel_setup_args args = {
		.tick_ns = 10 * NSEC_PER_MSEC,
		.default_timeout_ns = NSEC_PER_SEC,
		.clockid = CLOCK_MONOTONIC,
		.flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = 64,
	};
	struct twheel_event ev;
	struct dev_touch t;
	struct twheel_op op;
	struct tline got[4];
	uint64_t s;
	int fd = dev_open(O_CLOEXEC | O_NONBLOCK), n;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_setup_params(fd, &args));
	ASSERT_EQ(0, dev_touch_map(fd, 64, CLOCK_MONOTONIC, &t));
	dev_prep_add(&op, 400, DEV_TIMEOUT_DEFAULT);
	dev_prep_bind(&op, 33);
	ASSERT_EQ(0, dev_submit_op(fd, &op));
	sleep_ns(50 * NSEC_PER_MSEC);
	dev_touch(&t, 33);
	s = t.slots[33];
	ASSERT_EQ(1, drain_until(fd, &ev, 1, mono_ns() + 10 * NSEC_PER_SEC));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_rearms"));
	collect(_metadata, self, fdinfo_get(fd, "wheel"));
	n = pick(self, "twheel_touch_rearm", got, 4);
	ASSERT_EQ(1, n);
	EXPECT_EQ(400, got[0].id);
	EXPECT_EQ(s, got[0].a);
	EXPECT_EQ(ev.deadline_ns, got[0].deadline_ns);
	EXPECT_LT(op.deadline_ns, got[0].deadline_ns);
	EXPECT_EQ(0, dev_touch_unmap(&t));
	close(fd);
}

/* Two wheels: each line names its wheel with fdinfo's number. */
TEST_F(trace, wheel_field_is_the_number_fdinfo_shows)
{
	int other = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0), i, n;
	long long w2;
	struct tline *l;

	ASSERT_LE(0, other);
	w2 = fdinfo_get(other, "wheel");
	ASSERT_LT(0, w2);
	EXPECT_NE(self->wheel, w2);
	ASSERT_EQ(0, dev_add(self->fd, 501, NSEC_PER_SEC));
	ASSERT_EQ(0, dev_add(other, 502, NSEC_PER_SEC));
	n = collect(_metadata, self, 0);
	l = self->lines;
	for (i = 0; i < n; i++) {
		if (!strcmp(l[i].event, "twheel_op") && l[i].id == 501)
			EXPECT_EQ(self->wheel, l[i].wheel);
		if (!strcmp(l[i].event, "twheel_op") && l[i].id == 502)
			EXPECT_EQ(w2, l[i].wheel);
	}
	EXPECT_EQ(1, collect(_metadata, self, self->wheel));
	EXPECT_EQ(1, collect(_metadata, self, w2));
	close(other);
}

TEST_F(trace, one_event_enabled_alone_records_only_itself)
{
	struct twheel_event ev;
	int i;

	ASSERT_EQ(0, enable(self, NULL, 0));
	ASSERT_EQ(0, enable(self, "twheel_expire", 1));
	ASSERT_EQ(0, dev_add(self->fd, 601, 0));
	ASSERT_EQ(1, drain_until(self->fd, &ev, 1, mono_ns() + 10 * NSEC_PER_SEC));
	ASSERT_EQ(1, collect(_metadata, self, self->wheel));
	for (i = 0; i < self->nr; i++)
		EXPECT_STREQ("twheel_expire", self->lines[i].event);
}

TEST_F(trace, disabled_events_record_nothing)
{
	struct twheel_event ev;

	ASSERT_EQ(0, enable(self, NULL, 0));
	ASSERT_EQ(0, dev_add(self->fd, 701, 0));
	ASSERT_EQ(1, drain_until(self->fd, &ev, 1, mono_ns() + 10 * NSEC_PER_SEC));
	EXPECT_EQ(-ENOENT, dev_cancel(self->fd, 701));
	EXPECT_EQ(0, collect(_metadata, self, 0));
}

TEST_HARNESS_MAIN
