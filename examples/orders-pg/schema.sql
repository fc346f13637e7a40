-- SPDX-License-Identifier: MIT
--
-- The fleet's database: the only record. Run once by `orders-pg init`.

-- An order: its shard (id mod the shard count), its deadline on the
-- database's clock, and its state. Only two statements ever change a
-- state, each from 'unpaid' alone, so an order is paid or cancelled at
-- most once and never both.
CREATE TABLE orders (
	id       bigint PRIMARY KEY,
	shard    int NOT NULL,
	deadline timestamptz NOT NULL,
	state    smallint NOT NULL DEFAULT 0 CHECK (state IN (0, 1, 2)),	-- unpaid, paid, cancelled
	done_at  timestamptz,	-- when it was paid or cancelled
	done_by  bigint		-- the lease token that cancelled it
);

-- What the polling way scans every tick, and what an instance loads when
-- it takes a shard: the unpaid orders by deadline.
CREATE INDEX orders_unpaid_deadline ON orders (deadline) WHERE state = 0;
CREATE INDEX orders_unpaid_shard ON orders (shard) WHERE state = 0;

-- A lease on a shard. token is the fence: it grows by one each time the
-- shard changes hands (or its holder comes back from a cut), and a
-- cancel counts only with the token of a lease that has not run out, on
-- the database's clock. Advisory locks would not do: a cut connection
-- drops the lock while its holder, not knowing, carries on.
CREATE TABLE leases (
	shard   int PRIMARY KEY,
	owner   text,
	token   bigint NOT NULL DEFAULT 0,
	expires timestamptz NOT NULL DEFAULT '-infinity'
);

-- The instances alive, for the fair share: each one's last renewal.
CREATE TABLE members (
	name text PRIMARY KEY,
	seen timestamptz NOT NULL
);

-- Audit, for the test's judge: every cancel and every payment that took
-- effect, written by the same statement that changed the order.
CREATE TABLE cancels (
	id    bigint NOT NULL,
	token bigint,
	at    timestamptz NOT NULL
);
CREATE TABLE payments (
	id bigint NOT NULL,
	at timestamptz NOT NULL
);
