-- SPDX-License-Identifier: MIT
--
-- The twheel way's addition to schema.sql (the polling way has none):
-- New orders and payments reach the instances as notifications, in
-- commit order, on the channel of their shard (orders_N), which the
-- holder of the shard listens to. 'a ID SHARD DEADLINE_US' (microseconds since the epoch) and
-- 'p ID SHARD'.
-- A cancel fires neither trigger (the WHEN clause is checked before the
-- function is called).
CREATE FUNCTION orders_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM pg_notify('orders_' || NEW.shard, 'a ' || NEW.id || ' ' || NEW.shard || ' ' ||
			(extract(epoch FROM NEW.deadline) * 1000000)::bigint);
	ELSE
		PERFORM pg_notify('orders_' || NEW.shard, 'p ' || NEW.id || ' ' || NEW.shard);
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER orders_placed AFTER INSERT ON orders
	FOR EACH ROW EXECUTE FUNCTION orders_notify();
CREATE TRIGGER orders_paid AFTER UPDATE OF state ON orders
	FOR EACH ROW WHEN (OLD.state = 0 AND NEW.state = 1) EXECUTE FUNCTION orders_notify();
