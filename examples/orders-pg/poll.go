// SPDX-License-Identifier: MIT

// poll: an instance of the peer, the way the seeds' readers run it
// today. Every tick it asks the database for due unpaid orders, locking
// what it takes so that the other instances skip them (FOR UPDATE SKIP
// LOCKED over the index of unpaid orders by deadline), and cancels them
// in the same statement; while a query fills its batch it asks again at
// once. No lease, no state of its own: the database does all of it, on
// every tick of every instance, whether anything is due or not.

package main

import (
	"context"
	"log"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

func poll(ctx context.Context, dsn, name string, tick time.Duration, batch int) error {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		for {
			tag, err := pool.Exec(ctx, `
				WITH due AS (SELECT id FROM orders WHERE state = 0 AND deadline <= clock_timestamp()
					ORDER BY deadline LIMIT $1 FOR UPDATE SKIP LOCKED),
				c AS (UPDATE orders o SET state = 2, done_at = clock_timestamp()
					FROM due WHERE o.id = due.id RETURNING o.id)
				INSERT INTO cancels (id, token, at) SELECT id, NULL, clock_timestamp() FROM c`, batch)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				log.Printf("%s: poll: %v", name, err)
				break
			}
			if tag.RowsAffected() < int64(batch) {
				break
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
