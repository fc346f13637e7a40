// SPDX-License-Identifier: MIT

// load: the shop's clients and its payment provider. Places orders at a
// steady rate, each due -timeout after it is placed on the database's
// clock, and pays a share of them at a random moment before their
// deadline (up to 90% of the way there). It writes only through the
// database, as the rest of the shop would: the instances learn of
// orders and payments from it.

package main

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

type loadConfig struct {
	dsn     string
	shards  int
	orders  int
	rate    float64
	timeout time.Duration
	paid    float64
}

// Each order is found by its key (a join on unnest): with `id = ANY($1)`
// the planner, before the table is analyzed, ANDs the pkey with a full
// scan of the unpaid-by-shard index, every statement.
//
// A step of the generator: the orders of a step are placed in one
// statement, and the payments due in it paid in one, as a busy shop's
// requests arrive together. Placing and paying run side by side, each on
// a connection of its own, so that a slow insert does not make a payment
// late (a payment after its deadline is refused, as it should be).
const loadStep = 100 * time.Millisecond

func load(ctx context.Context, cfg loadConfig) error {
	place, err := pgx.Connect(ctx, cfg.dsn)
	if err != nil {
		return err
	}
	defer place.Close(context.Background())
	payc, err := pgx.Connect(ctx, cfg.dsn)
	if err != nil {
		return err
	}
	defer payc.Close(context.Background())
	start := time.Now()
	// Payments by the step they are due in, from the start; the placer
	// puts them there once their orders are committed.
	var mu sync.Mutex
	pays := map[int64][]int64{}
	placedAll := make(chan struct{})
	var paid atomic.Int64
	payErr := make(chan error, 1)
	go func() {
		payErr <- func() error {
			for step := int64(0); ; step++ {
				if !waitUntil(ctx, start.Add(time.Duration(step)*loadStep)) {
					return ctx.Err()
				}
				// What is due by this step (a placer that fell behind may
				// have put a payment in a step already passed).
				var p []int64
				mu.Lock()
				for k, v := range pays {
					if k <= step {
						p = append(p, v...)
						delete(pays, k)
					}
				}
				left := len(pays)
				mu.Unlock()
				if len(p) > 0 {
					tag, err := payc.Exec(ctx, `
						WITH p AS (UPDATE orders o SET state = 1, done_at = clock_timestamp()
							FROM unnest($1::bigint[]) AS x(id)
							WHERE o.id = x.id AND o.state = 0 AND o.deadline > clock_timestamp() RETURNING o.id)
						INSERT INTO payments (id, at) SELECT id, clock_timestamp() FROM p`, p)
					if err != nil {
						return fmt.Errorf("paying orders: %w", err)
					}
					paid.Add(tag.RowsAffected())
				}
				select {
				case <-placedAll:
					if left == 0 {
						return nil
					}
				default:
				}
			}
		}()
	}()

	rng := rand.New(rand.NewPCG(1, 2))
	placed := 0
	var ids, shards []int64
	type due struct{ step, id int64 }
	var later []due
	for step := int64(0); placed < cfg.orders; step++ {
		at := start.Add(time.Duration(step) * loadStep)
		if !waitUntil(ctx, at) {
			return ctx.Err()
		}
		want := min(cfg.orders, int(cfg.rate*time.Since(start).Seconds()))
		ids, shards, later = ids[:0], shards[:0], later[:0]
		for ; placed < want; placed++ {
			id := int64(placed)
			ids = append(ids, id)
			shards = append(shards, id%int64(cfg.shards))
			if rng.Float64() < cfg.paid {
				in := time.Duration(rng.Float64() * 0.9 * float64(cfg.timeout))
				later = append(later, due{int64((time.Since(start) + in) / loadStep), id})
			}
		}
		if len(ids) > 0 {
			_, err := place.Exec(ctx, `
				INSERT INTO orders (id, shard, deadline)
				SELECT id, shard, clock_timestamp() + make_interval(secs => $3::bigint / 1e6)
				FROM unnest($1::bigint[], $2::bigint[]) AS o(id, shard)`,
				ids, shards, cfg.timeout.Microseconds())
			if err != nil {
				return fmt.Errorf("placing orders: %w", err)
			}
		}
		mu.Lock()
		for _, d := range later {
			pays[d.step] = append(pays[d.step], d.id)
		}
		mu.Unlock()
		if step%50 == 0 {
			log.Printf("load: %d placed, %d paid, %s behind", placed, paid.Load(), time.Since(at).Round(time.Millisecond))
		}
	}
	close(placedAll)
	if err := <-payErr; err != nil {
		return err
	}
	log.Printf("load: done: %d placed, %d paid in %s", placed, paid.Load(), time.Since(start).Round(time.Millisecond))
	fmt.Printf("load: orders=%d paid=%d seconds=%.1f\n", placed, paid.Load(), time.Since(start).Seconds())
	return nil
}

// waitUntil sleeps until @t; false if @ctx ended first.
func waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
