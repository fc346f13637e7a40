// SPDX-License-Identifier: MIT

// orders-pg: a fleet of order services on one PostgreSQL database, each
// instance keeping the deadlines of the orders it is responsible for in
// a /dev/twheel wheel (README.md says how, and what each failure does).
//
//	orders-pg init  -db DSN [-shards N] [-way twheel|polling]
//	orders-pg serve -db DSN -name NAME [-shards N] [-tick D] [-lease D]
//	orders-pg poll  -db DSN -name NAME [-tick D] [-batch N]
//	orders-pg load  -db DSN [-orders N] [-rate R] [-timeout D] [-paid F]
//	orders-pg judge -db DSN -bound D
//
// init makes the schema; serve is an instance (the twheel way); poll is
// an instance of the peer, the database-polling way; load places orders
// at a steady rate and pays a share of them before their deadline, as
// the shop's clients and payment provider do; judge reads the outcome
// from the database once every deadline has passed.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed schema.sql
var schemaSQL string

//go:embed notify.sql
var notifySQL string

func usage() {
	fmt.Fprintln(os.Stderr, "usage: orders-pg init|serve|poll|load|judge [flags] (-h for a command's flags)")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	log.SetFlags(log.Lmicroseconds)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	dsn := fs.String("db", "", "the database (a libpq connection string or URL)")
	shards := fs.Int("shards", 64, "shards the orders are split into")
	var err error
	switch cmd {
	case "init":
		way := fs.String("way", "twheel", "twheel (with notify.sql) or polling")
		fs.Parse(args)
		err = initDB(ctx, *dsn, *shards, *way)
	case "serve":
		name := fs.String("name", "", "this instance's name, unique in the fleet")
		tick := fs.Duration("tick", 100*time.Millisecond, "the wheel's precision")
		lease := fs.Duration("lease", 3*time.Second, "a lease's length")
		prof := fs.String("cpuprofile", "", "write a CPU profile (pprof) here, for the run until SIGTERM")
		fs.Parse(args)
		if *prof != "" {
			f, perr := os.Create(*prof)
			if perr != nil {
				log.Fatal(perr)
			}
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		err = serve(ctx, serveConfig{dsn: *dsn, name: *name, shards: *shards, tick: *tick, ttl: *lease})
	case "poll":
		name := fs.String("name", "", "this instance's name")
		tick := fs.Duration("tick", 100*time.Millisecond, "how often it polls")
		batch := fs.Int("batch", 1000, "orders a query cancels, at most")
		fs.Parse(args)
		err = poll(ctx, *dsn, *name, *tick, *batch)
	case "load":
		n := fs.Int("orders", 1000000, "orders to place")
		rate := fs.Float64("rate", 5000, "orders placed per second")
		timeout := fs.Duration("timeout", 15*time.Second, "an order's time to be paid")
		paid := fs.Float64("paid", 0.5, "the share of orders paid before their deadline")
		fs.Parse(args)
		err = load(ctx, loadConfig{dsn: *dsn, shards: *shards, orders: *n, rate: *rate, timeout: *timeout, paid: *paid})
	case "judge":
		bound := fs.Duration("bound", 0, "the lateness the fleet promises")
		fs.Parse(args)
		err = judge(ctx, *dsn, *bound)
	default:
		usage()
	}
	// SIGTERM or ^C ends serve and poll: not an error.
	if err != nil && !(errors.Is(err, context.Canceled) && ctx.Err() != nil) {
		log.Fatalf("%s: %v", cmd, err)
	}
}

func initDB(ctx context.Context, dsn string, shards int, way string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	sql := schemaSQL
	switch way {
	case "twheel":
		sql += notifySQL
	case "polling":
	default:
		return fmt.Errorf("-way: twheel or polling, not %q", way)
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `INSERT INTO leases (shard) SELECT generate_series(0, $1 - 1)`, shards)
	return err
}
