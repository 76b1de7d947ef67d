-- The dashboard's webhooks and API keys pages, SQLite.
--
-- An endpoint's deliveries newest first, all states (keyset by id; the
-- one-state pages walk webhook_deliveries_endpoint, whose rowid suffix
-- keeps them in id order), and its deliveries of the last day
-- (state 'delivered', delivered_at in range) counted from the index.
CREATE INDEX webhook_deliveries_endpoint_id ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_endpoint_done
	ON webhook_deliveries (endpoint_id, state, delivered_at);

-- When a key was last used, by the database clock, to the minute:
-- apikey_verify writes it at most once a minute per key. NULL: never.
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
