// SPDX-License-Identifier: GPL-2.0
/*
 * Operations racing expiry. Threads refresh or cancel ids right around
 * their deadlines while another thread reads events. Whatever wins,
 * the outcome must be one of two: the op succeeded (the id was live and
 * the old deadline never fires) or it found nothing because the id
 * expired first (its event is delivered, exactly once).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(1 * NSEC_PER_MSEC)
#define NR_IDS		2000
#define SPREAD_NS	(600 * NSEC_PER_MSEC)	/* deadlines spread over this */
#define FIRST_NS	(30 * NSEC_PER_MSEC)	/* first deadline from now */
#define NEW_TIMEOUT_NS	(100 * NSEC_PER_MSEC)
#define NR_WORKERS	2

enum race_kind { RACE_REFRESH, RACE_REFRESH_ADD, RACE_CANCEL };

struct race {
	int fd;
	enum race_kind kind;
	uint64_t old_deadline[NR_IDS];
	uint64_t new_deadline[NR_IDS];
	int result[NR_IDS];
	/* filled by the reader thread */
	struct twheel_event *ev;
	unsigned int nr_ev;
	int read_err;
	atomic_int stop;
};

struct worker {
	struct race *r;
	unsigned int first;
};

/* Hit each id at its deadline plus a jitter of -2..+2 ticks. */
static void *race_worker(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	uint64_t seed = 0xabcdef + w->first;
	struct twheel_op op;
	unsigned int i;

	for (i = w->first; i < NR_IDS; i += NR_WORKERS) {
		uint64_t target = r->old_deadline[i] - 2 * TICK_NS +
				  rnd_next(&seed) % (4 * TICK_NS);

		while (mono_ns() < target)
			;
		if (r->kind == RACE_CANCEL)
			dev_prep_cancel(&op, i);
		else
			dev_prep_refresh(&op, i, NEW_TIMEOUT_NS,
					 r->kind == RACE_REFRESH_ADD ?
					 TWHEEL_OPF_ADD_IF_ABSENT : 0);
		dev_submit_op(r->fd, &op);
		r->result[i] = op.result;
		r->new_deadline[i] = op.deadline_ns;
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop) && r->nr_ev < 2 * NR_IDS) {
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
		int ret = poll(&pfd, 1, 10);

		if (ret <= 0)
			continue;
		ret = dev_read_events(r->fd, r->ev + r->nr_ev,
				      2 * NR_IDS - r->nr_ev);
		if (ret == -EAGAIN)
			continue;
		if (ret < 0) {
			r->read_err = ret;
			break;
		}
		r->nr_ev += ret;
	}
	return NULL;
}

static void run_race(struct __test_metadata *_metadata, enum race_kind kind)
{
	struct race *r = calloc(1, sizeof(*r));
	struct worker w[NR_WORKERS];
	pthread_t wt[NR_WORKERS], rt;
	unsigned int i, n_ok = 0, n_enoent = 0, *n_old, *n_new;
	struct twheel_op *ops;
	uint64_t last = 0;

	ASSERT_NE(NULL, r);
	r->kind = kind;
	r->ev = calloc(2 * NR_IDS, sizeof(*r->ev));
	ops = calloc(NR_IDS, sizeof(*ops));
	n_old = calloc(NR_IDS, sizeof(*n_old));
	n_new = calloc(NR_IDS, sizeof(*n_new));
	ASSERT_TRUE(r->ev && ops && n_old && n_new);
	r->fd = wheel_new(O_NONBLOCK | O_CLOEXEC, TICK_NS, NSEC_PER_SEC, 0);
	ASSERT_LE(0, r->fd);

	for (i = 0; i < NR_IDS; i++)
		dev_prep_add(&ops[i], i,
			     FIRST_NS + (uint64_t)i * SPREAD_NS / NR_IDS);
	ASSERT_EQ(NR_IDS, dev_batch(r->fd, ops, NR_IDS));
	for (i = 0; i < NR_IDS; i++) {
		ASSERT_EQ(0, ops[i].result);
		r->old_deadline[i] = ops[i].deadline_ns;
	}

	ASSERT_EQ(0, pthread_create(&rt, NULL, race_reader, r));
	for (i = 0; i < NR_WORKERS; i++) {
		w[i].r = r;
		w[i].first = i;
		ASSERT_EQ(0, pthread_create(&wt[i], NULL, race_worker, &w[i]));
	}
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(wt[i], NULL);
	for (i = 0; i < NR_IDS; i++)
		if (r->new_deadline[i] > last)
			last = r->new_deadline[i];
	if (last < r->old_deadline[NR_IDS - 1])
		last = r->old_deadline[NR_IDS - 1];
	while (mono_ns() < last + TICK_NS + LATE_SLACK_NS)
		sleep_ns(10 * NSEC_PER_MSEC);
	atomic_store(&r->stop, 1);
	pthread_join(rt, NULL);
	ASSERT_EQ(0, r->read_err);
	/* Anything left (the reader may have stopped between polls). */
	while (r->nr_ev < 2 * NR_IDS) {
		int ret = dev_read_events(r->fd, r->ev + r->nr_ev,
					  2 * NR_IDS - r->nr_ev);
		if (ret <= 0)
			break;
		r->nr_ev += ret;
	}

	for (i = 0; i < r->nr_ev; i++) {
		const struct twheel_event *e = &r->ev[i];

		ASSERT_GT(NR_IDS, e->id);
		EXPECT_LE(e->deadline_ns, e->expired_ns)
			TH_LOG("id %llu early", (unsigned long long)e->id);
		if (e->deadline_ns == r->old_deadline[e->id])
			n_old[e->id]++;
		else if (r->result[e->id] == 0 &&
			 e->deadline_ns == r->new_deadline[e->id])
			n_new[e->id]++;
		else
			EXPECT_TRUE(0) TH_LOG("id %llu: event for deadline %llu, "
					      "old %llu new %llu result %d",
					      (unsigned long long)e->id,
					      (unsigned long long)e->deadline_ns,
					      (unsigned long long)r->old_deadline[e->id],
					      (unsigned long long)r->new_deadline[e->id],
					      r->result[e->id]);
	}
	for (i = 0; i < NR_IDS; i++) {
		int res = r->result[i];

		if (res == 0)
			n_ok++;
		else if (res == -ENOENT)
			n_enoent++;
		else
			EXPECT_TRUE(0) TH_LOG("id %u: result %d", i, res);
		switch (kind) {
		case RACE_REFRESH:
			/* Refreshed: the new deadline only; else the old one. */
			EXPECT_EQ(res ? 1 : 0, n_old[i]) TH_LOG("id %u res %d", i, res);
			EXPECT_EQ(res ? 0 : 1, n_new[i]) TH_LOG("id %u res %d", i, res);
			break;
		case RACE_REFRESH_ADD:
			/* Refreshed, or re-added after the old one fired. */
			EXPECT_EQ(0, res) TH_LOG("id %u", i);
			EXPECT_GE(1, n_old[i]) TH_LOG("id %u", i);
			EXPECT_EQ(1, n_new[i]) TH_LOG("id %u", i);
			break;
		case RACE_CANCEL:
			EXPECT_EQ(res ? 1 : 0, n_old[i]) TH_LOG("id %u res %d", i, res);
			EXPECT_EQ(0, n_new[i]) TH_LOG("id %u", i);
			break;
		}
	}
	ksft_print_msg("%u ops won, %u found the id expired, %u events\n",
		       n_ok, n_enoent, r->nr_ev);
	EXPECT_EQ(0, fdinfo_get(r->fd, "live"));
	EXPECT_EQ(0, fdinfo_get(r->fd, "events_waiting"));
	close(r->fd);
	free(n_new);
	free(n_old);
	free(ops);
	free(r->ev);
	free(r);
}

FIXTURE(race) {
};

FIXTURE_SETUP(race)
{
}

FIXTURE_TEARDOWN(race)
{
}

TEST_F_TIMEOUT(race, refresh_racing_expiry_is_refresh_or_expiry, 60)
{
	run_race(_metadata, RACE_REFRESH);
}

TEST_F_TIMEOUT(race, refresh_add_if_absent_racing_expiry_never_loses, 60)
{
	run_race(_metadata, RACE_REFRESH_ADD);
}

TEST_F_TIMEOUT(race, cancel_racing_expiry_is_cancel_or_expiry, 60)
{
	run_race(_metadata, RACE_CANCEL);
}

TEST_HARNESS_MAIN
