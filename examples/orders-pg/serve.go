// SPDX-License-Identifier: MIT

// serve: one instance of the order service, the twheel way. It holds
// leases on shards of the orders, keeps the unpaid orders of those
// shards in a wheel at their deadlines, and cancels each as its deadline
// passes with one conditional UPDATE, fenced by the lease's token.
//
// Goroutines:
//   - leases: every renew period, renews what it holds (a lease not
//     renewed in time is lost: its shard is dropped here), says it is
//     alive, and moves towards its fair share (shards / live
//     instances): takes shards whose lease ran out, up to that share at
//     once, or gives one back a round.
//     A shard taken is loaded from the table into the wheel.
//   - listen: the notifications of new orders and payments (notify.sql),
//     kept for the shards held: a new order is added at its deadline, a
//     paid one cancelled. After a cut it reloads every shard it holds,
//     as it may have missed some.
//   - expire: reads the wheel and cancels what is due, one statement a
//     read; re-arms what the database says is not due yet, and retries
//     what a cut connection left undone.
//
// The database decides everything: an order is cancelled only while
// unpaid, only once its deadline has passed on the database's clock, and
// only with the token of a lease that has not run out there. So whatever
// this process believes (a stale lease after a cut, a clock that runs
// fast, a notification lost), it can make a cancel late, never wrong.

package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"twheel.dev/twheel"
)

type serveConfig struct {
	dsn    string
	name   string
	shards int
	tick   time.Duration // the wheel's precision
	ttl    time.Duration // a lease's length
}

type instance struct {
	cfg   serveConfig
	pool  *pgxpool.Pool
	wheel *twheel.Wheel

	mu   sync.Mutex
	held map[int32]int64 // shard -> the token of its lease
	// When the leases run out if no renewal succeeds, on this machine's
	// monotonic clock (a renewal's start plus the lease's length).
	until time.Time
	// Set when a notification may have been missed: reload every shard.
	stale bool
	// listenSync's requests, and the listen connection to poke them with.
	lreq    chan chan struct{}
	lmu     sync.Mutex
	lconn   net.Conn // under lmu; nil while not listening
	waiting bool     // under lmu: lconn is in a wait a poke may end

	// What it did, said at the end: reads of the wheel, ids read, time in
	// cancel statements (all and the longest), notifications, orders
	// cancelled and armed again, orders loaded; and where a cancel's
	// lateness came from: the wheel's (an event's Expired - Deadline)
	// and this reader's (its read - Expired), summed over ids and the
	// largest.
	stats struct {
		reads, ids, notified, cancelled, rearmed, loaded atomic.Int64
		stmts, stmtNs, stmtMaxNs                         atomic.Int64
		wheelLateNs, wheelLateMaxNs                      atomic.Int64
		readLateNs, readLateMaxNs                        atomic.Int64
	}
}

func (in *instance) report() {
	st := &in.stats
	avg := func(sum *atomic.Int64, n int64) int64 {
		if n == 0 {
			return 0
		}
		return sum.Load() / n / 1e6
	}
	log.Printf("%s: stats reads=%d ids=%d cancelled=%d rearmed=%d notified=%d loaded=%d "+
		"cancel_stmt_avg_ms=%d cancel_stmt_max_ms=%d wheel_late_avg_ms=%d wheel_late_max_ms=%d "+
		"read_late_avg_ms=%d read_late_max_ms=%d",
		in.cfg.name, st.reads.Load(), st.ids.Load(), st.cancelled.Load(), st.rearmed.Load(), st.notified.Load(),
		st.loaded.Load(), avg(&st.stmtNs, st.stmts.Load()), st.stmtMaxNs.Load()/1e6,
		avg(&st.wheelLateNs, st.ids.Load()), st.wheelLateMaxNs.Load()/1e6,
		avg(&st.readLateNs, st.ids.Load()), st.readLateMaxNs.Load()/1e6)
}

func serve(ctx context.Context, cfg serveConfig) error {
	pool, err := pgxpool.New(ctx, cfg.dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	w, err := twheel.Open(twheel.Options{Tick: cfg.tick})
	if err != nil {
		return err
	}
	defer w.Close()
	in := &instance{cfg: cfg, pool: pool, wheel: w, held: map[int32]int64{}, lreq: make(chan chan struct{}, 64)}
	defer in.report()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 3)
	go func() { errs <- in.leases(ctx) }()
	go func() { errs <- in.listen(ctx) }()
	go func() { errs <- in.expire(ctx) }()
	err = <-errs
	cancel()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// ---- leases ----

func (in *instance) renewEvery() time.Duration { return in.cfg.ttl / 4 }

func (in *instance) leases(ctx context.Context) error {
	t := time.NewTicker(in.renewEvery())
	defer t.Stop()
	for {
		if err := in.leaseRound(ctx); err != nil && ctx.Err() == nil {
			log.Printf("%s: lease round: %v", in.cfg.name, err)
		}
		in.expireLocally()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// expireLocally drops every shard once the leases may have run out:
// nothing this instance does could count any more, and another may have
// taken them.
func (in *instance) expireLocally() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.held) > 0 && time.Now().After(in.until) {
		log.Printf("%s: no renewal for a lease's length: dropping %d shards", in.cfg.name, len(in.held))
		clear(in.held)
	}
}

func (in *instance) snapshot() (shards []int32, tokens []int64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for s, tok := range in.held {
		shards = append(shards, s)
		tokens = append(tokens, tok)
	}
	return shards, tokens
}

func (in *instance) leaseRound(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, in.cfg.ttl/2)
	defer cancel()
	start := time.Now()
	ttl := in.cfg.ttl.Microseconds()
	shards, tokens := in.snapshot()

	// Renew: a lease counts only while the database says it has not run
	// out, so one that did is lost here even if nobody took it yet.
	rows, err := in.pool.Query(ctx, `
		UPDATE leases l SET expires = clock_timestamp() + make_interval(secs => $3::bigint / 1e6)
		FROM unnest($1::int[], $2::bigint[]) AS h(shard, token)
		WHERE l.shard = h.shard AND l.token = h.token AND l.owner = $4 AND l.expires > clock_timestamp()
		RETURNING l.shard`, shards, tokens, ttl, in.cfg.name)
	if err != nil {
		return err
	}
	kept, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return err
	}
	var live int
	err = in.pool.QueryRow(ctx, `
		WITH me AS (INSERT INTO members (name, seen) VALUES ($1, clock_timestamp())
			ON CONFLICT (name) DO UPDATE SET seen = excluded.seen)
		SELECT count(*) FROM members WHERE seen > clock_timestamp() - make_interval(secs => $2::bigint / 1e6)
			AND name <> $1`, in.cfg.name, ttl).Scan(&live)
	if err != nil {
		return err
	}
	live++ // this one

	in.mu.Lock()
	keep := make(map[int32]bool, len(kept))
	for _, s := range kept {
		keep[s] = true
	}
	for _, s := range shards {
		if !keep[s] {
			log.Printf("%s: lost shard %d", in.cfg.name, s)
			delete(in.held, s)
		}
	}
	in.until = start.Add(in.cfg.ttl)
	n := len(in.held)
	stale := in.stale
	in.stale = false
	in.mu.Unlock()

	if stale && len(kept) > 0 {
		if err := in.load(ctx, kept); err != nil {
			in.markStale()
			return err
		}
	}

	target := (in.cfg.shards + live - 1) / live
	switch {
	case n > target:
		return in.release(ctx)
	case n < target:
		// Whatever is free up to the share at once: a dead instance's
		// shards wait for nothing but their leases. Joining is gradual
		// on the giving side (release, one a round).
		return in.take(ctx, target-n)
	}
	return nil
}

// take acquires up to @n shards whose lease ran out (or was given back),
// each with a new token, and loads them.
func (in *instance) take(ctx context.Context, n int) error {
	rows, err := in.pool.Query(ctx, `
		UPDATE leases SET owner = $1, token = token + 1,
			expires = clock_timestamp() + make_interval(secs => $3::bigint / 1e6)
		WHERE shard IN (SELECT shard FROM leases WHERE expires <= clock_timestamp()
			ORDER BY random() LIMIT $2 FOR UPDATE SKIP LOCKED)
		RETURNING shard, token`, in.cfg.name, n, in.cfg.ttl.Microseconds())
	if err != nil {
		return err
	}
	type lease struct {
		Shard int32
		Token int64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[lease])
	if err != nil {
		return err
	}
	for _, l := range got {
		// Held, then listened to, then loaded: a new order notified from
		// then on is kept, one committed before is in the table.
		in.mu.Lock()
		in.held[l.Shard] = l.Token
		in.mu.Unlock()
		log.Printf("%s: took shard %d (token %d)", in.cfg.name, l.Shard, l.Token)
	}
	if len(got) == 0 {
		return nil
	}
	if err := in.listenSync(ctx); err != nil {
		// Loaded once the listen goroutine is back (stale).
		return err
	}
	taken := make([]int32, len(got))
	for i, l := range got {
		taken[i] = l.Shard
	}
	if err := in.load(ctx, taken); err != nil {
		in.markStale()
		return err
	}
	return nil
}

// release gives one shard back: dropped here first, so that nothing is
// cancelled under it after, then its lease ended at once for another to
// take. Its ids stay in the wheel and are dropped as they fire.
func (in *instance) release(ctx context.Context) error {
	in.mu.Lock()
	var s int32 = -1
	for k := range in.held {
		s = max(s, k)
	}
	tok := in.held[s]
	delete(in.held, s)
	in.mu.Unlock()
	log.Printf("%s: gives back shard %d", in.cfg.name, s)
	_, err := in.pool.Exec(ctx, `UPDATE leases SET owner = NULL, expires = '-infinity'
		WHERE shard = $1 AND token = $2 AND owner = $3`, s, tok, in.cfg.name)
	return err
}

func (in *instance) markStale() {
	in.mu.Lock()
	in.stale = true
	in.mu.Unlock()
}

func (in *instance) holds(shard int32) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	_, ok := in.held[shard]
	return ok
}

// load puts the unpaid orders of @shards into the wheel at their
// deadlines (those already past fire at the next tick), in one statement
// however many shards a takeover took: one after another, a third of the
// shards taken at once after a kill took seconds in a slow VM before
// their first cancel.
func (in *instance) load(ctx context.Context, shards []int32) error {
	rows, err := in.pool.Query(ctx, `
		SELECT id, (extract(epoch FROM deadline - clock_timestamp()) * 1e6)::bigint
		FROM orders WHERE shard = ANY($1::int[]) AND state = 0`, shards)
	if err != nil {
		return err
	}
	defer rows.Close()
	now := in.wheel.Now()
	b := &twheel.Batch{}
	var id, leftUs int64
	_, err = pgx.ForEachRow(rows, []any{&id, &leftUs}, func() error {
		b.Push(in.armOp(uint64(id), now.Add(time.Duration(leftUs)*time.Microsecond)))
		in.stats.loaded.Add(1)
		if b.Len() == 4096 {
			return in.flush(b)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return in.flush(b)
}

// armOp puts @id at @at whether or not it is in the wheel already: a
// reload or a notification that overlaps a load arms it again, at the
// same deadline.
func (in *instance) armOp(id uint64, at twheel.Instant) twheel.Op {
	return twheel.Op{Kind: twheel.OpRefresh, ID: id, Deadline: at, Abs: true, AddIfAbsent: true}
}

func (in *instance) flush(b *twheel.Batch) error {
	defer b.Reset()
	if b.Len() == 0 {
		return nil
	}
	_, err := in.wheel.Batch(b)
	return err
}

// ---- listen ----

// Each shard has its channel, orders_N (notify.sql), so that an instance
// hears only of the shards it holds: the listen goroutine LISTENs to the
// shards held and UNLISTENs the others whenever it wakes. A shard taken
// is loaded only once its channel is listened to (listenSync), so that
// an order committed after the load's snapshot is notified.

// listenSync returns once the listen goroutine has listened to every
// shard held now; an error if it cannot (its connection is down: it then
// marks every shard stale once it is back, and the lease round reloads).
func (in *instance) listenSync(ctx context.Context) error {
	// Queued (lreq is buffered), then poked: the listen goroutine reads
	// its requests before each wait.
	done := make(chan struct{})
	select {
	case in.lreq <- done:
	case <-ctx.Done():
		return ctx.Err()
	}
	in.pokeListen()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (in *instance) setListenConn(nc net.Conn) {
	in.lmu.Lock()
	in.lconn = nc
	in.lmu.Unlock()
}

// stopWaiting ends a wait: no poke from now on, and no deadline on the
// statements that follow.
func (in *instance) stopWaiting(nc net.Conn) {
	in.lmu.Lock()
	in.waiting = false
	nc.SetReadDeadline(time.Time{})
	in.lmu.Unlock()
}

// pokeListen wakes the listen goroutine out of its wait.
func (in *instance) pokeListen() {
	in.lmu.Lock()
	if in.lconn != nil && in.waiting {
		in.lconn.SetReadDeadline(time.Now())
	}
	in.lmu.Unlock()
}

func (in *instance) listen(ctx context.Context) error {
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, in.cfg.dsn)
		if err == nil {
			listening := map[int32]bool{}
			if err = in.listenTo(ctx, conn, listening); err == nil {
				// Whatever was notified while not listening is in the table.
				in.markStale()
				in.setListenConn(conn.PgConn().Conn())
				err = in.notifications(ctx, conn, listening)
				in.setListenConn(nil)
			}
			conn.Close(context.Background())
		}
		if ctx.Err() == nil {
			log.Printf("%s: listen: %v", in.cfg.name, err)
			in.markStale()
			sleep(ctx, in.renewEvery())
		}
	}
	return ctx.Err()
}

// listenTo makes @listening the shards held: one statement of LISTENs and
// UNLISTENs.
func (in *instance) listenTo(ctx context.Context, conn *pgx.Conn, listening map[int32]bool) error {
	var sql strings.Builder
	in.mu.Lock()
	for s := range in.held {
		if !listening[s] {
			fmt.Fprintf(&sql, "LISTEN orders_%d;", s)
			listening[s] = true
		}
	}
	for s := range listening {
		if _, ok := in.held[s]; !ok {
			fmt.Fprintf(&sql, "UNLISTEN orders_%d;", s)
			delete(listening, s)
		}
	}
	in.mu.Unlock()
	if sql.Len() == 0 {
		return nil
	}
	_, err := conn.Exec(ctx, sql.String())
	return err
}

// notifications applies what is notified to the wheel, those that come
// together in one batch: once one arrived, it takes more for up to a
// millisecond (a read deadline on the connection: its timeout leaves
// pgx's connection usable), or until 1024. Woken by pokeListen, it
// listens to the shards held, then answers listenSync.
func (in *instance) notifications(ctx context.Context, conn *pgx.Conn, listening map[int32]bool) error {
	nc := conn.PgConn().Conn()
	b := &twheel.Batch{}
	var until time.Time
	for {
		// Requests first: a poke that came before this loop read them
		// set a deadline this wait then meets at once.
		for pending := true; pending; {
			select {
			case done := <-in.lreq:
				if err := in.listenTo(ctx, conn, listening); err != nil {
					return err
				}
				close(done)
			default:
				pending = false
			}
		}
		if b.Len() == 0 {
			until = time.Time{}
		} else if until.IsZero() {
			until = time.Now().Add(time.Millisecond)
		}
		// A poke may end this wait only: never a statement (listenTo),
		// which a read timeout would fail.
		in.lmu.Lock()
		nc.SetReadDeadline(until)
		in.waiting = true
		in.lmu.Unlock()
		// A request queued, and poked, before that deadline replaced the
		// poke's: serve it now.
		if len(in.lreq) > 0 {
			in.stopWaiting(nc)
			continue
		}
		n, err := conn.WaitForNotification(ctx)
		in.stopWaiting(nc)
		if err != nil {
			if ctx.Err() != nil || !pgconn.Timeout(err) {
				return err
			}
			// The batch's millisecond, or a poke.
			if err := in.listenTo(ctx, conn, listening); err != nil {
				return err
			}
		} else {
			in.stats.notified.Add(1)
			if err := in.notified(n.Payload, in.wheel.Now(), b); err != nil {
				log.Printf("%s: notification %q: %v", in.cfg.name, n.Payload, err)
			}
			if b.Len() < 1024 {
				continue
			}
		}
		if err := in.flush(b); err != nil {
			return err
		}
		until = time.Time{}
	}
}

// notified queues the wheel op of one notification: "a ID SHARD
// DEADLINE_US" adds, "p ID SHARD" cancels; a shard not held is ignored.
func (in *instance) notified(p string, now twheel.Instant, b *twheel.Batch) error {
	f := strings.Fields(p)
	if len(f) < 3 {
		return errors.New("malformed")
	}
	id, err1 := strconv.ParseUint(f[1], 10, 63)
	shard, err2 := strconv.ParseInt(f[2], 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if !in.holds(int32(shard)) {
		return nil
	}
	switch {
	case f[0] == "a" && len(f) == 4:
		us, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return err
		}
		b.Push(in.armOp(id, now.Add(time.Until(time.UnixMicro(us)))))
	case f[0] == "p":
		b.Cancel(id)
	default:
		return errors.New("malformed")
	}
	return nil
}

// ---- expire ----

func (in *instance) expire(ctx context.Context) error {
	buf := make([]twheel.Event, 1024)
	var ids []int64
	var shards []int32
	var tokens []int64
	seen := map[int32]bool{}
	for {
		n, err := in.wheel.ReadEvents(ctx, buf)
		if err != nil {
			return err
		}
		in.stats.reads.Add(1)
		in.stats.ids.Add(int64(n))
		now := in.wheel.Now()
		for _, ev := range buf[:n] {
			addMax(&in.stats.wheelLateNs, &in.stats.wheelLateMaxNs, int64(ev.Expired.Sub(ev.Deadline)))
			addMax(&in.stats.readLateNs, &in.stats.readLateMaxNs, int64(now.Sub(ev.Expired)))
		}
		ids, shards, tokens = ids[:0], shards[:0], tokens[:0]
		clear(seen)
		in.mu.Lock()
		for _, ev := range buf[:n] {
			s := int32(ev.ID % uint64(in.cfg.shards))
			// A shard given back or lost: its new holder loaded it.
			tok, ok := in.held[s]
			if !ok {
				continue
			}
			ids = append(ids, int64(ev.ID))
			if !seen[s] {
				seen[s] = true
				shards = append(shards, s)
				tokens = append(tokens, tok)
			}
		}
		in.mu.Unlock()
		// One statement at a time: with three in flight, PostgreSQL
		// aborted some of them as deadlocks (README.md).
		if len(ids) > 0 {
			in.cancelDue(ctx, ids, shards, tokens)
		}
	}
}

// cancelDue cancels, in one statement, the orders @ids that are unpaid
// and due, each under the lease of its shard (@shards, each held by the
// token of the same index in @tokens). Each id is looked up by its key
// (the join on unnest), never by scanning its shard. The statement holds those lease rows FOR KEY
// SHARE: a takeover, which takes a row FOR UPDATE (take), skips it
// meanwhile, so no other instance gets a shard in the middle of a cancel
// on it; a renewal, a plain UPDATE (FOR NO KEY UPDATE), does not wait. Those the database says are not due yet (this
// machine's clock ran ahead of its) go back into the wheel at their
// deadline; those whose lease did not hold there, and all of them on an
// error, a renew period later, when this instance knows whether it
// still holds their shards (if not, they are dropped as they fire).
func (in *instance) cancelDue(ctx context.Context, ids []int64, shards []int32, tokens []int64) {
	ctx, cancel := context.WithTimeout(ctx, in.cfg.ttl)
	defer cancel()
	t0 := time.Now()
	in.stats.stmts.Add(1)
	defer func() { addMax(&in.stats.stmtNs, &in.stats.stmtMaxNs, time.Since(t0).Nanoseconds()) }()
	rows, err := in.pool.Query(ctx, `
		WITH l AS (SELECT l.shard, l.token FROM leases l
				JOIN unnest($2::int[], $3::bigint[]) AS h(shard, token) USING (shard, token)
			WHERE l.owner = $4 AND l.expires > clock_timestamp() FOR KEY SHARE OF l),
		c AS (UPDATE orders o SET state = 2, done_at = clock_timestamp(), done_by = l.token
			FROM unnest($1::bigint[]) AS x(id) JOIN l ON l.shard = (x.id % $5)::int
			WHERE o.id = x.id AND o.state = 0 AND o.deadline <= clock_timestamp()
			RETURNING o.id, l.token),
		a AS (INSERT INTO cancels (id, token, at) SELECT id, token, clock_timestamp() FROM c)
		SELECT o.id, (extract(epoch FROM o.deadline - clock_timestamp()) * 1e6)::bigint
		FROM unnest($1::bigint[]) AS x(id) JOIN orders o ON o.id = x.id
		WHERE o.state = 0 AND o.id NOT IN (SELECT id FROM c)`,
		ids, shards, tokens, in.cfg.name, in.cfg.shards)
	var left [][2]int64
	if err == nil {
		var id, us int64
		_, err = pgx.ForEachRow(rows, []any{&id, &us}, func() error {
			left = append(left, [2]int64{id, us})
			return nil
		})
	}
	now := in.wheel.Now()
	b := &twheel.Batch{}
	if err != nil {
		log.Printf("%s: cancel: %v", in.cfg.name, err)
		for _, id := range ids {
			b.Push(in.armOp(uint64(id), now.Add(in.renewEvery())))
		}
	} else {
		in.stats.cancelled.Add(int64(len(ids) - len(left)))
		in.stats.rearmed.Add(int64(len(left)))
		for _, l := range left {
			d := time.Duration(l[1]) * time.Microsecond
			if d <= 0 {
				d = in.renewEvery()
			}
			b.Push(in.armOp(uint64(l[0]), now.Add(d)))
		}
	}
	if err := in.flush(b); err != nil {
		log.Printf("%s: re-arm: %v", in.cfg.name, err)
	}
}

// addMax adds d to *sum and raises *max to d.
func addMax(sum, max *atomic.Int64, d int64) {
	sum.Add(d)
	for m := max.Load(); d > m && !max.CompareAndSwap(m, d); m = max.Load() {
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d + time.Duration(rand.Int64N(int64(d/4)+1)))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
