-- Webhooks, MySQL/MariaDB: the tenants' endpoints and one delivery row
-- per (event, endpoint). DDL commits on its own here, hence IF NOT EXISTS
-- throughout (MariaDB's, on ALTER TABLE too).

-- The secret is kept as the text handed out at creation: it is the HMAC
-- key of every signature, so it cannot be stored hashed.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	url VARCHAR(2048) NOT NULL,
	secret VARCHAR(100) NOT NULL,
	enabled TINYINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
	created_at BIGINT NOT NULL,
	disabled_at BIGINT NULL,
	KEY webhook_endpoints_tenant (tenant_id, enabled, id),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A delivery is claimed for an attempt by a conditional UPDATE that adds
-- one to attempts and moves next_attempt_at past the lease; the attempt
-- number then fences the result written back.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	tenant_id BIGINT NOT NULL,
	event_id BIGINT NOT NULL,
	endpoint_id BIGINT NOT NULL,
	state VARCHAR(10) NOT NULL DEFAULT 'pending'
	    CHECK (state IN ('pending', 'delivered', 'dead')),
	attempts BIGINT NOT NULL DEFAULT 0 CHECK (attempts >= 0),
	next_attempt_at BIGINT NOT NULL,
	last_attempt_at BIGINT NULL,
	last_status INT NULL,
	last_error VARCHAR(255) NULL,
	created_at BIGINT NOT NULL,
	delivered_at BIGINT NULL,
	UNIQUE KEY webhook_deliveries_pair (event_id, endpoint_id),
	KEY webhook_deliveries_due (state, next_attempt_at),
	KEY webhook_deliveries_tenant (tenant_id, id),
	KEY webhook_deliveries_endpoint (endpoint_id, state),
	FOREIGN KEY (tenant_id) REFERENCES tenants(id),
	FOREIGN KEY (event_id) REFERENCES events(id),
	FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Events not yet fanned out to the endpoints (NULL); the claim's INSERT
-- leaves it NULL without naming it. The column comes with a default of 0
-- so that the events older than webhooks (no endpoint to reach) read as
-- done, then the default becomes NULL for every new event.
ALTER TABLE events ADD COLUMN IF NOT EXISTS enqueued_at BIGINT NULL DEFAULT 0,
    ADD KEY IF NOT EXISTS events_webhook_pending (enqueued_at, id);
ALTER TABLE events ALTER COLUMN enqueued_at SET DEFAULT NULL;
