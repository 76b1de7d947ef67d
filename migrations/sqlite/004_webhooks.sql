-- Webhooks, SQLite: the tenants' endpoints and one delivery row per
-- (event, endpoint). Times are Unix seconds by the database clock.

-- The secret is kept as the text handed out at creation: it is the HMAC
-- key of every signature, so it cannot be stored hashed.
CREATE TABLE webhook_endpoints (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	url TEXT NOT NULL,
	secret TEXT NOT NULL,
	enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
	created_at INTEGER NOT NULL,
	disabled_at INTEGER
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, enabled, id);

-- A delivery is claimed for an attempt by a conditional UPDATE that adds
-- one to attempts and moves next_attempt_at past the lease; the attempt
-- number then fences the result written back.
CREATE TABLE webhook_deliveries (
	id INTEGER PRIMARY KEY,
	tenant_id INTEGER NOT NULL REFERENCES tenants(id),
	event_id INTEGER NOT NULL REFERENCES events(id),
	endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints(id),
	state TEXT NOT NULL DEFAULT 'pending'
	    CHECK (state IN ('pending', 'delivered', 'dead')),
	attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
	next_attempt_at INTEGER NOT NULL,
	last_attempt_at INTEGER,
	last_status INTEGER,		-- HTTP status; NULL: no answer
	last_error TEXT,
	created_at INTEGER NOT NULL,
	delivered_at INTEGER,
	UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries (tenant_id, id);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, state);

-- Events not yet fanned out to the endpoints (NULL); the claim's INSERT
-- leaves it NULL without naming it. Events older than webhooks have no
-- endpoint to reach.
ALTER TABLE events ADD COLUMN enqueued_at INTEGER;
UPDATE events SET enqueued_at = 0;
CREATE INDEX events_webhook_pending ON events (id) WHERE enqueued_at IS NULL;
