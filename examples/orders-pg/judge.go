// SPDX-License-Identifier: MIT

// judge: the outcome, from the database alone, once every deadline has
// passed by more than the bound: what was never cancelled, what was
// cancelled early, twice or after it was paid, and how late the cancels
// came against their deadlines.

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

func judge(ctx context.Context, dsn string, bound time.Duration) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var (
		orders, paid, cancelled, lost, early, twice, afterPaid int64
		p99, worst                                             float64
	)
	err = conn.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE state = 1), count(*) FILTER (WHERE state = 2),
			count(*) FILTER (WHERE state = 0 AND deadline + make_interval(secs => $1::bigint / 1e6) < clock_timestamp())
		FROM orders`, bound.Microseconds()).Scan(&orders, &paid, &cancelled, &lost)
	if err != nil {
		return err
	}
	err = conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE c.at < o.deadline),
			coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM c.at - o.deadline)) * 1000, 0),
			coalesce(max(extract(epoch FROM c.at - o.deadline)) * 1000, 0)
		FROM cancels c JOIN orders o USING (id)`).Scan(&early, &p99, &worst)
	if err != nil {
		return err
	}
	// The spread of lateness, for the reader of the log.
	var p50, p90 float64
	err = conn.QueryRow(ctx, `
		SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM c.at - o.deadline)) * 1000, 0),
			coalesce(percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM c.at - o.deadline)) * 1000, 0)
		FROM cancels c JOIN orders o USING (id)`).Scan(&p50, &p90)
	if err != nil {
		return err
	}
	fmt.Printf("lateness: p50_ms=%.0f p90_ms=%.0f p99_ms=%.0f max_ms=%.0f\n", p50, p90, p99, worst)
	err = conn.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM (SELECT id FROM cancels GROUP BY id HAVING count(*) > 1) t),
			(SELECT count(DISTINCT id) FROM cancels JOIN payments USING (id))`).Scan(&twice, &afterPaid)
	if err != nil {
		return err
	}
	fmt.Printf("judge: orders=%d paid=%d cancelled=%d lost=%d early=%d twice=%d after_paid=%d "+
		"p99_late_ms=%.0f worst_late_ms=%.0f bound_ms=%d\n",
		orders, paid, cancelled, lost, early, twice, afterPaid, p99, worst, bound.Milliseconds())
	if lost+early+twice+afterPaid > 0 || time.Duration(worst*float64(time.Millisecond)) > bound {
		return fmt.Errorf("the fleet broke a promise")
	}
	return nil
}
