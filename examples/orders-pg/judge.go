// SPDX-License-Identifier: MIT

// judge: the outcome, from the database alone, once every deadline has
// passed by more than the bound: what was never cancelled, what was
// cancelled early, twice or after it was paid, and how late the cancels
// came against their deadlines.

package main

import (
	"context"
	"fmt"
	"strings"
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
	// Lateness: p50 and p90 for the reader of the log, p99 and the worst
	// for the line.
	var p50, p90 float64
	err = conn.QueryRow(ctx, `
		SELECT e, coalesce(p[1], 0), coalesce(p[2], 0), coalesce(p[3], 0), coalesce(m, 0)
		FROM (SELECT count(*) FILTER (WHERE l < 0) AS e, max(l) AS m,
				percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY l) AS p
			FROM (SELECT extract(epoch FROM c.at - o.deadline)::float8 * 1000 AS l
				FROM cancels c JOIN orders o USING (id)) t) s`).Scan(&early, &p50, &p90, &p99, &worst)
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
	var broken []string
	for _, c := range []struct {
		n    int64
		what string
	}{{lost, "lost"}, {early, "early"}, {twice, "twice"}, {afterPaid, "after_paid"}} {
		if c.n > 0 {
			broken = append(broken, fmt.Sprintf("%s=%d", c.what, c.n))
		}
	}
	if time.Duration(worst*float64(time.Millisecond)) > bound {
		broken = append(broken, fmt.Sprintf("worst_late_ms=%.0f over bound_ms=%d", worst, bound.Milliseconds()))
	}
	if len(broken) > 0 {
		return fmt.Errorf("the fleet broke a promise: %s", strings.Join(broken, ", "))
	}
	return nil
}
