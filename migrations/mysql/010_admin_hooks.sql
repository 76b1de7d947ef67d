-- The dashboard's webhooks and API keys pages, MySQL/MariaDB. DDL commits
-- on its own, hence IF NOT EXISTS (MariaDB's).
--
-- An endpoint's deliveries newest first, all states (keyset by id; the
-- one-state pages walk webhook_deliveries_endpoint, whose primary-key
-- suffix keeps them in id order), and its deliveries of the last day
-- (state 'delivered', delivered_at in range) counted from the index.
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_id
	ON webhook_deliveries (endpoint_id, id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_done
	ON webhook_deliveries (endpoint_id, state, delivered_at);

-- When a key was last used, by the database clock, to the minute:
-- apikey_verify writes it at most once a minute per key. NULL: never.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last_used_at BIGINT NULL;
